//! What every event loop of a run keeps, the general one and the lane's alike: the
//! clock, the event queue, the random streams, the counters, the event limit and the
//! fault that stops the run; and the summary it ends with.

use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::model::{ArrivalKind, Model};
use crate::time::SimTime;

use super::arrivals::Arrivals;
use super::ids::ClassId;
use super::observer::{Limiter, RateResourceInfo};
use super::outcome::{EngineError, EngineLimits, Overflowed, RunSummary, Stall, Starved};
use super::queue::EventQueue;
use super::solver::ClassSpeed;

/// An event of the queue.
#[derive(Clone, Copy)]
pub(super) enum Event {
    Arrival,
    /// A fluid class's next member may be done (the class's one pending completion,
    /// in the queue slot of its index; a lane run's one class is [`ClassId::FIRST`]).
    ClassDue(ClassId),
    /// An unshared activity (slot) reaches its end: it runs at speed 1 whatever else
    /// runs, so it is scheduled once, at start + its standalone time, outside any class.
    Done(usize),
}

/// The loop's own state.
pub(super) struct EventLoop<'m> {
    pub model: &'m Model,
    /// Events to come.
    pub queue: EventQueue<Event>,
    /// Service-time sampling stream.
    pub rng: Pcg64,
    arrivals: Arrivals,
    pub now: SimTime,
    pub events: u64,
    pub started: u64,
    pub completed: u64,
    /// Zero-time steps (readies, starts, finishes) left before the event limit.
    steps_left: u64,
    limits: EngineLimits,
    /// Set when the run must stop with an error (checked once per event).
    pub fault: Option<EngineError>,
}

impl<'m> EventLoop<'m> {
    pub fn new(model: &'m Model, limits: EngineLimits) -> Self {
        Self {
            model,
            queue: EventQueue::default(),
            rng: Pcg64::seed_from_u64(model.seed),
            arrivals: Arrivals::new(&model.arrivals.kind, model.seed),
            now: SimTime::ZERO,
            events: 0,
            started: 0,
            completed: 0,
            steps_left: limits.max_events,
            limits,
            fault: None,
        }
    }

    /// Jobs a closed loop starts at t = 0, or None for open arrivals, whose first
    /// arrival this schedules instead (a fault there is the run's, with nothing else
    /// begun).
    pub fn begin_arrivals(&mut self) -> Option<u64> {
        match &self.model.arrivals.kind {
            ArrivalKind::Closed { concurrency } => {
                Some((*concurrency as u64).min(self.model.arrivals.jobs))
            }
            ArrivalKind::Poisson { .. } | ArrivalKind::Trace { .. } => {
                self.schedule_next_arrival();
                None
            }
        }
    }

    /// Whether a job that just finished makes room for the next one now: closed arrivals
    /// with jobs left to start.
    #[inline]
    pub fn closed_loop_has_more(&self) -> bool {
        matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
            && self.started < self.model.arrivals.jobs
    }

    /// Records `fault` as what stops the run (the first one wins).
    #[cold]
    pub fn fail(&mut self, fault: EngineError) {
        self.fault.get_or_insert(fault);
    }

    /// Schedules `event` at `at`; false (the run failed) when `at` is beyond the clock's
    /// range (the arithmetic saturates there).
    pub fn schedule(
        &mut self,
        at: SimTime,
        event: Event,
        what: impl FnOnce() -> Overflowed,
    ) -> bool {
        if at == SimTime::NEVER {
            let what = what();
            self.fail(EngineError::ClockOverflow {
                what,
                now_s: self.now.as_secs(),
            });
            return false;
        }
        self.queue.push(at, event);
        true
    }

    pub fn advance_to(&mut self, t: SimTime) {
        debug_assert!(t >= self.now);
        self.now = t;
    }

    /// Schedules the next arrival, if jobs are left to start; false when that failed
    /// the run.
    pub fn schedule_next_arrival(&mut self) -> bool {
        if self.started >= self.model.arrivals.jobs {
            return true;
        }
        let kind = &self.model.arrivals.kind;
        match self.arrivals.next(kind, self.now, self.started) {
            Some(at) => {
                let job = self.started;
                self.schedule(at, Event::Arrival, || Overflowed::Arrival { job })
            }
            None => true,
        }
    }

    /// Counts one zero-time step against the event limit; false (the run failed with
    /// `EventLimit`) when none is left.
    #[inline]
    pub fn take_step(&mut self) -> bool {
        if self.steps_left == 0 {
            self.fail(EngineError::EventLimit {
                limit: self.limits.max_events,
                now_s: self.now.as_secs(),
                jobs_completed: self.completed,
            });
            return false;
        }
        self.steps_left -= 1;
        true
    }

    /// The run's end: its fault, or its summary (with the stall when jobs are left,
    /// `waiting_instances` of them waiting for holds).
    pub fn finish(&mut self, waiting_instances: usize) -> Result<RunSummary, EngineError> {
        if let Some(fault) = self.fault.take() {
            return Err(fault);
        }
        let total = self.model.arrivals.jobs;
        let stalled = (self.completed < total).then_some(Stall {
            seed: self.model.seed,
            jobs_completed: self.completed,
            jobs_total: total,
            waiting_instances,
        });
        Ok(RunSummary {
            events: self.events,
            end: self.now,
            jobs_completed: self.completed,
            jobs_started: self.started,
            stalled,
        })
    }

    /// The error for a stage whose end falls beyond the clock's range: its sharing's
    /// fault when `starved` names the speed that put it there (held by one of `rates`,
    /// or by DRAM latency), else its own length's.
    pub fn beyond_range(
        &self,
        rates: &[RateResourceInfo],
        stage: String,
        starved: Option<ClassSpeed>,
    ) -> EngineError {
        let now_s = self.now.as_secs();
        let Some(s) = starved else {
            return EngineError::ClockOverflow {
                what: Overflowed::StageEnd { stage },
                now_s,
            };
        };
        let rate = match s.limiter {
            Some(Limiter::Rate(r)) => rates.get(r.index()),
            _ => None,
        };
        EngineError::NoProgress {
            stage,
            now_s,
            why: Starved {
                speed: s.speed,
                resource: rate.map(|r| r.name.clone()),
                capacity: rate.map(|r| r.capacity),
            },
        }
    }
}
