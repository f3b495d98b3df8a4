//! Names the resource that limits throughput, with a one-line reason.
//!
//! Utilisation alone misleads on these hosts: a GPU mutex can be held 90% of the time
//! while kernels run half of it, because the work inside the lock is slowed by DRAM or
//! waits on a CPU pre-pass. So the analysis looks for the most occupied holdable resource
//! that requests queue for (the serial section), splits its held time into standalone
//! work and time lost, and blames the lost time on what caused it: the rate resource or
//! DRAM latency that slowed the stages inside, holds they waited for, or the stages
//! outside the section that it waited on (a barrier). If standalone work dominates, the
//! holdable itself is the bottleneck. Without a saturated holdable, the busiest rate
//! resource is.

use std::collections::BTreeMap;

use super::knob::Resource;
use super::run_stats::RunStats;
use crate::engine::{Limiter, RateKind};
use crate::model::{HoldResource, Model, StageId};

/// Occupancy above which a queued-for holdable counts as a serial section.
const SATURATED: f64 = 0.85;
/// Share of held time that must be standalone work for the holdable itself to be blamed.
const PRODUCTIVE: f64 = 0.8;

/// The verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Bottleneck {
    /// Resource name ("dram", "gpu0.pcie_h2d", "gpu_mutex", ...), or "none".
    pub resource: String,
    /// One line saying why.
    pub reason: String,
    /// Seconds of delay blamed on each resource inside the serial section (if any).
    pub blame_s: BTreeMap<String, f64>,
    /// The what-if step that adds more of this resource (DRAM bandwidth for "dram", a GPU
    /// for a per-GPU lock); None when no step does (a lock all GPUs share, a stage).
    pub step: Option<Resource>,
}

/// All instances of one holdable resource (e.g. every GPU's mutex) taken together.
#[derive(Default)]
struct Family {
    held_s: f64,
    capacity: u64,
    wait_s: f64,
    first_instance: usize,
}

/// Runs the analysis on a finished run's statistics.
pub fn analyse(model: &Model, m: &RunStats) -> Bottleneck {
    let mut b = busiest(model, m);
    b.step = step_of(model, m, &b.resource);
    b
}

/// The what-if step that adds more of the resource named `name`.
fn step_of(model: &Model, m: &RunStats, name: &str) -> Option<Resource> {
    if name == "dram" {
        return Some(Resource::Dram);
    }
    if let Some(r) = m.rates.iter().find(|r| r.info.name == name) {
        return Some(match r.info.kind {
            RateKind::Dram => Resource::Dram,
            RateKind::Pool => Resource::Threads,
            RateKind::GpuCompute => Resource::Gpus,
            RateKind::PcieH2d | RateKind::PcieD2h | RateKind::PcieDuplex => Resource::Pcie,
        });
    }
    let hold = m.holds.iter().find(|h| {
        h.info.name == name || family_name(model, h.info.resource, &h.info.name) == name
    })?;
    match hold.info.resource {
        HoldResource::Cores => Some(Resource::Threads),
        HoldResource::HostRam => Some(Resource::HostRam),
        HoldResource::Vram => Some(Resource::Gpus),
        HoldResource::Lock(l) => (model.hardware.locks.get(l))
            .filter(|lock| lock.per_gpu)
            .map(|_| Resource::Gpus),
    }
}

/// The occupancy analysis itself (see the module's comment).
fn busiest(model: &Model, m: &RunStats) -> Bottleneck {
    let window = m.window.window_s;
    if let Some((resource, occ, held_s, first)) = serial_section(m) {
        let name = family_name(model, resource, &m.holds[first].info.name);
        return analyse_serial(model, m, resource, &name, occ, held_s);
    }
    let occupancy = m.hold_occupancy();
    let util = m.rate_utilisation();

    // No serial section: the busiest rate resource or holdable.
    let mut best: Option<(String, f64, String)> = None;
    let mut consider = |name: String, u: f64, why: String| {
        if best.as_ref().is_none_or(|b| u > b.1) {
            best = Some((name, u, why));
        }
    };
    for (i, r) in m.rates.iter().map(|r| &r.info).enumerate() {
        let why = match r.kind {
            RateKind::Dram => format!(
                "{:.0}% mean DRAM bandwidth utilisation, latency-bound work slowed {:.2}x on average",
                util[i] * 100.0,
                m.dram.slowdown_integral / window.max(1e-30)
            ),
            _ => format!("{:.0}% mean utilisation", util[i] * 100.0),
        };
        consider(r.name.clone(), util[i], why);
    }
    for (i, h) in m.holds.iter().enumerate() {
        consider(
            h.info.name.clone(),
            occupancy[i],
            format!("{:.0}% mean occupancy", occupancy[i] * 100.0),
        );
    }
    match best {
        Some((name, u, why)) if u >= 0.5 => Bottleneck {
            resource: name,
            reason: why,
            blame_s: BTreeMap::new(),
            step: None,
        },
        _ => Bottleneck {
            resource: "none".into(),
            reason: "no resource is busy half the time: the offered load (arrivals or concurrency) limits throughput"
                .into(),
            blame_s: BTreeMap::new(),
            step: None,
        },
    }
}

/// The most occupied holdable family that stages waited for, if it is saturated:
/// (resource, occupancy, held seconds, its first instance).
fn serial_section(m: &RunStats) -> Option<(HoldResource, f64, f64, usize)> {
    // Group per-GPU instances of one resource into families.
    let mut families: BTreeMap<HoldResource, Family> = BTreeMap::new();
    for (i, h) in m.holds.iter().enumerate() {
        let f = families.entry(h.info.resource).or_insert(Family {
            first_instance: i,
            ..Family::default()
        });
        f.held_s += h.in_use_integral;
        f.capacity += h.info.capacity;
        f.wait_s += h.wait_s;
    }
    let window = m.window.window_s;
    families
        .iter()
        .filter(|(_, f)| f.wait_s > 0.0 && f.capacity > 0)
        .map(|(r, f)| {
            (
                *r,
                f.held_s / window.max(1e-30) / f.capacity as f64,
                f.held_s,
                f.first_instance,
            )
        })
        .filter(|&(_, occ, _, _)| occ >= SATURATED)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn family_name(model: &Model, r: HoldResource, instance_name: &str) -> String {
    match r {
        HoldResource::Cores => "cores".into(),
        HoldResource::HostRam => "host_ram".into(),
        HoldResource::Vram => "vram".into(),
        HoldResource::Lock(l) => model
            .hardware
            .locks
            .get(l)
            .map_or_else(|| instance_name.to_string(), |k| k.name.clone()),
    }
}

/// Stages reachable from `from` following `after` edges forward (including itself).
fn descendants(model: &Model, from: StageId) -> Vec<bool> {
    let n = model.workload.stages.len();
    let mut seen = vec![false; n];
    seen[from] = true;
    // Stages are topologically ordered: one forward pass suffices.
    for (i, s) in model.workload.stages.iter().enumerate().skip(from + 1) {
        if s.after.iter().any(|&d| seen[d]) {
            seen[i] = true;
        }
    }
    seen
}

fn ancestors(model: &Model, of: StageId) -> Vec<bool> {
    let n = model.workload.stages.len();
    let mut seen = vec![false; n];
    seen[of] = true;
    for i in (0..=of).rev() {
        if seen[i] {
            for &d in &model.workload.stages[i].after {
                seen[d] = true;
            }
        }
    }
    seen
}

/// What a loss is blamed on: DRAM bandwidth and DRAM latency both count as "dram".
fn limiter_name(m: &RunStats, cause: Limiter) -> String {
    match cause {
        Limiter::Rate(r) if m.rate_kind(r) != RateKind::Dram => m.rate(r).info.name.clone(),
        _ => "dram".into(),
    }
}

fn analyse_serial(
    model: &Model,
    m: &RunStats,
    resource: HoldResource,
    name: &str,
    occ: f64,
    held_s: f64,
) -> Bottleneck {
    let stages = &model.workload.stages;
    // Region: stages between an acquirer of the resource and the stage that releases it.
    let mut in_region = vec![false; stages.len()];
    let mut acquirer = vec![false; stages.len()];
    for (a, s) in stages.iter().enumerate() {
        for h in s.holds.iter().filter(|h| h.resource == resource) {
            acquirer[a] = true;
            let down = descendants(model, a);
            let up = ancestors(model, h.until);
            for i in 0..stages.len() {
                in_region[i] |= down[i] && up[i];
            }
        }
    }
    let mut blame: BTreeMap<String, f64> = BTreeMap::new();
    let mut productive = 0.0;
    let mut covered = 0.0;
    for (i, acc) in m.stages.iter().enumerate().filter(|(i, _)| in_region[*i]) {
        productive += acc.standalone_s;
        for (rate, l) in acc.losses() {
            if l > 0.0 {
                *blame.entry(limiter_name(m, rate)).or_default() += l;
            }
        }
        if acquirer[i] {
            covered += acc.actual_s;
        } else {
            covered += acc.ready_to_end_s;
            for (h, &w) in acc.wait_by_hold_s.iter().enumerate() {
                if w > 0.0 {
                    *blame.entry(m.holds[h].info.name.clone()).or_default() += w;
                }
            }
        }
    }
    // Held time not covered by region stages: waiting on stages outside (barriers).
    let gap = (held_s - covered).max(0.0);
    if gap > 0.0 {
        let outside: Vec<StageId> = (0..stages.len())
            .filter(|&i| {
                !in_region[i]
                    && stages
                        .iter()
                        .enumerate()
                        .any(|(j, s)| in_region[j] && s.after.contains(&i))
            })
            .collect();
        let mut weights: BTreeMap<String, f64> = BTreeMap::new();
        for &o in &outside {
            let acc = &m.stages[o];
            for (rate, l) in acc.losses() {
                if l > 0.0 {
                    *weights.entry(limiter_name(m, rate)).or_default() += l;
                }
            }
            *weights
                .entry(format!("stage {} (standalone)", stages[o].name))
                .or_default() += acc.standalone_s;
        }
        let total: f64 = weights.values().sum();
        if total > 0.0 {
            for (k, w) in weights {
                *blame.entry(k).or_default() += gap * w / total;
            }
        }
    }
    let share = if held_s > 0.0 {
        productive / held_s
    } else {
        1.0
    };
    let top = blame
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, v)| (k.clone(), *v));
    match top {
        // The causes overlap in time (a stage slowed by DRAM while it waits on a pool), so
        // each is given as its share of all the lost time blamed, which sums to 100%.
        Some((culprit, lost)) if share < PRODUCTIVE && lost > 0.0 => Bottleneck {
            reason: format!(
                "{name} is held {:.0}% of the time but only {:.0}% of that is standalone work; {culprit} causes {:.0}% of the time lost in it",
                occ * 100.0,
                share * 100.0,
                lost / blame.values().sum::<f64>() * 100.0
            ),
            resource: culprit,
            blame_s: blame,
            step: None,
        },
        _ => Bottleneck {
            resource: name.to_string(),
            reason: format!(
                "{name} is held {:.0}% of the time and requests queue for it; {:.0}% of the held time is standalone work",
                occ * 100.0,
                share.min(1.0) * 100.0
            ),
            blame_s: blame,
            step: None,
        },
    }
}
