//! The lane checked against the general path: the same observer calls in the same
//! order, the same summary, the same stops and stalls.

use super::*;
use crate::engine::general::Engine;
use crate::engine::observer::{Observer, StageRecord, StageRef};
use crate::engine::plan::Plan;
use crate::engine::test_model::{host_model, stage};
use crate::engine::{EngineError, EngineLimits, RunSummary};
use crate::model::Edge;
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
    let plan = Plan::compile(model).unwrap();
    let fit = Lane::for_plan(&plan).expect("the model fits the lane");
    let mut calls = Calls::default();
    let summary = if lane {
        LaneEngine::new(model, plan, fit, limits).run(&mut calls)
    } else {
        Engine::new(model, plan, limits).run(&mut calls)
    };
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
        let plan = Plan::compile(model).unwrap();
        assert!(
            Lane::for_plan(&plan).is_some_and(|l| l.shared),
            "a shared lane"
        );
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
