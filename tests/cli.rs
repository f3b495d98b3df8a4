//! The `bwsim` binary as a user meets it: real processes, real files, real exit codes.
//!
//! Library-level behaviour (the error table's every case, the solver, the engine) has its
//! own tests; these check that the command line reaches it and reports it faithfully:
//! the text and JSON reports, `--set`, `--seed`, `check`, bad input (exit 2, a message
//! naming file, key and problem, never a panic), a stalled run (exit 1), and the queueing
//! oracles run end to end through `bwsim run --format json`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Helpers

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("the bwsim binary is built")
}

fn scenario(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(rel)
}

fn demo() -> PathBuf {
    scenario("demo.toml")
}

/// Runs `bwsim run FILE --format json ARGS...`, asserts exit 0 and a clean stderr, and
/// parses stdout, which must be exactly one JSON object.
fn run_json(file: &Path, args: &[&str]) -> Value {
    let out = bwsim()
        .arg("run")
        .arg(file)
        .args(["--format", "json"])
        .args(args)
        .output()
        .expect("bwsim runs");
    let stdout = String::from_utf8(out.stdout).expect("utf-8 stdout");
    let stderr = String::from_utf8(out.stderr).expect("utf-8 stderr");
    assert_eq!(
        out.status.code(),
        Some(0),
        "bwsim run {} {args:?} failed:\n{stderr}",
        file.display()
    );
    assert!(stderr.is_empty(), "unexpected stderr: {stderr}");
    // `from_str` rejects trailing content, so this also proves there is one object only.
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}):\n{stdout}"));
    assert!(v.is_object(), "stdout is JSON but not an object: {stdout}");
    assert_eq!(stdout.trim_end().lines().count(), 1, "one line of JSON");
    v
}

/// The value at a dotted path (`stages.synth.mean_s`), which must exist.
fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| {
        v.get(k)
            .unwrap_or_else(|| panic!("JSON has no key {path:?} (missing {k:?})"))
    })
}

/// The number at a dotted path, which must be a finite number.
fn num(v: &Value, path: &str) -> f64 {
    let x = at(v, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {}", at(v, path)));
    assert!(x.is_finite(), "{path} = {x} is not finite");
    x
}

fn stage_names(v: &Value) -> Vec<String> {
    at(v, "stages")
        .as_object()
        .expect("stages is an object")
        .keys()
        .cloned()
        .collect()
}

/// The report without `engine.wall_s`, the one field that may differ between identical
/// runs.
fn without_wall_time(mut v: Value) -> Value {
    v["engine"]
        .as_object_mut()
        .expect("engine is an object")
        .remove("wall_s")
        .expect("engine.wall_s present");
    v
}

/// The keys issue #2 fixes, with values any report must have: fractions in [0, 1],
/// positive times, at least one event, stages never faster than standalone.
fn assert_required_keys(v: &Value) {
    let what = at(v, "scenario").as_str().unwrap_or("?").to_string();
    assert!(
        at(v, "jobs_completed").as_u64().expect("an integer") > 0,
        "{what}"
    );
    for k in ["sim_time_s", "seconds_per_job", "jobs_per_hour"] {
        assert!(num(v, k) > 0.0, "{what}: {k} = {}", num(v, k));
    }
    for k in [
        "gpu.true_busy_frac",
        "gpu.bracketed_busy_frac",
        "dram.mean_utilization",
    ] {
        let x = num(v, k);
        assert!((0.0..=1.0).contains(&x), "{what}: {k} = {x} outside [0, 1]");
    }
    for k in ["dram.peak_gbps", "ram.peak_gib", "vram.peak_gib"] {
        assert!(num(v, k) >= 0.0, "{what}: {k} = {}", num(v, k));
    }
    let names = stage_names(v);
    assert!(!names.is_empty(), "{what}: no stages");
    for s in &names {
        let mean = num(v, &format!("stages.{s}.mean_s"));
        let alone = num(v, &format!("stages.{s}.standalone_mean_s"));
        let inflation = num(v, &format!("stages.{s}.inflation"));
        let wait = num(v, &format!("stages.{s}.mean_wait_s"));
        assert!(
            mean >= 0.0 && alone >= 0.0 && wait >= 0.0,
            "{what}: stage {s}"
        );
        assert!(
            inflation >= 1.0 - 1e-6,
            "{what}: {s} faster than standalone"
        );
    }
    for k in ["bottleneck.resource", "bottleneck.reason"] {
        let x = at(v, k)
            .as_str()
            .unwrap_or_else(|| panic!("{what}: {k} not a string"));
        assert!(!x.is_empty(), "{what}: {k} empty");
    }
    assert!(
        at(v, "engine.events").as_u64().expect("an integer") > 0,
        "{what}"
    );
    assert!(num(v, "engine.wall_s") >= 0.0, "{what}");
}

const DEMO_STAGES: [&str; 5] = ["synth", "upload", "gpu", "cpu_msm", "finalize"];

// ---------------------------------------------------------------------------------------
// `bwsim run` on the demo

#[test]
fn run_demo_prints_the_text_report() {
    let out = bwsim().arg("run").arg(demo()).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(text.starts_with("scenario demo  (seed 1)\n"), "{text}");
    assert!(
        text.contains("jobs 200 completed, 180 measured after 20 warm-up"),
        "{text}"
    );

    let line = |prefix: &str| -> &str {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting {prefix:?} in\n{text}"))
    };
    // "throughput   0.0347 ± 0.0013 s/job   2494000 ± 93000 jobs/day   (mean response ...)"
    let tp: Vec<&str> = line("throughput").split_whitespace().collect();
    assert_eq!((tp[2], tp[4]), ("±", "s/job"), "{tp:?}");
    assert_eq!((tp[6], tp[8]), ("±", "jobs/day"), "{tp:?}");
    let field = |i: usize| -> f64 { tp[i].parse().unwrap() };
    let (s_per_job, s_ci, per_day, day_ci) = (field(1), field(3), field(5), field(7));
    assert!(s_per_job > 0.0 && s_ci > 0.0 && day_ci > 0.0);
    // Seeds differ by a few percent; the interval is that order, not the value's.
    assert!(s_ci < 0.2 * s_per_job, "{tp:?}");
    assert!(
        (per_day * s_per_job / 86400.0 - 1.0).abs() < 0.02,
        "{per_day} jobs/day vs {s_per_job} s/job"
    );
    assert!(
        text.contains("mean ± 95% interval over 5 replications (seeds 1 to 5)"),
        "{text}"
    );
    assert!(line("GPU").contains("true kernel duty"));
    assert!(line("GPU").contains("bracketed by markers"));
    assert!(line("DRAM").contains("GB/s"));
    assert!(line("memory").contains("host RAM peak"));

    // The stage table: a header, then one row per stage in topological order.
    let header = line("stage ");
    for col in ["count", "mean s", "alone s", "inflation", "wait s"] {
        assert!(header.contains(col), "header lacks {col:?}: {header}");
    }
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("stage "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, DEMO_STAGES, "{text}");
    for r in &rows {
        let cols: Vec<&str> = r.split_whitespace().collect();
        let count: u64 = cols[1].parse().unwrap();
        let expected = if cols[0] == "finalize" { 180 } else { 360 }; // 2 partitions
        assert_eq!(count, expected, "{r}");
        let inflation: f64 = cols[4].trim_end_matches('x').parse().unwrap();
        assert!(
            inflation >= 0.999,
            "a stage ran faster than standalone: {r}"
        );
    }

    let bottleneck = line("bottleneck");
    assert!(bottleneck.split_whitespace().count() >= 3, "{bottleneck}");
    assert!(line("engine").contains("events"));

    // The text agrees with the JSON report of the same run: the mean over replications,
    // printed to the interval's second significant digit.
    let v = run_json(&demo(), &[]);
    let mean = num(&v, "replications.seconds_per_job.mean");
    assert!((mean - s_per_job).abs() < 0.0001, "{mean} vs {s_per_job}");
    assert!((num(&v, "replications.seconds_per_job.ci95") - s_ci).abs() < 0.0001);
    // The bottleneck is the what-if step that buys most, said alike in both.
    let reason = at(&v, "bottleneck.reason").as_str().unwrap();
    assert_eq!(at(&v, "bottleneck.named_by"), "what_if_steps");
    assert!(
        bottleneck.ends_with(reason),
        "text {bottleneck:?} vs JSON {reason}"
    );
}

#[test]
fn one_replication_prints_the_single_runs_line() {
    let out = bwsim()
        .args(["run", "--replications", "1"])
        .arg(demo())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // "throughput   0.04036 s/job   2141000 jobs/day   (mean response 0.1613 s)": per
    // day, the one unit every report says, at four significant digits without an interval.
    let tp: Vec<&str> = (text.lines())
        .find(|l| l.starts_with("throughput"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!((tp[2], tp[4]), ("s/job", "jobs/day"), "{tp:?}");
    let (s_per_job, per_day): (f64, f64) = (tp[1].parse().unwrap(), tp[3].parse().unwrap());
    assert!(
        (per_day * s_per_job / 86400.0 - 1.0).abs() < 0.002,
        "{tp:?}"
    );
    assert!(!text.contains("replications"), "{text}");
}

#[test]
fn run_demo_json_has_every_required_key_with_sane_values() {
    let v = run_json(&demo(), &[]);
    assert_required_keys(&v);

    assert_eq!(at(&v, "jobs_completed").as_u64(), Some(200));
    let sim_time = num(&v, "sim_time_s");
    let spj = num(&v, "seconds_per_job");
    let jph = num(&v, "jobs_per_hour");
    assert!(sim_time > 0.0 && spj > 0.0 && jph > 0.0);
    assert!((jph * spj / 3600.0 - 1.0).abs() < 1e-6, "{jph} vs {spj}");
    // 200 jobs cannot finish faster than 200 x the time between completions suggests.
    assert!(
        sim_time >= 0.9 * 200.0 * spj,
        "{sim_time} s for 200 x {spj}"
    );

    let true_busy = num(&v, "gpu.true_busy_frac");
    let bracketed = num(&v, "gpu.bracketed_busy_frac");
    let dram_util = num(&v, "dram.mean_utilization");
    for (k, x) in [
        ("gpu.true_busy_frac", true_busy),
        ("gpu.bracketed_busy_frac", bracketed),
        ("dram.mean_utilization", dram_util),
    ] {
        assert!((0.0..=1.0).contains(&x), "{k} = {x} outside [0, 1]");
    }
    assert!(true_busy > 0.0 && dram_util > 0.0);
    // The demo's GPU span opens before the upload and closes after the kernel, so the
    // bracketed figure covers the kernel time and more: the design's headline effect.
    assert!(
        bracketed > true_busy,
        "bracketed {bracketed} <= true {true_busy}"
    );

    let peak = num(&v, "dram.peak_gbps");
    let cap = num(&v, "dram.capacity_gbps");
    assert!(
        (cap - 4.0 * 4800.0 * 8.0 / 1000.0 * 0.7).abs() < 1e-6,
        "{cap}"
    );
    assert!(
        peak > 0.0 && peak <= cap * (1.0 + 1e-9),
        "peak {peak} of {cap}"
    );
    assert!(dram_util * cap <= peak * (1.0 + 1e-9), "mean above peak");

    assert_eq!(stage_names(&v), DEMO_STAGES);
    for s in DEMO_STAGES {
        let mean = num(&v, &format!("stages.{s}.mean_s"));
        let alone = num(&v, &format!("stages.{s}.standalone_mean_s"));
        let inflation = num(&v, &format!("stages.{s}.inflation"));
        let wait = num(&v, &format!("stages.{s}.mean_wait_s"));
        assert!(mean > 0.0 && alone > 0.0, "{s}: {mean} / {alone}");
        assert!(wait >= 0.0, "{s}: wait {wait}");
        assert!(inflation >= 1.0 - 1e-6, "{s} faster than standalone");
        assert!((inflation - mean / alone).abs() < 1e-6, "{s}: inflation");
    }
    // Fixed standalone durations come back exactly; the GPU kernel runs alone under its
    // mutex, so it is not inflated; the pinned upload shares PCIe and is.
    assert!((num(&v, "stages.gpu.standalone_mean_s") - 0.015).abs() < 1e-9);
    assert!((num(&v, "stages.upload.standalone_mean_s") - 0.010).abs() < 1e-9);
    assert!((num(&v, "stages.finalize.standalone_mean_s") - 0.002).abs() < 1e-9);
    assert!((num(&v, "stages.gpu.inflation") - 1.0).abs() < 1e-6);
    // Contention is the point of the demo: the latency-bound MSM slows down.
    assert!(num(&v, "stages.cpu_msm.inflation") > 1.2);

    // Memory: each in-flight partition holds 2 GiB of RAM and 4 GiB of VRAM.
    let ram = num(&v, "ram.peak_gib");
    let vram = num(&v, "vram.peak_gib");
    assert!((2.0..=128.0).contains(&ram), "ram.peak_gib {ram}");
    assert_eq!(ram % 2.0, 0.0, "ram.peak_gib {ram} not a multiple of 2 GiB");
    assert!((4.0..=24.0).contains(&vram), "vram.peak_gib {vram}");

    let resource = at(&v, "bottleneck.resource").as_str().expect("a string");
    let reason = at(&v, "bottleneck.reason").as_str().expect("a string");
    assert!(!resource.is_empty() && !reason.is_empty());

    assert!(at(&v, "engine.events").as_u64().expect("an integer") > 0);
    assert!(num(&v, "engine.wall_s") > 0.0);
    assert_eq!(at(&v, "seed").as_u64(), Some(1));
}

#[test]
fn every_bundled_scenario_runs_and_reports_every_key() {
    let mut files = Vec::new();
    for dir in [scenario(""), scenario("oracles")] {
        for e in std::fs::read_dir(dir).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "toml"));
    for f in &files {
        // The oracles simulate 200,000 jobs by default; a few thousand show the keys.
        let is_oracle = f.parent().is_some_and(|p| p.ends_with("oracles"));
        let args: &[&str] = if is_oracle {
            &["--no-ideal", "--set", "arrivals.jobs=5000"]
        } else {
            &[]
        };
        let v = run_json(f, args);
        assert_required_keys(&v);
        assert!(
            at(&v, "notes")
                .as_array()
                .unwrap()
                .iter()
                .all(|n| !n.as_str().unwrap().starts_with("stalled")),
            "{}: {}",
            f.display(),
            at(&v, "notes")
        );
    }
}

// ---------------------------------------------------------------------------------------
// --set

#[test]
fn set_arrivals_jobs_changes_the_number_of_jobs() {
    let v = run_json(&demo(), &["--set", "arrivals.jobs=50"]);
    assert_eq!(at(&v, "jobs_completed").as_u64(), Some(50));
    // warmup_jobs = "10%" follows the new job count.
    assert_eq!(at(&v, "warmup_jobs").as_u64(), Some(5));
    assert_eq!(at(&v, "jobs_measured").as_u64(), Some(45));
}

#[test]
fn fewer_jobs_in_flight_use_less_dram_and_finish_fewer_jobs_per_hour() {
    let base = run_json(&demo(), &[]);
    let one = run_json(&demo(), &["--set", "params.concurrency=1"]);
    let (u4, u1) = (
        num(&base, "dram.mean_utilization"),
        num(&one, "dram.mean_utilization"),
    );
    let (x4, x1) = (num(&base, "jobs_per_hour"), num(&one, "jobs_per_hour"));
    assert!(u1 < 0.7 * u4, "DRAM utilisation {u1} at c=1 vs {u4} at c=4");
    assert!(x1 < 0.7 * x4, "throughput {x1} at c=1 vs {x4} at c=4");
    // With one job in flight there is little to contend with.
    let (i4, i1) = (
        num(&base, "stages.cpu_msm.inflation"),
        num(&one, "stages.cpu_msm.inflation"),
    );
    assert!(i1 < i4, "cpu_msm inflation {i1} at c=1 vs {i4} at c=4");
    // The scenario's own key and the knob that feeds it are the same thing.
    let direct = run_json(&demo(), &["--set", "arrivals.concurrency=1"]);
    assert_eq!(without_wall_time(direct), without_wall_time(one));
}

#[test]
fn more_dram_channels_give_headroom() {
    let base = run_json(&demo(), &[]);
    let wide = run_json(&demo(), &["--set", "params.dram_channels=8"]);
    assert!(
        (num(&wide, "dram.capacity_gbps") - 2.0 * num(&base, "dram.capacity_gbps")).abs() < 1e-6
    );
    let (u4, u8) = (
        num(&base, "dram.mean_utilization"),
        num(&wide, "dram.mean_utilization"),
    );
    assert!(
        u8 < 0.75 * u4,
        "utilisation {u8} on 8 channels vs {u4} on 4"
    );
    // Lower load means lower loaded latency: the latency-bound MSM inflates less, and the
    // pipeline as a whole is not slower.
    assert!(num(&wide, "stages.cpu_msm.inflation") < num(&base, "stages.cpu_msm.inflation"));
    assert!(num(&wide, "stages.synth.inflation") < num(&base, "stages.synth.inflation"));
    assert!(num(&wide, "jobs_per_hour") >= num(&base, "jobs_per_hour"));
    // Setting the hardware key directly is the same as the knob.
    let direct = run_json(&demo(), &["--set", "hardware.dram.channels=8"]);
    assert_eq!(without_wall_time(direct), without_wall_time(wide));
}

#[test]
fn set_to_the_default_value_changes_nothing() {
    let base = run_json(&demo(), &[]);
    let same = run_json(
        &demo(),
        &[
            "--set",
            "params.concurrency=4",
            "--set",
            "arrivals.jobs=200",
        ],
    );
    assert_eq!(without_wall_time(base), without_wall_time(same));
}

// ---------------------------------------------------------------------------------------
// --seed

#[test]
fn same_seed_gives_identical_json_and_different_seeds_differ() {
    let a = without_wall_time(run_json(&demo(), &["--seed", "7"]));
    let b = without_wall_time(run_json(&demo(), &["--seed", "7"]));
    assert_eq!(a, b, "same seed, different reports");
    assert_eq!(at(&a, "seed").as_u64(), Some(7));

    let c = without_wall_time(run_json(&demo(), &["--seed", "8"]));
    assert_ne!(a, c, "seeds 7 and 8 gave identical reports");
    // The sampled durations themselves differ, not just some incidental field.
    assert_ne!(
        num(&a, "stages.synth.standalone_mean_s"),
        num(&c, "stages.synth.standalone_mean_s")
    );

    // --seed overrides the scenario's `seed = 1`; giving 1 explicitly changes nothing.
    let file = without_wall_time(run_json(&demo(), &[]));
    let one = without_wall_time(run_json(&demo(), &["--seed", "1"]));
    assert_eq!(file, one);
}

// ---------------------------------------------------------------------------------------
// bwsim check

#[test]
fn check_demo_lists_the_model_and_its_knobs() {
    let out = bwsim().arg("check").arg(demo()).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
    assert!(text.contains("scenario \"demo\""), "{text}");
    assert!(text.contains("32 cores"), "{text}");
    for s in DEMO_STAGES {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(s)),
            "stage {s} missing:\n{text}"
        );
    }
    let knobs: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("knobs"))
        .collect();
    assert!(
        knobs[0].contains("--set params.NAME=VALUE"),
        "knobs header: {text}"
    );
    for (name, default, doc) in [
        ("concurrency", "4", "jobs in flight (closed loop)"),
        ("dram_channels", "4", "populated DDR channels"),
        ("synth_cores", "8", "cores each partition's synthesis holds"),
    ] {
        let l = knobs
            .iter()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("knob {name} missing:\n{text}"));
        let value = l.split('=').nth(1).unwrap().split_whitespace().next();
        assert_eq!(value, Some(default), "{l}");
        assert!(l.contains(doc), "{l}");
    }

    // An override shows the new value next to the default.
    let out = bwsim()
        .arg("check")
        .arg(demo())
        .args(["--set", "params.concurrency=9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("closed loop, 9 jobs in flight"), "{text}");
    assert!(text.contains("= 9 (default 4)"), "{text}");
}

#[test]
fn check_accepts_every_bundled_scenario() {
    let mut files = Vec::new();
    for dir in [scenario(""), scenario("oracles")] {
        for e in std::fs::read_dir(dir).unwrap() {
            files.push(e.unwrap().path());
        }
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "toml"));
    assert!(files.len() >= 7, "{files:?}");
    for f in &files {
        let out = bwsim().arg("check").arg(f).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", f.display());
        assert!(!out.stdout.is_empty(), "{}: no summary", f.display());
    }
}

// ---------------------------------------------------------------------------------------
// Bad input

/// A small valid scenario; the bad-input table edits it.
const BASE: &str = r#"[hardware]
cpu_cores = 8
host_ram_gib = 64

[hardware.dram]
capacity_gbps = 100

[[workload.stages]]
name = "synth"
duration_s = 1.0
cores = 4

[[workload.stages]]
name = "spmv"
after = ["synth"]
duration_s = 0.5
cores = 2

[arrivals]
kind = "closed"
concurrency = 2
jobs = 10
"#;

fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "BASE lacks {from:?}");
    BASE.replacen(from, to, 1)
}

struct Bad {
    what: &'static str,
    /// Files written to a fresh directory; the first is the scenario.
    files: Vec<(&'static str, String)>,
    /// Extra arguments after `run FILE`.
    args: &'static [&'static str],
    /// Must all appear in stderr (besides the scenario's file name, see `names_file`).
    stderr: &'static [&'static str],
    /// Whether stderr must name the scenario file (not for clap's own errors).
    names_file: bool,
    /// The subcommands to try: `check` validates exactly as `run` does, so both must
    /// refuse bad scenarios; `run`-only flags are tried with `run` only.
    subs: &'static [&'static str],
}

fn bad(what: &'static str, text: String, stderr: &'static [&'static str]) -> Bad {
    Bad {
        what,
        files: vec![("s.toml", text)],
        args: &[],
        stderr,
        names_file: true,
        subs: BOTH,
    }
}

const BOTH: &[&str] = &["run", "check"];

#[test]
fn bad_input_exits_2_naming_file_key_and_problem() {
    let cases = vec![
        bad(
            "unknown key",
            edit("cores = 4", "cores = 4\ncorez = 1"),
            &["s.toml:12", "workload.stages[0].corez", "unknown key"],
        ),
        bad(
            "wrong type",
            edit("cpu_cores = 8", "cpu_cores = \"eight\""),
            &["s.toml:2", "hardware.cpu_cores", "wrong type"],
        ),
        bad(
            "negative duration",
            edit("duration_s = 0.5", "duration_s = -1"),
            &[
                "s.toml:16",
                "workload.stages[1].duration_s",
                "-1 is negative",
            ],
        ),
        bad(
            "zero DRAM capacity",
            edit("capacity_gbps = 100", "capacity_gbps = 0"),
            &["s.toml:6", "hardware.dram.capacity_gbps", "must be > 0"],
        ),
        bad(
            "a stage needing more cores than exist",
            edit("cores = 4", "cores = 96"),
            &[
                "workload.stages[0].cores",
                "needs 96 cores, but the host has 8",
            ],
        ),
        bad(
            "a cycle in the DAG",
            edit("name = \"synth\"", "name = \"synth\"\nafter = [\"spmv\"]"),
            &[
                "workload.stages[0].after",
                "cycle",
                "synth -> spmv -> synth",
            ],
        ),
        bad(
            "a missing include file",
            format!("include = [\"calib.toml\"]\n{BASE}"),
            &["s.toml:1", "include", "\"calib.toml\" not found"],
        ),
        Bad {
            what: "a malformed CSV trace",
            files: vec![
                (
                    "s.toml",
                    edit(
                        "kind = \"closed\"\nconcurrency = 2\njobs = 10",
                        "kind = \"trace\"\ntrace = \"arrivals.csv\"",
                    ),
                ),
                ("arrivals.csv", "job,time_s\n1,0.0\n2,0.5\n3,zero\n".into()),
            ],
            args: &[],
            stderr: &[
                "arrivals.trace",
                "arrivals.csv:4",
                "time_s \"zero\" is not a number",
            ],
            names_file: true,
            subs: BOTH,
        },
        Bad {
            what: "a bad --set key",
            files: vec![("s.toml", BASE.into())],
            args: &["--set", "arrivals.jobz=5"],
            stderr: &["--set arrivals.jobz", "unknown key", "`jobs`"],
            names_file: true,
            subs: BOTH,
        },
        Bad {
            what: "a --set value that fails validation",
            files: vec![("s.toml", BASE.into())],
            args: &["--set", "arrivals.jobs=0"],
            stderr: &["--set arrivals.jobs", "0 jobs"],
            names_file: true,
            subs: BOTH,
        },
        Bad {
            what: "a --set value of the wrong type",
            files: vec![("s.toml", BASE.into())],
            args: &["--set", "hardware.cpu_cores=-2"],
            stderr: &[
                "--set hardware.cpu_cores",
                "`-2`",
                "whole number from 0 to 4294967295",
            ],
            names_file: true,
            subs: BOTH,
        },
        Bad {
            what: "--set without =",
            files: vec![("s.toml", BASE.into())],
            args: &["--set", "arrivals.jobs"],
            stderr: &["--set arrivals.jobs", "KEY=VALUE"],
            names_file: true,
            subs: BOTH,
        },
        Bad {
            what: "an unknown CLI flag",
            files: vec![("s.toml", BASE.into())],
            args: &["--frobnicate"],
            stderr: &["unexpected argument '--frobnicate'", "Usage: bwsim "],
            names_file: false,
            subs: BOTH,
        },
        Bad {
            what: "an unknown --format",
            files: vec![("s.toml", BASE.into())],
            args: &["--format", "yaml"],
            stderr: &["invalid value 'yaml' for '--format", "text, json"],
            names_file: false,
            subs: &["run"],
        },
        Bad {
            what: "a seed that is not a number",
            files: vec![("s.toml", BASE.into())],
            args: &["--seed", "abc"],
            stderr: &["invalid value 'abc' for '--seed"],
            names_file: false,
            subs: &["run"],
        },
        bad(
            "TOML syntax error",
            edit("cpu_cores = 8", "cpu_cores = = 8"),
            &["s.toml", "TOML syntax error"],
        ),
    ];

    for c in cases {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in &c.files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let file = dir.path().join(c.files[0].0);
        for sub in c.subs {
            let out = bwsim().arg(sub).arg(&file).args(c.args).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            println!(
                "{:<40} {sub}: {}",
                c.what,
                stderr.lines().next().unwrap_or("")
            );
            assert_eq!(
                out.status.code(),
                Some(2),
                "{} ({sub}): exit code; stderr:\n{stderr}",
                c.what
            );
            assert!(
                !stderr.contains("panicked"),
                "{} ({sub}): panic:\n{stderr}",
                c.what
            );
            assert!(
                stdout.is_empty(),
                "{} ({sub}): a report was printed:\n{stdout}",
                c.what
            );
            assert!(
                stderr.starts_with("error: "),
                "{} ({sub}): {stderr}",
                c.what
            );
            if c.names_file {
                assert!(
                    stderr.contains(&*file.to_string_lossy()),
                    "{} ({sub}): stderr does not name {}:\n{stderr}",
                    c.what,
                    file.display()
                );
            }
            for want in c.stderr {
                assert!(
                    stderr.contains(want),
                    "{} ({sub}): stderr lacks {want:?}:\n{stderr}",
                    c.what
                );
            }
        }
    }
}

#[test]
fn a_missing_scenario_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nope.toml");
    let out = bwsim().arg("run").arg(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(stderr.contains(&*file.to_string_lossy()), "{stderr}");
    assert!(stderr.contains("cannot read"), "{stderr}");
}

#[test]
fn a_run_that_deadlocks_exits_1_and_says_why() {
    // Each partition holds 40 GiB until the per-job `finalize`, which needs both of its
    // job's partitions. One job fits (80 of 100 GiB), so validation accepts it, but two
    // jobs in flight each grab one partition's 40 GiB and then wait forever for the
    // second (20 GiB free): a cross-job deadlock the engine must report as a stall.
    let text = r#"seed = 3
[hardware]
cpu_cores = 8
host_ram_gib = 100

[workload]
partitions = 2

[[workload.stages]]
name = "prep"
duration = { dist = "exponential", mean_s = 1.0 }
cores = 1

[[workload.stages]]
name = "synth"
after = ["prep"]
duration_s = 1.0
cores = 1
holds = [{ resource = "host_ram", gib = 40, until = "finalize" }]

[[workload.stages]]
name = "finalize"
after = ["synth"]
per_partition = false
duration_s = 0.1

[arrivals]
kind = "closed"
concurrency = 2
jobs = 100
"#;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deadlock.toml");
    std::fs::write(&file, text).unwrap();
    let out = bwsim()
        .arg("run")
        .arg(&file)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("deadlock.toml"), "{stderr}");
    assert!(stderr.contains("stalled"), "{stderr}");
    // The text report says so too, without printing NaN for the unknown throughput.
    let text_out = bwsim().arg("run").arg(&file).output().unwrap();
    assert_eq!(text_out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&text_out.stdout);
    assert!(text.contains("note         stalled: "), "{text}");
    assert!(text.contains("throughput   unknown"), "{text}");
    assert!(
        !text.contains("NaN") && !text.contains("inf GB/s"),
        "{text}"
    );
    // The partial JSON report still comes out, with the stall among its notes.
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert!(at(&v, "jobs_completed").as_u64().unwrap() < 100);
    let notes = at(&v, "notes").as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("stalled")),
        "{notes:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Queueing oracles through the CLI
//
// Each bundled oracle scenario states its analytic mean response time in its comments.
// We run it through `bwsim run --format json --no-ideal` and compute the mean response as
// the sum over stages of `mean_wait_s + mean_s` (for the one-stage queues that is wait in
// queue + service).
//
// Tolerances. The estimate's error comes from the autocorrelation of successive response
// times, which is large near rho = 0.8. We measured its spread directly: 30 seeds of each
// scenario at 200,000 jobs (180,000 measured after the 10% warm-up), release build. The
// relative standard deviations of the mean response were:
//   M/M/1 2.34%, M/M/1-PS 2.25%, M/M/4 1.64%, M/D/1-PS 1.68%, M/D/1 1.40%,
//   closed (8 jobs / 2 servers) 0.27%
// and shrink as 1/sqrt(jobs). We size each run so the tolerance is at least about four
// of those standard errors (a correct engine fails with probability ~1e-4 per oracle,
// and the runs use the scenario's fixed seed, so the test is deterministic anyway), while
// a wrong discipline misses by far more: FCFS vs PS for deterministic service is 3 s vs
// 5 s (40%), M/M/4 vs M/M/1 at the same rho is 1.75 s vs 5 s. In the test profile
// (opt-level 1) each run takes about 1-2 s.

fn erlang_c(c: u32, a: f64) -> f64 {
    // P(wait) in M/M/c with offered load a = lambda / mu.
    let mut term = 1.0;
    let mut sum = 1.0; // sum_{k<c} a^k / k!
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let top = term * a / c as f64 / (1.0 - a / c as f64); // a^c / c! / (1 - rho)
    top / (sum + top)
}

/// Mean response of a closed product-form network: `n` jobs cycling through an
/// infinite-server delay of mean `z` and a `c`-server exponential station of mean `s`.
/// Returns (throughput, mean response n / X).
fn closed_delay_plus_multiserver(n: u32, z: f64, c: u32, s: f64) -> (f64, f64) {
    let mut weights = Vec::new();
    for k in 0..=n {
        // Delay station with n - k jobs: z^(n-k) / (n-k)!; c-server station with k jobs:
        // s^k / prod_{i<=k} min(i, c).
        let mut w = 1.0;
        for i in 1..=(n - k) {
            w *= z / i as f64;
        }
        for i in 1..=k {
            w *= s / i.min(c) as f64;
        }
        weights.push(w);
    }
    let g: f64 = weights.iter().sum();
    let x: f64 = weights
        .iter()
        .enumerate()
        .map(|(k, w)| w / g * (k as u32).min(c) as f64 / s)
        .sum();
    (x, n as f64 / x)
}

/// Runs an oracle scenario with `jobs` jobs and returns (report, mean response).
fn oracle(file: &str, jobs: u64) -> (Value, f64) {
    let v = run_json(
        &scenario(file),
        &["--no-ideal", "--set", &format!("arrivals.jobs={jobs}")],
    );
    assert_eq!(at(&v, "jobs_completed").as_u64(), Some(jobs));
    assert_eq!(at(&v, "warmup_jobs").as_u64(), Some(jobs / 10));
    assert!(
        at(&v, "notes").as_array().unwrap().is_empty(),
        "{file}: {}",
        at(&v, "notes")
    );
    let response: f64 = stage_names(&v)
        .iter()
        .map(|s| {
            num(&v, &format!("stages.{s}.mean_wait_s")) + num(&v, &format!("stages.{s}.mean_s"))
        })
        .sum();
    (v, response)
}

fn assert_close(what: &str, simulated: f64, expected: f64, tol: f64) {
    let err = (simulated - expected).abs() / expected;
    println!(
        "{what}: expected {expected:.4}, simulated {simulated:.4}, error {:.2}% (tolerance {:.0}%)",
        err * 100.0,
        tol * 100.0
    );
    assert!(
        err < tol,
        "{what}: expected {expected:.4}, simulated {simulated:.4} ({:.1}% off, tolerance {:.0}%)",
        err * 100.0,
        tol * 100.0
    );
}

/// For a one-stage queue the job's response is the stage's wait + service.
fn assert_one_stage(v: &Value, response: f64) {
    assert_eq!(stage_names(v), ["service"]);
    let r = num(v, "response.mean_s");
    assert!((r - response).abs() < 1e-6 * r, "{r} vs {response}");
}

#[test]
fn oracle_mm1() {
    // lambda 0.8, mu 1: W = 1 / (mu - lambda) = 5 s. 300,000 jobs: SE ~1.9%, 8% ~ 4.2 SE.
    let (v, w) = oracle("oracles/mm1.toml", 300_000);
    assert_one_stage(&v, w);
    assert_close("M/M/1 rho=0.8", w, 1.0 / (1.0 - 0.8), 0.08);
    // Wait in queue alone: Wq = rho / (mu - lambda) = 4 s.
    assert_close("M/M/1 Wq", num(&v, "stages.service.mean_wait_s"), 4.0, 0.10);
}

#[test]
fn oracle_mmc() {
    // M/M/4, lambda 3.2, mu 1: W = C(4, 3.2) / (4 - 3.2) + 1 = 1.7455 s (the comment's
    // value). 200,000 jobs: SE ~1.6%, 7% ~ 4.3 SE.
    let expected = erlang_c(4, 3.2) / (4.0 - 3.2) + 1.0;
    assert!((expected - 1.7455).abs() < 1e-3, "{expected}");
    let (v, w) = oracle("oracles/mmc.toml", 200_000);
    assert_one_stage(&v, w);
    assert_close("M/M/4 rho=0.8", w, expected, 0.07);
}

#[test]
fn oracle_md1() {
    // Pollaczek-Khinchine: W = 1 + rho / (2 (1 - rho)) = 3 s. 200,000 jobs: SE ~1.4%,
    // 6% ~ 4.3 SE.
    let (v, w) = oracle("oracles/md1.toml", 200_000);
    assert_one_stage(&v, w);
    assert_close("M/D/1 rho=0.8", w, 1.0 + 0.8 / (2.0 * 0.2), 0.06);
    // Deterministic service: every service takes exactly 1 s.
    assert!((num(&v, "stages.service.mean_s") - 1.0).abs() < 1e-6);
}

#[test]
fn oracle_mm1_processor_sharing() {
    // M/G/1-PS: W = E[S] / (1 - rho) = 5 s. 300,000 jobs: SE ~1.8%, 8% ~ 4.3 SE.
    let (v, w) = oracle("oracles/ps.toml", 300_000);
    assert_one_stage(&v, w);
    assert_close("M/M/1-PS rho=0.8", w, 1.0 / (1.0 - 0.8), 0.08);
    // Under PS nobody queues: the whole response is (slowed-down) service.
    assert!(num(&v, "stages.service.mean_wait_s") < 1e-9);
}

#[test]
fn oracle_md1_processor_sharing() {
    // PS is insensitive to the service distribution: W = 1 / (1 - 0.8) = 5 s, against 3 s
    // for the same queue served FCFS (oracle_md1). 200,000 jobs: SE ~1.7%, 7% ~ 4.2 SE.
    let (v, w) = oracle("oracles/md1_ps.toml", 200_000);
    assert_one_stage(&v, w);
    assert_close("M/D/1-PS rho=0.8", w, 5.0, 0.07);
    // Sharing stretches the 1 s service by exactly the response time: inflation = W / 1 s.
    assert!((num(&v, "stages.service.inflation") - w).abs() < 1e-6 * w);
}

#[test]
fn oracle_closed_loop_littles_law() {
    // 8 jobs cycle through prepare (exp 0.2 s) and finish (0.1 s), which never wait for
    // cores (8 x 2 of 16), and `work` (exp 0.5 s) on a 2-server lock. A product-form
    // network (delay stations are insensitive to their distribution), solved exactly:
    // X = 3.9995 jobs/s, R = N / X = 2.0002 s. 20,000 jobs: SE ~0.85%, 5% ~ 6 SE.
    let (x_exact, r_exact) = closed_delay_plus_multiserver(8, 0.3, 2, 0.5);
    assert!((x_exact - 3.9995).abs() < 1e-3, "{x_exact}");
    let (v, r) = oracle("oracles/closed.toml", 20_000);
    assert_close("closed N=8 response", r, r_exact, 0.05);
    // Little's law on the run's own numbers: N = X R, with X = 1 / seconds_per_job. Both
    // come from the same jobs, so they agree far more tightly than either does with the
    // analytic value.
    let x = 1.0 / num(&v, "seconds_per_job");
    assert_close("closed N=8 Little (N / X)", 8.0 / x, r, 0.01);
    assert_close("closed N=8 throughput", x, x_exact, 0.05);
    // The report's own Little check: time-average jobs in system vs lambda W.
    assert_close(
        "closed N=8 little.l",
        num(&v, "little.l"),
        num(&v, "little.lambda_w"),
        0.01,
    );
}

/// A closed loop at 1,000 in flight over the demo's 200 jobs has no steady state: `check`
/// says so before anything runs, and the run's report carries the same note (the
/// throughput it prints is one batch draining).
#[test]
fn a_closed_loop_without_a_steady_state_is_noted_by_check_and_run() {
    let check = |args: &[&str]| -> String {
        let out = bwsim()
            .arg("check")
            .arg(demo())
            .args(args)
            .assert()
            .success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let set = ["--set", "params.concurrency=1000"];
    let text = check(&set);
    assert!(
        text.contains("warning: no steady state: 180 of the 180 measured jobs"),
        "{text}"
    );
    let report = run_json(&demo(), &["--no-ideal", set[0], set[1]]);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("no steady state")),
        "{notes:?}"
    );
    // At the default 4 in flight: neither.
    assert!(!check(&[]).contains("no steady state"));
    assert!(
        !run_json(&demo(), &["--no-ideal"])
            .to_string()
            .contains("no steady state")
    );
}
