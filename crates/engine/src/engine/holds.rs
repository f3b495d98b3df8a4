//! The run's holds: the strict-FIFO line over the holdable resources ([`Holdables`]),
//! what each job holds and which of its instances releases it at its end, and the
//! instances whose use or line changed since the observers were last told.

use crate::time::SimTime;

use super::agenda::{Agenda, Work};
use super::holdable::{HoldIndex, Holdables, Request};
use super::ids::Token;
use super::observer::Observer;
use super::plan::Plan;

/// A hold a job keeps until the instance in its `release_slot` ends.
#[derive(Clone, Copy)]
struct Held {
    release_slot: usize,
    instance: HoldIndex,
    amount: u64,
}

/// The run's holds and their waiters.
pub(super) struct Holds {
    line: Holdables<Token>,
    /// Per job slot, its holds not yet released (buffers reused with the slot).
    held: Vec<Vec<Held>>,
    /// Scratch: the holds one instance's end releases.
    released: Vec<(HoldIndex, u64)>,
    /// Scratch: the instances to report.
    touched: Vec<HoldIndex>,
}

// The per-instance methods are `#[inline]`: out of line, the general path ran about 10%
// slower in wall time (M/M/16 with a second stage) for the same instructions, from
// mispredicted branches across the calls.
impl Holds {
    /// Holdable instances of these capacities, on a host of `gpus` GPUs.
    pub fn new(capacities: Vec<u64>, gpus: u32) -> Self {
        Holds {
            line: Holdables::new(capacities, gpus),
            held: Vec::new(),
            released: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// Asks for the holds of `token`'s stage (on `gpu` when bound). The grant, now or
    /// once released holds make room, goes to `agenda` as the instance's start; a stage
    /// that holds nothing starts at once.
    #[inline]
    pub fn request(&mut self, plan: &Plan, token: Token, gpu: Option<u32>, agenda: &mut Agenda) {
        let needs = &plan.stages[token.stage].needs;
        if needs.is_empty() {
            agenda.push(Work::Start {
                token,
                gpu,
                blocked_on: None,
            });
            return;
        }
        let request = Request {
            token,
            needs: needs.clone(),
            gpu,
            blocked_on: None,
        };
        self.line.request(request, agenda);
    }

    /// Records the holds just granted to `token` (its stage's needs, on `gpu`), each
    /// against the instance of its job whose end releases it.
    #[inline]
    pub fn keep(&mut self, plan: &Plan, token: &Token, gpu: Option<u32>) {
        let stage = &plan.stages[token.stage];
        if stage.needs.is_empty() {
            return;
        }
        if self.held.len() <= token.job {
            self.held.resize_with(token.job + 1, Vec::new);
        }
        let held = &mut self.held[token.job];
        for (&(hold, amount), &until) in stage.needs.iter().zip(&stage.until) {
            held.push(Held {
                release_slot: plan.slot(until, token.scope),
                instance: hold.instance(gpu),
                amount,
            });
        }
    }

    /// Releases the holds of job slot `job` due at the end of its instance in `slot`;
    /// the grants this makes go to `agenda`.
    #[inline]
    pub fn release_due(&mut self, job: usize, slot: usize, agenda: &mut Agenda) {
        let Some(held) = self.held.get_mut(job) else {
            return;
        };
        if held.is_empty() {
            return;
        }
        if let [h] = held[..] {
            // One hold (a lock, a core): released here or not at all, without the
            // scratch list.
            if h.release_slot == slot {
                held.clear();
                self.line.release(&[(h.instance, h.amount)], agenda);
            }
            return;
        }
        let released = &mut self.released;
        released.clear();
        held.retain(|h| {
            let due = h.release_slot == slot;
            if due {
                released.push((h.instance, h.amount));
            }
            !due
        });
        if !released.is_empty() {
            self.line.release(released, agenda);
        }
    }

    /// Whether job slot `job` holds nothing (as it must once its last instance ends).
    pub fn holds_nothing(&self, job: usize) -> bool {
        self.held.get(job).is_none_or(Vec::is_empty)
    }

    /// Instances waiting for holds.
    pub fn waiting(&self) -> usize {
        self.line.waiting()
    }

    /// Tells `obs` about the holdable instances whose use or line changed.
    #[inline]
    pub fn report<O: Observer>(&mut self, now: SimTime, obs: &mut O) {
        self.line.take_touched_into(&mut self.touched);
        if !self.touched.is_empty() {
            let waiting = self.line.waiting();
            for &i in &self.touched {
                obs.hold_changed(now, i, self.line.in_use(i), waiting);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Holds;
    use crate::engine::agenda::{Agenda, Work};
    use crate::engine::ids::Token;
    use crate::engine::plan::Plan;
    use crate::engine::test_model::{Finished, host_model, stage};
    use crate::engine::{Observer, Scope, simulate};
    use crate::model::{Hold, HoldResource};
    use crate::time::SimTime;

    /// The job slots of the starts waiting in `agenda`, emptying it.
    fn starts(agenda: &mut Agenda) -> Vec<usize> {
        std::iter::from_fn(|| agenda.pop())
            .map(|w| match w {
                Work::Start { token, .. } => token.job,
                _ => panic!("only starts are queued here"),
            })
            .collect()
    }

    /// (use, waiting) of every hold report.
    #[derive(Default)]
    struct Reports(Vec<(u64, usize)>);

    impl Observer for Reports {
        fn hold_changed(&mut self, _: SimTime, _: usize, in_use: u64, waiting: usize) {
            self.0.push((in_use, waiting));
        }
    }

    #[test]
    fn each_hold_is_released_at_the_end_of_its_own_instance() {
        // "a" takes three of the four cores until "b" ends and the lock until its own
        // end; "b" holds nothing.
        let mut a = stage("a", false, vec![], 1.0);
        a.holds = vec![
            Hold {
                resource: HoldResource::Cores,
                amount: 3,
                until: 1,
            },
            Hold {
                resource: HoldResource::Lock(0),
                amount: 1,
                until: 0,
            },
        ];
        let b = stage("b", false, vec![0], 1.0);
        let plan = Plan::compile(&host_model(1, vec![a, b], 2, 2)).unwrap();
        let capacities = plan.resources.holds.iter().map(|h| h.capacity).collect();
        let mut holds = Holds::new(capacities, 0);
        let mut agenda = Agenda::default();
        let token = |job, stage| Token {
            job,
            stage,
            scope: Scope::Job,
            ready: SimTime::ZERO,
        };
        holds.request(&plan, token(0, 0), None, &mut agenda);
        holds.request(&plan, token(1, 0), None, &mut agenda);
        assert_eq!(starts(&mut agenda), [0]);
        holds.keep(&plan, &token(0, 0), None);
        assert_eq!(holds.waiting(), 1);
        let mut reports = Reports::default();
        holds.report(SimTime::ZERO, &mut reports);
        reports.0.sort();
        assert_eq!(reports.0, [(1, 1), (3, 1)], "the lock and the cores");
        // A stage that holds nothing starts at once, whoever waits.
        holds.request(&plan, token(0, 1), None, &mut agenda);
        assert_eq!(starts(&mut agenda), [0]);
        // a's end frees the lock, but job 1 is still short of cores.
        holds.release_due(0, plan.slot(0, Scope::Job), &mut agenda);
        assert_eq!(starts(&mut agenda), []);
        assert!(!holds.holds_nothing(0));
        // b's end frees the cores: job 1's a is granted.
        holds.release_due(0, plan.slot(1, Scope::Job), &mut agenda);
        assert_eq!(starts(&mut agenda), [1]);
        assert!(holds.holds_nothing(0));
        assert_eq!(holds.waiting(), 0);
    }

    #[test]
    fn a_hold_is_released_at_the_end_of_its_until_stage_and_wakes_the_next_job() {
        // "a" takes the one-unit lock and keeps it until "b" ends: the second job's "a"
        // starts only when the first job's "b" finishes.
        let mut a = stage("a", false, vec![], 1.0);
        a.holds = vec![Hold {
            resource: HoldResource::Lock(0),
            amount: 1,
            until: 1,
        }];
        let b = stage("b", false, vec![0], 2.0);
        let mut obs = Finished::default();
        let summary = simulate(&host_model(1, vec![a, b], 2, 2), &mut obs).unwrap();
        assert_eq!(summary.stalled, None);
        assert_eq!(
            obs.0,
            [
                (0, Scope::Job, 0, 0.0, 1.0),
                (0, Scope::Job, 1, 1.0, 3.0),
                (1, Scope::Job, 0, 3.0, 4.0),
                (1, Scope::Job, 1, 4.0, 6.0),
            ]
        );
    }

    #[test]
    fn a_hold_that_is_never_granted_stalls_with_a_typed_summary() {
        let mut a = stage("a", false, vec![], 1.0);
        a.holds = vec![Hold {
            resource: HoldResource::Cores,
            amount: 5,
            until: 0,
        }];
        let summary = simulate(&host_model(1, vec![a], 3, 1), &mut Finished::default()).unwrap();
        let stall = summary.stalled.expect("stalled");
        assert_eq!(
            (
                stall.jobs_completed,
                stall.jobs_total,
                stall.waiting_instances
            ),
            (0, 3, 1)
        );
        assert_eq!(
            stall.to_string(),
            "0 of 3 jobs finished; 1 stage instances wait for holdable resources that are never released"
        );
    }
}
