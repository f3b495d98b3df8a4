//! The offered-load warning: open arrivals that offer more work than the busiest
//! resource can serve.

use crate::model::{ArrivalKind, HoldResource, Model, RateTarget};

use super::capacity::capacity;

/// A burst warns when the work it queues on one resource is that of at least this share
/// of the trace's jobs...
const BURST_SHARE: f64 = 0.1;
/// ...and of at least this many jobs (a few jobs arriving together are no burst).
const BURST_MIN_JOBS: f64 = 10.0;

/// A warning when open arrivals offer more work than the busiest resource can serve:
/// on average (offered load = arrival rate x mean demand per job / capacity >= 1: the
/// queue grows without bound), or, for a trace, in a burst ([`burst_warning`]). Either
/// way every result depends on `arrivals.jobs` and the arrival times more than on the
/// host. The demand counts only each stage's own run time, so it is a lower bound.
pub fn overload_warning(m: &Model) -> Option<String> {
    match &m.arrivals.kind {
        ArrivalKind::Closed { .. } => None,
        ArrivalKind::Poisson { rate_per_s } => rate_warning(*rate_per_s, &demand_per_job(m)),
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
            let demand = demand_per_job(m);
            let rate = (used.len() - 1) as f64 / span;
            rate_warning(rate, &demand).or_else(|| burst_warning(used, &demand))
        }
    }
}

/// The warning when `rate` arrivals per second offer a load of 1 or more to a resource.
fn rate_warning(rate: f64, demand: &[(String, f64)]) -> Option<String> {
    let (name, load) = demand
        .iter()
        .map(|(name, d)| (name, rate * d))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (load >= 1.0).then(|| {
        format!(
            "arrivals: the offered load on {name} is about {load:.2} (arrival rate x mean demand per job / capacity) >= 1: the open queue grows without bound, so waits and throughput depend on arrivals.jobs rather than on the host"
        )
    })
}

/// The warning when a burst of the trace queues the work of at least [`BURST_SHARE`] of
/// its jobs (and [`BURST_MIN_JOBS`]) on one resource at once, however long the trace
/// is (12,500 arrivals at t = 0 before a quiet hour offer a low average rate). Each
/// resource is a fluid queue: every arrival brings its job's demand, and between
/// arrivals the resource serves at full capacity. Linear in the arrivals.
fn burst_warning(times: &[f64], demand: &[(String, f64)]) -> Option<String> {
    let least = (BURST_SHARE * times.len() as f64).max(BURST_MIN_JOBS);
    // Of the resources a burst queues enough jobs on, the slowest to drain names it.
    let mut worst: Option<(&str, f64, f64, f64)> = None; // name, jobs, seconds, time
    for (name, per_job) in demand {
        let (mut queued, mut now) = (0.0_f64, times[0]);
        for &t in times {
            // A trace time earlier than the one before arrives then (as the engine does).
            let at = t.max(now);
            queued = (queued - (at - now)).max(0.0) + per_job;
            now = at;
            let jobs = queued / per_job;
            if jobs >= least && worst.is_none_or(|w| queued > w.2) {
                worst = Some((name, jobs, queued, at));
            }
        }
    }
    let (name, jobs, _, at) = worst?;
    Some(format!(
        "arrivals: a burst of the trace queues about {jobs:.0} jobs' demand on {name} at \
         t = {at} s (arrivals x mean demand per job / capacity, less what the capacity \
         serves between arrivals), at least a tenth of the trace's {} jobs, so waits and \
         throughput depend on the burst and on arrivals.jobs rather than on the host \
         (spread the arrival times, or use kind = \"closed\")",
        times.len()
    ))
}

/// For each resource with a capacity, the seconds of its whole capacity one job asks
/// for (mean demand per job / capacity).
fn demand_per_job(m: &Model) -> Vec<(String, f64)> {
    let hw = &m.hardware;
    let mut demand: Vec<(String, f64)> = Vec::new();
    let mut add = |name: String, cap: f64, work: f64| {
        if cap > 0.0 && cap.is_finite() && work > 0.0 {
            demand.push((name, work / cap));
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
    demand
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `burst` arrivals at t = 0, then `tail` one second apart.
    fn trace(burst: usize, tail: usize) -> Vec<f64> {
        let mut t = vec![0.0; burst];
        t.extend((1..=tail).map(|i| i as f64));
        t
    }

    #[test]
    fn a_burst_of_a_tenth_of_the_jobs_warns_however_long_the_trace() {
        // 0.01 s of the resource per job: the tail offers a load of 0.01.
        let demand = [("GPU compute".to_string(), 0.01)];
        let w = burst_warning(&trace(120, 880), &demand).expect("a tenth of the jobs at once");
        assert!(
            w.contains("about 120 jobs' demand on GPU compute at t = 0 s"),
            "{w}"
        );
        assert!(rate_warning(999.0 / 880.0, &demand).is_none());
        assert_eq!(
            burst_warning(&trace(80, 920), &demand),
            None,
            "under a tenth"
        );
        // A steady trace never builds a queue; nor do a few jobs arriving together.
        assert_eq!(burst_warning(&trace(1, 1000), &demand), None);
        assert_eq!(
            burst_warning(&trace(9, 20), &demand),
            None,
            "under ten jobs"
        );
    }

    #[test]
    fn a_queue_drains_between_arrivals_and_the_busiest_resource_counts() {
        // Bursts of 60 and 70, 0.3 s apart, of 0.01 s each on one resource: 30 jobs'
        // worth are served between them, so 100 are queued after the second; 0.001 s
        // each on the other: it is empty again when the second burst comes (70 queued).
        let mut times = vec![0.0; 60];
        times.extend(vec![0.3; 70]);
        times.extend((1..=770).map(|i| 1.0 + f64::from(i)));
        let demand = [("cores".to_string(), 0.001), ("DRAM".to_string(), 0.01)];
        let w = burst_warning(&times, &demand).expect("100 of 900 jobs queued");
        assert!(
            w.contains("about 100 jobs' demand on DRAM at t = 0.3 s"),
            "{w}"
        );
    }
}
