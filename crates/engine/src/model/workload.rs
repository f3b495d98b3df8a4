//! What one job does: its stages, their holds and the rates they draw on.

use super::{Demand, Duration, LockId, PoolId, StageId, StagedCopy};

/// What one job does: a DAG of stages, some repeated per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
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
