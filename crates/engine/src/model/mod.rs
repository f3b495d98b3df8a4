//! The typed, validated model the engine runs: hardware, workload, arrivals and
//! instrumentation. No I/O and no TOML here: `scenario` builds a [`Model`] from files,
//! tests and benchmarks build one directly.
//!
//! Units are carried by the field names (`_s` seconds, `_gbps` 10^9 bytes per second,
//! `_bytes`) and by the [`crate::time::SimTime`] type for simulated time.

mod arrivals;
mod demand;
mod dram;
mod duration;
mod hardware;
mod ids;
mod instrumentation;
mod model_error;
mod pcie;
mod stretch;
mod workload;

pub use arrivals::{ArrivalKind, Arrivals};
pub use demand::{Demand, RateTarget};
pub use dram::{Dram, DramPolicy, DramSharing, LatencyCurve};
pub use duration::Duration;
pub use hardware::{CpuThroughput, Gpu, Hardware, Lock, Pool, PoolSharing};
pub use ids::{LockId, MarkerId, PoolId, StageId};
pub use instrumentation::{
    DEFAULT_SMI_SAMPLE_PERIOD_S, Edge, Instrumentation, Marker, Span, Timer,
};
pub use model_error::{CpuThroughputError, CurveError, LoadAxis};
pub use pcie::{
    CopyDemand, CopyDir, CopyLatencyFrac, LinkCopy, MemcpyPace, PageableStaging, PcieLink,
    StagedCopy, StreamNeighbourCurve,
};
pub use stretch::stretch_at;
pub use workload::{CpuLoad, Hold, HoldResource, HostThread, NeighbourRatios, Stage, Workload};

/// Bytes in one cache line: what one line in flight (Little's law) or one pointer-chase
/// step moves.
pub const CACHE_LINE_BYTES: f64 = 64.0;

/// A whole scenario, ready to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Scenario name (used in reports and plot titles).
    pub name: String,
    /// Seed of the run's random number generator.
    pub seed: u64,
    /// The host: cores, DRAM, GPUs and their links, RAM, locks, pools.
    pub hardware: Hardware,
    /// What one job (e.g. one proof) does.
    pub workload: Workload,
    /// How jobs arrive and how many are simulated.
    pub arrivals: Arrivals,
    /// Where the real engine's log markers sit.
    pub instrumentation: Instrumentation,
}

impl Model {
    /// Looks a stage up by name.
    pub fn stage_id(&self, name: &str) -> Option<StageId> {
        self.workload.stages.iter().position(|s| s.name == name)
    }
}
