//! `bwsim log` on logs written from the real format strings of Curio's cuzk engine and
//! SupraSeal C2 (tests/fixtures/cuzk-logs/, each fixture's header names the source file and
//! line of every format it uses): string job ids, comma-separated details, workers
//! mapped to GPUs, SupraSeal's timing lines attributed to their GPU bracket, logger,
//! journald and ANSI prefixes, CRLF, interleaved daemon output and equal timestamps
//! logged in either order. Expected figures are worked out by hand in the comments.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn log_json(fixture: &str, extra: &[&str]) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cuzk-logs")
        .join(fixture);
    let out = Command::cargo_bin("bwsim")
        .unwrap()
        .arg("log")
        .arg(path)
        .args(["--format", "json"])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

fn close(got: &Value, want: f64) {
    let g = got.as_f64().unwrap_or(f64::NAN);
    assert!((g - want).abs() < 1e-9, "got {g}, want {want}");
}

fn stage<'a>(j: &'a Value, name: &str) -> &'a Value {
    j["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap()
}

#[test]
fn one_gpu_porep_stderr_with_ansi_tracing_lines() {
    let j = log_json("porep-1gpu-stderr.log", &[]);
    let input = &j["input"];
    assert_eq!(input["garbled_lines"], 0, "{input:#}");
    assert_eq!(input["warning_lines"], 0, "{input:#}");
    assert_eq!(input["timeline_records"], 24);
    // 4 partitions x 9 timing lines with timers; 2 notes in prose, no timer.
    assert_eq!(input["timing_records"], 36);
    assert_eq!(input["timing_notes"], 2);
    assert_eq!(input["unattributed_timing_records"], 0);
    assert_eq!(j["jobs"], 2);
    // Window: first record 1000 ms to last 39700 ms.
    close(&j["window"]["start_ms"], 1000.0);
    close(&j["window"]["end_ms"], 39700.0);
    // Brackets 31000-33900, 32000-35800, 33900-36700, 36900-39700 on GPU 0: busy
    // 31000-36700 and 36900-39700, 8500 ms of 38700; one 200 ms gap.
    assert_eq!(j["gpu"]["count"], 1);
    assert_eq!(j["gpu"]["workers_per_gpu"], 2);
    close(&j["gpu"]["bracketed_busy_frac"], 8500.0 / 38700.0);
    close(&j["gpu"]["gap_ms"]["mean"], 200.0);
    // gpu_ms intervals end at each GPU_END: 31010-36700 and 36910-39700, 8480 ms.
    close(&j["gpu"]["engine_busy_frac"], 8480.0 / 38700.0);
    // Each bracket's pre_lock line (waits 0, 1850, 1750, 0) is read; which bracket each
    // goes to is checked in the analysis' unit tests on this fixture.
    let waits = &j["timers"]["mutex_wait_ms"];
    assert_eq!(
        (waits["count"].as_u64(), waits["max"].as_f64()),
        (Some(4), Some(1850.0))
    );
    let gpu = stage(&j, "GPU");
    assert_eq!(gpu["duration_ms"]["count"], 4);
    assert_eq!(gpu["max_in_flight"], 2);
    assert_eq!(stage(&j, "SYNTH")["max_in_flight"], 4);
    assert_eq!(j["jobs_in_flight"]["max"], 2);
}

#[test]
fn two_gpus_post_and_porep_through_journald_with_crlf() {
    let j = log_json("mixed-2gpu-journald-crlf.log", &[]);
    let input = &j["input"];
    assert_eq!(input["garbled_lines"], 0, "{input:#}");
    assert_eq!(input["warning_lines"], 0, "{input:#}");
    assert_eq!(input["timeline_records"], 30);
    // PoRep, WindowPoSt (its id has spaces and brackets), WinningPoSt, a UUID.
    assert_eq!(j["jobs"], 4);
    // Window 1000-15000 ms. Workers 0,1 on GPU 0, 2,3 on GPU 1 (cuzk's default 2):
    // GPU 0 busy 10000-12800 and 13000-13400 (3200 ms), GPU 1 9000-15000 (6000 ms).
    assert_eq!(j["gpu"]["count"], 2);
    assert!(
        j["gpu"]["workers_from"]
            .as_str()
            .unwrap()
            .contains("default")
    );
    close(
        &j["gpu"]["per_gpu"][0]["bracketed_busy_frac"],
        3200.0 / 14000.0,
    );
    close(
        &j["gpu"]["per_gpu"][1]["bracketed_busy_frac"],
        6000.0 / 14000.0,
    );
    close(&j["gpu"]["bracketed_busy_frac"], 4600.0 / 14000.0);
    // Worker 2 handed from P1 to U at 12900 (U's START logged first): no gap, no
    // unmatched record, never more than 3 GPU brackets at once (10000-10500).
    let gpu = stage(&j, "GPU");
    assert_eq!(
        (
            gpu["unmatched_starts"].as_u64(),
            gpu["unmatched_ends"].as_u64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(gpu["max_in_flight"], 3);
    assert_eq!(j["gpu"]["gap_ms"]["count"], 1);
    close(&j["gpu"]["gap_ms"]["mean"], 200.0);
    assert_eq!(j["jobs_in_flight"]["max"], 3);

    // Four workers per GPU (a flag): all four workers are GPU 0's, busy 9000-15000.
    let four = log_json(
        "mixed-2gpu-journald-crlf.log",
        &["--gpu-workers-per-device", "4"],
    );
    assert_eq!(four["gpu"]["count"], 1);
    close(&four["gpu"]["bracketed_busy_frac"], 6000.0 / 14000.0);
}

#[test]
fn the_order_of_equal_timestamp_records_changes_nothing() {
    // The mixed fixture with the records at each instant reversed.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cuzk-logs/mixed-2gpu-journald-crlf.log");
    let text = std::fs::read_to_string(&path).unwrap();
    let offset =
        |l: &str| -> Option<u64> { l.split("TIMELINE,").nth(1)?.split(',').next()?.parse().ok() };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = offset(lines[i]);
        let mut k = i + 1;
        while t.is_some() && k < lines.len() && offset(lines[k]) == t {
            k += 1;
        }
        out.extend(lines[i..k].iter().rev());
        i = k;
    }
    assert_ne!(
        out.concat(),
        text,
        "the fixture has equal-timestamp records"
    );
    let dir = tempfile::tempdir().unwrap();
    let reversed = dir.path().join("reversed.log");
    std::fs::write(&reversed, out.concat()).unwrap();
    let a = log_json("mixed-2gpu-journald-crlf.log", &[]);
    let b = log_json(reversed.to_str().unwrap(), &[]);
    for key in ["gpu", "jobs_in_flight", "window", "timers"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    // Stages are listed in first-seen order; their figures are the same.
    let by_name = |j: &Value| {
        let mut v = j["stages"].as_array().unwrap().clone();
        v.sort_by_key(|s| s["name"].as_str().unwrap().to_string());
        v
    };
    assert_eq!(by_name(&a), by_name(&b));
}

/// The GPU bracket breakdown from SupraSeal's timers: 4 brackets; their mutex waits are
/// 0, 1,850, 1,750 and 0 ms (0.9 s per bracket); each call runs 690 + 650 + 83 ms of
/// kernels, but B0 (33.9-36.7 s) has 50 + 1,750 + 6 + 690 + 0 ms before its batch
/// addition, so its last 429 ms of kernels fall after its GPU_END and are clipped:
/// (3 x 1,423 + 994) / 4 = 1,315.75 ms of kernels per bracket.
#[test]
fn the_bracket_breakdown_reads_supraseals_timers() {
    let j = log_json("porep-1gpu-stderr.log", &[]);
    let b = &j["gpu"]["breakdown"];
    assert_eq!(b["brackets"], 4);
    close(&b["parts"]["lock_wait"]["per_bracket_s"], 0.9);
    close(&b["parts"]["kernels"]["per_bracket_s"], 1.31575);
    let shares: f64 = [
        "kernels",
        "transfers",
        "setup",
        "lock_wait",
        "barrier_wait",
        "other",
    ]
    .iter()
    .map(|p| b["parts"][p]["share"].as_f64().unwrap())
    .sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
}
