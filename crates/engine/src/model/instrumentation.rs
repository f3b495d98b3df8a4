//! Where the real engine's log markers, timers and spans sit.

use std::fmt;

use super::ids::{MarkerId, StageId};

/// Where the real engine logs markers, which spans it reads as "GPU busy", and which
/// per-partition timers it prints (e.g. cuzk's CUZK_TIMING line).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Instrumentation {
    /// Named points at stage boundaries.
    pub markers: Vec<Marker>,
    /// Named spans between two markers.
    pub spans: Vec<Span>,
    /// Named intervals between two stage boundaries of one partition (or one job).
    pub timers: Vec<Timer>,
    /// First field of the timing log line, e.g. "CUZK_TIMING".
    pub timing_prefix: String,
    /// Sample period of the nvidia-smi view (`gpu.sampled_busy_frac`), seconds; None:
    /// [`DEFAULT_SMI_SAMPLE_PERIOD_S`].
    pub smi_sample_period_s: Option<f64>,
}

/// NVML's utilization.gpu is "percent of time over the past sample period during which
/// one or more kernels was executing"; its documentation (nvmlUtilization_t) gives the
/// sample period as between 1 s and 1/6 s depending on the product. The default takes
/// the shortest, 1/6 s.
pub const DEFAULT_SMI_SAMPLE_PERIOD_S: f64 = 1.0 / 6.0;

impl Instrumentation {
    /// The nvidia-smi view's sample period, seconds.
    pub fn smi_period_s(&self) -> f64 {
        self.smi_sample_period_s
            .unwrap_or(DEFAULT_SMI_SAMPLE_PERIOD_S)
    }
}

/// A timer: milliseconds from one stage boundary to another, printed per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Timer {
    /// Name as the real log prints it, e.g. "prep_msm_ms".
    pub name: String,
    /// Where it starts.
    pub from: (StageId, Edge),
    /// Where it stops.
    pub to: (StageId, Edge),
}

/// A log marker at a stage boundary.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Name as the real log prints it, e.g. "GPU_START".
    pub name: String,
    /// The stage it is attached to.
    pub stage: StageId,
    /// Which boundary of that stage.
    pub edge: Edge,
}

/// Boundaries of a stage instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Edge {
    /// Dependencies done; about to ask for its holds.
    Ready,
    /// Holds acquired; work begins.
    Start,
    /// Work done; holds due now released.
    End,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edge::Ready => "ready",
            Edge::Start => "start",
            Edge::End => "end",
        })
    }
}

/// A span between two markers of the same job (and partition, when both are per partition).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Name, e.g. "GPU".
    pub name: String,
    /// Opening marker.
    pub from: MarkerId,
    /// Closing marker.
    pub to: MarkerId,
    /// The real engine reports this span as "GPU busy" (counts in bracketed utilisation).
    pub gpu_busy: bool,
}
