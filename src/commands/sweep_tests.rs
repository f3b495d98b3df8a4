//! End-to-end sweep tests against a synthetic simulator with known curves.

use std::path::Path;

use serde_json::{Value, json};

use super::plot::plot_command;
use super::sweep::{resume_with, start, sweep_with};
use crate::analysis::report::{Report, StageStats, SteadyState, stall_note};
use crate::engine::Stall;
use crate::input_file::InputError;
use crate::sweep::*;

/// A closed-form "host": throughput saturates with concurrency, DRAM fills up, the
/// bracketed GPU busy overstates the true one. Seeds add a little noise; the wall
/// clock is deliberately random (it must stay out of the table).
struct Synthetic;

/// A parse failure inside a synthetic run: a bad value, as the scenario layer says one.
fn failed(e: impl std::fmt::Display) -> SweepError {
    InputError::new(e.to_string()).into()
}

fn noise(seed: u64) -> f64 {
    (seed % 1000) as f64 / 1000.0 - 0.5
}

impl Simulator for Synthetic {
    fn describe(&self, sets: &[String]) -> Result<ScenarioInfo, SweepError> {
        for s in sets {
            let (k, v) = s.split_once('=').unwrap();
            if k != "arrivals.concurrency" && k != "params.pinned" {
                return Err(InputError::new(format!("unknown key '{k}'")).into());
            }
            if v.parse::<f64>().is_err() && v != "true" && v != "false" {
                return Err(InputError::new(format!("bad value '{v}'")).into());
            }
        }
        Ok(ScenarioInfo {
            name: "synthetic".into(),
            seed: 7,
        })
    }

    fn run(&self, sets: &[String], seed: u64) -> Result<Report, SweepError> {
        let mut c: f64 = 1.0;
        let mut pinned = true;
        for s in sets {
            match s.split_once('=').unwrap() {
                ("arrivals.concurrency", v) => c = v.parse().map_err(failed)?,
                ("params.pinned", v) => pinned = v == "true",
                _ => {}
            }
        }
        let scale = if pinned { 1.0 } else { 0.8 };
        let jph = scale * 1000.0 * (1.0 - (-c / 4.0).exp()) * (1.0 + 0.02 * noise(seed));
        let true_busy = jph / 1100.0;
        let stage = |name: &str, inflation: f64, mean_s: f64| StageStats {
            name: name.into(),
            count: 100,
            mean_s,
            standalone_mean_s: mean_s / inflation,
            inflation,
            mean_wait_s: 0.0,
            lost_s: Default::default(),
        };
        let mut r = Report::empty("synthetic", seed);
        r.jobs_completed = 100;
        r.sim_time_s = 100.0 * 3600.0 / jph;
        r.seconds_per_job = 3600.0 / jph;
        r.jobs_per_hour = jph;
        r.gpu_true_busy_frac = true_busy;
        r.gpu_bracketed_busy_frac = (true_busy * 1.6).min(0.97);
        r.dram_capacity_gbps = 500.0;
        r.dram_mean_utilization = (c / 16.0).min(0.98);
        r.dram_peak_gbps = 30.0 * c;
        r.stages = vec![
            stage("synthesis", 1.0 + 0.05 * c.powf(1.5), 10.0),
            stage("msm", 1.0 + 0.02 * c, 2.0),
        ];
        r.ideal_seconds_per_job = Some(3.0 / scale);
        r.bottleneck.resource = if c < 8.0 { "gpu0" } else { "dram" }.into();
        r.bottleneck.reason = "synthetic".into();
        r.engine_events = 1000;
        r.engine_wall_s = std::time::Instant::now().elapsed().as_secs_f64() + noise(seed);
        // Two points carry a verdict (and its note, as a real report does).
        if !pinned && c == 2.0 {
            r.stalled = Some(Stall {
                seed,
                jobs_completed: 3,
                jobs_total: 100,
                waiting_instances: 1,
            });
        }
        if !pinned && c == 8.0 {
            r.steady_state = SteadyState::FirstWave {
                why: "every measured job starts at once".into(),
            };
        }
        r.notes = (r.stalled.iter().map(|s| stall_note(s, seed)))
            .chain(r.steady_state.note())
            .collect();
        Ok(r)
    }
}

fn sweep_in(dir: &Path, params: &[&str], jobs: usize) -> SweepOutcome {
    let mut args = SweepArgs::new(
        "synthetic.toml",
        params.iter().map(|s| s.to_string()).collect(),
    );
    args.jobs = Some(jobs);
    args.out = Some(dir.to_path_buf());
    sweep_with(&args, &Synthetic, ProgressMode::Hidden).unwrap()
}

fn without_timing(path: &Path) -> Value {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("timing");
    v
}

#[test]
fn same_bytes_whatever_jobs() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    sweep_in(a.path(), &["arrivals.concurrency=1..12"], 1);
    sweep_in(b.path(), &["arrivals.concurrency=1..12"], 2);
    let csv = |d: &Path| std::fs::read(d.join("sweep.csv")).unwrap();
    assert_eq!(csv(a.path()), csv(b.path()));
    assert_eq!(
        without_timing(&a.path().join("sweep.json")),
        without_timing(&b.path().join("sweep.json"))
    );
    assert_eq!(
        std::fs::read(a.path().join("throughput.png")).unwrap(),
        std::fs::read(b.path().join("throughput.png")).unwrap()
    );
}

#[test]
fn csv_has_param_metric_and_bottleneck_columns() {
    let d = tempfile::tempdir().unwrap();
    let out = sweep_in(d.path(), &["arrivals.concurrency=1..4"], 2);
    let text = std::fs::read_to_string(d.path().join("sweep.csv")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert_eq!(
        &header[..7],
        [
            "scenario",
            "job_name",
            "arrivals.concurrency",
            "seeds",
            "stalled",
            "jobs_per_day_mean",
            "jobs_per_day_ci95"
        ]
    );
    assert_eq!(header.last(), Some(&"bottleneck"));
    for col in [
        "gpu.true_busy_frac_mean",
        "stages.synthesis.inflation_ci95",
        "ideal.seconds_per_job_mean",
        "engine.events_mean",
    ] {
        assert!(header.contains(&col), "missing {col}");
    }
    assert!(
        !header.iter().any(|h| h.contains("wall_s")),
        "volatile wall_s leaked into the CSV"
    );
    assert_eq!(text.lines().count(), 5);
    assert_eq!(
        text.lines().nth(1).unwrap().split(',').next_back(),
        Some("gpu0")
    );
    assert_eq!(out.table.rows[0].seeds, 3);
    // 3 seeds -> a CI; noise is small but non-zero.
    let ci = out.table.stat(0, "jobs_per_hour").unwrap().ci95.unwrap();
    assert!(ci > 0.0 && ci < 20.0, "{ci}");
}

#[test]
fn knee_is_found_and_recorded() {
    let d = tempfile::tempdir().unwrap();
    let out = sweep_in(d.path(), &["arrivals.concurrency=1..32"], 2);
    assert_eq!(out.knees.len(), 1);
    let knee = out.table.rows[out.knees[0].row].values[0].as_f64();
    assert!((14.0..=17.0).contains(&knee), "knee at {knee}");
    let j = without_timing(&d.path().join("sweep.json"));
    assert_eq!(j["knee"]["value"].as_f64(), Some(knee));
    assert_eq!(j["points"][0]["seeds"].as_array().unwrap().len(), 3);
    assert_eq!(j["points"][0]["bottleneck_reason"], "synthetic");
}

#[test]
fn two_params_make_a_grid_with_a_knee_per_series() {
    let d = tempfile::tempdir().unwrap();
    let out = sweep_in(
        d.path(),
        &["arrivals.concurrency=2..16:2", "params.pinned=true,false"],
        2,
    );
    assert_eq!(out.table.rows.len(), 16);
    assert_eq!(out.knees.len(), 2);
    assert_eq!(out.knees[1].series.as_deref(), Some("params.pinned=false"));
    for f in [
        "throughput.png",
        "gpu_utilisation.svg",
        "inflation.png",
        "dram.png",
    ] {
        assert!(d.path().join(f).exists(), "{f}");
    }
}

#[test]
fn plots_are_valid_png_and_svg() {
    let d = tempfile::tempdir().unwrap();
    let out = sweep_in(d.path(), &["arrivals.concurrency=1..8"], 2);
    let names: Vec<String> = out
        .files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for stem in ["throughput", "gpu_utilisation", "inflation", "dram"] {
        assert!(names.contains(&format!("{stem}.png")), "{names:?}");
        let png = std::fs::read(d.path().join(format!("{stem}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let img = image::load_from_memory(&png).unwrap();
        assert!(
            img.width() >= 1000 && img.height() >= 700,
            "{stem}: {}x{}",
            img.width(),
            img.height()
        );
        let svg = std::fs::read_to_string(d.path().join(format!("{stem}.svg"))).unwrap();
        assert!(svg.trim_start().starts_with("<svg"), "{stem}.svg");
        assert!(svg.trim_end().ends_with("</svg>"), "{stem}.svg");
        assert!(svg.contains("synthetic"), "{stem}.svg has no title");
    }
}

#[test]
fn plot_command_redraws_the_same_pictures_from_the_csv() {
    let d = tempfile::tempdir().unwrap();
    sweep_in(d.path(), &["arrivals.concurrency=1..8"], 2);
    let again = tempfile::tempdir().unwrap();
    let files = plot_command(&d.path().join("sweep.csv"), Some(again.path())).unwrap();
    // Five charts (the synthetic reports have a bracket breakdown), each .png and .svg.
    assert_eq!(files.len(), 10);
    for f in [
        "throughput.png",
        "dram.svg",
        "inflation.png",
        "gpu_breakdown.svg",
    ] {
        assert_eq!(
            std::fs::read(d.path().join(f)).unwrap(),
            std::fs::read(again.path().join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn bad_input_fails_before_simulating() {
    let d = tempfile::tempdir().unwrap();
    let run = |params: &[&str]| {
        let mut args = SweepArgs::new("s.toml", params.iter().map(|s| s.to_string()).collect());
        args.out = Some(d.path().to_path_buf());
        format!(
            "{:#}",
            sweep_with(&args, &Synthetic, ProgressMode::Hidden).unwrap_err()
        )
    };
    assert!(run(&["arrivals.concurrency=1..x"]).contains("invalid SPEC '1..x'"));
    assert!(run(&[]).contains("at least one --param"));
    let e = run(&["arrivals.nope=1..3"]);
    assert!(
        e.contains("sweep point 1") && e.contains("unknown key 'arrivals.nope'"),
        "{e}"
    );
    assert!(!d.path().join("sweep.csv").exists());
}

#[test]
fn a_failing_run_names_its_point_and_seed() {
    let grid = Grid::new(vec![parse_param("x=1..6").unwrap()]).unwrap();
    let opts = RunOptions {
        seeds: 2,
        base_seed: 1,
        jobs: 2,
        base_sets: vec![],
    };
    let runner = |sets: &[String], seed: u64| -> Result<Report, SweepError> {
        if sets[0] == "x=4" {
            return Err(InputError::new("does not fit in RAM").into());
        }
        Ok(Report::empty("s", seed))
    };
    let e = run_sweep(
        &grid,
        &opts,
        &runner,
        &Progress::new(6, ProgressMode::Hidden),
        &[],
        &|_| Ok(()),
    )
    .unwrap_err();
    let msg = format!("{:#}", anyhow::Error::from(e));
    assert!(
        msg.contains("sweep point 4 (x=4)") && msg.contains("does not fit in RAM"),
        "{msg}"
    );
}

#[test]
fn results_come_in_grid_order_with_derived_seeds() {
    let grid = Grid::new(vec![parse_param("x=1..20").unwrap()]).unwrap();
    let runner = |sets: &[String], seed: u64| -> Result<Report, SweepError> {
        // Uneven work so completion order differs from grid order.
        let x: u64 = sets[1][2..].parse().map_err(failed)?;
        std::thread::sleep(std::time::Duration::from_millis((20 - x) % 7));
        let mut r = Report::empty("s", seed);
        r.jobs_completed = x;
        Ok(r)
    };
    let opts = |jobs| RunOptions {
        seeds: 2,
        base_seed: 9,
        jobs,
        base_sets: vec!["a=1".into()],
    };
    let hidden = Progress::new(20, ProgressMode::Hidden);
    let one = run_sweep(&grid, &opts(1), &runner, &hidden, &[], &|_| Ok(())).unwrap();
    let two = run_sweep(&grid, &opts(2), &runner, &hidden, &[], &|_| Ok(())).unwrap();
    for (p, (a, b)) in one.iter().zip(&two).enumerate() {
        assert_eq!(a.reports, b.reports);
        assert_eq!(a.reports[0].json["jobs_completed"], p as u64 + 1);
        assert_eq!(a.reports[1].json["seed"], a.seeds[1]);
        assert_eq!(a.sets, [String::from("a=1"), format!("x={}", p + 1)]);
        assert_eq!(a.seeds, seeds::point_seeds(9, p, 2));
    }
}

/// The real engine through the real loader: the same bytes with 1 and 2 threads.
#[test]
fn demo_scenario_sweep_is_deterministic_across_jobs() {
    let run = |jobs: usize| {
        let d = tempfile::tempdir().unwrap();
        let mut args = SweepArgs::new(
            "scenarios/demo.toml",
            vec!["params.concurrency=2..8:2".into()],
        );
        args.jobs = Some(jobs);
        args.out = Some(d.path().to_path_buf());
        args.sets = vec!["arrivals.jobs=40".into()];
        let out = sweep_with(
            &args,
            &ScenarioSimulator::new("scenarios/demo.toml"),
            ProgressMode::Hidden,
        )
        .unwrap();
        assert_eq!(out.table.scenario, "demo");
        assert!(out.table.metric_index("stages.synth.inflation").is_some());
        (
            std::fs::read(d.path().join("sweep.csv")).unwrap(),
            without_timing(&d.path().join("sweep.json")),
        )
    };
    let (csv1, json1) = run(1);
    let (csv2, json2) = run(2);
    assert_eq!(csv1, csv2);
    assert_eq!(json1, json2);
    assert_eq!(
        json1["points"][1]["sets"],
        json!(["arrivals.jobs=40", "params.concurrency=4"])
    );
}

#[test]
fn unknown_scenario_key_names_the_point() {
    let d = tempfile::tempdir().unwrap();
    let mut args = SweepArgs::new("scenarios/demo.toml", vec!["params.nope=1,2".into()]);
    args.out = Some(d.path().to_path_buf());
    let e = sweep_with(
        &args,
        &ScenarioSimulator::new("scenarios/demo.toml"),
        ProgressMode::Hidden,
    )
    .unwrap_err();
    let msg = format!("{e:#}");
    assert!(
        msg.contains("sweep point 1: params.nope=1") && msg.contains("nope"),
        "{msg}"
    );
}

#[test]
fn an_interrupted_sweep_resumes_to_the_same_bytes() {
    let whole = tempfile::tempdir().unwrap();
    let whole_outcome = sweep_in(
        whole.path(),
        &["arrivals.concurrency=1..8", "params.pinned=true,false"],
        2,
    );
    let parent = tempfile::tempdir().unwrap();
    let out = parent.path().join("sweep");
    let mut args = SweepArgs::new(
        "synthetic.toml",
        vec![
            "arrivals.concurrency=1..8".into(),
            "params.pinned=true,false".into(),
        ],
    );
    args.jobs = Some(2);
    args.out = Some(out.clone());
    let e = start(&args, &Synthetic, ProgressMode::Hidden, Some(5)).unwrap_err();
    assert!(format!("{e:#}").contains("--resume"), "{e:#}");
    assert!(
        !out.exists(),
        "an interrupted sweep leaves no output folder"
    );
    let staging = crate::output::staging_path(&out);
    assert!(staging.join("points.jsonl").exists());
    let done = resume_with(
        &out,
        |_| Box::new(Synthetic),
        None,
        ProgressMode::Hidden,
        None,
    )
    .unwrap();
    assert_eq!(done.dir, out);
    assert!(!staging.exists());
    // The verdicts of the points read back from the journal are those of a fresh run.
    let stalled = |o: &SweepOutcome| o.table.rows.iter().map(|r| r.stalled).collect::<Vec<_>>();
    assert_eq!(stalled(&done), stalled(&whole_outcome));
    assert_eq!(stalled(&done).iter().sum::<usize>(), 3); // x=2, not pinned: 3 seeds
    assert_eq!(done.no_steady_state, whole_outcome.no_steady_state);
    assert_eq!(
        done.no_steady_state,
        [(
            15,
            "no steady state: every measured job starts at once".to_string()
        )]
    );
    assert_eq!(
        std::fs::read(whole.path().join("sweep.csv")).unwrap(),
        std::fs::read(out.join("sweep.csv")).unwrap()
    );
    assert_eq!(
        without_timing(&whole.path().join("sweep.json")),
        without_timing(&out.join("sweep.json"))
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["status"], "complete");
    assert_eq!(manifest["points"], 16);
}

#[test]
fn a_second_sweep_to_the_same_out_is_refused() {
    let d = tempfile::tempdir().unwrap();
    sweep_in(d.path(), &["arrivals.concurrency=1..3"], 1);
    let mut args = SweepArgs::new("synthetic.toml", vec!["arrivals.concurrency=1..3".into()]);
    args.out = Some(d.path().to_path_buf());
    let e = sweep_with(&args, &Synthetic, ProgressMode::Hidden).unwrap_err();
    assert!(format!("{e:#}").contains("not empty"), "{e:#}");
    assert_eq!(super::exit::exit_code(&e), 2);
}

#[test]
fn stalled_seeds_are_counted_per_point() {
    let grid = Grid::new(vec![parse_param("x=1..3").unwrap()]).unwrap();
    let opts = RunOptions {
        seeds: 3,
        base_seed: 1,
        jobs: 1,
        base_sets: vec![],
    };
    let runner = |sets: &[String], seed: u64| -> Result<Report, SweepError> {
        let mut r = Report::empty("s", seed);
        if sets[0] == "x=2" && seed == seeds::point_seeds(1, 1, 3)[0] {
            r.stalled = Some(Stall {
                seed,
                jobs_completed: 3,
                jobs_total: 10,
                waiting_instances: 1,
            });
        }
        Ok(r)
    };
    let runs = run_sweep(
        &grid,
        &opts,
        &runner,
        &Progress::new(3, ProgressMode::Hidden),
        &[],
        &|_| Ok(()),
    )
    .unwrap();
    let table = aggregate::aggregate("s", &grid.keys(), &runs);
    let got: Vec<usize> = table.rows.iter().map(|r| r.stalled).collect();
    assert_eq!(got, [0, 1, 0]);
    assert!(
        csv::to_csv(&table)
            .lines()
            .next()
            .unwrap()
            .contains(",seeds,stalled,")
    );
}
