//! The single-hold lane: a run whose workload is one stage, one instance per job, with at
//! most one host-wide hold (released at its own end) and no markers, whose instances
//! either are never slowed (no demands) or share rate resources as one class that the
//! lone solve settles (a processor-sharing pool). Its instances go ready, granted,
//! started and finished without the job table, the DAG counters, the per-job hold list,
//! the general work queue, the general hold line or the general fluid table: a job *is*
//! its one instance, its zero-time steps wait in a queue of their own (a third of the
//! general item's size), its one hold is a counter with a FIFO line, and its running
//! instances are in one [`LaneClass`]. The steps run in the order the general path would
//! run them and make the same observer calls, so every output is the same; only the
//! bookkeeping goes.

mod class;
mod events;
mod state;
#[cfg(test)]
mod tests;

use crate::model::StageId;

use super::holdable::{HoldIndex, HoldSlot};
use super::observer::{Scope, StageRef};
use super::plan::Plan;
use class::LaneClass;

pub(super) use state::LaneRun;

/// What a lane run needs to know of its one stage, fixed at plan time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lane {
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
    fn instance(self, job: u64) -> StageRef {
        StageRef {
            job,
            scope: self.scope,
            stage: self.stage,
        }
    }
}
