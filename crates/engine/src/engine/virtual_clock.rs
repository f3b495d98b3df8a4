//! A fluid class's virtual clock: how far its members have progressed in standalone
//! seconds, at what speed, and the wall time they lost to sharing, by cause. Shared by
//! the general classes and the lane's one class, so both keep the same arithmetic.

use crate::time::SimTime;

use super::observer::{Limiter, Loss};

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
}
