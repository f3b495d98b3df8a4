//! The running stage instances (activities) in reusable slots: when each started, its
//! standalone time, its GPU, the hold it waited on, its fluid class, and the time it lost
//! to sharing, which its record reports when it ends.

use crate::model::StageId;
use crate::time::SimTime;

use super::fluid::Fluid;
use super::holdable::HoldIndex;
use super::ids::ClassId;
use super::ids::KeyId;
use super::ids::Token;
use super::observer::Loss;

/// A running stage instance (its slot is reused once it ends).
struct Activity {
    live: bool,
    run: Run,
    /// Its fluid class; None when it is never slowed (or takes no time).
    class: Option<ClassId>,
    /// Its class's lost-time counters when it joined.
    lost_at_start: Loss,
}

/// What an activity ran, as its record reports it.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub token: Token,
    pub start: SimTime,
    pub standalone_s: f64,
    pub gpu: Option<u32>,
    pub blocked_on: Option<HoldIndex>,
}

/// The running activities and the loss record they report in.
#[derive(Default)]
pub(super) struct Activities {
    slots: Vec<Activity>,
    free: Vec<usize>,
    /// The last ended activity's loss, reused for the next (observers see a record by
    /// reference, so its buffer is kept).
    loss: Loss,
    /// `loss` holds [`Fluid::no_loss`]'s value.
    loss_is_none: bool,
}

impl Activities {
    /// Starts `run` in a free slot (reused with its buffers), outside any fluid class;
    /// returns the slot.
    #[inline]
    pub fn start(&mut self, run: Run) -> usize {
        match self.free.pop() {
            Some(a) => {
                let act = &mut self.slots[a];
                debug_assert!(!act.live);
                act.live = true;
                act.run = run;
                act.class = None;
                a
            }
            None => {
                self.slots.push(Activity {
                    live: true,
                    run,
                    class: None,
                    lost_at_start: Loss::default(),
                });
                self.slots.len() - 1
            }
        }
    }

    /// Puts activity `a`, needing `standalone_s` of standalone work, in the fluid class
    /// of `key`, where it shares rate resources until it is done.
    #[inline]
    pub fn join(
        &mut self,
        a: usize,
        fluid: &mut Fluid,
        now: SimTime,
        key: KeyId,
        standalone_s: f64,
    ) {
        let act = &mut self.slots[a];
        act.class = Some(fluid.join(now, key, a, standalone_s, &mut act.lost_at_start));
    }

    /// The stage activity `a` runs.
    pub fn stage_of(&self, a: usize) -> StageId {
        self.slots[a].run.token.stage
    }

    /// Ends activity `a` and frees its slot: what it ran, and the time it lost to sharing
    /// in the reused loss record (hand that back with [`Activities::recycle_loss`] once
    /// reported).
    #[inline]
    pub fn end(&mut self, a: usize, fluid: &Fluid) -> (Run, Loss) {
        let act = &mut self.slots[a];
        debug_assert!(act.live, "live activity");
        act.live = false;
        self.free.push(a);
        let mut lost = std::mem::take(&mut self.loss);
        let act = &self.slots[a];
        match act.class {
            // Observers see the record by reference, so a no-loss value written for an
            // earlier record is still there.
            None if self.loss_is_none => {}
            None => fluid.no_loss(&mut lost),
            Some(c) => fluid.lost_since(c, &act.lost_at_start, &mut lost),
        }
        self.loss_is_none = act.class.is_none();
        (act.run, lost)
    }

    /// Takes back the loss record [`Activities::end`] handed out.
    #[inline]
    pub fn recycle_loss(&mut self, lost: Loss) {
        self.loss = lost;
    }
}

#[cfg(test)]
mod tests {
    use super::{Activities, Run};
    use crate::engine::Scope;
    use crate::engine::fluid::Fluid;
    use crate::engine::ids::Token;
    use crate::engine::observer::Loss;
    use crate::engine::plan::Plan;
    use crate::engine::test_model::{host_model, stage};
    use crate::time::SimTime;

    fn run(job: usize, start_s: f64) -> Run {
        Run {
            token: Token {
                job,
                stage: 0,
                scope: Scope::Job,
                ready: SimTime::ZERO,
            },
            start: SimTime::from_secs(start_s),
            standalone_s: 1.0,
            gpu: None,
            blocked_on: Some(2),
        }
    }

    #[test]
    fn an_ended_slot_is_reused_and_an_unshared_activity_reports_no_loss() {
        let model = host_model(1, vec![stage("a", false, vec![], 1.0)], 1, 1);
        let plan = Plan::compile(&model).unwrap();
        let r = &plan.resources;
        let fluid = Fluid::new(plan.keys.clone(), r.capacities(), r.dram, vec![]);
        let no_loss = Loss::zero(r.capacities().len());
        let mut activities = Activities::default();
        assert_eq!(activities.start(run(0, 1.0)), 0);
        assert_eq!(activities.start(run(1, 2.0)), 1);
        let (ended, lost) = activities.end(0, &fluid);
        let one_s = SimTime::from_secs(1.0);
        assert_eq!(
            (ended.token.job, ended.start, ended.blocked_on),
            (0, one_s, Some(2))
        );
        assert_eq!(lost, no_loss);
        activities.recycle_loss(lost);
        assert_eq!(activities.start(run(2, 3.0)), 0, "the freed slot");
        let (ended, lost) = activities.end(0, &fluid);
        assert_eq!(ended.token.job, 2);
        assert_eq!(lost, no_loss);
    }
}
