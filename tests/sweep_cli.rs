//! The real binary: `bwsim sweep`, `bwsim plot`, and `bwsim run` exports.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("binary builds")
}

#[test]
fn sweep_writes_csv_json_and_plots_then_plot_redraws_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    bwsim()
        .args([
            "sweep",
            "scenarios/demo.toml",
            "--param",
            "params.concurrency=2..6:2",
        ])
        .args([
            "--replications",
            "2",
            "--jobs",
            "2",
            "--set",
            "arrivals.jobs=40",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("sweep: 3 points x 2 seeds"))
        .stdout(predicate::str::contains("knee: params.concurrency = "));
    for f in [
        "sweep.csv",
        "sweep.json",
        "throughput.png",
        "gpu_utilisation.svg",
        "gpu_breakdown.png",
        "inflation.png",
        "dram.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert!(csv.starts_with(
        "scenario,job_name,params.concurrency,seeds,stalled,jobs_per_day_mean,jobs_per_day_ci95,jobs_per_hour_mean,"
    ));
    assert_eq!(csv.lines().count(), 4);

    let again = dir.path().join("again");
    bwsim()
        .arg("plot")
        .arg(out.join("sweep.csv"))
        .arg("--out")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(
        std::fs::read(out.join("throughput.png")).unwrap(),
        std::fs::read(again.join("throughput.png")).unwrap()
    );
}

#[test]
fn the_knee_carries_its_prediction_interval_around_the_seeds_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = bwsim()
        .args(["sweep", "scenarios/c2-32g-cuzk.toml"])
        .args(["--param", "params.synthesis_concurrency=10,14"])
        .arg("--out")
        .arg(dir.path().join("sw"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let knee = text.lines().find(|l| l.starts_with("knee: ")).unwrap();
    let line = (text.lines())
        .find(|l| l.contains("95% prediction interval there: "))
        .unwrap_or_else(|| panic!("no prediction line:\n{text}"));
    // "... s/proof   2284.81 ± 0.69 proofs/day" and "... there: 1790-2920 proofs/day".
    let per_day: f64 = (knee.split("s/proof   ").nth(1))
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{knee}"));
    let range = line
        .split("there: ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let (lo, hi) = range.split_once('-').unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert!(lo < per_day && per_day < hi, "{knee}\n{line}");
    assert!(hi / lo > 1.3, "a spec-sheet host's interval: {line}");
    // The knee's bottleneck is named as `run` names it: the what-if step that saves most,
    // beside the busiest resource the sweep's column holds.
    let bottleneck = (text.lines())
        .find(|l| l.starts_with("      bottleneck there: "))
        .unwrap_or_else(|| panic!("no bottleneck line:\n{text}"));
    assert!(
        (common::what_if_steps().iter())
            .any(|s| bottleneck.contains(&format!("there: {s} saves ")))
            && bottleneck.contains("(the busiest resource: "),
        "{bottleneck}"
    );
}

#[test]
fn bad_spec_is_an_input_error_that_quotes_it() {
    bwsim()
        .args([
            "sweep",
            "scenarios/demo.toml",
            "--param",
            "params.concurrency=8..1",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "invalid SPEC '8..1': START is greater than END",
        ));
    bwsim()
        .args(["sweep", "scenarios/demo.toml", "--param", "params.nope=1,2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sweep point 1: params.nope=1"));
}

#[test]
fn plot_of_a_foreign_csv_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.csv");
    std::fs::write(&f, "a,b\n1,2\n").unwrap();
    bwsim()
        .arg("plot")
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the first column must be 'scenario'",
        ));
    bwsim()
        .args(["plot", "no/such/sweep.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
}

#[test]
fn run_writes_trace_timeline_log_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    bwsim()
        .args([
            "run",
            "scenarios/demo.toml",
            "--set",
            "arrivals.jobs=10",
            "--format",
            "json",
        ])
        .arg("--trace")
        .arg(d.join("trace.json"))
        .arg("--timeline-log")
        .arg(d.join("timeline.log"))
        .arg("--plot")
        .arg(d.join("plots"))
        .assert()
        .success()
        .stdout(predicate::str::contains("\"jobs_per_hour\""));
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("trace.json")).unwrap()).unwrap();
    assert!(
        trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["ph"] == "X")
    );
    let log = std::fs::read_to_string(d.join("timeline.log")).unwrap();
    // cuzk's format: its GPU worker start-up lines, then the TIMELINE records.
    assert!(log.lines().next().unwrap().contains("GPU worker started"));
    assert!(log.lines().any(|l| l.starts_with("TIMELINE,")));
    assert!(d.join("plots/timeline.png").is_file());
}

/// A point whose closed loop starts most measured jobs at once (demo: 200 jobs at 1,000
/// in flight) is named in a warning: its throughput is one batch draining. The sweep
/// still succeeds, and the steady point gets no warning.
#[test]
fn sweep_warns_of_points_without_a_steady_state() {
    let dir = tempfile::tempdir().unwrap();
    bwsim()
        .args(["sweep", "scenarios/demo.toml", "--param"])
        .args(["params.concurrency=4,1000", "--replications", "1", "--out"])
        .arg(dir.path().join("sw"))
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "warning: sweep point 2 (params.concurrency=1000): no steady state",
        ))
        .stderr(predicate::str::contains("sweep point 1").not());
}
