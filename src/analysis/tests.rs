//! Unit tests of the analysis: metrics fed a hand-written event sequence, the bottleneck
//! and the report built from hand-made statistics, and the metric keys against a real
//! JSON report and the charts that read them.

use std::collections::BTreeMap;
use std::path::Path;

use super::bottleneck::analyse;
use super::keys;
use super::metrics::Metrics;
use super::report::Report;
use super::run_stats::{
    DramTotals, GpuTotals, RateTotals, RunStats, RunTotals, StageTotals, WindowTotals,
};
use crate::engine::{Observer, RateKind, RateResourceInfo, RunSummary, Scope, StageRef, Stall};
use crate::model::{Edge, Model};
use crate::time::SimTime;

fn demo(sets: &[&str]) -> Model {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    crate::scenario::load(Path::new("scenarios/demo.toml"), &sets)
        .expect("demo scenario loads")
        .model
}

fn dram(capacity: f64) -> RateResourceInfo {
    RateResourceInfo {
        name: "dram".into(),
        kind: RateKind::Dram,
        capacity,
        gpu: None,
    }
}

fn s(x: f64) -> SimTime {
    SimTime::from_secs(x)
}

/// A draw reported again unchanged (most PS re-solves) is skipped once the peaks hold it;
/// one held from before the window opens still reaches the peaks when re-reported inside.
#[test]
fn metrics_peaks_count_a_draw_re_reported_after_the_window_opens() {
    let model = demo(&["arrivals.warmup_jobs=1"]);
    let mut m = Metrics::new(&model);
    m.resources(&[dram(100.0)], &[]);
    m.job_arrived(s(0.0), 0);
    m.job_arrived(s(0.0), 1);
    m.rates_changed(s(0.0), &[80.0], 2.0);
    m.rates_changed(s(0.5), &[80.0], 2.0);
    m.job_finished(s(1.0), 0, s(0.0)); // the warm-up job: the window opens
    m.rates_changed(s(1.0), &[80.0], 2.0); // unchanged, but new to the peaks
    m.rates_changed(s(1.5), &[80.0], 2.0);
    m.rates_changed(s(2.0), &[40.0], 1.2);
    m.rates_changed(s(3.0), &[10.0], 1.0);
    m.job_finished(s(4.0), 1, s(0.0));
    m.finished(s(4.0));
    let summary = RunSummary {
        events: 4,
        end: s(4.0),
        jobs_completed: 2,
        jobs_started: 2,
        stalled: None,
    };
    let stats = m.finish(&summary);
    assert_eq!(stats.rates[0].peak, 80.0);
    assert_eq!(stats.dram.slowdown_max, 2.0);
    // Window [1, 4]: 80 for 1 s, 40 for 1 s, 10 for 1 s.
    assert!((stats.rates[0].usage_integral - 130.0).abs() < 1e-12);

    // Only reported before the window opens: not a peak of the window.
    let mut m = Metrics::new(&model);
    m.resources(&[dram(100.0)], &[]);
    m.job_arrived(s(0.0), 0);
    m.job_arrived(s(0.0), 1);
    m.rates_changed(s(0.0), &[80.0], 2.0);
    m.job_finished(s(1.0), 0, s(0.0));
    m.rates_changed(s(1.0), &[40.0], 1.2);
    m.rates_changed(s(2.0), &[40.0], 1.2);
    m.job_finished(s(4.0), 1, s(0.0));
    m.finished(s(4.0));
    let stats = m.finish(&summary);
    assert_eq!(stats.rates[0].peak, 40.0);
    assert_eq!(stats.dram.slowdown_max, 1.2);
}

#[test]
fn metrics_integrate_hand_fed_events_over_the_window() {
    let model = demo(&["arrivals.warmup_jobs=0"]);
    let gpu_stage = model
        .workload
        .stages
        .iter()
        .position(|st| st.gpu_kernel)
        .expect("demo has a GPU kernel stage");
    let mut m = Metrics::new(&model);
    m.resources(&[dram(100.0)], &[]);
    m.job_arrived(s(0.0), 0);
    m.rates_changed(s(0.0), &[50.0], 1.5);
    let kernel = StageRef {
        job: 0,
        scope: Scope::Partition(0),
        stage: gpu_stage,
    };
    m.stage_edge(s(1.0), kernel, Edge::Start, Some(0));
    m.stage_edge(s(1.5), kernel, Edge::End, Some(0));
    m.rates_changed(s(2.0), &[0.0], 1.0);
    m.job_finished(s(4.0), 0, s(0.0));
    m.finished(s(4.0));
    let summary = RunSummary {
        events: 7,
        end: s(4.0),
        jobs_completed: 1,
        jobs_started: 1,
        stalled: None,
    };
    let stats = m.finish(&summary);
    assert_eq!(stats.window.window_s, 4.0);
    assert_eq!(stats.window.completions, 1);
    assert_eq!(stats.window.seconds_per_job(), 4.0);
    assert_eq!(stats.window.response_mean_s(), 4.0);
    // 50 GB/s for 2 s of a 4 s window on a 100 GB/s link: 25%.
    assert!((stats.rate_utilisation()[0] - 0.25).abs() < 1e-12);
    assert_eq!(stats.rates[0].peak, 50.0);
    assert!((stats.dram.slowdown_integral - (1.5 * 2.0 + 2.0)).abs() < 1e-12);
    assert_eq!(stats.dram.slowdown_max, 1.5);
    assert!((stats.gpu.kernel_busy_s[0] - 0.5).abs() < 1e-12);
    assert!((stats.in_system_integral - 4.0).abs() < 1e-12);
    assert_eq!(stats.run.events, 7);
    assert!(stats.stalled.is_none());
}

/// Statistics of a run with one DRAM link at `util` and nothing else.
fn hand_made(util: f64, stalled: Option<Stall>) -> RunStats {
    RunStats {
        run: RunTotals {
            jobs_completed: 10,
            end_s: 10.0,
            events: 100,
        },
        window: WindowTotals {
            window_s: 10.0,
            completions: 10,
            measured_jobs: 10,
            response_sum_s: 20.0,
            response_max_s: 3.0,
        },
        stages: Vec::new(),
        gpu: GpuTotals {
            kernel_busy_s: vec![5.0],
            brackets: crate::analysis::bracket_measures::measure(
                &[crate::analysis::bracket_measures::Bracket {
                    gpu: 0,
                    start: 1.0,
                    end: 9.0,
                }],
                (0.0, 10.0),
                1,
            ),
            bracketed_span_total_s: 8.0,
            sampled_busy_s: vec![6.0],
            spans: Vec::new(),
            gap: Default::default(),
        },
        dram: DramTotals {
            rate_index: Some(0),
            slowdown_integral: 12.0,
            slowdown_max: 2.0,
            usable: None,
        },
        rates: vec![RateTotals {
            info: dram(100.0),
            usage_integral: util * 100.0 * 10.0,
            peak: 100.0,
        }],
        holds: Vec::new(),
        in_system_integral: 20.0,
        stalled,
    }
}

#[test]
fn bottleneck_names_busy_dram_and_none_when_idle() {
    let model = demo(&[]);
    let busy = analyse(&model, &hand_made(0.9, None));
    assert_eq!(busy.resource, "dram");
    assert!(busy.reason.starts_with("90% mean DRAM"), "{}", busy.reason);
    assert!(busy.reason.contains("1.20x"), "{}", busy.reason);
    let idle = analyse(&model, &hand_made(0.2, None));
    assert_eq!(idle.resource, "none");
    assert_eq!(idle.blame_s, BTreeMap::new());
}

#[test]
fn report_reads_hand_made_stats_and_carries_the_stall() {
    let mut model = demo(&[]);
    model.workload.stages.clear();
    model.instrumentation.spans.clear();
    let stall = Stall {
        seed: model.seed,
        jobs_completed: 8,
        jobs_total: 10,
        waiting_instances: 2,
    };
    let mut stats = hand_made(0.9, Some(stall));
    stats.stages = Vec::<StageTotals>::new();
    let r = Report::build(&model, &stats, 0.0);
    assert_eq!(r.seconds_per_job, 1.0);
    assert_eq!(r.jobs_per_hour, 3600.0);
    assert_eq!(r.response_mean_s, 2.0);
    assert_eq!(r.gpu_true_busy_frac, 0.5);
    assert_eq!(r.gpu_bracketed_busy_frac, 0.8);
    assert_eq!(r.gpu_bracketed_seconds_per_job, 0.8);
    assert!((r.dram_mean_utilization - 0.9).abs() < 1e-12);
    assert_eq!(r.dram_mean_latency_slowdown, 1.2);
    assert_eq!(r.little_l, 2.0);
    assert_eq!(r.bottleneck.resource, "dram");
    let why = "8 of 10 jobs finished; 2 stage instances wait for holdable resources that are \
               never released";
    assert_eq!(r.stalled, Some(stall));
    assert_eq!(r.stall().as_deref(), Some(why));
    assert_eq!(r.notes[0], format!("stalled: {why}"));
    let fine = Report::build(&model, &hand_made(0.9, None), 0.0);
    assert_eq!(fine.stall(), None);
    assert!(fine.notes.is_empty(), "{:?}", fine.notes);
}

fn lookup<'v>(v: &'v serde_json::Value, dotted: &str) -> Option<&'v serde_json::Value> {
    dotted.split('.').try_fold(v, |v, k| v.get(k))
}

#[test]
fn every_key_constant_is_in_a_bundled_json_report_and_every_chart_reads_one() {
    let model = demo(&[]);
    let json = crate::run::run_model(&model).expect("runs").to_json();
    for key in keys::ALL {
        assert!(lookup(&json, key).is_some(), "report lacks {key}");
    }
    let stages = json[keys::STAGES].as_object().expect("stages object");
    assert!(!stages.is_empty());
    for name in stages.keys() {
        for leaf in keys::STAGE_LEAVES {
            let key = keys::stage_metric(name, leaf);
            assert!(lookup(&json, &key).is_some(), "report lacks {key}");
        }
    }
    for key in crate::plot::KEYS_READ {
        assert!(
            keys::ALL.contains(&key),
            "a chart reads {key}, not a report key"
        );
        assert!(lookup(&json, key).is_some(), "report lacks {key}");
    }
}

/// The demo on seeds 1..=3, run one by one.
fn demo_on_seeds(seeds: &[u64]) -> Vec<crate::analysis::report::Report> {
    seeds
        .iter()
        .map(|&seed| {
            let mut m = demo(&[]);
            m.seed = seed;
            crate::run::run_model(&m).expect("runs")
        })
        .collect()
}

#[test]
fn replications_average_the_throughput_and_keep_the_first_seeds_tables() {
    let runs = demo_on_seeds(&[1, 2, 3]);
    let combined = crate::analysis::report::Report::replicated(runs.clone());
    let reps = combined.replications.as_ref().expect("three runs");
    assert_eq!(reps.seeds, [1, 2, 3]);
    let spj: Vec<f64> = runs.iter().map(|r| r.seconds_per_job).collect();
    assert_eq!(reps.seconds_per_job_by_seed, spj);
    let mean = spj.iter().sum::<f64>() / 3.0;
    assert!((reps.seconds_per_job.mean - mean).abs() < 1e-12);
    assert!(reps.seconds_per_job.ci95.unwrap() > 0.0, "seeds differ");
    // The report's own fields stay the first seed's whole run.
    assert_eq!(combined.seconds_per_job, runs[0].seconds_per_job);
    assert_eq!(combined.stages, runs[0].stages);
    assert_eq!(combined.seed, 1);
    assert_eq!(combined.stall(), None);
    let json = combined.to_json();
    for leaf in keys::REPLICATED_LEAVES {
        let key = format!("{}.{leaf}.mean", keys::REPLICATIONS);
        assert!(
            lookup(&json, &key).is_some(),
            "replicated report lacks {key}"
        );
        let ci = format!("{}.{leaf}.ci95", keys::REPLICATIONS);
        assert!(lookup(&json, &ci).is_some_and(|v| v.is_f64()), "{ci}");
    }
    // One run is left as it was: no interval keys.
    let one = crate::analysis::report::Report::replicated(runs[..1].to_vec());
    assert_eq!(one, runs[0]);
    assert!(lookup(&one.to_json(), keys::REPLICATIONS).is_none());
}

#[test]
fn a_stall_on_any_seed_makes_the_replicated_report_stalled() {
    let mut runs = demo_on_seeds(&[1, 2]);
    let stall = Stall {
        seed: runs[1].seed,
        jobs_completed: 3,
        jobs_total: 5,
        waiting_instances: 1,
    };
    runs[1].stalled = Some(stall);
    let combined = crate::analysis::report::Report::replicated(runs);
    assert_eq!(combined.stalled, Some(stall));
    assert_eq!(
        combined.stall().as_deref(),
        Some(
            "seed 2: 3 of 5 jobs finished; 1 stage instances wait for holdable resources \
             that are never released"
        )
    );
    assert!(combined.notes.iter().any(|n| n.contains("seed 2")));
}

#[test]
fn a_what_if_reports_the_paired_change_and_refuses_unpaired_seeds() {
    use crate::analysis::report::WhatIf;
    let baseline = crate::analysis::report::Report::replicated(demo_on_seeds(&[1, 2, 3]));
    let mut slower = baseline.clone();
    let reps = slower.replications.as_mut().unwrap();
    for (s, j) in reps
        .seconds_per_job_by_seed
        .iter_mut()
        .zip(&mut reps.jobs_per_hour_by_seed)
    {
        *s += 0.002;
        *j = 3600.0 / *s;
    }
    let w = WhatIf {
        changes: vec!["k=v".into()],
        no_effect: vec![],
        baseline: baseline.clone(),
        changed: slower.clone(),
        unshared_error: None,
    };
    let d = w.difference().expect("same seeds");
    assert!((d.seconds_per_job.mean - 0.002).abs() < 1e-12);
    assert!(d.resolved() && d.jobs_per_day.mean < 0.0);
    assert!(w.to_text().contains("slower: resolved"), "{}", w.to_text());
    let unchanged = WhatIf {
        changes: vec!["k=v".into()],
        no_effect: vec!["k has no effect here: j overrides it".into()],
        baseline: baseline.clone(),
        changed: baseline.clone(),
        unshared_error: Some(0.05),
    };
    let same = unchanged.difference().unwrap();
    assert!(!same.resolved() && same.identical);
    // Zero on every seed is no noise: it says so, with the scenario layer's reason.
    let text = unchanged.to_text();
    assert!(
        text.contains("identical on every seed: k has no effect here: j overrides it"),
        "{text}"
    );
    assert!(!text.contains("noise"), "{text}");
    let other_seeds = WhatIf {
        changes: vec![],
        no_effect: vec![],
        baseline: baseline.clone(),
        changed: crate::analysis::report::Report::replicated(demo_on_seeds(&[4, 5, 6])),
        unshared_error: None,
    };
    assert!(other_seeds.difference().is_none());
    // Against the model's unshared error: a resolved change smaller than it is resolved
    // by the seeds only; one larger, by the prediction intervals too.
    for (error, beyond) in [(1e-6, true), (0.5, false)] {
        let judged = WhatIf {
            unshared_error: Some(error),
            ..w.clone()
        };
        let d = judged.difference().unwrap();
        assert_eq!(judged.beyond_model_error(&d), Some(beyond));
        let text = judged.to_text();
        let said = if beyond {
            "resolved by the prediction intervals too"
        } else {
            "resolved by the seeds, not by the prediction intervals"
        };
        assert!(text.contains(said), "{text}");
    }
    assert_eq!(
        same.identical,
        unchanged.beyond_model_error(&same).is_none()
    );
}
