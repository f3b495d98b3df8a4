//! What a run gives back: its summary (with the stall, when jobs were left waiting on
//! holds nobody releases) or the error that stopped it, and the limits it runs under.

use std::fmt;

use crate::model::{LockId, RateTarget, StageId};
use crate::time::SimTime;

use super::sampler::DistributionError;

/// What a finished run reports about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Events processed: job arrivals (a closed loop's too) and stage instance ends
    /// (zero-duration ones too, which never pass through the event queue).
    pub events: u64,
    /// Time of the last event.
    pub end: SimTime,
    /// Jobs that finished.
    pub jobs_completed: u64,
    /// Jobs that arrived.
    pub jobs_started: u64,
    /// Set when the run stopped with jobs unfinished and nothing left to happen.
    pub stalled: Option<Stall>,
}

/// A run that stopped with jobs unfinished: stage instances wait for holds that no
/// running stage will ever release. Reports carry it as it is (its text is its
/// `Display`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    /// The seed of the run that stalled.
    pub seed: u64,
    /// Jobs that finished.
    pub jobs_completed: u64,
    /// Jobs the run was asked for.
    pub jobs_total: u64,
    /// Stage instances still waiting for holdable resources.
    pub waiting_instances: usize,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} jobs finished; {} stage instances wait for holdable resources that are never released",
            self.jobs_completed, self.jobs_total, self.waiting_instances
        )
    }
}

/// A model the engine cannot run (the scenario layer normally catches these first).
#[derive(Debug, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum EngineError {
    /// A duration distribution's parameters are invalid.
    #[error("stage '{stage}': invalid duration distribution: {source}")]
    BadDistribution {
        stage: String,
        source: DistributionError,
    },
    /// A stage holds VRAM on a host without GPUs.
    #[error("stage '{stage}': holds VRAM but the host has no GPU")]
    VramWithoutGpu { stage: String },
    /// A stage holds a per-GPU lock on a host without GPUs.
    #[error("stage '{stage}': holds a per-GPU lock but the host has no GPU")]
    PerGpuLockWithoutGpu { stage: String },
    /// A stage holds a lock that does not exist.
    #[error("stage '{stage}': lock {lock} does not exist")]
    MissingLock { stage: String, lock: LockId },
    /// A hold is released at the end of a stage that does not exist.
    #[error("stage '{stage}': hold until stage {until} does not exist")]
    MissingHoldUntil { stage: String, until: StageId },
    /// A stage draws on a rate resource the host does not have.
    #[error("stage '{stage}': draws on {target:?}, which does not exist")]
    MissingRateTarget { stage: String, target: RateTarget },
    /// An event would fall beyond the nanosecond clock's range (about 584 years): the
    /// model's durations or arrival times are out of range. Caught while running, as a
    /// backstop to the load-time estimate.
    #[error(
        "the simulated clock overflowed at {now_s:.6e} s: {what} would fall beyond its range of about 584 years (2^64 ns)"
    )]
    ClockOverflow {
        /// What was being scheduled.
        what: Overflowed,
        /// Simulated time when it was scheduled, seconds.
        now_s: f64,
    },
    /// A running stage's sharing slowed it so far that its end falls beyond the clock's
    /// range: a rate resource it draws on has no capacity for it (a resource of
    /// capacity 0), or a sharing rule starved it (an engine fault: with every resource's
    /// capacity positive, every running stage progresses).
    #[error("stage '{stage}' cannot progress at {now_s:.6e} s: {why}")]
    NoProgress {
        stage: String,
        /// Simulated time when its end was scheduled, seconds.
        now_s: f64,
        why: Starved,
    },
    /// The run took more steps than its limit (for example a loop of zero-duration
    /// stages that never lets time move on).
    #[error(
        "the run passed its limit of {limit} events (ready, start and end of stage instances) at {now_s:.6e} s with {jobs_completed} jobs finished"
    )]
    EventLimit {
        /// The limit, in events counted as the load-time estimate counts them.
        limit: u64,
        /// Simulated time when it was reached, seconds.
        now_s: f64,
        /// Jobs finished by then.
        jobs_completed: u64,
    },
}

impl EngineError {
    /// True when the model given is at fault (out-of-range times, a run larger than its
    /// limit), not the engine or a missing resource.
    pub fn is_input(&self) -> bool {
        match self {
            EngineError::ClockOverflow { .. } | EngineError::EventLimit { .. } => true,
            EngineError::NoProgress { why, .. } => why.capacity == Some(0.0),
            _ => false,
        }
    }
}

/// What held a stage that cannot progress: its speed and the limit that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Starved {
    /// Its speed, a fraction of standalone.
    pub speed: f64,
    /// The rate resource that held it (None: the DRAM loaded-latency curve).
    pub resource: Option<String>,
    /// That resource's capacity, in its own unit.
    pub capacity: Option<f64>,
}

impl fmt::Display for Starved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.resource, self.capacity) {
            (Some(r), Some(c)) if c <= 0.0 => write!(
                f,
                "it draws on {r}, which has no capacity; give {r} a positive capacity or take the stage's demand on it away"
            ),
            (Some(r), _) => write!(
                f,
                "sharing {r} left it {:.3e} of its standalone speed (a fault of bwsim's sharing rules: please report it with the scenario)",
                self.speed
            ),
            (None, _) => write!(
                f,
                "the DRAM loaded-latency curve slows it to {:.3e} of its standalone speed; check the latency curve's last points",
                self.speed
            ),
        }
    }
}

/// What would have been scheduled beyond the clock's range.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Overflowed {
    /// The arrival of job `job` (0-based).
    Arrival { job: u64 },
    /// The end of an instance of this stage.
    StageEnd { stage: String },
}

impl fmt::Display for Overflowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Overflowed::Arrival { job } => write!(f, "the arrival of job {job}"),
            Overflowed::StageEnd { stage } => write!(f, "the end of stage '{stage}'"),
        }
    }
}

/// Bounds a run checks while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineLimits {
    /// The most events (ready, start and end of stage instances, three per instance, as
    /// the load-time estimate counts them) before the run stops with
    /// [`EngineError::EventLimit`].
    pub max_events: u64,
}

/// The default event limit (the load-time estimate's default cap).
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

impl Default for EngineLimits {
    fn default() -> Self {
        Self {
            max_events: DEFAULT_MAX_EVENTS,
        }
    }
}
