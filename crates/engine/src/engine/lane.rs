//! The single-hold lane: a run whose workload is one stage, one instance per job, with at
//! most one host-wide hold (released at its own end) and no markers, whose instances
//! either are never slowed (no demands) or share rate resources as one class that the
//! lone solve settles (a processor-sharing pool). Its instances go ready, granted,
//! started and finished without the job slab, the DAG counters, the per-job hold list,
//! the general work queue, the general hold line or the general fluid table: a job *is*
//! its one instance, its zero-time steps wait in a queue of their own (a third of the
//! general item's size), its one hold is a counter with a FIFO line, and its running
//! instances are in one [`LaneClass`]. The steps run in the order the general path would
//! run them and make the same observer calls, so every output is the same; only the
//! bookkeeping goes.

use std::collections::VecDeque;

use crate::model::{ArrivalKind, Edge, StageId};
use crate::time::{SimTime, ceil_to_u64};

use super::Engine;
use super::holdable::{HoldIndex, HoldSlot};
use super::lane_class::{LaneClass, Reschedule};
use super::observer::{Loss, Observer, Scope, StageRecord, StageRef};
use super::plan::Plan;
use super::solver::PoolRule;
use super::{EngineError, Event, Overflowed};

/// The event-queue slot of the lane class's pending completion (the general path's first
/// class slot, which the one class of such a run always takes).
pub(super) const CLASS_SLOT: usize = 0;

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

/// A zero-time step of a lane run (the general path's `Work`, for a job that is its one
/// instance).
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Job `job` arrived: its instance is ready.
    Ready { job: u64 },
    /// Its hold granted (`waited`: after waiting in line for it).
    Start {
        job: u64,
        ready: SimTime,
        waited: bool,
    },
    /// The running instance in this slot ends.
    Finish(usize),
}

/// The lane's FIFO of steps: a buffer read from the front, emptied whenever the last
/// step is taken. A lane drain mostly holds one step at a time (an arrival's ready, a
/// departure's finish), so a push and a pop are a write and a read, with no ring
/// arithmetic and no moving of the next step into place.
#[derive(Debug, Default)]
struct Steps {
    buf: Vec<Step>,
    /// The next step to take, within `buf` (`buf.len()` when none is left).
    head: usize,
}

impl Steps {
    #[inline]
    fn push(&mut self, step: Step) {
        self.buf.push(step);
    }

    #[inline]
    fn pop(&mut self) -> Option<Step> {
        let step = *self.buf.get(self.head)?;
        self.head += 1;
        if self.head == self.buf.len() {
            self.clear();
        }
        Some(step)
    }

    /// No step is queued.
    #[inline]
    fn is_empty(&self) -> bool {
        self.head == self.buf.len()
    }

    #[inline]
    fn clear(&mut self) {
        self.buf.clear();
        self.head = 0;
    }
}

/// The lane's one hold: a counter and a FIFO line of (job, ready time). With one resource
/// and one amount, the general line's strict FIFO comes down to this: a request is
/// granted at once when nobody waits and the amount fits, and a release grants from the
/// front while the amount fits.
#[derive(Debug)]
struct LaneHold {
    index: HoldIndex,
    amount: u64,
    capacity: u64,
    in_use: u64,
    line: VecDeque<(u64, SimTime)>,
    /// Granted or released since the last report.
    touched: bool,
}

impl LaneHold {
    /// Whether one more instance's amount fits beside what is in use.
    #[inline]
    fn fits(&self) -> bool {
        self.in_use + self.amount <= self.capacity
    }
}

/// A running lane instance (slots are reused once it ends).
#[derive(Debug, Clone, Copy)]
struct Running {
    job: u64,
    ready: SimTime,
    start: SimTime,
    standalone_s: f64,
    waited: bool,
    /// It runs in the lane's class (else it is never slowed, or took no time).
    in_class: bool,
}

/// What a lane run keeps while it runs.
#[derive(Debug)]
pub(super) struct LaneRun {
    steps: Steps,
    hold: Option<LaneHold>,
    running: Vec<Running>,
    free: Vec<usize>,
    /// The class of a shared lane's running instances.
    class: Option<LaneClass>,
    /// Per running slot, the class's lost-time counters when it joined (shared lane).
    lost_at_start: Vec<Loss>,
    /// The record of the last finished instance, rewritten in place for the next one
    /// (observers see it by reference, so its buffers are kept).
    record: StageRecord,
    /// `record.lost` holds no loss, over every rate resource (what an instance that
    /// never ran in the class reports).
    lost_is_none: bool,
}

impl LaneRun {
    /// The state of a run of `lane` (if any) of `plan`, with the hold capacities given,
    /// the rate capacities `rates` (DRAM at `dram`) and the pool rules `pools`; `no_loss`
    /// is what an instance outside the class reports.
    pub fn new(
        lane: Option<Lane>,
        plan: &Plan,
        capacities: &[u64],
        (rates, dram, pools): (Vec<f64>, usize, Vec<PoolRule>),
        no_loss: Loss,
    ) -> Self {
        let class = lane.filter(|l| l.shared).map(|l| {
            let key = &plan.keys[plan.stages[l.stage].key_for(None)];
            LaneClass::new(key, rates, dram, pools)
        });
        let hold = lane.and_then(|l| l.hold).map(|(index, amount)| LaneHold {
            index,
            amount,
            capacity: capacities[index],
            in_use: 0,
            line: VecDeque::new(),
            touched: false,
        });
        LaneRun {
            steps: Steps::default(),
            hold,
            running: Vec::new(),
            free: Vec::new(),
            class,
            lost_at_start: Vec::new(),
            record: StageRecord {
                stage_ref: StageRef {
                    job: 0,
                    scope: Scope::Job,
                    stage: 0,
                },
                ready: SimTime::ZERO,
                start: SimTime::ZERO,
                end: SimTime::ZERO,
                standalone_s: 0.0,
                gpu: None,
                lost: no_loss,
                blocked_on: None,
            },
            lost_is_none: true,
        }
    }

    /// Instances waiting for the hold.
    pub fn waiting(&self) -> usize {
        self.hold.as_ref().map_or(0, |h| h.line.len())
    }

    /// Drops the steps not yet run (the run stops).
    pub fn clear(&mut self) {
        self.steps.clear();
    }

    /// An instance of `job` that ended now: the slot `a` is queued to finish.
    pub fn push_finish(&mut self, a: usize) {
        self.steps.push(Step::Finish(a));
    }

    /// The class's pending completion came due at `now`: its members done by then are
    /// queued to finish.
    #[inline]
    pub fn class_due(&mut self, now: SimTime) {
        let steps = &mut self.steps;
        (self.class.as_mut().expect("a shared lane"))
            .complete_due(now, |a| steps.push(Step::Finish(a)));
    }
}

impl Engine<'_> {
    /// A job arrives: its one instance is ready at once (the job number is its only name).
    pub(super) fn lane_start_job<O: Observer>(&mut self, obs: &mut O) {
        let number = self.started;
        self.started += 1;
        self.events += 1;
        obs.job_arrived(self.now, number);
        self.lane_run.steps.push(Step::Ready { job: number });
    }

    /// The event loop of a lane run (as [`Engine::run_events`], for the lane's events;
    /// `SHARED` is `lane.shared`): each event's steps are drained before the next event,
    /// until the jobs are done, nothing is left or the run fails.
    pub(super) fn run_lane<O: Observer, const SHARED: bool>(&mut self, obs: &mut O, lane: Lane) {
        let total = self.model.arrivals.jobs;
        while let Some((t, event)) = self.queue.pop() {
            self.advance_to(t);
            match event {
                Event::Arrival => {
                    self.lane_start_job(obs);
                    self.schedule_next_arrival();
                }
                Event::LaneDue => self.lane_run.class_due(t),
                Event::Done(a) => self.lane_run.push_finish(a),
                Event::ClassDue(_) => unreachable!("a lane run has no general classes"),
            }
            self.lane_drain_of::<O, SHARED>(obs, lane);
            if self.fault.is_some() || self.completed >= total {
                break;
            }
        }
    }

    /// As the general drain, for the lane's steps (readies, grants, finishes) until none
    /// remain, then the hold's report and, on a shared lane, the class's re-solve.
    pub(super) fn lane_drain<O: Observer>(&mut self, obs: &mut O, lane: Lane) {
        // Each kind of lane compiled on its own: an unshared lane carries no class checks.
        if lane.shared {
            self.lane_drain_of::<O, true>(obs, lane);
        } else {
            self.lane_drain_of::<O, false>(obs, lane);
        }
    }

    /// [`Engine::lane_drain`] for a lane whose instances share as one class (`SHARED`,
    /// which is `lane.shared`) or are never slowed.
    fn lane_drain_of<O: Observer, const SHARED: bool>(&mut self, obs: &mut O, lane: Lane) {
        while let Some(step) = self.lane_run.steps.pop() {
            if !self.take_step() {
                return;
            }
            match step {
                Step::Ready { job } => {
                    if !self.lane_ready::<O, SHARED>(obs, job, lane) {
                        return;
                    }
                }
                Step::Start { job, ready, waited } => {
                    self.lane_start::<O, SHARED>(obs, job, ready, waited, lane)
                }
                Step::Finish(a) => self.lane_finish::<O, SHARED>(obs, a, lane),
            }
        }
        if let Some(hold) = &mut self.lane_run.hold
            && hold.touched
        {
            hold.touched = false;
            obs.hold_changed(self.now, hold.index, hold.in_use, hold.line.len());
        }
        if SHARED {
            self.lane_class_settle(obs, lane);
        }
    }

    /// As the general drain's end, for the lane's class: re-solves its speed when its
    /// membership changed and hands its next completion to the event queue.
    fn lane_class_settle<O: Observer>(&mut self, obs: &mut O, lane: Lane) {
        let Some(class) = &mut self.lane_run.class else {
            return;
        };
        let now = self.now;
        let resolved = class.needs_resolve();
        if resolved {
            class.resolve(now, &self.model.hardware.dram);
        }
        // The queue and the observer see nothing of each other: scheduling before the
        // report lets the class's borrow end once, for the report's.
        match class.reschedule(now) {
            Reschedule::Keep => {}
            Reschedule::At(at) => self.queue.set_slot(CLASS_SLOT, at, Event::LaneDue),
            Reschedule::Beyond => self.fail(EngineError::ClockOverflow {
                what: Overflowed::StageEnd {
                    stage: self.model.workload.stages[lane.stage].name.clone(),
                },
                now_s: now.as_secs(),
            }),
        }
        if resolved && let Some(class) = &self.lane_run.class {
            let (usage, latency_slowdown) = class.reported();
            obs.rates_changed(now, usage, latency_slowdown);
        }
    }

    /// As [`Engine::on_ready`], for the lane's instance (no GPU binding, no markers).
    /// False when the event limit stopped the run at its start step.
    fn lane_ready<O: Observer, const SHARED: bool>(
        &mut self,
        obs: &mut O,
        job: u64,
        lane: Lane,
    ) -> bool {
        let ready = self.now;
        obs.stage_edge(ready, lane.instance(job), Edge::Ready, None);
        let run = &mut self.lane_run;
        if let Some(hold) = &mut run.hold {
            if !hold.line.is_empty() || !hold.fits() {
                hold.line.push_back((job, ready));
                return true;
            }
            hold.in_use += hold.amount;
            hold.touched = true;
        }
        if run.steps.is_empty() {
            // Its start would be the next step taken: take it now, counted as a step all
            // the same (an arrival's drain, mostly).
            if !self.take_step() {
                return false;
            }
            self.lane_start::<O, SHARED>(obs, job, ready, false, lane);
            return true;
        }
        run.steps.push(Step::Start {
            job,
            ready,
            waited: false,
        });
        true
    }

    /// As [`Engine::on_start`], for the lane's instance: never slowed, so it ends its
    /// standalone time after now (rounded up to the nanosecond, as in the general path).
    fn lane_start<O: Observer, const SHARED: bool>(
        &mut self,
        obs: &mut O,
        job: u64,
        ready: SimTime,
        waited: bool,
        lane: Lane,
    ) {
        obs.stage_edge(self.now, lane.instance(job), Edge::Start, None);
        let standalone_s = self.plan.stages[lane.stage].sampler.sample(&mut self.rng);
        let in_class = SHARED && standalone_s > 0.0;
        let running = Running {
            job,
            ready,
            start: self.now,
            standalone_s,
            waited,
            in_class,
        };
        let run = &mut self.lane_run;
        let a = match run.free.pop() {
            Some(a) => {
                run.running[a] = running;
                a
            }
            None => {
                run.running.push(running);
                run.running.len() - 1
            }
        };
        if standalone_s <= 0.0 {
            run.steps.push(Step::Finish(a));
        } else if SHARED {
            let class = run.class.as_mut().expect("a shared lane");
            if run.lost_at_start.len() <= a {
                run.lost_at_start.resize_with(a + 1, Loss::default);
            }
            class.join(self.now, a, standalone_s, &mut run.lost_at_start[a]);
        } else {
            let end = self.now + ceil_to_u64(standalone_s * 1e9);
            self.schedule(end, Event::Done(a), |e| Overflowed::StageEnd {
                stage: e.model.workload.stages[lane.stage].name.clone(),
            });
        }
    }

    /// As [`Engine::on_finish`], for the lane's instance: reports it, releases its hold
    /// (granting from the front of the line what now fits) and finishes its job.
    fn lane_finish<O: Observer, const SHARED: bool>(&mut self, obs: &mut O, a: usize, lane: Lane) {
        self.events += 1;
        let run = &mut self.lane_run;
        let act = run.running[a];
        run.free.push(a);
        let stage_ref = lane.instance(act.job);
        obs.stage_edge(self.now, stage_ref, Edge::End, None);
        let record = &mut run.record;
        if !SHARED {
            // Never slowed: the record's loss is none for good.
        } else if act.in_class {
            let class = run.class.as_ref().expect("a shared lane");
            class.lost_since(&run.lost_at_start[a], &mut record.lost);
            run.lost_is_none = false;
        } else if !run.lost_is_none {
            // Observers see the record by reference, so a no-loss value written for an
            // earlier record is still there.
            record.lost.reset(record.lost.by_rate.len());
            run.lost_is_none = true;
        }
        record.stage_ref = stage_ref;
        record.ready = act.ready;
        record.start = act.start;
        record.end = self.now;
        record.standalone_s = act.standalone_s;
        record.blocked_on = lane.hold.filter(|_| act.waited).map(|(i, _)| i);
        obs.stage_finished(record);
        if let Some(hold) = &mut run.hold {
            hold.in_use -= hold.amount;
            hold.touched = true;
            while hold.fits() {
                let Some((job, ready)) = hold.line.pop_front() else {
                    break;
                };
                hold.in_use += hold.amount;
                run.steps.push(Step::Start {
                    job,
                    ready,
                    waited: true,
                });
            }
        }
        self.completed += 1;
        obs.job_finished(self.now, act.job, act.ready);
        if matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
            && self.started < self.model.arrivals.jobs
        {
            self.lane_start_job(obs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::test_model::{host_model, stage};
    use crate::engine::{EngineError, EngineLimits, RunSummary};
    use crate::model::{
        ArrivalKind, Demand, Duration, Hold, HoldResource, Model, Pool, PoolSharing, RateTarget,
    };
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
        let (calls, summary) = run_with(model, lane, EngineLimits::default());
        (calls, summary.unwrap())
    }

    /// As [`run`], within `limits`, with the run's result as it is.
    fn run_with(
        model: &Model,
        lane: bool,
        limits: EngineLimits,
    ) -> (Vec<String>, Result<RunSummary, EngineError>) {
        let mut engine = Engine::new(model, limits).unwrap();
        assert!(engine.lane.is_some(), "the model fits the lane");
        if !lane {
            engine.lane = None;
        }
        let mut calls = Calls::default();
        let summary = engine.run(&mut calls);
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

    /// A stage of exponential time (mean 1 s) drawing `demands`, on a host with a
    /// one-thread pool "link" and `efficiency_loss` per DRAM stream.
    fn sharing_model(demands: Vec<Demand>, efficiency_loss: f64, jobs: u64) -> Model {
        let mut s = stage("transfer", false, vec![], 1.0);
        s.duration = Duration::Exponential { mean_s: 1.0 };
        s.demands = demands;
        let mut model = host_model(1, vec![s], jobs, 1);
        model.hardware.pools.push(Pool {
            name: "link".into(),
            threads: 1.0,
            sharing: PoolSharing::ByActivity,
            cpu: None,
        });
        model.hardware.dram.efficiency_loss_per_stream = efficiency_loss;
        model.arrivals.kind = ArrivalKind::Poisson { rate_per_s: 0.9 };
        model
    }

    #[test]
    fn a_shared_lane_makes_the_general_paths_calls_in_the_same_order() {
        let pool = |amount| Demand {
            target: RateTarget::Pool(0),
            amount,
        };
        let dram = |amount| Demand {
            target: RateTarget::Dram,
            amount,
        };
        let mut cases = Vec::new();
        // Processor sharing at rho = 0.9: every arrival and departure re-rates the class.
        cases.push(sharing_model(vec![pool(1.0)], 0.0, 3000));
        // DRAM streams that lose efficiency as they interleave, and a second resource.
        cases.push(sharing_model(vec![dram(30.0), pool(0.5)], 0.05, 2000));
        // A closed loop of five on one DRAM share, behind a two-core hold: a job that
        // finishes starts the next while the class is empty at the same instant.
        let mut closed = sharing_model(vec![dram(60.0)], 0.0, 1500);
        closed.arrivals.kind = ArrivalKind::Closed { concurrency: 5 };
        closed.workload.stages[0].holds = held(2, HoldResource::Cores);
        cases.push(closed);
        // Zero-duration instances in a sharing stage (never in the class), one at a time.
        let mut zero = sharing_model(vec![pool(1.0)], 0.0, 400);
        zero.workload.stages[0].duration = Duration::Fixed(0.0);
        zero.arrivals.kind = ArrivalKind::Closed { concurrency: 1 };
        cases.push(zero);
        for model in &cases {
            let engine = Engine::new(model, EngineLimits::default()).unwrap();
            assert!(engine.lane.is_some_and(|l| l.shared), "a shared lane");
            let (lane_calls, lane_summary) = run(model, true);
            let (general_calls, general_summary) = run(model, false);
            assert_eq!(lane_summary, general_summary);
            assert_eq!(lane_calls, general_calls);
            assert!(lane_calls.len() > 1000);
        }
        // The event limit, reached in the middle of a drain, with members running.
        let limits = EngineLimits { max_events: 1001 };
        let (lane_calls, lane_result) = run_with(&cases[0], true, limits);
        let (general_calls, general_result) = run_with(&cases[0], false, limits);
        assert!(matches!(lane_result, Err(EngineError::EventLimit { .. })));
        assert_eq!(lane_result, general_result);
        assert_eq!(lane_calls, general_calls);
    }

    #[test]
    fn the_lane_stops_and_stalls_where_the_general_path_does() {
        let mut s = stage("s", false, vec![], 1.0);
        s.duration = Duration::Exponential { mean_s: 1.0 };
        s.holds = held(1, HoldResource::Lock(0));
        let model = host_model(1, vec![s.clone()], 200, 5);
        // The event limit, reached in the middle of a drain.
        let limits = EngineLimits { max_events: 301 };
        let (lane_calls, lane_result) = run_with(&model, true, limits);
        let (general_calls, general_result) = run_with(&model, false, limits);
        assert!(matches!(lane_result, Err(EngineError::EventLimit { .. })));
        assert_eq!(lane_result, general_result);
        assert_eq!(lane_calls, general_calls);
        // A hold larger than its resource: the first instance waits for ever, and the
        // others behind it.
        let mut stuck = s;
        stuck.holds = held(5, HoldResource::Cores);
        let model = host_model(1, vec![stuck], 10, 3);
        let (lane_calls, lane_summary) = run(&model, true);
        let (general_calls, general_summary) = run(&model, false);
        assert_eq!(lane_summary.stalled.map(|s| s.waiting_instances), Some(3));
        assert_eq!(lane_summary, general_summary);
        assert_eq!(lane_calls, general_calls);
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
        // A demand on rate resources alone: one class, settled by the lone solve.
        let mut slowed = s.clone();
        slowed.demands = vec![Demand {
            target: RateTarget::Dram,
            amount: 10.0,
        }];
        assert!(fits(&host_model(1, vec![slowed.clone()], 1, 1)));
        // A latency-bound share needs the general solve.
        slowed.latency_bound_frac = 0.5;
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
