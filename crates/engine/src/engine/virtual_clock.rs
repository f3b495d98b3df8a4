//! A fluid class's virtual clock: how far its members have progressed in standalone
//! seconds, at what speed, and the wall time they lost to sharing, by cause. Shared by
//! the general classes and the lane's one class, so both keep the same arithmetic.

use crate::time::{SimTime, ceil_to_u64};

use super::observer::{Limiter, Loss};
use super::solver::ClassSpeed;

/// Progress of a class of identical running activities since it was (re)started.
#[derive(Debug)]
pub(super) struct VirtualClock {
    /// `x_i`: speed as a fraction of standalone.
    pub speed: f64,
    /// What holds the speed below standalone (None with speed < 1: the latency cap).
    pub limiter: Option<Limiter>,
    /// Standalone seconds of progress a member has made since the class was started.
    pub virtual_now: f64,
    /// The wall time the clock was last brought up to.
    last: SimTime,
    /// Cumulative wall seconds a member has lost since the class was started, by cause.
    pub lost: Loss,
}

impl VirtualClock {
    /// A clock at standalone speed, started at `now`, over `nrate` rate resources.
    pub fn new(now: SimTime, nrate: usize) -> Self {
        Self {
            speed: 1.0,
            limiter: None,
            virtual_now: 0.0,
            last: now,
            lost: Loss::zero(nrate),
        }
    }

    /// Starts the clock again at `now` (a class slot reused, or the lane's class refilled).
    pub fn restart(&mut self, now: SimTime, nrate: usize) {
        self.speed = 1.0;
        self.limiter = None;
        self.virtual_now = 0.0;
        self.last = now;
        self.lost.reset(nrate);
    }

    /// Brings the clock and the lost-time counters up to `now`.
    #[inline]
    pub fn advance(&mut self, now: SimTime) {
        if now == self.last {
            // Already there (an event advances a class up to three times at one instant):
            // skip the integer-to-float conversion of a zero interval.
            return;
        }
        let dt = (now - self.last) as f64 * 1e-9;
        if dt > 0.0 {
            self.virtual_now += self.speed * dt;
            if self.speed < 1.0 {
                // Below standalone speed with no saturated resource named: the
                // loaded-latency cap is what held it back.
                let cause = self.limiter.unwrap_or(Limiter::DramLatency);
                self.lost.add(cause, (1.0 - self.speed) * dt);
            }
        }
        self.last = now;
    }

    /// Sets the speed the solver found; returns whether it (or its limiter) changed.
    #[inline]
    pub fn set_speed(&mut self, s: ClassSpeed) -> bool {
        if self.speed == s.speed && self.limiter == s.limiter {
            return false;
        }
        self.speed = s.speed;
        self.limiter = s.limiter;
        true
    }

    /// Whether a member due at virtual time `finish` is done by the clock's now (within
    /// the float error the virtual clock has accumulated).
    #[inline]
    pub fn reached(&self, finish: f64) -> bool {
        let tolerance = 1e-9 + self.virtual_now.abs() * 1e-13;
        finish <= self.virtual_now + tolerance
    }

    /// The wall time, from `now` at the current speed, at which a member due at virtual
    /// time `finish` is done: rounded up, so its event never fires before the work is.
    /// NEVER when it falls beyond the clock's range.
    #[inline]
    pub fn wall_time_of(&self, now: SimTime, finish: f64) -> SimTime {
        let remaining = (finish - self.virtual_now).max(0.0);
        now + ceil_to_u64((remaining / self.speed) * 1e9)
    }

    /// Whether a member due at virtual time `finish`, beyond the clock's range at the
    /// current speed, would be in range at standalone speed: then sharing, not the
    /// stage's own length, put it there.
    pub fn slowed_beyond_range(&self, now: SimTime, finish: f64) -> bool {
        let remaining = (finish - self.virtual_now).max(0.0);
        self.speed < 1.0 && now + ceil_to_u64(remaining * 1e9) != SimTime::NEVER
    }
}
