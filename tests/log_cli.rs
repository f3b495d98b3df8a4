//! `bwsim log`: on the cuzk-format log written by `bwsim run --timeline-log` it reproduces
//! the run's bracketed GPU utilisation; hand-made broken logs are reported, never fatal.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("binary builds")
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("JSON on stdout")
}

fn log_json(files: &[&std::path::Path], extra: &[&str]) -> Value {
    let out = bwsim()
        .arg("log")
        .args(files)
        .args(["--format", "json"])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    json_of(&out)
}

/// Every bundled scenario and shape on 1 to 4 GPUs: the log `bwsim run --timeline-log`
/// writes, in cuzk's format, read back with the run's warm-up, gives the run's bracketed
/// GPU busy within 0.01 (the log's offsets are whole milliseconds) and its jobs, with no
/// line garbled or doubted. (The demo on 3 GPUs read 0.518 where the run said 0.269: the
/// run put every bracket opened before its partition was bound on GPU 0.)
#[test]
fn log_of_a_simulated_run_reproduces_its_bracketed_gpu_busy() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let toml_in = |sub: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(root.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        v.sort();
        v
    };
    let mut scenarios = toml_in("scenarios");
    assert!(scenarios.len() >= 7, "{scenarios:?}");
    scenarios.extend(toml_in("scenarios/shapes"));
    for scenario in &scenarios {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        for gpus in 1..=4 {
            let log = dir.path().join("run.log");
            let at = format!("{name} on {gpus} GPU(s)");
            let run = bwsim()
                .arg("run")
                .arg(scenario)
                .args(["--set", &format!("hardware.gpu.count={gpus}")])
                .args(["--no-ideal", "--no-what-if", "--replications", "1"])
                .args(["--format", "json", "--timeline-log"])
                .arg(&log)
                .output()
                .unwrap();
            assert!(
                run.status.success(),
                "{at}: {}",
                String::from_utf8_lossy(&run.stderr)
            );
            let run = json_of(&run.stdout);
            let want = run["gpu"]["bracketed_busy_frac"].as_f64().unwrap();
            let warmup = run["warmup_jobs"].as_u64().unwrap().to_string();
            let got = log_json(&[&log], &["--warmup-jobs", &warmup]);
            let bracketed = got["gpu"]["bracketed_busy_frac"].as_f64().unwrap();
            assert!(
                (bracketed - want).abs() <= 0.01,
                "{at}: log says {bracketed}, run says {want}"
            );
            assert_eq!(got["input"]["garbled_lines"], 0, "{at}");
            assert_eq!(got["input"]["warning_lines"], 0, "{at}");
            assert_eq!(got["jobs"], run["jobs_completed"], "{at}");
            if want > 0.0 {
                assert_eq!(got["gpu"]["count"], gpus, "{at}: every GPU, idle ones too");
            }
        }
    }
}

#[test]
fn hand_made_edge_case_logs_are_counted_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    // Garbled lines, CRLF, ordinary daemon output, an unmatched END and START, an
    // out-of-order offset, a timer that does not parse and a partial last line.
    let messy = write(
        "messy.log",
        "2026-01-01T00:00:00Z INFO cuzk starting\r\n\
         TIMELINE,0,SYNTH_START,porep-1-1,partition=0\r\n\
         TIMELINE,not-a-time,SYNTH_END,porep-1-1,partition=0\r\n\
         TIMELINE,5,GPU_END,porep-1-9,worker=0,partition=0,gpu_ms=5\r\n\
         TIMELINE,40,SYNTH_END,porep-1-1,partition=0,synth_ms=40\r\n\
         TIMELINE,40,GPU_START,porep-1-1,worker=0,partition=0\r\n\
         TIMELINE,30,CHAN_SEND,porep-1-1,partition=0\r\n\
         CUZK_TIMING: gpu_tid=0 tail_msm_ms=oops gpu_total_ms=20\r\n\
         TIMELINE,60,GPU_END,porep-1-1,worker=0,partition=0,gpu_ms=20\r\n\
         TIMELINE,70,GPU_START,porep-1-2,worker=1,partition=0\r\n\
         TIMELINE,100,SYNTH_START,porep-1-2,partit",
    );
    let j = log_json(&[&messy], &[]);
    assert_eq!(j["input"]["garbled_lines"], 1, "{j:#}");
    assert_eq!(j["input"]["warning_lines"], 1, "{j:#}");
    assert_eq!(j["input"]["other_lines"], 1);
    assert_eq!(j["input"]["out_of_order_records"], 1);
    assert_eq!(
        j["input"]["unterminated_files"][0],
        messy.display().to_string()
    );
    let gpu_stage = j["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "GPU")
        .unwrap();
    assert_eq!(gpu_stage["unmatched_starts"], 1);
    assert_eq!(gpu_stage["unmatched_ends"], 1);
    // Brackets 40..60 and 70..100 (open to the end) of a 100 ms window.
    let busy = j["gpu"]["bracketed_busy_frac"].as_f64().unwrap();
    assert!((busy - 0.5).abs() < 1e-9, "{busy}");
    assert_eq!(j["gpu"]["gap_ms"]["mean"], 10.0);
    assert_eq!(j["timers"]["gpu_total_ms"]["count"], 1);
    assert!(j["timers"]["tail_msm_ms"].is_null()); // its value did not parse

    // The text report names the garbled lines with file and line number.
    bwsim()
        .arg("log")
        .arg(&messy)
        .assert()
        .success()
        .stdout(predicate::str::contains("messy.log:3: offset 'not-a-time'"))
        .stdout(predicate::str::contains(
            "messy.log:8: timer tail_msm_ms='oops' is not a number",
        ))
        .stdout(predicate::str::contains("last line has no newline"));

    // An empty file is a valid, empty log.
    let empty = write("empty.log", "");
    let j = log_json(&[&empty], &[]);
    assert_eq!(j["jobs"], 0);
    assert_eq!(j["gpu"]["bracketed_busy_frac"], 0.0);

    // A file with no record in it still gets its (empty) report, with a warning that
    // names it: a scenario file passed by mistake is not an idle GPU.
    let not_a_log = write(
        "not-a-log.toml",
        "name = \"x\"\n[hardware]\ncpu_cores = 4\n",
    );
    bwsim()
        .arg("log")
        .arg(&not_a_log)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "read 3 lines: 0 TIMELINE, 0 timing, 3 other",
        ))
        .stderr(predicate::str::contains(format!(
            "warning: {}: no TIMELINE or *_TIMING line among 3 lines read",
            not_a_log.display()
        )));
    // A log with records gets no such warning.
    bwsim()
        .arg("log")
        .arg(&messy)
        .assert()
        .success()
        .stderr(predicate::str::contains("no TIMELINE").not());

    // A missing file is an input error naming it.
    bwsim()
        .args(["log", "no/such.log"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such.log: cannot read"));
}
