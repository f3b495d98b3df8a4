//! What one job does: its stages, their holds and the rates they draw on.

use super::demand::Demand;
use super::duration::Duration;
use super::ids::{LockId, PoolId, StageId};
use super::pcie::StagedCopy;

/// What one job does: a DAG of stages, some repeated per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// What one job is called in reports ("job", or "proof" where a job is a proof); the
    /// engine never reads it.
    pub job_name: String,
    /// How many partitions a job has (stages with `per_partition` run once for each).
    pub partitions: u32,
    /// Stages in topological order (every stage's `after` points to earlier stages).
    pub stages: Vec<Stage>,
}

/// One step of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Unique name.
    pub name: String,
    /// Runs once per partition (true) or once per job (false).
    pub per_partition: bool,
    /// Stages that must finish before this one becomes ready.
    pub after: Vec<StageId>,
    /// Standalone duration (running alone on an idle host).
    pub duration: Duration,
    /// Resources held from this stage's start until the end of `Hold::until`.
    pub holds: Vec<Hold>,
    /// Rates drawn while running at standalone speed.
    pub demands: Vec<Demand>,
    /// Fraction of the standalone time that is DRAM-latency bound, in [0, 1].
    pub latency_bound_frac: f64,
    /// Fraction of the standalone time that is compute bound, in [0, 1 -
    /// latency_bound_frac]: it slows with its pool's per-thread throughput
    /// ([`Pool::cpu`]) as more threads are active. 0: never.
    pub compute_bound_frac: f64,
    /// Share of its DRAM bytes that are writes, for a latency curve with a write-fraction
    /// axis. None: a DMA's direction decides (host-to-device reads host memory: 0,
    /// device-to-host writes it: 1), else the curve's own mix.
    pub dram_write_frac: Option<f64>,
    /// A thread that drives the stage from the host (launches, synchronisation, host-side
    /// work) without holding a pool share: None for none.
    pub host_thread: Option<HostThread>,
    /// How its time stretches with the CPU threads runnable beside it (a GPU kernel's
    /// host side); None: it does not.
    pub cpu_load: Option<CpuLoad>,
    /// This stage is GPU kernel work (counts toward the true GPU duty cycle).
    pub gpu_kernel: bool,
    /// A pageable copy staged through a bounce buffer (its memcpy paces it); None for
    /// everything else.
    pub staged_copy: Option<StagedCopy>,
}

/// A host thread driving a stage (e.g. the thread that launches a GPU stage's kernels and
/// waits for them): for `bound_frac` of the stage's standalone time it must be on a CPU
/// of `pool` to make progress. Under a per-thread pool that wants `W` threads of `C`,
/// it gets `C / W` of a CPU, so that share of the stage stretches by `W / C`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostThread {
    /// The pool whose CPUs it runs on.
    pub pool: PoolId,
    /// Share of the stage's standalone time that needs the thread on a CPU, in (0, 1].
    pub bound_frac: f64,
}

/// How a stage's time stretches with the threads runnable on the CPUs its host side
/// shares: a GPU kernel's launches and synchronisation, and sppark's MSM, which sums
/// its bucket rows on the host with one thread per CPU, wait for a CPU when the
/// pools' threads keep them busy. The curve is measured (kernel time next to busy
/// threads over its time alone), not derived: the stretch is far from the runnable
/// threads over CPUs once a parallel host phase has stragglers.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuLoad {
    /// The pools whose runnable threads (and host threads) load those CPUs.
    pub pools: Vec<PoolId>,
    /// (runnable threads per CPU of those pools, time / time alone) points, the first
    /// coordinate strictly rising; read piecewise linearly, flat past either end.
    pub stretch: Vec<(f64, f64)>,
    /// CPUs its host side keeps busy while it runs (the thread that waits on it,
    /// sppark's host pool), measured alone: runnable threads it adds to those pools,
    /// shared among them by their size.
    pub threads: f64,
    /// How the stretch differs when the runnable threads stream memory or chase pointers
    /// rather than spin (the curve's own neighbours); empty: as spinning.
    pub by_neighbour: NeighbourRatios,
}

/// A [`CpuLoad`] curve's excess over 1 next to threads of another kind, over its excess
/// next to spinning threads at the same load: (runnable threads per CPU, ratio) points,
/// read as the curve is; no points: ratio 1. Measured, not derived: next to threads
/// stalled on DRAM latency a kernel's host threads get a CPU sooner than next to
/// spinning ones, and next to streaming threads its host side's memory traffic slows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NeighbourRatios {
    /// Next to threads that stream memory (a stage's bandwidth-bound share).
    pub streaming: Vec<(f64, f64)>,
    /// Next to threads that chase pointers (a stage's latency-bound share).
    pub chasing: Vec<(f64, f64)>,
}

impl NeighbourRatios {
    /// No kind differs from spinning.
    pub fn is_empty(&self) -> bool {
        self.streaming.is_empty() && self.chasing.is_empty()
    }
}

/// A resource a stage holds (FIFO waiting when short).
#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    /// Which resource.
    pub resource: HoldResource,
    /// How much (cores, bytes, lock units).
    pub amount: u64,
    /// The stage at whose end it is released (often the holding stage itself).
    pub until: StageId,
}

/// Kinds of holdable resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HoldResource {
    /// CPU cores.
    Cores,
    /// Host RAM bytes.
    HostRam,
    /// VRAM bytes of the partition's GPU.
    Vram,
    /// A named lock.
    Lock(LockId),
}
