//! What a replay records, in seconds from its start: jobs, kernels' device-busy
//! intervals, bytes moved, and (in the simulator's own types) stage instances and markers.

use crate::trace::recorder::{MarkerEvent, StageInstance};

/// One job's arrival and completion, seconds from the start of the replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobRecord {
    /// Job number (arrival order).
    pub job: u64,
    /// When it arrived.
    pub arrived_s: f64,
    /// When its last stage finished.
    pub finished_s: f64,
}

/// One kernel's device-busy interval, seconds from the start of the replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelSpan {
    /// The GPU it ran on.
    pub gpu: u32,
    /// When the device started it (its reply time less its device time).
    pub start_s: f64,
    /// When its reply arrived.
    pub end_s: f64,
}

/// Everything a replay recorded.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Finished stage instances.
    pub stages: Vec<StageInstance>,
    /// Markers as they fired.
    pub markers: Vec<MarkerEvent>,
    /// Jobs, in completion order.
    pub jobs: Vec<JobRecord>,
    /// Device-busy intervals of GPU kernels, from the kernel's device time ending when
    /// its reply arrived.
    pub kernels: Vec<KernelSpan>,
    /// DRAM bytes moved by CPU kernels and copies, with the time their stage ended.
    pub dram_bytes: Vec<(f64, f64)>,
    /// Wall-clock length of the replay, seconds.
    pub wall_s: f64,
}
