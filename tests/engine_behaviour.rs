//! Engine behaviour beyond queueing theory: sharing through the event loop, latency
//! slowdown, Little's law, determinism, and class-slot reuse.

mod common;

use bwsim::model::*;
use bwsim::run::run_model;
use common::*;

fn stream(name: &str, seconds: f64, dram_gbps: f64) -> Stage {
    let mut s = stage(name, Duration::Fixed(seconds));
    s.demands.push(Demand {
        target: RateTarget::Dram,
        amount: dram_gbps,
    });
    s
}

#[test]
fn equal_streams_through_the_engine_finish_together_at_n_times_standalone() {
    // 5 jobs, each one stream of 100 GB/s for 1 s, on 200 GB/s: each gets 40 GB/s -> 2.5 s.
    let m = model(
        host(8, 200.0),
        vec![stream("s", 1.0, 100.0)],
        closed(5, 5, 0),
        1,
    );
    let r = run_model(&m).unwrap();
    assert!((r.sim_time_s - 2.5).abs() < 1e-6, "{}", r.sim_time_s);
    assert!((r.stages[0].inflation - 2.5).abs() < 1e-6);
    assert!((r.dram_peak_gbps - 200.0).abs() < 1e-6);
}

#[test]
fn latency_bound_stage_slows_by_exactly_the_curve_ratio() {
    // A background stream holds DRAM at 50% for 10 s; a victim, fully latency bound,
    // standalone 1 s, starts with it. L(0.5)/L(0) = 2, so the victim takes 2 s.
    let mut hw = host(8, 100.0);
    hw.dram.latency = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
    let mut victim = stage("victim", Duration::Fixed(1.0));
    victim.latency_bound_frac = 1.0;
    let m = model(
        hw,
        vec![stream("background", 10.0, 50.0), victim],
        closed(1, 1, 0),
        1,
    );
    let r = run_model(&m).unwrap();
    let v = &r.stages[1];
    assert!((v.mean_s - 2.0).abs() < 1e-6, "victim took {}", v.mean_s);
    assert!((v.lost_s["dram_latency"] - 1.0).abs() < 1e-6);
}

#[test]
fn littles_law_holds_on_a_closed_loop() {
    // Closed loop, 8 jobs in flight, two stages with random durations sharing DRAM.
    let mut a = stream("a", 0.5, 60.0);
    a.duration = Duration::Exponential { mean_s: 0.5 };
    let mut b = stream("b", 0.2, 30.0);
    b.duration = Duration::Uniform {
        min_s: 0.1,
        max_s: 0.3,
    };
    b.after = vec![0];
    let m = model(host(8, 200.0), vec![a, b], closed(8, 20_000, 1_000), 3);
    let r = run_model(&m).unwrap();
    // L is 8 in a closed loop until the final jobs drain (no replacements after the last
    // arrival), so slightly below; lambda*W must agree with it within 1%.
    assert!(r.little_l > 7.9 && r.little_l <= 8.0, "L = {}", r.little_l);
    let err = (r.little_lambda_w - r.little_l).abs() / r.little_l;
    assert!(
        err < 0.01,
        "L = {}, lambda W = {} ({:.2}%)",
        r.little_l,
        r.little_lambda_w,
        err * 100.0
    );
}

fn json_without_wall(m: &Model) -> serde_json::Value {
    let mut j = run_model(m).unwrap().to_json();
    j["engine"]["wall_s"] = serde_json::Value::Null;
    j
}

#[test]
fn same_seed_gives_identical_reports_and_different_seeds_differ() {
    let mut s = stream("s", 1.0, 50.0);
    s.duration = Duration::LogNormal {
        mean_s: 1.0,
        std_s: 0.5,
    };
    s.latency_bound_frac = 0.3;
    let mut hw = host(8, 200.0);
    hw.dram.latency = LatencyCurve::new(vec![(0.0, 100.0), (0.8, 150.0), (1.0, 400.0)]).unwrap();
    let m = model(hw, vec![s], poisson(4.0, 2_000, 100), 42);
    let a = json_without_wall(&m);
    let b = json_without_wall(&m);
    assert_eq!(a.to_string(), b.to_string());
    let mut other = m.clone();
    other.seed = 43;
    assert_ne!(a.to_string(), json_without_wall(&other).to_string());
}

#[test]
fn reused_class_slots_never_lose_running_work() {
    // Regression: an emptied latency-sensitive class used to be retired twice, handing its
    // slot to two live classes and losing one's members (the run stalled). Mix classes that
    // empty and refill constantly with a lock that serialises part of the work.
    let mut hw = host(32, 100.0);
    hw.dram.latency = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 400.0)]).unwrap();
    hw.locks.push(Lock {
        name: "mutex".into(),
        capacity: 1,
        per_gpu: false,
    });
    let mut a = stream("a", 0.04, 30.0);
    a.duration = Duration::Normal {
        mean_s: 0.04,
        std_s: 0.004,
    };
    a.latency_bound_frac = 0.1;
    let mut b = stream("b", 0.01, 25.0);
    b.after = vec![0];
    b.holds.push(Hold {
        resource: HoldResource::Lock(0),
        amount: 1,
        until: 1,
    });
    let mut c = stream("c", 0.02, 5.0);
    c.duration = Duration::Exponential { mean_s: 0.02 };
    c.latency_bound_frac = 0.6;
    c.after = vec![0];
    let m = model(hw, vec![a, b, c], closed(4, 2_000, 0), 1);
    let r = run_model(&m).unwrap();
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(r.jobs_completed, 2_000);
}
