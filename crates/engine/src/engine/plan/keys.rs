//! A stage's class key: what makes two of its running instances interchangeable for
//! the fluid model (its resolved rate demands, latency and compute shares, DRAM policy,
//! Little's-law bound, host thread, staging and CPU load).

use crate::engine::resources::Resources;
use crate::engine::solver::{ClassKey, CpuLoadKey};
use crate::model::{CACHE_LINE_BYTES, Dram, DramPolicy, HoldResource, RateTarget, Stage};

/// The class key of `stage` bound to GPU `g`: resolved resource weights (sorted, duplicate
/// resources summed), latency share, DRAM policy and Little's-law bound. The stage's
/// targets were checked to exist.
pub(super) fn class_key(stage: &Stage, resources: &Resources, g: usize, dram: &Dram) -> ClassKey {
    let sharing = &dram.sharing;
    let mut weights: Vec<(usize, f64)> = Vec::with_capacity(stage.demands.len() + 1);
    for d in &stage.demands {
        let Some((r, duplex)) = resources.rate_targets(d.target, g) else {
            continue;
        };
        weights.push((r.index(), d.amount));
        if let Some(both) = duplex {
            weights.push((both.index(), d.amount));
        }
    }
    weights.sort_unstable_by_key(|&(r, w)| (r, w.to_bits()));
    // Merge duplicate resources (e.g. two DRAM demands) by summing.
    let mut merged: Vec<(usize, f64)> = Vec::with_capacity(weights.len());
    for (r, w) in weights {
        match merged.last_mut() {
            Some((lr, lw)) if *lr == r => *lw += w,
            _ => merged.push((r, w)),
        }
    }
    // A DMA takes its direction's DRAM policy (H2D first when a stage moves both ways);
    // a staged copy whose memcpy sets the pace meets DRAM as the CPU stream it is.
    let moves = |t: RateTarget| stage.demands.iter().any(|d| d.target == t);
    let dram_policy = if stage.staged_copy.is_some_and(|st| st.memcpy_bound()) {
        DramPolicy::MaxMin
    } else if moves(RateTarget::PcieH2d) {
        sharing.dma_h2d
    } else if moves(RateTarget::PcieD2h) {
        sharing.dma_d2h
    } else {
        DramPolicy::MaxMin
    };
    // CPU threads are latency-bound streams (Little's law); a DMA is the device's.
    let draws_dram = merged.iter().any(|&(r, _)| r == resources.dram.index());
    // A stage keeps at least the lines its own standalone draw implies at idle latency
    // (Little's law on what it was measured doing alone), so the bound only ever slows
    // it as latency rises.
    let line_bound = match sharing.lines_in_flight_per_thread {
        Some(lines) if draws_dram && dram_policy == DramPolicy::MaxMin && !moves_pcie(stage) => {
            let dram_gbps: f64 = (merged.iter())
                .filter(|&&(r, _)| r == resources.dram.index())
                .map(|&(_, w)| w)
                .sum();
            let idle_ns = dram
                .latency
                .latency_ns_mix(0.0, Some(stage_write_frac(stage)));
            (lines * CACHE_LINE_BYTES * stage_threads(stage)).max(dram_gbps * idle_ns)
        }
        _ => 0.0,
    };
    let (host_frac, host_pool) = match stage.host_thread {
        Some(h) => (
            h.bound_frac,
            resources
                .pools
                .get(h.pool)
                .map_or(usize::MAX, |r| r.index()),
        ),
        None => (0.0, usize::MAX),
    };
    ClassKey {
        weights: merged,
        latency_frac: stage.latency_bound_frac,
        dram_policy,
        line_bound,
        compute_frac: stage_compute_frac(stage),
        write_frac: stage_write_frac(stage),
        host_frac,
        host_pool,
        staging: stage.staged_copy,
        cpu_load: stage.cpu_load.as_ref().map(|l| CpuLoadKey {
            pools: (l.pools.iter())
                .filter_map(|&p| resources.pools.get(p).map(|r| r.index()))
                .collect(),
            stretch: l.stretch.clone(),
            threads: l.threads,
            by_neighbour: l.by_neighbour.clone(),
        }),
        // A memcpy its streaming neighbours pace counts them on every pool.
        memcpy_pools: match stage.staged_copy {
            Some(st) if st.beside_streams.is_some() => {
                resources.pools.iter().map(|r| r.index()).collect()
            }
            _ => Vec::new(),
        },
    }
}

/// The compute-bound share of a stage: it slows with the per-thread throughput only on a
/// pool (a stage with no pool threads keeps its speed).
fn stage_compute_frac(stage: &Stage) -> f64 {
    let on_pool = stage
        .demands
        .iter()
        .any(|d| matches!(d.target, RateTarget::Pool(_)));
    if on_pool {
        stage.compute_bound_frac
    } else {
        0.0
    }
}

/// The write share of a stage's DRAM bytes: its own, else a DMA's by direction (a
/// host-to-device DMA reads host memory, a device-to-host one writes it), else NaN (the
/// latency curve's own mix).
fn stage_write_frac(stage: &Stage) -> f64 {
    let moves = |t: RateTarget| stage.demands.iter().any(|d| d.target == t);
    match stage.dram_write_frac {
        Some(w) => w,
        None if moves(RateTarget::PcieH2d) && !moves(RateTarget::PcieD2h) => 0.0,
        None if moves(RateTarget::PcieD2h) && !moves(RateTarget::PcieH2d) => 1.0,
        None => f64::NAN,
    }
}

fn moves_pcie(stage: &Stage) -> bool {
    stage
        .demands
        .iter()
        .any(|d| matches!(d.target, RateTarget::PcieH2d | RateTarget::PcieD2h))
}

/// CPU threads a stage runs: the cores it holds, else its pool threads, else one.
fn stage_threads(stage: &Stage) -> f64 {
    let cores: u64 = stage
        .holds
        .iter()
        .filter(|h| h.resource == HoldResource::Cores)
        .map(|h| h.amount)
        .sum();
    if cores > 0 {
        return cores as f64;
    }
    let pool: f64 = stage
        .demands
        .iter()
        .filter(|d| matches!(d.target, RateTarget::Pool(_)))
        .map(|d| d.amount)
        .sum();
    if pool > 0.0 { pool } else { 1.0 }
}
