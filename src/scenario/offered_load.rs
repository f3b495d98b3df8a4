//! The offered-load warning: open arrivals that offer more work than the busiest
//! resource can serve.

use crate::model::{ArrivalKind, HoldResource, Model, RateTarget};

use super::capacity::capacity;

/// A warning when open arrivals offer more work than the busiest resource can serve
/// (offered load = arrival rate x mean demand per job / capacity >= 1): the queue then
/// grows without bound and every result depends on `arrivals.jobs`. The demand counts
/// only each stage's own run time, so the estimate is a lower bound.
pub fn overload_warning(m: &Model) -> Option<String> {
    let rate = match &m.arrivals.kind {
        ArrivalKind::Closed { .. } => return None,
        ArrivalKind::Poisson { rate_per_s } => *rate_per_s,
        ArrivalKind::Trace { times_s } => {
            // The arrivals the run replays: the first `jobs` of the trace.
            let used = &times_s[..times_s.len().min(m.arrivals.jobs as usize)];
            let span = used.last()? - used.first()?;
            if used.len() < 2 {
                return None;
            }
            if span <= 0.0 {
                // Every arrival at once: no rate, a queue as deep as the trace at t = 0.
                return Some(format!(
                    "arrivals: all {} arrivals of the trace come at t = {} s, so the open \
                     queue starts {} jobs deep and never reaches a steady state: waits and \
                     throughput depend on arrivals.jobs rather than on the host (spread the \
                     arrival times, or use kind = \"closed\")",
                    used.len(),
                    used[0],
                    used.len()
                ));
            }
            (used.len() - 1) as f64 / span
        }
    };
    let hw = &m.hardware;
    let mut demand: Vec<(String, f64)> = Vec::new();
    let mut add = |name: String, cap: f64, work: f64| {
        if cap > 0.0 && cap.is_finite() && work > 0.0 {
            demand.push((name, rate * work / cap));
        }
    };
    let p = f64::from(m.workload.partitions);
    let gpus = hw.gpus.len().max(1) as f64;
    // Resource-seconds one job asks of a resource: instances x mean duration x amount.
    let work_per_job = |amount: &dyn Fn(&crate::model::Stage) -> f64| -> f64 {
        m.workload
            .stages
            .iter()
            .map(|s| {
                let n = if s.per_partition { p } else { 1.0 };
                n * s.duration.mean_s() * amount(s)
            })
            .sum()
    };
    let resources = [
        HoldResource::Cores,
        HoldResource::HostRam,
        HoldResource::Vram,
    ]
    .into_iter()
    .chain((0..hw.locks.len()).map(HoldResource::Lock));
    for r in resources {
        let work = work_per_job(&|s: &crate::model::Stage| {
            s.holds
                .iter()
                .filter(|h| h.resource == r)
                .map(|h| h.amount as f64)
                .sum()
        });
        let name = match r {
            HoldResource::Cores => "CPU cores".to_string(),
            HoldResource::HostRam => "host RAM".to_string(),
            HoldResource::Vram => "VRAM".to_string(),
            HoldResource::Lock(id) => format!("lock {:?}", hw.locks[id].name),
        };
        add(name, capacity(hw, r, true) as f64, work);
    }
    let targets = [RateTarget::Dram, RateTarget::GpuCompute]
        .into_iter()
        .chain((0..hw.pools.len()).map(RateTarget::Pool));
    for t in targets {
        let work = work_per_job(&|s: &crate::model::Stage| {
            s.demands
                .iter()
                .filter(|d| d.target == t)
                .map(|d| d.amount)
                .sum()
        });
        let (name, cap) = match t {
            RateTarget::Dram => ("DRAM bandwidth".to_string(), hw.dram.capacity_gbps),
            RateTarget::GpuCompute => ("GPU compute".to_string(), gpus),
            RateTarget::Pool(id) => (
                format!("pool {:?}", hw.pools[id].name),
                hw.pools[id].threads,
            ),
            _ => continue,
        };
        add(name, cap, work);
    }
    let (name, load) = demand.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (load >= 1.0).then(|| {
        format!(
            "arrivals: the offered load on {name} is about {load:.2} (arrival rate x mean demand per job / capacity) >= 1: the open queue grows without bound, so waits and throughput depend on arrivals.jobs rather than on the host"
        )
    })
}
