//! The GPU bracket breakdown (issue 25): the parts of the bracketed time add up to it on
//! every bundled scenario, and on the cuzk flagship each part is what the stages on the
//! GPU's thread took.

use std::path::Path;

use bwsim::analysis::gap::GapPart;
use bwsim::analysis::report::Report;
use bwsim::run::run_model;
use bwsim::scenario;

fn run(path: &Path) -> (Report, usize) {
    let loaded = scenario::load(path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let gpus = loaded.model.hardware.gpus.len().max(1);
    (run_model(&loaded.model).expect("runs"), gpus)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn bundled_scenarios() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenarios/ lists")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5, "bundled scenarios: {paths:?}");
    paths
}

#[test]
fn the_parts_add_up_to_the_bracketed_time_on_every_bundled_scenario() {
    for path in bundled_scenarios() {
        let name = path.display();
        let (r, gpus) = run(&path);
        let b = &r.gpu_breakdown;
        let parts: f64 = GapPart::ALL.iter().map(|&p| b.seconds(p)).sum();
        assert!(
            close(parts, b.bracket_s),
            "{name}: parts {parts} vs {}",
            b.bracket_s
        );
        for part in GapPart::ALL {
            assert!(
                b.seconds(part) >= 0.0,
                "{name}: {part:?} {}",
                b.seconds(part)
            );
        }
        // The metrics sum the same brackets on their own, as the spans close.
        let per_job = b.bracket_s / r.jobs_measured as f64 / gpus as f64;
        if b.brackets > 0 {
            assert!(
                close(per_job, r.gpu_bracketed_seconds_per_job),
                "{name}: breakdown {per_job} s/job vs spans {} s/job",
                r.gpu_bracketed_seconds_per_job
            );
            let shares: f64 = GapPart::ALL.iter().map(|&p| b.share(p)).sum();
            assert!(close(shares, 1.0), "{name}: shares add to {shares}");
            let per_job_parts: f64 = GapPart::ALL.iter().map(|&p| r.per_job_s(p)).sum();
            assert!(
                close(per_job_parts, r.gpu_bracketed_seconds_per_job),
                "{name}"
            );
            assert!(r.gap_verdict().is_some(), "{name}: no verdict");
        } else {
            assert_eq!(r.gap_verdict(), None, "{name}");
        }
    }
}

#[test]
fn the_flagship_breakdown_is_what_the_gpu_thread_spent_its_bracket_on() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/c2-32g-cuzk.toml");
    let (r, _) = run(&path);
    let stage = |n: &str| r.stages.iter().find(|s| s.name == n).expect(n);
    let mean = |n: &str| stage(n).mean_s;
    // Inside GPU_START..GPU_END the GPU thread runs these one after another, except the
    // NTTs, which run while a/b/c upload: a moment that is both counts as a transfer.
    let tol = 1e-6;
    let after_upload = mean("h_msm") + mean("batch_add") + mean("tail_msm");
    let kernels = r.per_bracket_s(GapPart::Kernels);
    assert!(
        (after_upload - tol..=after_upload + mean("ntt") + tol).contains(&kernels),
        "kernels {kernels} vs {after_upload} + NTTs {}",
        mean("ntt")
    );
    assert!((r.per_bracket_s(GapPart::Transfers) - mean("upload_abc")).abs() < tol);
    // Host work on the call's thread: pinning a/b/c, the pre-stage, unpinning, the epilogue.
    let host = mean("pin_abc") + mean("gpu_setup") + mean("unpin_abc") + mean("finalize");
    assert!(
        (r.per_bracket_s(GapPart::Setup) - host).abs() < tol,
        "setup {} vs {host}",
        r.per_bracket_s(GapPart::Setup)
    );
    // The mutex is the only lock the call waits for; with the seed's one worker per GPU
    // no one else holds it (VRAM never runs short here).
    let mutex_wait: f64 = ["pin_abc", "gpu_setup", "unpin_abc"]
        .iter()
        .map(|n| stage(n).mean_wait_s)
        .sum();
    assert!((r.per_bracket_s(GapPart::LockWait) - mutex_wait).abs() < tol);
    assert!(mutex_wait < tol, "one worker waits on no one: {mutex_wait}");
    assert!(
        r.per_bracket_s(GapPart::BarrierWait) > 0.1,
        "prep_msm outlasts the NTTs and the H MSM under load"
    );
    assert!(r.per_bracket_s(GapPart::Other).abs() < tol);
    // cuzk's Phase 9: pinning and unpinning 12.5 GB of a/b/c outweigh the kernels.
    assert_eq!(r.gpu_breakdown.main_gap(), Some(GapPart::Setup));
    let verdict = r.gap_verdict().expect("brackets closed");
    assert!(verdict.contains("mostly setup"), "{verdict}");
    let text = r.to_text();
    assert!(
        !text.contains("brackets of concurrent workers overlap"),
        "{text}"
    );
    assert!(!text.contains("brackets sum to"), "{text}");
    let json = r.to_json();
    let share = json["gpu"]["breakdown"]["setup_share"]
        .as_f64()
        .expect("share");
    assert!((share - r.gpu_breakdown.share(GapPart::Setup)).abs() < 1e-8);
}

/// A simulated run's TIMELINE log read back by `bwsim log` gives the breakdown the run
/// reported: the timers (CUZK_TIMING lines) carry the same waits and kernels (this
/// scenario's `ntt_msm_h_ms` starts after the a/b/c upload, so no transfer is in them).
/// The log's window starts at the first record where the run's skips the warm-up, so the
/// means differ a little.
#[test]
fn the_log_of_a_run_reads_back_the_runs_breakdown() {
    use assert_cmd::Command;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("timeline.log");
    let run = Command::cargo_bin("bwsim")
        .unwrap()
        .args(["run", "scenarios/c2-mini-h200.toml", "--replications", "1"])
        .args(["--no-what-if", "--format", "json", "--timeline-log"])
        .arg(&log)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let run: serde_json::Value = serde_json::from_slice(&run).unwrap();
    let read = Command::cargo_bin("bwsim")
        .unwrap()
        .arg("log")
        .arg(&log)
        .args(["--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let read: serde_json::Value = serde_json::from_slice(&read).unwrap();
    let simulated = |k: &str| run["gpu"]["breakdown"][k].as_f64().unwrap();
    let logged = |p: &str| {
        read["gpu"]["breakdown"]["parts"][p]["per_bracket_s"]
            .as_f64()
            .unwrap()
    };
    let near = |what: &str, a: f64, b: f64| {
        assert!((a / b - 1.0).abs() < 0.05, "{what}: log {a} s, run {b} s");
    };
    near(
        "GPU-lock wait",
        logged("lock_wait"),
        simulated("lock_wait_s"),
    );
    near("kernels", logged("kernels"), simulated("kernels_s"));
}
