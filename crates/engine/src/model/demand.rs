//! What a stage draws on while it runs: rate resources and its share of each.

use super::ids::PoolId;

/// A rate a stage draws while running at standalone speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    /// Which rate resource.
    pub target: RateTarget,
    /// Amount per second at standalone speed (GB/s, or threads for a pool, or GPU share).
    pub amount: f64,
}

/// Rate resources a stage can draw on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RateTarget {
    /// Host DRAM bandwidth, GB/s.
    Dram,
    /// A thread pool, threads.
    Pool(PoolId),
    /// Compute of the partition's GPU (1.0 = the whole GPU).
    GpuCompute,
    /// Host-to-device direction of the partition's GPU link, GB/s.
    PcieH2d,
    /// Device-to-host direction of the partition's GPU link, GB/s.
    PcieD2h,
}
