//! `bwsim calibrate` and `bwsim validate` through the binary: the tiny mode runs the host
//! probes in seconds (no GPU needed), writes a file a scenario can include, and bad input
//! gives a clear error, never a panic. GPU probes are exercised only with `--features
//! cuda` on a machine with a GPU (see docs/calibrate.md); here they are skipped with a
//! message.

use assert_cmd::Command;
use predicates::prelude::*;

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("the bwsim binary is built")
}

#[test]
fn tiny_calibration_is_includable_and_validates() {
    let dir = tempfile::tempdir().unwrap();
    let cal = dir.path().join("cal.toml");
    bwsim()
        .args(["calibrate", "--mode", "tiny", "--no-gpu", "--out"])
        .arg(&cal)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "skipped: GPU probes: skipped on request",
        ))
        .stdout(predicate::str::contains("write-allocate counted"));
    // A scenario includes it; the loader accepts the [calibration] table.
    let sc = dir.path().join("s.toml");
    std::fs::write(
        &sc,
        "include = [\"cal.toml\"]\n[[workload.stages]]\nname = \"s\"\nper_partition = false\n\
         duration_s = 1.0\ndram_gbps = \"$cpu_copy_thread_gbps\"\n\
         [arrivals]\nkind = \"closed\"\nconcurrency = 1\njobs = 2\n",
    )
    .unwrap();
    bwsim()
        .arg("check")
        .arg(&sc)
        .assert()
        .success()
        .stdout(predicate::str::contains("dram_idle_latency_ns"));
    bwsim()
        .args(["validate", "--mode", "tiny", "--no-gpu", "--calibration"])
        .arg(&cal)
        .arg("--out-dir")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("median |error|"));
    for f in [
        "validate.csv",
        "validate.json",
        "validate.md",
        "validate.png",
    ] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
}

#[test]
fn bad_calibration_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[hardware.dram]\ncapacity_gbps = 100.0\n").unwrap();
    bwsim()
        .args(["validate", "--mode", "tiny", "--no-gpu", "--calibration"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("latency_curve"))
        .stderr(predicate::str::contains("panicked").not());
    bwsim()
        .args(["validate", "--calibration", "/nonexistent/cal.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read /nonexistent/cal.toml",
        ));
    bwsim()
        .args(["calibrate", "--refit", "/nonexistent/m.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read"));
}

#[test]
fn calibrate_without_cuda_feature_says_why_gpu_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let out = bwsim()
        .args(["calibrate", "--mode", "tiny", "--out"])
        .arg(dir.path().join("c.toml"))
        .env_remove("BWSIM_GPU_PROBE")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // Either the feature is off, or it is on and there is no usable GPU here, or a GPU
    // ran: every case is reported plainly.
    assert!(
        text.contains("without the `cuda` feature")
            || text.contains("no usable CUDA GPU")
            || text.contains("skipped: nothing"),
        "{text}"
    );
}
