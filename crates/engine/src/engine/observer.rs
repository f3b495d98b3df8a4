//! What the engine tells the outside world while it runs. Metrics, trace recorders and
//! exporters implement [`Observer`]; the engine itself keeps no history.

use crate::model::{Edge, HoldResource, MarkerId, StageId};
use crate::time::SimTime;

/// Sentinel partition index for stages that run once per job.
pub const JOB_LEVEL: u32 = u32::MAX;

/// One stage instance: which job, which partition (or [`JOB_LEVEL`]), which stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StageRef {
    /// Job number, counting from 0 in arrival order.
    pub job: u64,
    /// Partition index, or [`JOB_LEVEL`].
    pub partition: u32,
    /// Stage index in the model.
    pub stage: StageId,
}

/// Why an activity ran slower than standalone at some moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limiter {
    /// A rate resource was saturated (index into [`RateResourceInfo`] list).
    Rate(usize),
    /// Latency-bound work slowed by the loaded-latency curve.
    DramLatency,
}

/// Everything known about a finished stage instance.
#[derive(Debug, Clone)]
pub struct StageRecord {
    /// The instance.
    pub stage_ref: StageRef,
    /// When its dependencies were done.
    pub ready: SimTime,
    /// When its holds were acquired and work began.
    pub start: SimTime,
    /// When it finished.
    pub end: SimTime,
    /// Its sampled standalone duration, seconds.
    pub standalone_s: f64,
    /// The GPU it was bound to, if any.
    pub gpu: Option<u32>,
    /// Seconds lost to each limiter: (end - start) - standalone, split by cause.
    /// Indexed like [`RateResourceInfo`], plus one last slot for DRAM latency.
    pub lost_s: Vec<f64>,
    /// The holdable resource (index into [`HoldResourceInfo`] list) it last waited for,
    /// if it had to wait for holds.
    pub blocked_on: Option<usize>,
}

/// Kinds of rate resources, for reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateKind {
    /// Host DRAM (GB/s).
    Dram,
    /// A thread pool (threads).
    Pool,
    /// A GPU's compute (share of the GPU).
    GpuCompute,
    /// PCIe host-to-device (GB/s).
    PcieH2d,
    /// PCIe device-to-host (GB/s).
    PcieD2h,
    /// PCIe both directions together (GB/s).
    PcieDuplex,
}

/// A rate resource as the engine numbers it.
#[derive(Debug, Clone)]
pub struct RateResourceInfo {
    /// Display name, e.g. "dram", "pool:groth16_pool", "gpu0.pcie_h2d".
    pub name: String,
    /// What it is.
    pub kind: RateKind,
    /// Capacity in its own unit.
    pub capacity: f64,
    /// GPU index for per-GPU resources.
    pub gpu: Option<u32>,
}

/// A holdable resource as the engine numbers it.
#[derive(Debug, Clone)]
pub struct HoldResourceInfo {
    /// Display name, e.g. "cores", "host_ram", "gpu0.vram", "lock:gpu_mutex@gpu0".
    pub name: String,
    /// Capacity in its own unit (cores, bytes, lock units).
    pub capacity: u64,
    /// The model resource this is an instance of.
    pub resource: HoldResource,
    /// GPU index for per-GPU instances.
    pub gpu: Option<u32>,
}

/// Callbacks from the engine. Every method has an empty default, so an observer
/// implements only what it needs. Times are non-decreasing across calls.
pub trait Observer {
    /// The engine's resource tables, once before the first event.
    fn resources(&mut self, _rates: &[RateResourceInfo], _holds: &[HoldResourceInfo]) {}
    /// A job arrived.
    fn job_arrived(&mut self, _t: SimTime, _job: u64) {}
    /// A stage instance crossed a boundary (ready, start or end).
    fn stage_edge(&mut self, _t: SimTime, _stage: StageRef, _edge: Edge, _gpu: Option<u32>) {}
    /// A stage instance finished; full record.
    fn stage_finished(&mut self, _record: &StageRecord) {}
    /// An instrumentation marker fired.
    fn marker(
        &mut self,
        _t: SimTime,
        _marker: MarkerId,
        _job: u64,
        _partition: u32,
        _gpu: Option<u32>,
    ) {
    }
    /// A job finished (all its stages done). `arrived` is its arrival time.
    fn job_finished(&mut self, _t: SimTime, _job: u64, _arrived: SimTime) {}
    /// Rates were recomputed: current draw on each rate resource (same order as
    /// [`Observer::resources`]) and the DRAM latency slowdown L(u)/L(0).
    fn rates_changed(&mut self, _t: SimTime, _usage: &[f64], _latency_slowdown: f64) {}
    /// A holdable resource's use or queue changed.
    fn hold_changed(&mut self, _t: SimTime, _resource: usize, _in_use: u64, _waiting: usize) {}
    /// The run ended at `t` (last event).
    fn finished(&mut self, _t: SimTime) {}
}

/// An observer that ignores everything (for benchmarks of the bare engine).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullObserver;

impl Observer for NullObserver {}

/// Two observers fed the same events, e.g. metrics plus a trace recorder.
pub struct Tee<'a, A: Observer, B: Observer>(pub &'a mut A, pub &'a mut B);

impl<A: Observer, B: Observer> Observer for Tee<'_, A, B> {
    fn resources(&mut self, rates: &[RateResourceInfo], holds: &[HoldResourceInfo]) {
        self.0.resources(rates, holds);
        self.1.resources(rates, holds);
    }
    fn job_arrived(&mut self, t: SimTime, job: u64) {
        self.0.job_arrived(t, job);
        self.1.job_arrived(t, job);
    }
    fn stage_edge(&mut self, t: SimTime, stage: StageRef, edge: Edge, gpu: Option<u32>) {
        self.0.stage_edge(t, stage, edge, gpu);
        self.1.stage_edge(t, stage, edge, gpu);
    }
    fn stage_finished(&mut self, record: &StageRecord) {
        self.0.stage_finished(record);
        self.1.stage_finished(record);
    }
    fn marker(&mut self, t: SimTime, marker: MarkerId, job: u64, partition: u32, gpu: Option<u32>) {
        self.0.marker(t, marker, job, partition, gpu);
        self.1.marker(t, marker, job, partition, gpu);
    }
    fn job_finished(&mut self, t: SimTime, job: u64, arrived: SimTime) {
        self.0.job_finished(t, job, arrived);
        self.1.job_finished(t, job, arrived);
    }
    fn rates_changed(&mut self, t: SimTime, usage: &[f64], latency_slowdown: f64) {
        self.0.rates_changed(t, usage, latency_slowdown);
        self.1.rates_changed(t, usage, latency_slowdown);
    }
    fn hold_changed(&mut self, t: SimTime, resource: usize, in_use: u64, waiting: usize) {
        self.0.hold_changed(t, resource, in_use, waiting);
        self.1.hold_changed(t, resource, in_use, waiting);
    }
    fn finished(&mut self, t: SimTime) {
        self.0.finished(t);
        self.1.finished(t);
    }
}
