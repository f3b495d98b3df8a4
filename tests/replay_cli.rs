//! The real binary: `bwsim replay` plans, refuses what does not fit or needs a GPU it
//! cannot have, and replays a CPU-only scenario close to its simulation.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::json;

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("binary builds")
}

/// A CPU-only pipeline: a compute stage behind a mutex, then a short DRAM-streaming
/// stage, both holding the host's one core, so only one thread runs at a time (a
/// loaded CI box cannot skew the comparison by starving a second core). Throughput is
/// set by the core: 0.08 s per job at any concurrency; jobs queue FIFO on the holds.
const CPU_ONLY: &str = r#"
name = "cpu-only"
seed = 3
[params]
concurrency = { default = 2, doc = "jobs in flight" }
[hardware]
cpu_cores = 1
host_ram_gib = 4
dram = { capacity_gbps = 20 }
[hardware.locks]
one = 1
[[workload.stages]]
name = "locked"
duration_s = 0.06
cores = 1
holds = [{ resource = "one" }, { resource = "host_ram", gib = 0.01, until = "tail" }]
[[workload.stages]]
name = "tail"
after = ["locked"]
duration_s = 0.02
cores = 1
dram_gb = 0.02
latency_bound_frac = 0.3
[arrivals]
kind = "closed"
concurrency = "$concurrency"
jobs = 14
warmup_jobs = 2
[[instrumentation.markers]]
name = "LOCKED_START"
at = "locked:start"
[[instrumentation.markers]]
name = "DONE"
at = "tail:end"
"#;

fn write_scenario(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn dry_run_prints_the_plan_and_memory_per_point() {
    bwsim()
        .args([
            "replay",
            "scenarios/c2-mini-h200.toml",
            "--param",
            "params.proofs_in_flight=1,4,12",
            "--dry-run",
            "--host-ram-gib",
            "128",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("replay plan: c2-mini-h200"))
        .stdout(predicate::str::contains("gpu kernel msm:24"))
        .stdout(predicate::str::contains("h2d 1.61 GB pinned"))
        .stdout(
            predicate::str::is_match(
                r"h_msm +[0-9.]+ s  gpu kernel msm:24 reading its points from pinned host memory\n",
            )
            .unwrap(),
        )
        .stdout(predicate::str::contains("params.proofs_in_flight=12"))
        .stdout(predicate::str::contains("expected wall time per run"))
        .stdout(predicate::str::contains("this host: can"));
}

/// A dry run says whether this host can replay the plan: a CPU-only plan can anywhere;
/// GPU stages without a GPU harness (a build without the `cuda` feature) cannot, and it
/// says why, with exit 0 (a dry run plans, it does not refuse).
#[test]
fn dry_run_says_whether_this_host_can_run_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), CPU_ONLY);
    bwsim()
        .arg("replay")
        .arg(&scenario)
        .arg("--dry-run")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "this host: can run it (no GPU stages)",
        ));
    if cfg!(not(feature = "cuda")) {
        bwsim()
            .args(["replay", "scenarios/c2-mini-h200.toml", "--dry-run"])
            .args(["--host-ram-gib", "128"])
            .assert()
            .success()
            .stdout(predicate::str::contains(
                "this host: cannot run it: GPU stages",
            ))
            .stdout(predicate::str::contains("without the `cuda` feature"));
    }
}

#[test]
fn a_point_that_does_not_fit_is_refused_with_exit_2() {
    bwsim()
        .args([
            "replay",
            "scenarios/c2-mini-h200.toml",
            "--param",
            "params.proofs_in_flight=1,12",
            "--dry-run",
            "--host-ram-gib",
            "4",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "point params.proofs_in_flight=1 needs",
        ))
        .stderr(predicate::str::contains("GiB of host RAM"));
}

#[test]
fn a_bad_param_spec_is_exit_2() {
    bwsim()
        .args([
            "replay",
            "scenarios/c2-mini-h200.toml",
            "--param",
            "params.proofs_in_flight=1..",
            "--dry-run",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid SPEC"));
}

#[cfg(not(feature = "cuda"))]
#[test]
fn gpu_stages_without_a_gpu_say_so_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    bwsim()
        .args([
            "replay",
            "scenarios/c2-mini-h200.toml",
            "--host-ram-gib",
            "128",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("has GPU stages"))
        .stderr(predicate::str::contains("h_msm"))
        .stderr(predicate::str::contains("without the `cuda` feature"))
        .stderr(predicate::str::contains("panicked").not());
}

#[test]
fn a_cpu_only_replay_matches_its_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), CPU_ONLY);
    let out = dir.path().join("out");
    bwsim()
        .arg("replay")
        .arg(&scenario)
        .args([
            "--param",
            "params.concurrency=1,2",
            "--small-buffers",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("median |error|"));
    for f in [
        "replay.csv",
        "replay.json",
        "replay.png",
        "replay.svg",
        "timeline-p0-r0.log",
        "timeline-p1-r0.log",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let log = std::fs::read_to_string(out.join("timeline-p1-r0.log")).unwrap();
    assert!(log.starts_with("TIMELINE,"), "{log}");
    assert!(log.contains(",LOCKED_START,") && log.contains(",DONE,"));
    // Every job ran its DAG in order: its locked stage started before its tail ended.
    // (How close the measured times come to the prediction is a wall-clock matter for
    // the device runs in runs/accuracy, not for a test on a shared CI machine.)
    let mut started = std::collections::BTreeMap::new();
    let mut done = 0;
    for line in log.lines().filter(|l| l.starts_with("TIMELINE,")) {
        let f: Vec<&str> = line.splitn(5, ',').collect();
        let (ms, event, job) = (f[1].parse::<f64>().unwrap(), f[2], f[3].to_string());
        match event {
            "LOCKED_START" => {
                started.insert(job, ms);
            }
            "DONE" => {
                let at = started
                    .get(&job)
                    .unwrap_or_else(|| panic!("{job} done, never started"));
                assert!(*at <= ms, "{job}: DONE at {ms} before LOCKED_START at {at}");
                done += 1;
            }
            _ => {}
        }
    }
    assert_eq!(done, 14, "{log}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("replay.json")).unwrap()).unwrap();
    for p in doc["points"].as_array().unwrap() {
        let m = p["measured"]["seconds_per_job"].as_f64().unwrap();
        let pr = p["predicted"]["seconds_per_job"].as_f64().unwrap();
        assert!(m > 0.0 && m.is_finite() && pr > 0.0, "{p}");
        // Each run carries its look at the host's memory just before it.
        for run in p["measured"]["runs"].as_array().unwrap() {
            let now = &run["host_before"];
            for key in ["chase_ns_per_step", "stream_gbps_one_thread"] {
                let v = now[key].as_f64().unwrap_or(f64::NAN);
                assert!(v > 0.0 && v.is_finite(), "{key}: {run}");
            }
        }
    }
}

#[test]
fn repredict_sets_the_current_model_beside_a_committed_replay() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("re");
    bwsim()
        .args(["replay", "scenarios/c2-mini-h200.toml", "--repredict"])
        .arg("tests/fixtures/runs/replay/h200-run2")
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("recorded").and(predicate::str::contains("re-predicted")))
        .stderr(predicate::str::contains("records no `--set` overrides"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("replay.json")).unwrap()).unwrap();
    let old: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string("tests/fixtures/runs/replay/h200-run2/replay.json").unwrap(),
    )
    .unwrap();
    let (pts, old_pts) = (
        doc["points"].as_array().unwrap(),
        old["points"].as_array().unwrap(),
    );
    assert_eq!(pts.len(), old_pts.len());
    for (p, o) in pts.iter().zip(old_pts) {
        // The measured side is carried over as measured; the predicted side is simulated.
        assert_eq!(p["measured"]["runs"], o["measured"]["runs"]);
        assert_eq!(p["sets"], o["sets"]);
        let s = p["predicted"]["seconds_per_job"].as_f64().unwrap();
        assert!(s > 0.5 && s < 5.0, "{s}");
        assert!(p["predicted"]["gpu_sampled_busy_frac"].as_f64().is_some());
    }
    assert!(out.join("replay.csv").exists());
}

/// A replay's `--set` overrides are not in its points' `sets` (those hold the swept key
/// alone): replay.json lists them, and a re-prediction with no `--set` applies them, so
/// it simulates the experiment that ran; a `--set` given to it applies after them. The
/// files read are fingerprinted, and a re-prediction of other files says so.
#[test]
fn repredict_simulates_the_overrides_the_replay_ran_with() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), CPU_ONLY);
    let replay = dir.path().join("replay");
    bwsim()
        .arg("replay")
        .arg(&scenario)
        .args(["--param", "params.concurrency=2", "--small-buffers"])
        .args(["--set", "hardware.cpu_cores=2", "--out"])
        .arg(&replay)
        .assert()
        .success();
    // Re-predicts the replay with `args` into dir/`name`; its replay.json and stderr.
    let repredict = |args: &[&str], name: &str| -> (serde_json::Value, String) {
        let out = dir.path().join(name);
        let o = bwsim()
            .arg("replay")
            .arg(&scenario)
            .arg("--repredict")
            .arg(&replay)
            .args(args)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&o.get_output().stderr).into_owned();
        let json = std::fs::read_to_string(out.join("replay.json")).unwrap();
        (serde_json::from_str(&json).unwrap(), stderr)
    };
    let predicted = |doc: &serde_json::Value| {
        doc["points"][0]["predicted"]["seconds_per_job"]
            .as_f64()
            .unwrap()
    };
    let ran: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(replay.join("replay.json")).unwrap())
            .unwrap();
    assert_eq!(ran["overrides"], json!(["hardware.cpu_cores=2"]));
    assert_eq!(ran["points"][0]["sets"], json!(["params.concurrency=2"]));
    let fingerprint = ran["inputs_fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fingerprint.len(), 16, "{ran}");

    let (same, stderr) = repredict(&[], "same");
    assert!(
        !stderr.contains("records no") && !stderr.contains("read differently"),
        "{stderr}"
    );
    assert_eq!(predicted(&same), predicted(&ran));
    assert_eq!(same["inputs_fingerprint"], ran["inputs_fingerprint"]);

    // One core for two jobs: the locked stage and the other job's tail share it, so the
    // re-prediction under the user's --set is slower than the replay's own.
    let (one_core, _) = repredict(&["--set", "hardware.cpu_cores=1"], "one-core");
    assert_eq!(
        one_core["overrides"],
        json!(["hardware.cpu_cores=2", "hardware.cpu_cores=1"])
    );
    assert!(predicted(&one_core) > predicted(&ran) * 1.1, "{one_core}");

    // A calibration file is one of the inputs. It describes the host: replay.json
    // records it with each host key it lacks and the typical value that key took, and
    // the re-prediction says so.
    assert!(same.get("calibration").is_none(), "{same}");
    let cal = dir.path().join("cal.toml");
    std::fs::write(
        &cal,
        "[hardware]\ncpu_cores = 2\n[hardware.dram]\ncapacity_gbps = 100\n\
         latency_curve = [[0.0, 100.0], [1.0, 200.0]]\n",
    )
    .unwrap();
    let (with_cal, stderr) = repredict(&["--calibration", cal.to_str().unwrap()], "with-cal");
    assert!(stderr.contains("read differently"), "{stderr}");
    assert!(
        stderr.contains("cal.toml lacks") && stderr.contains("hardware.dram.latency_load = "),
        "{stderr}"
    );
    let recorded = &with_cal["calibration"];
    assert!(
        recorded["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("cal.toml")),
        "{recorded}"
    );
    let missing = recorded["missing"].as_array().unwrap();
    assert!(
        missing
            .iter()
            .any(|m| m["key"] == "hardware.dram.lines_in_flight_per_thread"
                && m["took"].as_str().is_some_and(|t| t.starts_with("24"))),
        "{recorded}"
    );
    let f = &with_cal["inputs_fingerprint"];
    assert!(
        f.as_str()
            .is_some_and(|f| f.len() == 16 && f != fingerprint),
        "{f}"
    );

    // The scenario edited since the replay: said, with both fingerprints.
    std::fs::write(&scenario, format!("{CPU_ONLY}# edited\n")).unwrap();
    let (_, stderr) = repredict(&[], "edited");
    assert!(stderr.contains(&format!("{fingerprint} then")), "{stderr}");
}

#[test]
fn repredict_refuses_a_folder_without_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    bwsim()
        .args(["replay", "scenarios/c2-mini-h200.toml", "--repredict"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("replay.json"));
}

/// A replay runs in real time: the M/M/1 oracle's jobs would take ~70 hours, so it is
/// refused before anything runs unless --max-hours allows it.
#[test]
fn a_replay_longer_than_max_hours_is_refused() {
    bwsim()
        .args(["replay", "scenarios/oracles/mm1.toml", "--dry-run"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the replay would take about 69.5 h",
        ))
        .stderr(predicate::str::contains("--max-hours"));
    bwsim()
        .args(["replay", "scenarios/oracles/mm1.toml", "--dry-run"])
        .args(["--max-hours", "100"])
        .assert()
        .success();
    bwsim()
        .args(["replay", "scenarios/oracles/mm1.toml", "--max-hours", "nan"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--max-hours: NaN is not a number > 0",
        ));
}
