//! Capacity checks on holdable resources that can be decided before simulating: a stage
//! that could never start within one job because of what it and its predecessors hold.

use std::collections::BTreeMap;

use crate::model::{Hardware, HoldResource, Workload};

use super::dag::Reach;
use super::error::{ErrorKind, Locator, ScenarioError, join_index};
use super::units::GIB;

/// Units of `r` available to one job's holds (per GPU unless `all_gpus`).
pub fn capacity(hw: &Hardware, r: HoldResource, all_gpus: bool) -> u64 {
    let g = if all_gpus {
        hw.gpus.len().max(1) as u64
    } else {
        1
    };
    match r {
        HoldResource::Cores => u64::from(hw.cpu_cores),
        HoldResource::HostRam => hw.host_ram_bytes,
        HoldResource::Vram => hw
            .gpus
            .first()
            .map_or(0, |x| x.vram_bytes)
            .saturating_mul(g),
        HoldResource::Lock(id) => {
            let l = &hw.locks[id];
            if l.per_gpu {
                l.capacity.saturating_mul(g)
            } else {
                l.capacity
            }
        }
    }
}

/// An amount of a holdable resource, in words: "96 cores", "14 GiB of host RAM".
pub fn quantity(hw: &Hardware, r: HoldResource, n: u64) -> String {
    let gib = |b: u64| {
        let s = format!("{:.3}", b as f64 / GIB);
        format!("{} GiB", s.trim_end_matches('0').trim_end_matches('.'))
    };
    match r {
        HoldResource::Cores => format!("{n} cores"),
        HoldResource::HostRam => format!("{} of host RAM", gib(n)),
        HoldResource::Vram => format!("{} of VRAM", gib(n)),
        HoldResource::Lock(id) => format!("{n} units of lock {:?}", hw.locks[id].name),
    }
}

/// A stage that can never start within one job: what it holds plus what earlier stages of
/// the same job must still hold (released at or after its end) exceeds the capacity.
/// A per-partition hold seen from a per-job stage counts once per partition.
pub fn check_live_holds(
    w: &Workload,
    hw: &Hardware,
    order: &[usize],
    loc: &Locator,
) -> Result<(), ScenarioError> {
    // Only stages that hold something matter: walk the graph from those (and back from
    // the stages that release) rather than building a quadratic reachability matrix.
    let after: Vec<Vec<usize>> = w.stages.iter().map(|s| s.after.clone()).collect();
    let reach = Reach::new(&after);
    // A hold released at the end of its own stage is never held while another stage of
    // the job starts after it (that stage would both follow and precede the holder), so
    // only stages holding past their own end count; in most scenarios there are few.
    let holders: Vec<(usize, Vec<bool>)> = w
        .stages
        .iter()
        .enumerate()
        .filter(|(i, st)| st.holds.iter().any(|h| h.until != *i))
        .map(|(i, _)| (i, reach.descendants(i)))
        .collect();
    // released_after[u][s]: the releasing stage u (transitively) runs after s.
    let mut released_after: BTreeMap<usize, Vec<bool>> = BTreeMap::new();
    for (i, _) in &holders {
        for h in w.stages[*i].holds.iter().filter(|h| h.until != *i) {
            released_after
                .entry(h.until)
                .or_insert_with(|| reach.ancestors(h.until));
        }
    }
    for (s, stage) in w.stages.iter().enumerate() {
        let mut need: BTreeMap<HoldResource, (u64, bool)> = BTreeMap::new();
        for h in &stage.holds {
            need.entry(h.resource).or_default().0 += h.amount;
        }
        for (hidx, down) in &holders {
            if !down[s] {
                continue;
            }
            let holder = &w.stages[*hidx];
            let mult = if holder.per_partition && !stage.per_partition {
                u64::from(w.partitions)
            } else {
                1
            };
            for h in holder.holds.iter().filter(|h| h.until != *hidx) {
                if h.until == s || released_after[&h.until][s] {
                    let e = need.entry(h.resource).or_default();
                    e.0 = e.0.saturating_add(h.amount.saturating_mul(mult));
                    e.1 |= mult > 1;
                }
            }
        }
        for (r, (total, spread)) in need {
            let cap = capacity(hw, r, spread);
            if total > cap {
                let file_idx = order[s];
                return Err(loc.error(
                    ErrorKind::Capacity,
                    &join_index("workload.stages", file_idx),
                    format!(
                        "stage {:?} can never start: together with what earlier stages of the same job still hold (released at or after its end) it needs {}, but there are only {}",
                        stage.name,
                        quantity(hw, r, total),
                        quantity(hw, r, cap)
                    ),
                ));
            }
        }
    }
    Ok(())
}
