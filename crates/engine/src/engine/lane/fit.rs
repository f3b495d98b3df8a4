//! Which workloads fit the lane, and what the lane needs to know of its one stage.

use crate::engine::holdable::{HoldIndex, HoldSlot};
use crate::engine::ids::Scope;
use crate::engine::observer::StageRef;
use crate::engine::plan::Plan;
use crate::model::StageId;

use super::class::LaneClass;

/// What a lane run needs to know of its one stage, fixed at plan time.
#[derive(Debug, Clone, Copy)]
pub(in crate::engine) struct Lane {
    pub stage: StageId,
    /// Where its one instance per job runs.
    pub scope: Scope,
    /// Its one host-wide hold and amount, if any.
    pub hold: Option<(HoldIndex, u64)>,
    /// Its instances share rate resources, as one [`LaneClass`] (else never slowed).
    pub shared: bool,
}

impl Lane {
    /// The lane for `plan`, when its workload fits one.
    pub fn for_plan(plan: &Plan) -> Option<Lane> {
        let [stage] = &plan.stages[..] else {
            return None;
        };
        if plan.slots_per_job != 1 || !stage.markers.is_empty() || !stage.children.is_empty() {
            return None;
        }
        // Never slowed, or sharing as one class that the lone solve settles (an instance
        // here is never bound to a GPU).
        let key = &plan.keys[stage.key_for(None)];
        let shared = key.shared();
        if shared && !LaneClass::fits(key) {
            return None;
        }
        let hold = match (&*stage.needs, &stage.until[..]) {
            ([], []) => None,
            ([(HoldSlot::Global(i), a)], [0]) => Some((*i, *a)),
            _ => return None,
        };
        let scope = if stage.per_partition {
            Scope::Partition(0)
        } else {
            Scope::Job
        };
        Some(Lane {
            stage: 0,
            scope,
            hold,
            shared,
        })
    }

    /// Its instance of job `job`.
    pub(super) fn instance(self, job: u64) -> StageRef {
        StageRef {
            job,
            scope: self.scope,
            stage: self.stage,
        }
    }
}
