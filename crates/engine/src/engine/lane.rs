//! The single-hold lane: a run whose workload is one stage, one instance per job, with at
//! most one host-wide hold (released at its own end), no markers and nothing that can
//! slow it (no demands). Its instances go ready, granted, started and finished without
//! the job slab, the DAG counters or the per-job hold list: a job *is* its one instance.
//! The work queue, the hold protocol and the observer calls are the general path's, in
//! the same order, so every output is the same; only the bookkeeping around them goes.

use crate::model::{ArrivalKind, Edge, StageId};

use super::Engine;
use super::Work;
use super::fluid::ceil_to_u64;
use super::holdable::{HoldIndex, HoldSlot, Request};
use super::jobs::Token;
use super::observer::{Observer, Scope, StageRecord, StageRef};
use super::plan::Plan;
use super::{Event, Overflowed, StartWork};

/// What a lane run needs to know of its one stage, fixed at plan time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lane {
    pub stage: StageId,
    /// Where its one instance per job runs.
    pub scope: Scope,
    /// Its one host-wide hold and amount, if any.
    pub hold: Option<(HoldIndex, u64)>,
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
        // Never slowed, on whatever GPU (an instance here is never bound to one).
        if plan.keys[stage.key_for(None)].shared() {
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
        })
    }
}

impl Engine<'_> {
    /// A job arrives: its one instance is ready at once. The token's `job` is the job
    /// number (there is no job slot), and its ready time the arrival time.
    pub(super) fn lane_start_job<O: Observer>(&mut self, obs: &mut O, lane: Lane) {
        let number = self.started;
        self.started += 1;
        obs.job_arrived(self.now, number);
        self.work.push_back(Work::Ready {
            job: number as usize,
            stage: lane.stage,
            scope: lane.scope,
        });
    }

    /// As [`Engine::on_ready`], for the lane's instance (no GPU binding, no markers).
    pub(super) fn lane_ready<O: Observer>(&mut self, obs: &mut O, job: usize, lane: Lane) {
        let token = Token {
            job,
            stage: lane.stage,
            scope: lane.scope,
            ready: self.now,
        };
        obs.stage_edge(self.now, lane_ref(&token), Edge::Ready, None);
        if lane.hold.is_none() {
            self.work.push_back(Work::Start {
                token,
                gpu: None,
                blocked_on: None,
            });
            return;
        }
        let needs = self.plan.stages[lane.stage].needs.clone();
        self.holds.request(
            Request {
                token,
                needs,
                gpu: None,
                blocked_on: None,
            },
            &mut StartWork(&mut self.work),
        );
    }

    /// As [`Engine::on_start`], for the lane's instance: never slowed, so it ends its
    /// standalone time after now (rounded up to the nanosecond, as in the general path).
    pub(super) fn lane_start<O: Observer>(
        &mut self,
        obs: &mut O,
        token: Token,
        blocked_on: Option<HoldIndex>,
    ) {
        obs.stage_edge(self.now, lane_ref(&token), Edge::Start, None);
        let standalone_s = self.plan.stages[token.stage].sampler.sample(&mut self.rng);
        let a = self.activity_slot(token);
        self.activities[a].begin(token, self.now, standalone_s, None, blocked_on);
        if standalone_s <= 0.0 {
            self.work.push_back(Work::Finish(a));
        } else {
            let end = self.now + ceil_to_u64(standalone_s * 1e9);
            let stage = token.stage;
            self.schedule(end, Event::Done(a), |e| Overflowed::StageEnd {
                stage: e.model.workload.stages[stage].name.clone(),
            });
        }
    }

    /// As [`Engine::on_finish`], for the lane's instance: reports it, releases its hold
    /// and finishes its job.
    pub(super) fn lane_finish<O: Observer>(&mut self, obs: &mut O, a: usize, lane: Lane) {
        let act = self.activities[a].end();
        self.free_activities.push(a);
        let token = act.token;
        let lost = self.take_lost(a);
        let stage_ref = lane_ref(&token);
        obs.stage_edge(self.now, stage_ref, Edge::End, None);
        let record = StageRecord {
            stage_ref,
            ready: token.ready,
            start: act.start,
            end: self.now,
            standalone_s: act.standalone_s,
            gpu: None,
            lost,
            blocked_on: act.blocked_on,
        };
        obs.stage_finished(&record);
        self.lost_scratch = record.lost;
        if let Some(hold) = lane.hold {
            self.holds.release(&[hold], &mut StartWork(&mut self.work));
        }
        self.completed += 1;
        obs.job_finished(self.now, stage_ref.job, token.ready);
        if matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
            && self.started < self.model.arrivals.jobs
        {
            self.lane_start_job(obs, lane);
        }
    }
}

/// The instance a lane token names (its `job` is the job number).
fn lane_ref(token: &Token) -> StageRef {
    StageRef {
        job: token.job as u64,
        scope: token.scope,
        stage: token.stage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_model::{host_model, stage};
    use crate::engine::{EngineLimits, RunSummary};
    use crate::model::{Demand, Duration, Hold, HoldResource, Model, RateTarget};
    use crate::time::SimTime;

    /// Every observer call, in order, as text.
    #[derive(Default)]
    struct Calls(Vec<String>);

    impl Observer for Calls {
        fn job_arrived(&mut self, t: SimTime, job: u64) {
            self.0.push(format!("arrived {t:?} {job}"));
        }
        fn stage_edge(&mut self, t: SimTime, s: StageRef, edge: Edge, gpu: Option<u32>) {
            self.0.push(format!("edge {t:?} {s:?} {edge:?} {gpu:?}"));
        }
        fn stage_finished(&mut self, r: &StageRecord) {
            self.0.push(format!("finished {r:?}"));
        }
        fn job_finished(&mut self, t: SimTime, job: u64, arrived: SimTime) {
            self.0.push(format!("job done {t:?} {job} {arrived:?}"));
        }
        fn rates_changed(&mut self, t: SimTime, usage: &[f64], slowdown: f64) {
            self.0.push(format!("rates {t:?} {usage:?} {slowdown:?}"));
        }
        fn hold_changed(&mut self, t: SimTime, i: usize, in_use: u64, waiting: usize) {
            self.0.push(format!("hold {t:?} {i} {in_use} {waiting}"));
        }
        fn finished(&mut self, t: SimTime) {
            self.0.push(format!("end {t:?}"));
        }
    }

    /// The run's calls and summary, through the lane when `lane` (it must fit one) or
    /// through the general path.
    fn run(model: &Model, lane: bool) -> (Vec<String>, RunSummary) {
        let mut engine = Engine::new(model, EngineLimits::default()).unwrap();
        assert!(engine.lane.is_some(), "the model fits the lane");
        if !lane {
            engine.lane = None;
        }
        let mut calls = Calls::default();
        let summary = engine.run(&mut calls).unwrap();
        (calls.0, summary)
    }

    fn held(amount: u64, resource: HoldResource) -> Vec<Hold> {
        vec![Hold {
            resource,
            amount,
            until: 0,
        }]
    }

    #[test]
    fn the_lane_makes_the_general_paths_calls_in_the_same_order() {
        let mut cases = Vec::new();
        // Closed loop on a one-unit lock, exponential times: queueing and blocker
        // attribution on every instance.
        let mut s = stage("s", false, vec![], 1.0);
        s.duration = Duration::Exponential { mean_s: 1.0 };
        s.holds = held(1, HoldResource::Lock(0));
        cases.push(host_model(1, vec![s.clone()], 200, 5));
        // Open (Poisson) arrivals on cores, two at a time out of four.
        let mut open = host_model(1, vec![s.clone()], 300, 1);
        open.workload.stages[0].holds = held(2, HoldResource::Cores);
        open.arrivals.kind = crate::model::ArrivalKind::Poisson { rate_per_s: 3.0 };
        cases.push(open);
        // No hold; zero-duration instances; a per-partition stage of one partition.
        cases.push(host_model(
            1,
            vec![stage("free", false, vec![], 0.5)],
            50,
            3,
        ));
        let mut zero = stage("zero", true, vec![], 0.0);
        zero.holds = held(1, HoldResource::Lock(0));
        cases.push(host_model(1, vec![zero], 40, 4));
        for model in &cases {
            let (lane_calls, lane_summary) = run(model, true);
            let (general_calls, general_summary) = run(model, false);
            assert_eq!(lane_summary, general_summary);
            assert_eq!(lane_calls, general_calls);
            assert!(lane_calls.len() > 100);
        }
    }

    #[test]
    fn only_a_lone_unshared_stage_with_one_host_wide_hold_takes_the_lane() {
        let fits = |model: &Model| Lane::for_plan(&Plan::compile(model).unwrap()).is_some();
        let mut s = stage("s", false, vec![], 1.0);
        s.holds = held(1, HoldResource::Lock(0));
        assert!(fits(&host_model(1, vec![s.clone()], 1, 1)));
        // Two partitions: two instances per job.
        let mut per = s.clone();
        per.per_partition = true;
        assert!(!fits(&host_model(2, vec![per], 1, 1)));
        // A demand can slow it.
        let mut slowed = s.clone();
        slowed.demands = vec![Demand {
            target: RateTarget::Dram,
            amount: 10.0,
        }];
        assert!(!fits(&host_model(1, vec![slowed], 1, 1)));
        // Two holds.
        let mut two = s.clone();
        two.holds.extend(held(1, HoldResource::Cores));
        assert!(!fits(&host_model(1, vec![two], 1, 1)));
        // Two stages.
        let next = stage("t", false, vec![0], 1.0);
        assert!(!fits(&host_model(1, vec![s, next], 1, 1)));
    }
}
