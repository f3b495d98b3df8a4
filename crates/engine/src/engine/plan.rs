//! Compiling a [`Model`] into the plan the event loop runs: the resource table, each
//! stage's sampler, holds, dependency counts and instance slots, and the interned class
//! keys (what makes two running activities interchangeable for the fluid model).

use std::collections::HashMap;
use std::rc::Rc;

use crate::model::{
    CACHE_LINE_BYTES, Dram, DramPolicy, Edge, HoldResource, MarkerId, MemcpyPace, Model,
    NeighbourRatios, PoolSharing, RateTarget, Stage, StageId, StagedCopy, StreamNeighbourCurve,
};

use super::EngineError;
use super::holdable::HoldSlot;
use super::resources::{MissingHold, Resources};
use super::sampler::Sampler;
use super::solver::{ClassKey, CpuLoadKey, PoolRule};

mod view;
pub use view::{CompiledHold, CompiledPlan, CompiledStage};

use super::observer::Scope;

/// The instance slot within a job of a stage's instance in `scope`: a per-partition stage
/// has one slot per partition from `slot_offset`, any other stage the one at
/// `slot_offset` (a job-level scope names a per-partition stage's first instance).
pub(crate) fn instance_slot(slot_offset: usize, per_partition: bool, scope: Scope) -> usize {
    match scope {
        Scope::Partition(p) if per_partition => slot_offset + p as usize,
        _ => slot_offset,
    }
}

/// The instances of a child that a finished parent instance in `scope` counts off: a
/// job-level parent fans out to every partition of a per-partition child, a
/// per-partition parent wakes its own partition's, and a job-level child is woken once.
pub(crate) fn woken_scopes(
    parent_per_partition: bool,
    child_per_partition: bool,
    scope: Scope,
    partitions: u32,
) -> impl Iterator<Item = Scope> {
    let (every, only) = match (child_per_partition, parent_per_partition) {
        (true, false) => (partitions, None),
        (true, true) => (1, Some(scope)),
        (false, _) => (1, Some(Scope::Job)),
    };
    (0..every).map(move |p| only.unwrap_or(Scope::Partition(p)))
}

/// Index of an interned [`ClassKey`] in [`Plan::keys`].
pub(super) type KeyId = usize;

/// A stage, compiled for the engine.
pub(super) struct StagePlan {
    pub per_partition: bool,
    pub sampler: Sampler,
    /// Holds: where and how much.
    pub needs: Rc<[(HoldSlot, u64)]>,
    /// Per hold in `needs`: the stage whose end releases it.
    pub until: Vec<StageId>,
    /// Dependencies an instance waits for.
    pub deps_per_instance: u32,
    pub children: Vec<StageId>,
    /// First instance slot of this stage within a job.
    pub slot_offset: usize,
    pub markers: Vec<(Edge, MarkerId)>,
    /// Class key of an instance bound to GPU g (index g; one entry when there is no GPU).
    class_key: Vec<KeyId>,
}

impl StagePlan {
    /// The class key of an instance bound to `gpu`.
    #[inline]
    pub fn key_for(&self, gpu: Option<u32>) -> KeyId {
        self.class_key[(gpu.unwrap_or(0) as usize).min(self.class_key.len() - 1)]
    }
}

/// The model compiled for one run.
pub(super) struct Plan {
    pub resources: Resources,
    pub stages: Vec<StagePlan>,
    /// Stage instances per job (job-level stages once, per-partition ones per partition).
    pub slots_per_job: usize,
    pub partitions: u32,
    /// Interned class keys, indexed by [`KeyId`].
    pub keys: Vec<ClassKey>,
    /// Dependencies outstanding per instance slot of a fresh job.
    pub pending_template: Vec<u32>,
    /// Stages without dependencies (ready as soon as a job arrives), in model order.
    pub roots: Vec<StageId>,
}

impl Plan {
    /// The instance slot within a job of `stage`'s instance in `scope`.
    #[inline]
    pub fn slot(&self, stage: StageId, scope: Scope) -> usize {
        let s = &self.stages[stage];
        instance_slot(s.slot_offset, s.per_partition, scope)
    }

    /// The sharing and throughput rules of the host's pools, for the solver.
    pub fn pool_rules(&self, model: &Model) -> Vec<PoolRule> {
        (model.hardware.pools.iter().zip(&self.resources.pools))
            .filter(|(p, _)| p.sharing != PoolSharing::ByActivity || p.cpu.is_some())
            .map(|(p, r)| PoolRule {
                resource: r.index(),
                per_thread: p.sharing == PoolSharing::PerThread,
                cpu: p.cpu.clone(),
            })
            .collect()
    }

    pub fn compile(model: &Model) -> Result<Self, EngineError> {
        let hw = &model.hardware;
        let ngpu = hw.gpus.len();
        let resources = Resources::from_hardware(hw);
        let w = &model.workload;
        let partitions = w.partitions.max(1);
        let mut stages = Vec::with_capacity(w.stages.len());
        let mut slot = 0usize;
        for s in &w.stages {
            let stage = || s.name.clone();
            let sampler =
                Sampler::new(&s.duration).map_err(|source| EngineError::BadDistribution {
                    stage: stage(),
                    source,
                })?;
            let mut needs = Vec::new();
            let mut until = Vec::new();
            for h in &s.holds {
                let slot = resources.hold_slot(h.resource).map_err(|m| match m {
                    MissingHold::NoLock(lock) => EngineError::MissingLock {
                        stage: stage(),
                        lock,
                    },
                    MissingHold::NoGpu
                        if matches!(h.resource, crate::model::HoldResource::Vram) =>
                    {
                        EngineError::VramWithoutGpu { stage: stage() }
                    }
                    MissingHold::NoGpu => EngineError::PerGpuLockWithoutGpu { stage: stage() },
                })?;
                if h.until >= w.stages.len() {
                    return Err(EngineError::MissingHoldUntil {
                        stage: stage(),
                        until: h.until,
                    });
                }
                needs.push((slot, h.amount));
                until.push(h.until);
            }
            for d in &s.demands {
                if resources.rate_targets(d.target, 0).is_none() {
                    return Err(EngineError::MissingRateTarget {
                        stage: stage(),
                        target: d.target,
                    });
                }
            }
            let deps = s
                .after
                .iter()
                .map(|&d| {
                    if w.stages[d].per_partition && !s.per_partition {
                        partitions
                    } else {
                        1
                    }
                })
                .sum();
            stages.push(StagePlan {
                per_partition: s.per_partition,
                sampler,
                needs: needs.into(),
                until,
                deps_per_instance: deps,
                children: Vec::new(),
                slot_offset: slot,
                markers: Vec::new(),
                class_key: Vec::new(),
            });
            slot += if s.per_partition {
                partitions as usize
            } else {
                1
            };
        }
        for (i, s) in w.stages.iter().enumerate() {
            for &d in &s.after {
                stages[d].children.push(i);
            }
        }
        for (m, marker) in model.instrumentation.markers.iter().enumerate() {
            stages[marker.stage].markers.push((marker.edge, m));
        }
        // Intern every (stage, GPU) class key up front: joining a class is then an index.
        let mut keys = Vec::new();
        let mut key_index: HashMap<RawKey, KeyId> = HashMap::new();
        let dram = &model.hardware.dram;
        for (i, s) in w.stages.iter().enumerate() {
            for g in 0..ngpu.max(1) {
                let key = class_key(s, &resources, g, dram);
                let id = *key_index.entry(key).or_insert_with_key(|k| {
                    keys.push(ClassKey {
                        weights: k.0.iter().map(|&(r, w)| (r, f64::from_bits(w))).collect(),
                        latency_frac: f64::from_bits(k.1),
                        dram_policy: k.2,
                        line_bound: f64::from_bits(k.3),
                        compute_frac: f64::from_bits(k.4),
                        write_frac: f64::from_bits(k.5),
                        host_frac: f64::from_bits(k.6.0),
                        host_pool: k.6.1,
                        staging: k.7.as_ref().map(|(g, h, pace, e, beside)| StagedCopy {
                            setup_frac: f64::from_bits(*g),
                            memcpy_headroom: f64::from_bits(*h),
                            memcpy_pace: *pace,
                            latency_exponent: f64::from_bits(*e),
                            beside_streams: beside
                                .as_ref()
                                .and_then(|b| StreamNeighbourCurve::new(&bits_points(b))),
                        }),
                        cpu_load: k
                            .8
                            .as_ref()
                            .map(|(pools, pts, threads, streaming, chasing)| CpuLoadKey {
                                pools: pools.clone(),
                                stretch: bits_points(pts),
                                threads: f64::from_bits(*threads),
                                by_neighbour: NeighbourRatios {
                                    streaming: bits_points(streaming),
                                    chasing: bits_points(chasing),
                                },
                            }),
                        memcpy_pools: k.9.clone(),
                    });
                    keys.len() - 1
                });
                stages[i].class_key.push(id);
            }
        }
        let mut pending_template = vec![0u32; slot];
        for plan in &stages {
            let n = if plan.per_partition {
                partitions as usize
            } else {
                1
            };
            for p in 0..n {
                pending_template[plan.slot_offset + p] = plan.deps_per_instance;
            }
        }
        let roots = (0..stages.len())
            .filter(|&s| stages[s].deps_per_instance == 0)
            .collect();
        Ok(Self {
            resources,
            roots,
            stages,
            slots_per_job: slot,
            partitions,
            keys,
            pending_template,
        })
    }
}

/// A class key as bits (weights, latency share, DRAM policy, line bound, compute share,
/// write share, host thread, staging, CPU load), so keys can be compared and hashed.
type RawKey = (
    Vec<(usize, u64)>,
    u64,
    DramPolicy,
    u64,
    u64,
    u64,
    (u64, usize),
    Option<StagingRaw>,
    Option<CpuLoadRaw>,
    Vec<usize>,
);

/// A [`StagedCopy`] as bits: setup share, headroom, pace, exponent and the streaming
/// neighbours' curve (None: none).
type StagingRaw = (u64, u64, MemcpyPace, u64, Option<Vec<(u64, u64)>>);

/// A [`CpuLoad`](crate::model::CpuLoad) as bits: pools' indices, curve, threads, and the
/// streaming and chasing ratio points.
type CpuLoadRaw = (
    Vec<usize>,
    Vec<(u64, u64)>,
    u64,
    Vec<(u64, u64)>,
    Vec<(u64, u64)>,
);

fn point_bits(points: &[(f64, f64)]) -> Vec<(u64, u64)> {
    points
        .iter()
        .map(|&(x, y)| (x.to_bits(), y.to_bits()))
        .collect()
}

fn bits_points(bits: &[(u64, u64)]) -> Vec<(f64, f64)> {
    (bits.iter())
        .map(|&(x, y)| (f64::from_bits(x), f64::from_bits(y)))
        .collect()
}

/// The class key of `stage` bound to GPU `g`: resolved resource weights (sorted, duplicate
/// resources summed), latency share, DRAM policy and Little's-law bound. The stage's
/// targets were checked to exist.
fn class_key(stage: &Stage, resources: &Resources, g: usize, dram: &Dram) -> RawKey {
    let sharing = &dram.sharing;
    let mut weights: Vec<(usize, u64)> = Vec::with_capacity(stage.demands.len() + 1);
    for d in &stage.demands {
        let Some((r, duplex)) = resources.rate_targets(d.target, g) else {
            continue;
        };
        weights.push((r.index(), d.amount.to_bits()));
        if let Some(both) = duplex {
            weights.push((both.index(), d.amount.to_bits()));
        }
    }
    weights.sort_unstable();
    // Merge duplicate resources (e.g. two DRAM demands) by summing.
    let mut merged: Vec<(usize, u64)> = Vec::with_capacity(weights.len());
    for (r, w) in weights {
        match merged.last_mut() {
            Some((lr, lw)) if *lr == r => *lw = (f64::from_bits(*lw) + f64::from_bits(w)).to_bits(),
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
            let dram_gbps: f64 = merged
                .iter()
                .filter(|&&(r, _)| r == resources.dram.index())
                .map(|&(_, w)| f64::from_bits(w))
                .sum();
            let idle_ns = dram
                .latency
                .latency_ns_mix(0.0, Some(stage_write_frac(stage)));
            (lines * CACHE_LINE_BYTES * stage_threads(stage)).max(dram_gbps * idle_ns)
        }
        _ => 0.0,
    };
    (
        merged,
        stage.latency_bound_frac.to_bits(),
        dram_policy,
        line_bound.to_bits(),
        stage_compute_frac(stage).to_bits(),
        stage_write_frac(stage).to_bits(),
        match stage.host_thread {
            Some(h) => (
                h.bound_frac.to_bits(),
                resources
                    .pools
                    .get(h.pool)
                    .map_or(usize::MAX, |r| r.index()),
            ),
            None => (0.0_f64.to_bits(), usize::MAX),
        },
        stage.staged_copy.map(|st| {
            (
                st.setup_frac.to_bits(),
                st.memcpy_headroom.to_bits(),
                st.memcpy_pace,
                st.latency_exponent.to_bits(),
                st.beside_streams.map(|c| point_bits(c.points())),
            )
        }),
        stage.cpu_load.as_ref().map(|l| {
            let pools = (l.pools.iter())
                .filter_map(|&p| resources.pools.get(p).map(|r| r.index()))
                .collect();
            (
                pools,
                point_bits(&l.stretch),
                l.threads.to_bits(),
                point_bits(&l.by_neighbour.streaming),
                point_bits(&l.by_neighbour.chasing),
            )
        }),
        // A memcpy its streaming neighbours pace counts them on every pool.
        match stage.staged_copy {
            Some(st) if st.beside_streams.is_some() => {
                resources.pools.iter().map(|r| r.index()).collect()
            }
            _ => Vec::new(),
        },
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_model::{host_model, stage};
    use crate::model::{Demand, Hold, HoldResource, RateTarget};

    #[test]
    fn slots_dependencies_and_children_follow_the_dag() {
        // split (job) -> work (per partition) -> merge (job), partitions 3.
        let stages = vec![
            stage("split", false, vec![], 1.0),
            stage("work", true, vec![0], 1.0),
            stage("merge", false, vec![1], 1.0),
        ];
        let plan = Plan::compile(&host_model(3, stages, 1, 1)).unwrap();
        assert_eq!(plan.slots_per_job, 5);
        let offsets: Vec<_> = plan.stages.iter().map(|s| s.slot_offset).collect();
        assert_eq!(offsets, [0, 1, 4]);
        // merge waits for all three partitions; each work instance for the one split.
        assert_eq!(plan.pending_template, [0, 1, 1, 1, 3]);
        assert_eq!(plan.stages[0].children, [1]);
        assert_eq!(plan.stages[1].children, [2]);
        assert!(plan.stages[2].children.is_empty());
    }

    #[test]
    fn equal_demands_share_one_class_key_and_duplicates_are_summed() {
        let mut a = stage("a", false, vec![], 1.0);
        a.demands = vec![
            Demand {
                target: RateTarget::Dram,
                amount: 10.0,
            },
            Demand {
                target: RateTarget::Dram,
                amount: 5.0,
            },
        ];
        let mut b = stage("b", false, vec![0], 2.0);
        b.demands = vec![Demand {
            target: RateTarget::Dram,
            amount: 15.0,
        }];
        let c = stage("c", false, vec![1], 2.0);
        let plan = Plan::compile(&host_model(1, vec![a, b, c], 1, 1)).unwrap();
        assert_eq!(plan.stages[0].key_for(None), plan.stages[1].key_for(None));
        let k = &plan.keys[plan.stages[0].key_for(None)];
        assert_eq!(k.weights, [(plan.resources.dram.index(), 15.0)]);
        assert!(k.shared());
        assert!(!plan.keys[plan.stages[2].key_for(None)].shared());
    }

    #[test]
    fn impossible_references_are_typed_errors() {
        let compile = |s: Stage| Plan::compile(&host_model(1, vec![s], 1, 1)).err().unwrap();
        let mut vram = stage("v", false, vec![], 1.0);
        vram.holds = vec![Hold {
            resource: HoldResource::Vram,
            amount: 1,
            until: 0,
        }];
        assert_eq!(
            compile(vram),
            EngineError::VramWithoutGpu { stage: "v".into() }
        );
        let mut lock = stage("l", false, vec![], 1.0);
        lock.holds = vec![Hold {
            resource: HoldResource::Lock(3),
            amount: 1,
            until: 0,
        }];
        let e = compile(lock);
        assert_eq!(
            e,
            EngineError::MissingLock {
                stage: "l".into(),
                lock: 3
            }
        );
        assert_eq!(e.to_string(), "stage 'l': lock 3 does not exist");
        let mut until = stage("u", false, vec![], 1.0);
        until.holds = vec![Hold {
            resource: HoldResource::Cores,
            amount: 1,
            until: 9,
        }];
        assert_eq!(
            compile(until),
            EngineError::MissingHoldUntil {
                stage: "u".into(),
                until: 9
            }
        );
        let mut gpu = stage("g", false, vec![], 1.0);
        gpu.demands = vec![Demand {
            target: RateTarget::PcieH2d,
            amount: 1.0,
        }];
        let e = compile(gpu);
        assert_eq!(
            e.to_string(),
            "stage 'g': draws on PcieH2d, which does not exist"
        );
        let mut bad = stage("d", false, vec![], 1.0);
        bad.duration = crate::model::Duration::Uniform {
            min_s: 2.0,
            max_s: 1.0,
        };
        assert_eq!(
            compile(bad).to_string(),
            "stage 'd': invalid duration distribution: min_s 2 > max_s 1"
        );
    }
}
