//! The rule set a scenario runs under, and what each rule set assumes for a key the
//! scenario (and its calibration) leaves out.
//!
//! `rules = "v2"` (the default) is the best physics measured so far: DRAM latency
//! read at offered load, DMA sharing per direction, streaming threads bound by the lines
//! they keep in flight, threads sharing cores as Linux does, and copies that wait on
//! DRAM latency. A calibration file states the host's own values; where a scenario has
//! none, the typical values below (each measured on the H200 test host, see
//! docs/model-v2.md) stand in. `rules = "v1"` reproduces the first model's answers (plain
//! max-min sharing, latency on achieved utilisation, no per-thread bound) for comparing
//! with old results.

use crate::model::{CopyLatencyFrac, DramPolicy, PoolSharing};

/// Which rules a scenario's host follows where it does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rules {
    /// Model v2: the measured mechanisms (the default).
    #[default]
    V2,
    /// Model v1, for reproducing old results.
    V1,
}

impl Rules {
    /// Every name `rules` accepts, for error messages.
    pub const NAMES: &'static str = "\"v2\" (default) or \"v1\"";

    /// Parses the scenario's `rules` value.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "v2" => Some(Self::V2),
            "v1" => Some(Self::V1),
            _ => None,
        }
    }

    /// Loaded latency is a function of offered load (demand / capacity, past 1 while
    /// queues build) rather than of achieved utilisation.
    pub fn latency_on_offered_load(self) -> bool {
        self == Self::V2
    }

    /// DRAM policy of pinned DMAs, (H2D, D2H): a device reading host memory slows with
    /// the CPU streams by the same fraction; posted device writes keep their rate.
    pub fn dma_policies(self) -> (DramPolicy, DramPolicy) {
        match self {
            Self::V2 => (DramPolicy::Proportional, DramPolicy::Priority),
            Self::V1 => (DramPolicy::MaxMin, DramPolicy::MaxMin),
        }
    }

    /// Cache lines a streaming CPU thread keeps in flight at least. A stage keeps more
    /// when its own standalone draw implies more (the engine's floor), so this only
    /// matters for threads drawing less than `lines x 64 B / idle latency` alone. The
    /// typical value is the H200 host's read stream: 10.4 GB/s x 146 ns / 64 B = 24 lines.
    pub fn lines_in_flight_per_thread(self) -> Option<f64> {
        match self {
            Self::V2 => Some(TYPICAL_LINES_IN_FLIGHT),
            Self::V1 => None,
        }
    }

    /// How a pool's threads share its CPUs: per runnable thread, as Linux CFS shares
    /// unpinned threads of equal priority (measured by replay on the H200 host).
    pub fn pool_sharing(self) -> PoolSharing {
        match self {
            Self::V2 => PoolSharing::PerThread,
            Self::V1 => PoolSharing::ByActivity,
        }
    }

    /// GPU kernels stretch with the CPU threads busy beside them, by the curve a
    /// calibration measured (`hardware.gpu.cpu_load`). There is no typical curve: the
    /// stretch depends on the kernel's host side and the host, so without a measured
    /// one a kernel keeps its time. v1: never.
    pub fn kernel_cpu_load(self) -> bool {
        self == Self::V2
    }

    /// Share of each kind of copy that waits on DRAM latency: the median of the four
    /// H200 calibrations of 2026-12-01 (pinned H2D 0.13-0.22, D2H 0.003-0.05; pageable
    /// H2D 0.40-1.0, D2H 0.03-0.36). v1: no copy waits on latency.
    pub fn copy_latency_frac(self) -> CopyLatencyFrac {
        match self {
            Self::V2 => TYPICAL_COPY_LATENCY_FRAC,
            Self::V1 => CopyLatencyFrac::default(),
        }
    }
}

/// See [`Rules::lines_in_flight_per_thread`].
pub const TYPICAL_LINES_IN_FLIGHT: f64 = 24.0;

/// See [`Rules::copy_latency_frac`].
pub const TYPICAL_COPY_LATENCY_FRAC: CopyLatencyFrac = CopyLatencyFrac {
    pinned_h2d: 0.21,
    pinned_d2h: 0.02,
    pageable_h2d: 0.68,
    pageable_d2h: 0.10,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_v1_is_the_plain_model() {
        assert_eq!(Rules::parse("v2"), Some(Rules::V2));
        assert_eq!(Rules::parse("v1"), Some(Rules::V1));
        assert_eq!(Rules::parse("measured"), None);
        // The error message names exactly what parses.
        for name in Rules::NAMES.split('"').skip(1).step_by(2) {
            assert!(Rules::parse(name).is_some(), "{name}");
        }
        assert_eq!(Rules::default(), Rules::V2);
        let v1 = Rules::V1;
        assert!(!v1.latency_on_offered_load());
        assert_eq!(v1.dma_policies(), (DramPolicy::MaxMin, DramPolicy::MaxMin));
        assert_eq!(v1.lines_in_flight_per_thread(), None);
        assert_eq!(v1.pool_sharing(), PoolSharing::ByActivity);
        assert_eq!(v1.copy_latency_frac(), CopyLatencyFrac::default());
        assert!(!v1.kernel_cpu_load() && Rules::V2.kernel_cpu_load());
    }
}
