//! What the engine tells the outside world while it runs. Metrics, trace recorders and
//! exporters implement [`Observer`]; the engine itself keeps no history.

use crate::model::{Edge, HoldResource, MarkerId, StageId};
use crate::time::SimTime;

pub use super::ids::{Limiter, RateId, Scope};

/// One stage instance: which job, which scope (job or partition), which stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StageRef {
    /// Job number, counting from 0 in arrival order.
    pub job: u64,
    /// Once per job, or which partition.
    pub scope: Scope,
    /// Stage index in the model.
    pub stage: StageId,
}

/// Wall seconds lost to slowdown ((end - start) - standalone), split by cause.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loss {
    /// Seconds lost while a rate resource was the limiter, indexed by [`RateId::index`].
    pub by_rate: Vec<f64>,
    /// Seconds lost to the DRAM loaded-latency curve.
    pub dram_latency: f64,
}

impl Loss {
    /// No loss, over `rates` rate resources.
    pub fn zero(rates: usize) -> Self {
        Loss {
            by_rate: vec![0.0; rates],
            dram_latency: 0.0,
        }
    }

    /// Sets every entry to zero over `rates` rate resources, keeping the buffer.
    pub fn reset(&mut self, rates: usize) {
        self.by_rate.clear();
        self.by_rate.resize(rates, 0.0);
        self.dram_latency = 0.0;
    }

    /// Adds `seconds` to the entry of `limiter`.
    pub fn add(&mut self, limiter: Limiter, seconds: f64) {
        match limiter {
            Limiter::Rate(r) => self.by_rate[r.index()] += seconds,
            Limiter::DramLatency => self.dram_latency += seconds,
        }
    }

    /// Copies `other` into `self`, keeping the buffer.
    #[inline]
    pub fn copy_from(&mut self, other: &Loss) {
        super::small_copy::copy_small(&mut self.by_rate, &other.by_rate);
        self.dram_latency = other.dram_latency;
    }

    /// Sets `self` to `now - before`, entry by entry, keeping the buffer.
    #[inline]
    pub fn set_difference(&mut self, now: &Loss, before: &Loss) {
        let n = now.by_rate.len().min(before.by_rate.len());
        if self.by_rate.len() == n {
            // Over the same rate table as last time (always, within a run): in place, with
            // explicit arms for the usual one or two rate resources (a loop's set-up costs
            // more than the subtractions).
            match (
                &mut self.by_rate[..],
                &now.by_rate[..n],
                &before.by_rate[..n],
            ) {
                ([d0], [a0], [b0]) => *d0 = a0 - b0,
                ([d0, d1], [a0, a1], [b0, b1]) => (*d0, *d1) = (a0 - b0, a1 - b1),
                (d, a, b) => {
                    for ((d, a), b) in d.iter_mut().zip(a).zip(b) {
                        *d = a - b;
                    }
                }
            }
        } else {
            self.by_rate.clear();
            self.by_rate
                .extend(now.by_rate.iter().zip(&before.by_rate).map(|(n, b)| n - b));
        }
        self.dram_latency = now.dram_latency - before.dram_latency;
    }

    /// Every entry with its cause: each rate resource in table order, then DRAM latency.
    pub fn entries(&self) -> impl Iterator<Item = (Limiter, f64)> + '_ {
        let rates = (self.by_rate.iter().enumerate())
            .map(|(i, &l)| (Limiter::Rate(RateId::from_index(i)), l));
        rates.chain(std::iter::once((Limiter::DramLatency, self.dram_latency)))
    }
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
    pub lost: Loss,
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

impl RateKind {
    /// Whether it is a direction (or the duplex limit) of a GPU's PCIe link.
    pub fn is_pcie(self) -> bool {
        matches!(
            self,
            RateKind::PcieH2d | RateKind::PcieD2h | RateKind::PcieDuplex
        )
    }
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
        _scope: Scope,
        _gpu: Option<u32>,
    ) {
    }
    /// A job finished (all its stages done). `arrived` is its arrival time.
    fn job_finished(&mut self, _t: SimTime, _job: u64, _arrived: SimTime) {}
    /// Rates were recomputed: current draw on each rate resource (same order as
    /// [`Observer::resources`]) and the DRAM latency slowdown L(u)/L(0).
    fn rates_changed(&mut self, _t: SimTime, _usage: &[f64], _latency_slowdown: f64) {}
    /// DRAM's usable capacity after a re-solve, GB/s, with the number of streams drawing
    /// on it (reported only when the DRAM loses efficiency per stream, right after
    /// [`Observer::rates_changed`]; otherwise the usable capacity is the nominal one).
    fn dram_usable(&mut self, _t: SimTime, _streams: u32, _usable_gbps: f64) {}
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
    #[inline]
    fn resources(&mut self, rates: &[RateResourceInfo], holds: &[HoldResourceInfo]) {
        self.0.resources(rates, holds);
        self.1.resources(rates, holds);
    }
    #[inline]
    fn job_arrived(&mut self, t: SimTime, job: u64) {
        self.0.job_arrived(t, job);
        self.1.job_arrived(t, job);
    }
    #[inline]
    fn stage_edge(&mut self, t: SimTime, stage: StageRef, edge: Edge, gpu: Option<u32>) {
        self.0.stage_edge(t, stage, edge, gpu);
        self.1.stage_edge(t, stage, edge, gpu);
    }
    #[inline]
    fn stage_finished(&mut self, record: &StageRecord) {
        self.0.stage_finished(record);
        self.1.stage_finished(record);
    }
    #[inline]
    fn marker(&mut self, t: SimTime, marker: MarkerId, job: u64, scope: Scope, gpu: Option<u32>) {
        self.0.marker(t, marker, job, scope, gpu);
        self.1.marker(t, marker, job, scope, gpu);
    }
    #[inline]
    fn job_finished(&mut self, t: SimTime, job: u64, arrived: SimTime) {
        self.0.job_finished(t, job, arrived);
        self.1.job_finished(t, job, arrived);
    }
    #[inline(always)]
    fn rates_changed(&mut self, t: SimTime, usage: &[f64], latency_slowdown: f64) {
        self.0.rates_changed(t, usage, latency_slowdown);
        self.1.rates_changed(t, usage, latency_slowdown);
    }
    #[inline]
    fn dram_usable(&mut self, t: SimTime, streams: u32, usable_gbps: f64) {
        self.0.dram_usable(t, streams, usable_gbps);
        self.1.dram_usable(t, streams, usable_gbps);
    }
    #[inline]
    fn hold_changed(&mut self, t: SimTime, resource: usize, in_use: u64, waiting: usize) {
        self.0.hold_changed(t, resource, in_use, waiting);
        self.1.hold_changed(t, resource, in_use, waiting);
    }
    #[inline]
    fn finished(&mut self, t: SimTime) {
        self.0.finished(t);
        self.1.finished(t);
    }
}

#[cfg(test)]
mod tests {
    use super::Loss;

    #[test]
    fn set_difference_subtracts_entry_by_entry_into_any_buffer() {
        let loss = |v: Vec<f64>, dram_latency| Loss {
            by_rate: v,
            dram_latency,
        };
        for len in 0..6 {
            let now = loss((0..len).map(|i| 1.5 + i as f64 / 3.0).collect(), 2.0);
            let before = loss((0..len).map(|i| 0.25 * i as f64).collect(), 0.5);
            let want: Vec<f64> = (now.by_rate.iter().zip(&before.by_rate))
                .map(|(a, b)| a - b)
                .collect();
            // A buffer over the same table (in place) and one of another length.
            for old in [len, len + 2] {
                let mut out = loss(vec![9.0; old], 9.0);
                out.set_difference(&now, &before);
                assert_eq!(out, loss(want.clone(), 1.5), "len {len}, buffer {old}");
            }
        }
    }
}
