//! How jobs arrive and how many are simulated.

/// How jobs arrive.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrivals {
    /// The arrival process.
    pub kind: ArrivalKind,
    /// Jobs to simulate in total (including warm-up).
    pub jobs: u64,
    /// The first jobs to complete are excluded from statistics.
    pub warmup_jobs: u64,
}

/// Arrival processes.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrivalKind {
    /// N jobs in flight; the next starts when one finishes.
    Closed { concurrency: u32 },
    /// Open-loop Poisson arrivals.
    Poisson { rate_per_s: f64 },
    /// Replayed arrival times in seconds (sorted ascending).
    Trace { times_s: Vec<f64> },
}
