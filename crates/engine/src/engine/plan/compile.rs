//! Compiling a [`Model`] into the plan the event loop runs: the resource table, each
//! stage's sampler, holds, dependency counts and instance slots, and the interned class
//! keys.

use std::collections::HashMap;
use std::rc::Rc;

use crate::engine::holdable::HoldSlot;
use crate::engine::ids::{KeyId, Scope};
use crate::engine::outcome::EngineError;
use crate::engine::resources::{MissingHold, Resources};
use crate::engine::sampler::Sampler;
use crate::engine::solver::{ClassKey, PoolRule};
use crate::model::{Edge, HoldResource, MarkerId, Model, PoolSharing, Stage, StageId};

use super::keys::class_key;
use super::slots::instance_slot;

/// A stage, compiled for the engine.
pub(in crate::engine) struct StagePlan {
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
pub(in crate::engine) struct Plan {
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
        let resources = Resources::from_hardware(hw);
        let w = &model.workload;
        let partitions = w.partitions.max(1);
        let mut stages = Vec::with_capacity(w.stages.len());
        let mut slot = 0usize;
        for s in &w.stages {
            stages.push(compile_stage(model, s, &resources, slot)?);
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
        let keys = intern_keys(model, &resources, &mut stages);
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

/// Stage `s` of `model` compiled, its instances from slot `slot` of a job (children,
/// markers and class keys are added by the caller).
fn compile_stage(
    model: &Model,
    s: &Stage,
    resources: &Resources,
    slot: usize,
) -> Result<StagePlan, EngineError> {
    let w = &model.workload;
    let partitions = w.partitions.max(1);
    let stage = || s.name.clone();
    let sampler = Sampler::new(&s.duration).map_err(|source| EngineError::BadDistribution {
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
            MissingHold::NoGpu if matches!(h.resource, HoldResource::Vram) => {
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
    let deps = (s.after.iter())
        .map(|&d| {
            if w.stages[d].per_partition && !s.per_partition {
                partitions
            } else {
                1
            }
        })
        .sum();
    Ok(StagePlan {
        per_partition: s.per_partition,
        sampler,
        needs: needs.into(),
        until,
        deps_per_instance: deps,
        children: Vec::new(),
        slot_offset: slot,
        markers: Vec::new(),
        class_key: Vec::new(),
    })
}

/// Interns every (stage, GPU) class key up front, so that joining a class is an index:
/// equal keys get one id. Returns the keys by id.
fn intern_keys(model: &Model, resources: &Resources, stages: &mut [StagePlan]) -> Vec<ClassKey> {
    let mut keys = Vec::new();
    let mut ids: HashMap<ClassKey, KeyId> = HashMap::new();
    let gpus = model.hardware.gpus.len().max(1);
    for (i, s) in model.workload.stages.iter().enumerate() {
        for g in 0..gpus {
            let key = class_key(s, resources, g, &model.hardware.dram);
            let id = *ids.entry(key).or_insert_with_key(|k| {
                keys.push(k.clone());
                keys.len() - 1
            });
            stages[i].class_key.push(id);
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_model::{host_model, stage};
    use crate::model::{Demand, Hold, RateTarget};

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
