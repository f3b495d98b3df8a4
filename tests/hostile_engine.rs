//! Hostile input that only the running engine can catch (issue 12's engine leftovers):
//! a wait list served in time linear in its length, the clock's range checked on every
//! event it schedules, an event limit inside the loop, and seeds beyond their type.
//! Each test is named after the defect it pins down.

use std::path::Path;
use std::process::Command;
use std::rc::Rc;
use std::time::{Duration as WallTime, Instant};

use assert_cmd::cargo::CommandCargoExt;
use bwsim::engine::holdable::{HoldSlot, Holdables, Request};
use bwsim::engine::{EngineError, EngineLimits, NullObserver, Overflowed, simulate_with};
use bwsim::model::{ArrivalKind, Demand, Duration, Model, RateTarget};
use bwsim::run::{RunOptions, run_model_within};
use bwsim::scenario;

/// Two stages, each holding one of 4 cores for 1 s: 2 jobs/s of capacity.
const BASE: &str = r#"
[hardware]
cpu_cores = 4
host_ram_gib = 16
[[workload.stages]]
name = "a"
duration_s = 1
cores = 1
[[workload.stages]]
name = "b"
after = ["a"]
duration_s = 1
cores = 1
"#;

fn model(arrivals: &str) -> Model {
    scenario::load_str(&format!("{BASE}{arrivals}"), Path::new("hostile.toml"), &[])
        .expect("loads")
        .model
}

fn closed(jobs: u64) -> Model {
    model(&format!(
        "[arrivals]\nkind = \"closed\"\nconcurrency = 2\njobs = {jobs}\n"
    ))
}

fn run(m: &Model, max_events: u64) -> Result<bwsim::analysis::report::Report, EngineError> {
    run_model_within(
        m,
        RunOptions { ideal: false },
        EngineLimits { max_events },
        &mut NullObserver,
    )
}

#[test]
fn defect_9_open_queue_wait_list_is_not_rescanned() {
    // The FIFO line itself: 200,000 waiters on a lock of 16, from two stages asking for
    // the same thing (separate needs lists, as two stages have), served one release at a
    // time. A pass that walked the line would make about 2 * 10^10 judgements.
    let n = 200_000u64;
    let mut h = Holdables::new(vec![16], 0);
    let a: Rc<[(HoldSlot, u64)]> = vec![(HoldSlot::Global(0), 1)].into();
    let b: Rc<[(HoldSlot, u64)]> = vec![(HoldSlot::Global(0), 1)].into();
    let mut granted = Vec::new();
    for t in 0..n {
        let needs = if t % 3 == 0 { b.clone() } else { a.clone() };
        h.request(
            Request {
                token: t,
                needs,
                gpu: None,
                blocked_on: None,
            },
            &mut granted,
        );
    }
    assert_eq!(granted.len(), 16);
    assert_eq!(h.waiting() as u64, n - 16);
    let mut next = 0;
    while next < granted.len() {
        let taken: Vec<_> = granted[next].taken().collect();
        next += 1;
        h.release(&taken, &mut granted);
    }
    let order: Vec<u64> = granted.iter().map(|g| g.token).collect();
    assert_eq!(order, (0..n).collect::<Vec<_>>(), "strict FIFO");
    assert!(
        h.examined() < 4 * n,
        "{} judgements for {n} requests: the line is rescanned",
        h.examined()
    );

    // End to end: arrivals at 2.5x capacity, 200,000 jobs (the line grows to ~120,000).
    // Linear serving takes about a second unoptimised; a rescan per release, minutes.
    let m = model("[arrivals]\nkind = \"poisson\"\nrate_per_s = 5\njobs = 200000\n");
    let start = Instant::now();
    let report = run(&m, u64::MAX).expect("runs");
    assert_eq!(report.jobs_completed, 200_000);
    assert!(
        start.elapsed() < WallTime::from_secs(30),
        "200,000 overloaded jobs took {:?}",
        start.elapsed()
    );
}

#[test]
fn defect_27_a_line_of_interleaved_kinds_is_not_rescanned() {
    // Cores (0) of 4, a mutex (1) of 1. A job holds every core; behind it wait, in turn,
    // requests for one core (held back by the first in line for cores) and for the mutex,
    // so the line alternates between two kinds and no two neighbours are alike. Each
    // release of the mutex is a serving pass; one that walked the line would make about
    // n^2 / 4 judgements (2.5 * 10^9 here).
    fn judgements(n: u64) -> u64 {
        let mut h = Holdables::new(vec![4, 1], 0);
        let mut granted = Vec::new();
        let all_cores: Rc<[(HoldSlot, u64)]> = vec![(HoldSlot::Global(0), 4)].into();
        let core: Rc<[(HoldSlot, u64)]> = vec![(HoldSlot::Global(0), 1)].into();
        let mutex: Rc<[(HoldSlot, u64)]> = vec![(HoldSlot::Global(1), 1)].into();
        let ask = |token, needs: &Rc<[(HoldSlot, u64)]>| Request {
            token,
            needs: needs.clone(),
            gpu: None,
            blocked_on: None,
        };
        h.request(ask(0, &all_cores), &mut granted);
        h.request(ask(1, &all_cores), &mut granted);
        for t in 2..n {
            let needs = if t % 2 == 0 { &core } else { &mutex };
            h.request(ask(t, needs), &mut granted);
        }
        // The mutex goes round its waiters, one release at a time.
        let mut next = 1;
        while next < granted.len() {
            let taken: Vec<_> = granted[next].taken().collect();
            next += 1;
            h.release(&taken, &mut granted);
        }
        let mutex_order: Vec<u64> = granted[1..].iter().map(|g| g.token).collect();
        assert_eq!(
            mutex_order,
            (3..n).step_by(2).collect::<Vec<_>>(),
            "strict FIFO"
        );
        // The cores come back: the one waiting for all of them, then the single cores.
        let cores: Vec<_> = granted[0].taken().collect();
        granted.clear();
        h.release(&cores, &mut granted);
        assert_eq!(granted.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1]);
        assert_eq!(h.waiting() as u64, (n - 2) / 2);
        h.examined()
    }
    let (small, large) = (judgements(50_000), judgements(100_000));
    assert!(
        large < 8 * 100_000 && large < 3 * small,
        "{small} judgements for 50,000 waiters, {large} for 100,000: the line is rescanned"
    );
}

#[test]
fn defect_27_trace_arrivals_all_at_once_run_in_linear_time() {
    // The demo (locks, cores, RAM, VRAM, a pool) with every arrival of a trace at t = 0:
    // the line grows to every job and mixes waiters of every stage. Serving it by walking
    // the line took 1.3 s here for 10,000 arrivals and 4.6 s for 20,000, so about two
    // minutes for these 100,000; linear serving takes under 2 s, and the bound leaves a
    // busy CI machine 30x room.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/demo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut m = scenario::load_str(&text, &path, &[]).expect("loads").model;
    let n = 100_000;
    m.arrivals.kind = ArrivalKind::Trace {
        times_s: vec![0.0; n],
    };
    m.arrivals.jobs = n as u64;
    m.arrivals.warmup_jobs = 0;
    let start = Instant::now();
    let report = run(&m, u64::MAX).expect("runs");
    assert_eq!(report.jobs_completed, n as u64);
    assert!(
        start.elapsed() < WallTime::from_secs(60),
        "100,000 arrivals at t = 0 took {:?}",
        start.elapsed()
    );
}

#[test]
fn defect_27_zero_duration_jobs_count_their_events() {
    // Stages that take no time end without passing through the event queue; the run
    // still processed each job's arrival and each stage's end. Two stages (the general
    // loop) and one (the one-stage lane), closed and open.
    let mut two = closed(1000);
    for s in &mut two.workload.stages {
        s.duration = Duration::Fixed(0.0);
    }
    let mut one = two.clone();
    one.workload.stages.truncate(1);
    let mut open = two.clone();
    open.arrivals.kind = ArrivalKind::Poisson { rate_per_s: 1.0 };
    for (m, per_job) in [(&two, 3), (&one, 2), (&open, 3)] {
        let summary = simulate_with(m, &mut NullObserver, EngineLimits::default()).unwrap();
        assert_eq!(summary.jobs_completed, 1000);
        assert_eq!(summary.events, 1000 * per_job, "{:?}", m.arrivals.kind);
    }
}

#[test]
fn defect_3_clock_overflow_inside_the_engine_is_a_typed_error() {
    // The loader refuses these; the engine is the backstop for models built otherwise.
    let mut m = closed(3);
    m.workload.stages[1].duration = Duration::Fixed(1e12);
    let e = run(&m, u64::MAX).unwrap_err();
    assert_eq!(
        e,
        EngineError::ClockOverflow {
            what: Overflowed::StageEnd { stage: "b".into() },
            now_s: 1.0,
        }
    );
    assert!(e.is_input());
    assert!(e.to_string().contains("stage 'b'"), "{e}");
    assert!(e.to_string().contains("584 years"), "{e}");

    // A stage slowed by sharing (a fluid class), pushed past the range by its length.
    let mut m = closed(3);
    m.hardware.dram.capacity_gbps = 100.0;
    m.workload.stages[0].duration = Duration::Fixed(2e10);
    m.workload.stages[0].demands = vec![Demand {
        target: RateTarget::Dram,
        amount: 100.0,
    }];
    match run(&m, u64::MAX).unwrap_err() {
        EngineError::ClockOverflow {
            what: Overflowed::StageEnd { stage },
            ..
        } => assert_eq!(stage, "a"),
        e => panic!("{e}"),
    }

    // Arrivals: one a century, for ten centuries.
    let mut m = closed(10);
    m.arrivals.kind = ArrivalKind::Poisson {
        rate_per_s: 1.0 / (100.0 * 365.25 * 86400.0),
    };
    m.arrivals.warmup_jobs = 0;
    match simulate_with(&m, &mut NullObserver, EngineLimits::default()).unwrap_err() {
        EngineError::ClockOverflow {
            what: Overflowed::Arrival { job },
            ..
        } => assert!((1..10).contains(&job), "job {job}"),
        e => panic!("{e}"),
    }

    // The CLI's exit code for it: 2, the input's fault.
    let e = bwsim::commands::error::CommandError::from(EngineError::ClockOverflow {
        what: Overflowed::Arrival { job: 3 },
        now_s: 1e10,
    })
    .context("s.toml");
    assert_eq!(bwsim::commands::exit::exit_code(&e), 2);
}

#[test]
fn defect_9_zero_duration_loops_stop_at_the_event_limit() {
    // The limit counts events as the load-time estimate does (ready, start and end of
    // every stage instance): a run the estimate accepts never reaches it.
    let m = closed(10);
    let exact = 10 * 2 * 3;
    assert!(run(&m, exact).is_ok());
    assert_eq!(
        run(&m, exact - 1).unwrap_err(),
        EngineError::EventLimit {
            limit: exact - 1,
            now_s: 10.0,
            jobs_completed: 9,
        }
    );

    // Stages of zero duration: time never moves, the limit still stops it.
    let mut m = closed(10);
    m.arrivals.jobs = 1_000_000_000;
    for s in &mut m.workload.stages {
        s.duration = Duration::Fixed(0.0);
    }
    let start = Instant::now();
    let e = run(&m, 100_000).unwrap_err();
    assert!(
        matches!(e, EngineError::EventLimit { limit: 100_000, now_s, jobs_completed }
            if now_s == 0.0 && jobs_completed > 0),
        "{e}"
    );
    assert!(e.is_input());
    assert!(start.elapsed() < WallTime::from_secs(30));
    let e = bwsim::commands::error::CommandError::from(e).context("s.toml");
    assert_eq!(bwsim::commands::exit::exit_code(&e), 2);
}

#[test]
fn also_seed_beyond_u64_is_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(
        &s,
        format!("{BASE}[arrivals]\nkind = \"closed\"\nconcurrency = 2\njobs = 4\n"),
    )
    .unwrap();
    let bwsim = || Command::cargo_bin("bwsim").expect("the bwsim binary is built");
    // The largest seed runs; one past it, or a negative one, is refused with its range.
    let out = bwsim()
        .arg("run")
        .arg(&s)
        .args(["--no-ideal", "--seed", "18446744073709551615"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for bad in ["18446744073709551616", "-1", "1e3"] {
        let out_dir = dir.path().join("never");
        let out_dir = out_dir.to_str().unwrap();
        let sweep = ["sweep", "--param", "arrivals.jobs=2,3", "--out", out_dir];
        for cmd in [&["run"][..], &sweep[..]] {
            let out = bwsim()
                .args(cmd)
                .arg(&s)
                .arg(format!("--seed={bad}"))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?} {bad}: {err}");
            assert!(
                err.contains("is not a seed") && err.contains("18446744073709551615"),
                "{cmd:?} {bad}: {err}"
            );
            assert!(out.stdout.is_empty());
        }
    }
    let out = bwsim()
        .args([
            "sweep",
            "--param",
            "arrivals.jobs=2,3",
            "--replications",
            "4294967296",
        ])
        .arg(&s)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a replication count"), "{err}");
}
