//! The CPU side of the caps: the threads the running classes keep runnable on each
//! pool (by what they do while they run), and what those threads do to a kernel's host
//! side (its CPU-load curve) and to a staged copy's memcpy (its streaming neighbours).

use crate::model::stretch_at;

use super::system::{ClassDemand, CpuLoadKey};

/// A staged copy's memcpy rate over alone by the threads streaming beside it per CPU on
/// its pools (1 unless its neighbours pace it; see [`StagedCopy::neighbour_ratio`](crate::model::StagedCopy::neighbour_ratio)); a
/// host thread of its own on one of them is not its neighbour.
pub(super) fn memcpy_neighbour_ratio(
    c: &ClassDemand,
    capacities: &[f64],
    classes: &[ClassDemand],
    dram: usize,
) -> f64 {
    let Some(st) = &c.key.staging else {
        return 1.0;
    };
    if c.key.memcpy_pools.is_empty() || c.count == 0 {
        return 1.0;
    }
    let (mut streaming, mut cpus) = (0.0, 0.0);
    for &p in &c.key.memcpy_pools {
        streaming += runnable_by_kind(classes, capacities, p, dram).streaming - host_share(c, p);
        cpus += capacities[p];
    }
    if cpus <= 0.0 {
        return 1.0;
    }
    st.neighbour_ratio(streaming.max(0.0) / cpus)
}

/// How much slower a class with CPU `load` runs than alone: its curve read at the
/// threads the running classes want of its pools (pool draws plus host threads) per CPU,
/// less its own host side's (the curve was measured with those running). With ratios by
/// neighbour kind, the curve's excess over 1 scales by their mean over those threads.
pub(super) fn cpu_load_stretch(
    load: &CpuLoadKey,
    capacities: &[f64],
    classes: &[ClassDemand],
    dram: usize,
) -> f64 {
    let (mut wanted, mut cpus) = (0.0, 0.0);
    for &p in &load.pools {
        cpus += capacities[p];
        wanted += runnable_threads(classes, capacities, p);
    }
    if cpus <= 0.0 {
        return 1.0;
    }
    let busy = (wanted - load.threads).max(0.0) / cpus;
    let stretch = stretch_at(&load.stretch, busy);
    if load.by_neighbour.is_empty() {
        return stretch.max(1.0);
    }
    let mut kinds = NeighbourThreads::default();
    for &p in &load.pools {
        kinds.add(&runnable_by_kind(classes, capacities, p, dram));
    }
    kinds.spinning = (kinds.spinning - load.threads).max(0.0);
    let total = kinds.spinning + kinds.streaming + kinds.chasing;
    if total <= 0.0 {
        return stretch.max(1.0);
    }
    let ratios = &load.by_neighbour;
    let ratio = (kinds.spinning
        + kinds.streaming * stretch_at(&ratios.streaming, busy)
        + kinds.chasing * stretch_at(&ratios.chasing, busy))
        / total;
    (1.0 + (stretch - 1.0) * ratio).max(1.0)
}

/// Runnable threads on a pool by what they do while they run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct NeighbourThreads {
    spinning: f64,
    streaming: f64,
    chasing: f64,
}

impl NeighbourThreads {
    fn add(&mut self, o: &NeighbourThreads) {
        self.spinning += o.spinning;
        self.streaming += o.streaming;
        self.chasing += o.chasing;
    }
}

/// [`runnable_threads`] split by kind: a pool thread chases pointers for its stage's
/// latency-bound share, streams for the rest of its time outside compute when the stage
/// draws on DRAM, and spins otherwise; a staged copy's memcpy thread streams; every
/// other host thread, and a kernel's host side, spins.
fn runnable_by_kind(
    classes: &[ClassDemand],
    capacities: &[f64],
    p: usize,
    dram: usize,
) -> NeighbourThreads {
    let mut out = NeighbourThreads::default();
    for o in classes.iter().filter(|o| o.count > 0) {
        let n = o.count as f64;
        let pool = o.key.weight_on(p).unwrap_or(0.0) * n;
        let chasing = o.key.latency_frac.clamp(0.0, 1.0);
        let streaming = if o.key.weight_on(dram).is_some() {
            (1.0 - chasing - o.key.compute_frac).max(0.0)
        } else {
            0.0
        };
        out.chasing += pool * chasing;
        out.streaming += pool * streaming;
        out.spinning += pool * (1.0 - chasing - streaming);
        let host = host_share(o, p) * n;
        if o.key.staging.is_some() {
            out.streaming += host;
        } else {
            out.spinning += host;
        }
        out.spinning += kernel_host_share(o, capacities, p) * n;
    }
    out
}

/// The threads the running classes want on pool resource `p`: its draws, the host
/// threads on it, and its share (by size) of what the running kernels' host sides keep
/// busy on their pools.
pub(super) fn runnable_threads(classes: &[ClassDemand], capacities: &[f64], p: usize) -> f64 {
    (classes.iter().filter(|o| o.count > 0))
        .map(|o| {
            let pool = o.key.weight_on(p).unwrap_or(0.0);
            o.count as f64 * (pool + host_share(o, p) + kernel_host_share(o, capacities, p))
        })
        .sum()
}

/// The share of a CPU on pool resource `p` that one activity's host thread wants.
fn host_share(o: &ClassDemand, p: usize) -> f64 {
    if o.key.host_frac > 0.0 && o.key.host_pool == p {
        o.key.host_frac
    } else {
        0.0
    }
}

/// The CPUs on pool resource `p` that one activity's kernel host side keeps busy: its
/// measured threads, spread over its pools by their size.
fn kernel_host_share(o: &ClassDemand, capacities: &[f64], p: usize) -> f64 {
    match &o.key.cpu_load {
        Some(l) if l.threads > 0.0 && l.pools.contains(&p) => {
            let cpus: f64 = l.pools.iter().map(|&q| capacities[q]).sum();
            if cpus > 0.0 {
                l.threads * capacities[p] / cpus
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}
