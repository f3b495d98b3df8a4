//! The finished result of one run: totals and integrals over the measurement window,
//! grouped by meaning. [`super::metrics::Metrics::finish`] builds it; the bottleneck
//! analysis and the report only read it.

use super::bracket_measures::BracketMeasures;
use super::gap::GapTotals;
use crate::engine::{HoldResourceInfo, Limiter, Loss, RateId, RateKind, RateResourceInfo, Stall};

/// How the run ended, as the engine summarised it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunTotals {
    /// Jobs that finished (warm-up included).
    pub jobs_completed: u64,
    /// Simulated time of the last event, seconds.
    pub end_s: f64,
    /// Events the engine processed.
    pub events: u64,
}

/// The measurement window and the jobs counted in it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowTotals {
    /// Length of the measurement window, seconds.
    pub window_s: f64,
    /// Jobs completed inside the window (throughput's numerator).
    pub completions: u64,
    /// Jobs counted in statistics (every job after the warm-up ones).
    pub measured_jobs: u64,
    /// Sum of measured jobs' response times (arrival to finish), seconds.
    pub response_sum_s: f64,
    /// Longest measured response time, seconds.
    pub response_max_s: f64,
}

impl WindowTotals {
    /// Window / jobs completed in it; NaN when none completed.
    pub fn seconds_per_job(&self) -> f64 {
        if self.completions > 0 {
            self.window_s / self.completions as f64
        } else {
            f64::NAN
        }
    }

    /// Mean response time of measured jobs; NaN when none finished.
    pub fn response_mean_s(&self) -> f64 {
        if self.measured_jobs > 0 {
            self.response_sum_s / self.measured_jobs as f64
        } else {
            f64::NAN
        }
    }

    /// A time integral divided by the window (0 for an empty window).
    pub fn per_window(&self, integral: f64) -> f64 {
        if self.window_s > 0.0 {
            integral / self.window_s
        } else {
            0.0
        }
    }
}

/// Sums over the measured instances of one stage.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StageTotals {
    /// Instances measured.
    pub count: u64,
    /// Sum of actual running times (start to end), seconds.
    pub actual_s: f64,
    /// Sum of standalone durations, seconds.
    pub standalone_s: f64,
    /// Sum of waits for holds (ready to start), seconds.
    pub wait_s: f64,
    /// Sum of seconds lost, by cause (rates indexed like [`RunStats::rates`]).
    pub lost: Loss,
    /// Sum of hold-wait seconds per holdable that caused them (indexed like
    /// [`RunStats::holds`]).
    pub wait_by_hold_s: Vec<f64>,
    /// Sum of (end - ready), seconds.
    pub ready_to_end_s: f64,
}

impl StageTotals {
    /// Seconds lost per cause, in the engine's order (rates first, latency last).
    pub fn losses(&self) -> impl Iterator<Item = (Limiter, f64)> + '_ {
        self.lost.entries()
    }
}

/// Mean length of one instrumentation span over measured jobs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpanTotals {
    /// Sum of span lengths, seconds.
    pub sum_s: f64,
    /// Spans closed.
    pub count: u64,
}

/// The three views of "GPU busy" as integrals over the window, per GPU.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuTotals {
    /// Seconds any kernel ran, per GPU.
    pub kernel_busy_s: Vec<f64>,
    /// The gpu_busy brackets over the window: their union and their sum.
    pub brackets: BracketMeasures,
    /// Seconds of gpu_busy spans closed by measured jobs (summed over all spans).
    pub bracketed_span_total_s: f64,
    /// Seconds of the sample windows in which any kernel ran (the nvidia-smi view), per GPU.
    pub sampled_busy_s: Vec<f64>,
    /// Per instrumentation span, in model order.
    pub spans: Vec<SpanTotals>,
    /// What the gpu_busy spans of measured jobs were spent on.
    pub gap: GapTotals,
}

impl GpuTotals {
    /// Number of GPUs the fractions average over (at least one).
    pub fn count(&self) -> f64 {
        self.kernel_busy_s.len().max(1) as f64
    }
}

/// DRAM latency over the window (its bandwidth is one of the rate resources).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DramTotals {
    /// Index of the DRAM rate resource in [`RunStats::rates`], if there is one.
    pub rate_index: Option<usize>,
    /// Integral of L(u)/L(0) over the window, seconds.
    pub slowdown_integral: f64,
    /// Peak L(u)/L(0) inside the window.
    pub slowdown_max: f64,
    /// How DRAM's usable capacity moved with its streams, when it loses efficiency per
    /// stream (None: the nominal capacity was usable throughout).
    pub usable: Option<UsableTotals>,
}

/// Integrals over the window of DRAM's usable capacity and what filled it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsableTotals {
    /// Integral of the usable capacity, GB/s x seconds.
    pub gbps_integral: f64,
    /// Integral of the streams drawing on DRAM, streams x seconds.
    pub streams_integral: f64,
    /// Integral of DRAM draw / usable capacity, seconds.
    pub share_integral: f64,
}

/// Use of one rate resource over the window.
#[derive(Debug, Clone)]
pub struct RateTotals {
    /// The resource as the engine numbers it.
    pub info: RateResourceInfo,
    /// Integral of its draw over the window (unit x seconds).
    pub usage_integral: f64,
    /// Peak draw inside the window.
    pub peak: f64,
}

/// Use of one holdable resource instance over the window.
#[derive(Debug, Clone)]
pub struct HoldTotals {
    /// The instance as the engine numbers it.
    pub info: HoldResourceInfo,
    /// Integral of its units in use over the window (unit x seconds).
    pub in_use_integral: f64,
    /// Peak units in use.
    pub peak: u64,
    /// Seconds measured stages waited because of it.
    pub wait_s: f64,
}

/// Everything one run measured, immutable once built.
#[derive(Debug, Clone)]
pub struct RunStats {
    /// How the run ended.
    pub run: RunTotals,
    /// Throughput and response over the window.
    pub window: WindowTotals,
    /// Per stage, in model order.
    pub stages: Vec<StageTotals>,
    /// GPU busy views and spans.
    pub gpu: GpuTotals,
    /// DRAM latency.
    pub dram: DramTotals,
    /// Per rate resource, in the engine's order.
    pub rates: Vec<RateTotals>,
    /// Per holdable instance, in the engine's order.
    pub holds: Vec<HoldTotals>,
    /// Little's law: integral of jobs in system over the window.
    pub in_system_integral: f64,
    /// Why the run stopped with jobs unfinished, if it did.
    pub stalled: Option<Stall>,
}

impl RunStats {
    /// Mean utilisation of each rate resource over the window (0..1).
    pub fn rate_utilisation(&self) -> Vec<f64> {
        let w = self.window.window_s;
        self.rates
            .iter()
            .map(|r| {
                if w > 0.0 && r.info.capacity > 0.0 {
                    r.usage_integral / w / r.info.capacity
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Mean occupancy of each holdable (in use / capacity) over the window (0..1).
    pub fn hold_occupancy(&self) -> Vec<f64> {
        let w = self.window.window_s;
        self.holds
            .iter()
            .map(|h| {
                if w > 0.0 && h.info.capacity > 0 {
                    h.in_use_integral / w / h.info.capacity as f64
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// The DRAM rate resource, if the engine has one.
    pub fn dram_rate(&self) -> Option<&RateTotals> {
        self.dram.rate_index.map(|i| &self.rates[i])
    }

    /// Name of a loss cause: the rate resource's name, or "dram_latency".
    pub fn loss_name(&self, cause: Limiter) -> &str {
        match cause {
            Limiter::Rate(r) => &self.rate(r).info.name,
            Limiter::DramLatency => "dram_latency",
        }
    }

    /// A rate resource's totals.
    pub fn rate(&self, rate: RateId) -> &RateTotals {
        &self.rates[rate.index()]
    }

    /// The kind of a rate resource.
    pub fn rate_kind(&self, rate: RateId) -> RateKind {
        self.rate(rate).info.kind
    }
}
