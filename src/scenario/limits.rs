//! Load-time estimates of what a run will cost (events, memory, simulated time), so
//! that a few characters of input cannot ask for gigabytes, run for days or overflow the
//! nanosecond clock unnoticed (the offered-load warning is offered_load.rs). Each error names
//! the key that drives the estimate and how to raise the cap.

use crate::model::{ArrivalKind, Model};

use super::error::{ErrorKind, Locator, ScenarioError};

/// Caps on a run's estimated size; `--max-events` and `--max-memory-gib` raise them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most engine events a run may be estimated to take.
    pub max_events: u64,
    /// The most bytes of simulation state a run may be estimated to hold at once.
    pub max_memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_events: DEFAULT_MAX_EVENTS,
            max_memory_bytes: DEFAULT_MAX_MEMORY_GIB << 30,
        }
    }
}

/// Default event cap: about two minutes of a release build (several million events/s).
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;
/// Default cap on estimated simulation state, GiB.
pub const DEFAULT_MAX_MEMORY_GIB: u64 = 8;
/// The latest simulated time a run may be estimated to reach: half the range of the
/// nanosecond clock (about 292 years), leaving room for distribution tails.
pub const MAX_SIMULATED_S: f64 = u64::MAX as f64 * 1e-9 / 2.0;
/// The largest GPU count accepted whatever the limits (each GPU is a lane, a VRAM pool
/// and a PCIe link in the engine).
pub const MAX_GPUS: u32 = 65_536;

/// Events per stage instance (ready, start, end) as the estimate counts them.
const EVENTS_PER_INSTANCE: f64 = 3.0;
/// Bytes of engine state per stage instance in flight (job slab, holds, fluid class).
const BYTES_PER_INSTANCE: f64 = 256.0;
/// Bytes per GPU (lanes, pools, links, per-GPU locks and their statistics) and per
/// replayed trace arrival. Per GPU: measured at about 41 KiB (`run` of scenarios/demo.toml
/// with 1,024 to 16,384 GPUs, peak RSS); 4 KiB let a 65,536-GPU run peak at 2.6 GiB under
/// `--max-memory-gib 1`.
const BYTES_PER_GPU: f64 = 48.0 * 1024.0;
const BYTES_PER_ARRIVAL: f64 = 8.0;

/// Stage instances per job: per-job stages once, per-partition stages once per partition.
fn instances_per_job(m: &Model) -> f64 {
    let p = f64::from(m.workload.partitions);
    m.workload
        .stages
        .iter()
        .map(|s| if s.per_partition { p } else { 1.0 })
        .sum()
}

/// The key that makes a job large: partitions when per-partition stages multiply it.
fn size_key(m: &Model) -> &'static str {
    let per_partition = m.workload.stages.iter().any(|s| s.per_partition);
    if per_partition && f64::from(m.workload.partitions) > m.arrivals.jobs as f64 {
        "workload.partitions"
    } else {
        "arrivals.jobs"
    }
}

/// Checks the estimates against `limits` and the clock's range.
pub fn check(m: &Model, limits: &Limits, loc: &Locator) -> Result<(), ScenarioError> {
    let per_job = instances_per_job(m);
    let jobs = m.arrivals.jobs as f64;
    let events = jobs * per_job * EVENTS_PER_INSTANCE;
    if events > limits.max_events as f64 {
        return Err(loc.error(
            ErrorKind::Value,
            size_key(m),
            format!(
                "the run would take about {events:.3e} events ({} jobs x {per_job} stage instances per job x {EVENTS_PER_INSTANCE}), above the limit of {}; lower it, or raise the limit with --max-events",
                m.arrivals.jobs, limits.max_events
            ),
        ));
    }
    let (in_flight, flight_key) = match &m.arrivals.kind {
        ArrivalKind::Closed { concurrency } => (
            f64::from(*concurrency).min(jobs),
            if f64::from(*concurrency) <= jobs {
                "arrivals.concurrency"
            } else {
                "arrivals.jobs"
            },
        ),
        // An open queue may hold every job at once when overloaded.
        _ => (jobs, "arrivals.jobs"),
    };
    let trace_len = match &m.arrivals.kind {
        ArrivalKind::Trace { times_s } => times_s.len() as f64,
        _ => 0.0,
    };
    let jobs_bytes = in_flight * per_job * BYTES_PER_INSTANCE;
    let gpu_bytes = m.hardware.gpus.len() as f64 * BYTES_PER_GPU;
    let memory = jobs_bytes + gpu_bytes + trace_len * BYTES_PER_ARRIVAL;
    if memory > limits.max_memory_bytes as f64 {
        let key = if gpu_bytes > jobs_bytes {
            "hardware.gpu.count"
        } else if per_job > in_flight {
            size_key(m)
        } else {
            flight_key
        };
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!(
                "the run would hold about {:.1} GiB of simulation state ({in_flight} jobs in flight x {per_job} stage instances each{}), above the limit of {} GiB; lower it, or raise the limit with --max-memory-gib",
                memory / (1u64 << 30) as f64,
                if gpu_bytes > jobs_bytes {
                    format!(", {} GPUs", m.hardware.gpus.len())
                } else {
                    String::new()
                },
                limits.max_memory_bytes >> 30
            ),
        ));
    }
    check_clock(m, per_job, in_flight, loc)
}

/// The run must end well inside the nanosecond clock: a lower bound on the end time
/// (the last arrival, and all the work spread over every job in flight) must not
/// exceed [`MAX_SIMULATED_S`].
fn check_clock(
    m: &Model,
    per_job: f64,
    in_flight: f64,
    loc: &Locator,
) -> Result<(), ScenarioError> {
    let limit = MAX_SIMULATED_S;
    let years = |s: f64| s / (365.25 * 86400.0);
    for (i, s) in m.workload.stages.iter().enumerate() {
        let mean = s.duration.mean_s();
        // NaN counts as past the limit too.
        if mean.is_nan() || mean > limit {
            return Err(loc.error(
                ErrorKind::Value,
                &format!("workload.stages[{i}]"),
                format!(
                    "stage {:?} has a mean duration of {mean:e} s; the simulated clock reaches only {limit:.3e} s (about {:.0} years)",
                    s.name,
                    years(limit)
                ),
            ));
        }
    }
    let jobs = m.arrivals.jobs as f64;
    let last_arrival = match &m.arrivals.kind {
        ArrivalKind::Closed { .. } => 0.0,
        ArrivalKind::Poisson { rate_per_s } => jobs / rate_per_s,
        ArrivalKind::Trace { times_s } => times_s
            .get(m.arrivals.jobs.saturating_sub(1) as usize)
            .or(times_s.last())
            .copied()
            .unwrap_or(0.0),
    };
    if last_arrival > limit {
        let key = match m.arrivals.kind {
            ArrivalKind::Poisson { .. } => "arrivals.rate_per_s",
            _ => "arrivals.trace",
        };
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!(
                "arrivals run to about {last_arrival:.3e} s; the simulated clock reaches only {limit:.3e} s (about {:.0} years)",
                years(limit)
            ),
        ));
    }
    let work: f64 = m
        .workload
        .stages
        .iter()
        .map(|s| {
            let n = if s.per_partition {
                f64::from(m.workload.partitions)
            } else {
                1.0
            };
            n * s.duration.mean_s()
        })
        .sum();
    // Work spread over every instance that could be in flight, or rounds of the longest
    // stage when jobs outnumber the jobs in flight: both bound the end from below.
    let parallel = in_flight.max(1.0) * (per_job.max(1.0));
    let longest = m
        .workload
        .stages
        .iter()
        .map(|s| s.duration.mean_s())
        .fold(0.0, f64::max);
    let rounds = (jobs / in_flight.max(1.0)).ceil();
    let end = (jobs * work / parallel).max(rounds * longest);
    if end > limit {
        return Err(loc.error(
            ErrorKind::Value,
            "arrivals.jobs",
            format!(
                "{} jobs of {work:.3e} s of stage work each need at least {end:.3e} s of simulated time even fully parallel; the clock reaches only {limit:.3e} s (about {:.0} years)",
                m.arrivals.jobs,
                years(limit)
            ),
        ));
    }
    Ok(())
}
