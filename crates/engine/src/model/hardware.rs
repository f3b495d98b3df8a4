//! The host: cores, RAM, GPUs, locks, thread pools and what a core yields.

use super::dram::Dram;
use super::model_error::CpuThroughputError;
use super::pcie::PcieLink;

/// The host's resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    /// CPU cores (hardware threads) that stages can hold.
    pub cpu_cores: u32,
    /// Host RAM in bytes, a holdable resource.
    pub host_ram_bytes: u64,
    /// The shared DRAM system.
    pub dram: Dram,
    /// Identical GPUs, each on its own PCIe link.
    pub gpus: Vec<Gpu>,
    /// Named holdable locks/semaphores (FIFO).
    pub locks: Vec<Lock>,
    /// Named thread pools, shared by fluid sharing (a rate resource measured in threads).
    pub pools: Vec<Pool>,
}

/// One GPU and its PCIe link.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// Display name, e.g. "gpu0".
    pub name: String,
    /// Device memory in bytes, a holdable resource.
    pub vram_bytes: u64,
    /// The link between host memory and this GPU.
    pub link: PcieLink,
}

/// A named holdable lock or counting semaphore.
#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    /// Name used by stages.
    pub name: String,
    /// Units available (1 for a mutex). Per GPU when `per_gpu`.
    pub capacity: u64,
    /// One instance of this lock per GPU; holding it binds the partition to a GPU.
    pub per_gpu: bool,
}

/// A named thread pool: a rate resource whose capacity is a number of threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    /// Name used by stages.
    pub name: String,
    /// Threads in the pool.
    pub threads: f64,
    /// How a saturated pool is shared (default: by activity, the v1 rule).
    pub sharing: PoolSharing,
    /// How fast its threads compute with many active (None: always as fast as alone).
    pub cpu: Option<CpuThroughput>,
}

/// How a saturated thread pool is shared among the stages drawing on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PoolSharing {
    /// Max-min on each activity's threads (v1): a one-thread stage keeps its thread while
    /// wide stages share the rest.
    #[default]
    ByActivity,
    /// Every runnable thread gets the same share, as Linux's CFS scheduler gives
    /// unpinned threads of equal priority: every stage bound by the pool slows by the
    /// same fraction, `threads / sum of threads wanted`.
    PerThread,
}

impl PoolSharing {
    /// Parses a scenario name: "by-activity" or "per-thread".
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "by-activity" => Some(Self::ByActivity),
            "per-thread" => Some(Self::PerThread),
            _ => None,
        }
    }

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ByActivity => "by-activity",
            Self::PerThread => "per-thread",
        }
    }
}

/// Compute throughput of a pool's threads as more of them are active: physical cores x
/// threads per core, what a second SMT thread adds, and the throughput per core vs
/// active cores (all-core frequency falls below single-core boost).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuThroughput {
    /// Physical cores under the pool's threads.
    pub physical_cores: u32,
    /// Hardware threads per core (1 without SMT).
    pub threads_per_core: u32,
    /// Both SMT siblings busy, total / one alone (1: no gain, 2: perfect).
    pub smt_yield: f64,
    /// (active cores, throughput per core relative to one core alone), sorted by cores;
    /// piecewise linear, held flat outside.
    pub per_core: Vec<(f64, f64)>,
}

impl CpuThroughput {
    /// Checks the numbers; the error says what is wrong.
    pub fn validate(&self) -> Result<(), CpuThroughputError> {
        if self.physical_cores == 0 || self.threads_per_core == 0 {
            return Err(CpuThroughputError::NoCores);
        }
        if !(1.0..=self.threads_per_core as f64).contains(&self.smt_yield) {
            return Err(CpuThroughputError::SmtYield {
                smt_yield: self.smt_yield,
                threads_per_core: self.threads_per_core,
            });
        }
        if self.per_core.is_empty() {
            return Err(CpuThroughputError::NoPoints);
        }
        for (point, &(cores, relative)) in self.per_core.iter().enumerate() {
            let ok = cores >= 1.0 && cores.is_finite() && relative > 0.0 && relative.is_finite();
            if !ok {
                return Err(CpuThroughputError::BadPoint {
                    point,
                    cores,
                    relative,
                });
            }
            if point > 0 && cores <= self.per_core[point - 1].0 {
                return Err(CpuThroughputError::CoresNotRising { point });
            }
        }
        Ok(())
    }

    /// Relative throughput of one core with `cores` cores active.
    fn per_core_at(&self, cores: f64) -> f64 {
        let p = &self.per_core;
        if cores <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((n0, r0), (n1, r1)) = (w[0], w[1]);
            if cores <= n1 {
                return r0 + (r1 - r0) * (cores - n0) / (n1 - n0);
            }
        }
        p[p.len() - 1].1
    }

    /// Compute throughput of one thread with `threads` threads active (relative to one
    /// thread alone on an idle host). Threads fill one per core first, then SMT siblings:
    /// a core running two threads yields `smt_yield`, shared by both.
    pub fn per_thread(&self, threads: f64) -> f64 {
        let n = threads.max(1.0);
        let cores = self.physical_cores as f64;
        let busy_cores = n.min(cores);
        let shared = (n - cores).clamp(0.0, cores * (self.threads_per_core as f64 - 1.0));
        // Cores running siblings: each extra thread pairs with a lone one.
        let paired = shared.min(cores);
        let total =
            self.per_core_at(busy_cores) * ((busy_cores - paired) + paired * self.smt_yield);
        total / n.min(cores * self.threads_per_core as f64) / self.per_core_at(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smt_siblings_share_what_a_core_yields() {
        // 8 cores x 2 threads, a second sibling adds 25%, flat per-core throughput.
        // 12 threads: 4 cores run pairs (1.25 each), 4 run one thread: 9 / 12 = 0.75.
        // 16 threads: 8 x 1.25 / 16 = 0.625. Up to 8 threads: 1.
        let cpu = CpuThroughput {
            physical_cores: 8,
            threads_per_core: 2,
            smt_yield: 1.25,
            per_core: vec![(1.0, 1.0)],
        };
        assert!(cpu.validate().is_ok());
        assert_eq!(cpu.per_thread(8.0), 1.0);
        assert!((cpu.per_thread(12.0) - 0.75).abs() < 1e-12);
        assert!((cpu.per_thread(16.0) - 0.625).abs() < 1e-12);
        // All-core frequency: 0.9 per core with 8 active, on top of SMT.
        let freq = CpuThroughput {
            per_core: vec![(1.0, 1.0), (8.0, 0.9)],
            ..cpu
        };
        assert!((freq.per_thread(16.0) - 0.9 * 0.625).abs() < 1e-12);
        assert!(
            CpuThroughput {
                smt_yield: 3.0,
                ..freq
            }
            .validate()
            .is_err()
        );
    }
}
