//! The compiled plan, read-only, for executors outside the engine: what a run takes from
//! each stage (sampler, holds, children, instance slots), owned so that threads may share
//! it.

use crate::engine::holdable::HoldSlot;
use crate::engine::ids::Scope;
use crate::engine::outcome::EngineError;
use crate::engine::resources::Resources;
use crate::engine::sampler::Sampler;
use crate::model::{Edge, MarkerId, Model, StageId};

use super::compile::Plan;
use super::slots::{instance_slot, woken_scopes};

/// What the engine compiles from a model, read-only: the resource table and, per stage,
/// its duration sampler, holds, dependencies, children and instance slots. A real
/// executor (bwsim replay) runs from this view, so it takes the holds, waits and
/// durations the simulation takes instead of deriving them a second time. Unlike the
/// run's own plan it owns its parts (no shared counters), so threads may share it.
pub struct CompiledPlan {
    resources: Resources,
    stages: Vec<CompiledStage>,
    partitions: u32,
    slots_per_job: usize,
    pending_template: Vec<u32>,
    roots: Vec<StageId>,
}

impl CompiledPlan {
    /// Compiles `model` as a run does, with the same errors.
    pub fn compile(model: &Model) -> Result<Self, EngineError> {
        let plan = Plan::compile(model)?;
        let stages = (plan.stages.into_iter())
            .map(|s| CompiledStage {
                per_partition: s.per_partition,
                sampler: s.sampler,
                holds: (s.needs.iter().zip(&s.until))
                    .map(|(&(slot, amount), &until)| CompiledHold {
                        slot,
                        amount,
                        until,
                    })
                    .collect(),
                children: s.children,
                slot_offset: s.slot_offset,
                markers: s.markers,
            })
            .collect();
        Ok(Self {
            resources: plan.resources,
            stages,
            partitions: plan.partitions,
            slots_per_job: plan.slots_per_job,
            pending_template: plan.pending_template,
            roots: plan.roots,
        })
    }

    /// The resource table (holdable instances in the order hold slots index them).
    pub fn resources(&self) -> &Resources {
        &self.resources
    }

    /// The stages, in model order (index = [`StageId`]).
    pub fn stages(&self) -> &[CompiledStage] {
        &self.stages
    }

    /// Partitions per job (at least one).
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// Stage instances per job (job-level stages once, per-partition ones per partition).
    pub fn slots_per_job(&self) -> usize {
        self.slots_per_job
    }

    /// Dependencies outstanding per instance slot of a fresh job.
    pub fn pending_template(&self) -> &[u32] {
        &self.pending_template
    }

    /// Stages without dependencies (ready as soon as a job arrives), in model order.
    pub fn roots(&self) -> &[StageId] {
        &self.roots
    }

    /// The instances of `stage` in a job: every partition's for a per-partition stage,
    /// else the job's one.
    pub fn scopes(&self, stage: StageId) -> impl Iterator<Item = Scope> + use<> {
        let per_partition = self.stages[stage].per_partition;
        let every = if per_partition { self.partitions } else { 1 };
        (0..every).map(move |p| {
            if per_partition {
                Scope::Partition(p)
            } else {
                Scope::Job
            }
        })
    }

    /// The instances of `child` that one finished instance of its parent (`parent`, in
    /// `scope`) counts off: every partition's when a job-level parent feeds a
    /// per-partition child, the same partition's when both are per partition, else the
    /// job's one.
    pub fn woken_scopes(
        &self,
        parent: StageId,
        scope: Scope,
        child: StageId,
    ) -> impl Iterator<Item = Scope> + use<> {
        woken_scopes(
            self.stages[parent].per_partition,
            self.stages[child].per_partition,
            scope,
            self.partitions,
        )
    }

    /// The stage and scope of instance slot `slot` (the inverse of [`CompiledStage::slot`]).
    pub fn slot_owner(&self, slot: usize) -> (StageId, Scope) {
        let stage = (self.stages.iter())
            .rposition(|s| s.slot_offset <= slot)
            .expect("slot 0 belongs to stage 0");
        let s = &self.stages[stage];
        let scope = if s.per_partition {
            Scope::Partition((slot - s.slot_offset) as u32)
        } else {
            Scope::Job
        };
        (stage, scope)
    }
}

/// One compiled stage (see [`CompiledPlan`]).
#[derive(Debug, Clone)]
pub struct CompiledStage {
    per_partition: bool,
    sampler: Sampler,
    holds: Vec<CompiledHold>,
    children: Vec<StageId>,
    slot_offset: usize,
    markers: Vec<(Edge, MarkerId)>,
}

/// One hold of a compiled stage: where it is taken, how much, and the stage whose end
/// releases it (that stage's instance in the holder's scope, see [`CompiledStage::slot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompiledHold {
    pub slot: HoldSlot,
    pub amount: u64,
    pub until: StageId,
}

impl CompiledStage {
    /// True when the stage runs once per partition, false once per job.
    pub fn per_partition(&self) -> bool {
        self.per_partition
    }

    /// Its standalone-duration sampler.
    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }

    /// Its holds, requested together, in model order.
    pub fn holds(&self) -> &[CompiledHold] {
        &self.holds
    }

    /// The stages that wait for it, in model order.
    pub fn children(&self) -> &[StageId] {
        &self.children
    }

    /// Markers on its edges: (edge, marker id), in model order.
    pub fn markers(&self) -> &[(Edge, MarkerId)] {
        &self.markers
    }

    /// The instance slot within a job of its instance in `scope` (a job-level scope names
    /// a per-partition stage's first instance, as the engine's release does).
    pub fn slot(&self, scope: Scope) -> usize {
        instance_slot(self.slot_offset, self.per_partition, scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_model::{host_model, stage};
    use crate::model::{Hold, HoldResource};

    #[test]
    fn the_view_shows_the_plan_the_run_uses() {
        // split (job, holds the lock until merge) -> work (per partition) -> merge (job).
        let mut split = stage("split", false, vec![], 1.0);
        split.holds = vec![Hold {
            resource: HoldResource::Lock(0),
            amount: 1,
            until: 2,
        }];
        let stages = vec![
            split,
            stage("work", true, vec![0], 2.0),
            stage("merge", false, vec![1], 1.0),
        ];
        let model = host_model(3, stages, 1, 1);
        let (plan, view) = (
            Plan::compile(&model).unwrap(),
            CompiledPlan::compile(&model).unwrap(),
        );
        assert_eq!(view.slots_per_job(), plan.slots_per_job);
        assert_eq!(view.pending_template(), plan.pending_template);
        assert_eq!(view.roots(), plan.roots);
        assert_eq!(view.partitions(), 3);
        let lock = plan.resources.hold_slot(HoldResource::Lock(0)).unwrap();
        let hold = CompiledHold {
            slot: lock,
            amount: 1,
            until: 2,
        };
        assert_eq!(view.stages()[0].holds(), [hold]);
        assert_eq!(view.stages()[0].children(), [1]);
        let mut rng = rand::SeedableRng::seed_from_u64(1);
        assert_eq!(view.stages()[1].sampler().sample(&mut rng), 2.0);
        // The split fans out to every partition's work; each work counts off the merge.
        let every: Vec<_> = (0..3).map(Scope::Partition).collect();
        assert_eq!(
            view.woken_scopes(0, Scope::Job, 1).collect::<Vec<_>>(),
            every
        );
        assert_eq!(view.scopes(1).collect::<Vec<_>>(), every);
        let woken: Vec<_> = view.woken_scopes(1, Scope::Partition(2), 2).collect();
        assert_eq!(woken, [Scope::Job]);
        // Slots and their owners are inverse.
        for (id, s) in view.stages().iter().enumerate() {
            for scope in view.scopes(id) {
                assert_eq!(view.slot_owner(s.slot(scope)), (id, scope));
            }
        }
        assert_eq!(view.stages()[1].slot(Scope::Partition(2)), 3);
    }
}
