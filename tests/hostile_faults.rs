//! Issue 27, "faults, second round", one regression test per class through the binary:
//! resumes that cannot mix two models or lose work twice, merges that check what they
//! merge, outputs checked (and never two on one path, never over an input) before any
//! work, stdout that may be full, nothing quadratic, and numbers that are checked; and
//! issue 50's costs and messages (bursts, charts, integer limits).
//! docs/hostile-input.md has the table of what each class now does.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

fn bwsim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bwsim"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env_remove("BWSIM_TEST_KILL");
    c
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn demo() -> PathBuf {
    root().join("scenarios/demo.toml")
}

fn out(c: &mut Command) -> Output {
    c.stdin(Stdio::null()).output().expect("bwsim runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 with a message containing every one of `needles`, no panic.
fn assert_input_error(o: &Output, needles: &[&str], what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    for n in needles {
        assert!(err.contains(n), "{what}: no '{n}' in: {err}");
    }
}

fn assert_ok(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(o));
}

/// A small sweep of the demo scenario into `out`, with `extra` flags.
fn sweep(scenario: &Path, out_dir: &Path, extra: &[&str]) -> Command {
    let mut c = bwsim();
    c.arg("sweep")
        .arg(scenario)
        .args(["--param", "params.concurrency=1..6"])
        .args([
            "--set",
            "arrivals.jobs=30",
            "--replications",
            "2",
            "--jobs",
            "2",
        ])
        .arg("--out")
        .arg(out_dir)
        .args(extra);
    c
}

fn resume(out_dir: &Path) -> Command {
    let mut c = bwsim();
    c.args(["sweep", "--resume"]).arg(out_dir);
    c
}

fn staging(out_dir: &Path) -> PathBuf {
    bwsim::output::staging_path(out_dir)
}

/// A copy of the demo scenario, split into a file and an include, in `dir`.
fn demo_with_include(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(demo()).unwrap();
    let (head, tail) = text.split_at(text.find("[workload]").unwrap());
    std::fs::write(dir.join("hardware.toml"), head).unwrap();
    let main = dir.join("main.toml");
    std::fs::write(&main, format!("include = [\"hardware.toml\"]\n{tail}")).unwrap();
    main
}

// ---- 1. Resume and interrupt ----------------------------------------------------------

#[test]
fn resume_refuses_a_scenario_or_include_edited_since_the_sweep_started() {
    let d = tempfile::tempdir().unwrap();
    let main = demo_with_include(d.path());
    for (edited, shard) in [("main.toml", None), ("hardware.toml", Some("0/2"))] {
        let o_dir = d.path().join(format!("out-{edited}"));
        let mut extra = vec!["--stop-after", "2"];
        if let Some(s) = shard {
            extra.extend(["--shard", s]);
        }
        let o = out(&mut sweep(&main, &o_dir, &extra));
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        // The model changes: 24 cores instead of 32, or 10 ms synthesis.
        let file = d.path().join(edited);
        let before = std::fs::read_to_string(&file).unwrap();
        let after = before
            .replace("cpu_cores = 32", "cpu_cores = 24")
            .replace("mean_s = 0.040", "mean_s = 0.010");
        assert_ne!(before, after);
        std::fs::write(&file, &after).unwrap();
        let o = out(&mut resume(&o_dir));
        assert_input_error(
            &o,
            &["cannot resume", "is not what this sweep started with"],
            edited,
        );
        assert!(!o_dir.exists(), "{edited}: a refused resume writes nothing");
        // Put back as it was, the resume finishes.
        std::fs::write(&file, &before).unwrap();
        assert_ok(&out(&mut resume(&o_dir)), edited);
    }
}

/// Two shards of one grid, each resumed, merge; a shard whose scenario was edited before
/// its resume can no longer record the new file's fingerprint (the resume is refused).
#[test]
fn a_manifest_without_a_fingerprint_is_not_resumed() {
    let d = tempfile::tempdir().unwrap();
    let o_dir = d.path().join("old");
    let o = out(&mut sweep(&demo(), &o_dir, &["--stop-after", "1"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let manifest = staging(&o_dir).join("manifest.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m.as_object_mut().unwrap().remove("scenario_hash");
    std::fs::write(&manifest, m.to_string()).unwrap();
    let o = out(&mut resume(&o_dir));
    assert_input_error(&o, &["records no fingerprint"], "old manifest");
}

#[test]
fn a_journal_line_cut_by_two_interruptions_loses_nothing() {
    let d = tempfile::tempdir().unwrap();
    let whole = d.path().join("whole");
    assert_ok(&out(&mut sweep(&demo(), &whole, &[])), "whole");
    let o_dir = d.path().join("cut");
    // Killed while writing its 3rd journal line, then again while the resume writes
    // its 2nd: each leaves half a line behind.
    let o = out(sweep(&demo(), &o_dir, &[]).env("BWSIM_TEST_KILL", "journal:3"));
    assert_ne!(o.status.code(), Some(0));
    let journal = staging(&o_dir).join("points.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(!text.ends_with('\n'), "a cut line: {text:?}");
    let o = out(resume(&o_dir).env("BWSIM_TEST_KILL", "journal:2"));
    assert_ne!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&journal).unwrap();
    // The first cut was repaired before the resume appended: 2 whole lines + 3 more
    // (one cut) = 3 whole lines now.
    assert_eq!(text.matches('\n').count(), 3, "{text}");
    assert_ok(&out(&mut resume(&o_dir)), "third attempt");
    assert_eq!(
        std::fs::read(whole.join("sweep.csv")).unwrap(),
        std::fs::read(o_dir.join("sweep.csv")).unwrap()
    );
}

#[test]
fn a_second_resume_of_a_folder_in_use_refuses_clearly() {
    let d = tempfile::tempdir().unwrap();
    let o_dir = d.path().join("busy");
    let o = out(&mut sweep(&demo(), &o_dir, &["--stop-after", "2"]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // This test holds the folder as a running resume would.
    let held = bwsim::output::StagedDir::reopen(&o_dir, &["manifest.json", "points.jsonl"])
        .expect("the staging folder opens");
    let o = out(&mut resume(&o_dir));
    assert_input_error(&o, &["another bwsim is working in this folder"], "busy");
    drop(held);
    assert_ok(&out(&mut resume(&o_dir)), "after the first let go");
}

#[test]
fn a_resume_after_an_interrupted_chart_leaves_no_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let o_dir = d.path().join("charts");
    // Killed with a chart's temporary file filled but not renamed.
    let o = out(sweep(&demo(), &o_dir, &[]).env("BWSIM_TEST_KILL", "write:4"));
    assert_ne!(o.status.code(), Some(0));
    let stray: Vec<String> = std::fs::read_dir(staging(&o_dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".bwsim-"))
        .collect();
    assert!(!stray.is_empty(), "the kill left a temporary file");
    let o = out(&mut resume(&o_dir));
    assert_ok(&o, "resume");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(o_dir.join("manifest.json")).unwrap()).unwrap();
    let mut listed: Vec<String> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .chain(["manifest.json".to_string()])
        .collect();
    let mut present: Vec<String> = std::fs::read_dir(&o_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    listed.sort();
    present.sort();
    assert_eq!(present, listed, "the folder holds exactly its files");
    assert!(!staging(&o_dir).exists());
    // A finished folder has nothing to resume, and says so.
    let o = out(&mut resume(&o_dir));
    assert_input_error(&o, &["finished output folder"], "finished");
    // A stale staging folder beside a finished one (a raced or crashed attempt) is
    // removed by the next resume, which has nothing else to do.
    std::fs::create_dir(staging(&o_dir)).unwrap();
    std::fs::write(staging(&o_dir).join(".bwsim-stale.png"), "x").unwrap();
    let o = out(&mut resume(&o_dir));
    assert_input_error(
        &o,
        &["finished output folder", "removed the stale"],
        "stale",
    );
    assert!(!staging(&o_dir).exists());
}

#[test]
fn an_unusable_out_is_refused_before_any_point_is_simulated() {
    let d = tempfile::tempdir().unwrap();
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (cwd, target) in [(&empty, "."), (&empty, "../empty"), (&empty, "..")] {
        let mut c = sweep(&demo(), Path::new(target), &[]);
        c.current_dir(cwd);
        let o = out(&mut c);
        assert_input_error(&o, &[target], target);
        assert!(
            o.stdout.is_empty(),
            "{target}: no sweep line, nothing simulated"
        );
        assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "{target}");
    }
    let long = d.path().join("x".repeat(250));
    let o = out(&mut sweep(&demo(), &long, &[]));
    assert_input_error(&o, &["255"], "a name too long for its staging folder");
}

// ---- 2. Merge --------------------------------------------------------------------------

/// The two shards of a small sweep, in `dir/s0` and `dir/s1`.
fn two_shards(dir: &Path) -> [PathBuf; 2] {
    [0, 1].map(|i| {
        let s = dir.join(format!("s{i}"));
        let shard = format!("{i}/2");
        assert_ok(&out(&mut sweep(&demo(), &s, &["--shard", &shard])), &shard);
        s
    })
}

fn merge(shards: &[PathBuf], to: &Path) -> Output {
    let mut c = bwsim();
    c.args(["sweep", "merge"]).args(shards).arg("--out").arg(to);
    common::output_within(c, Duration::from_secs(60))
}

fn edit_shard(dir: &Path, f: impl FnOnce(&mut Value)) {
    let p = dir.join("shard.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&p, v.to_string()).unwrap();
}

#[test]
fn shard_counts_are_bounded_but_may_pass_the_points() {
    let d = tempfile::tempdir().unwrap();
    let o = out(&mut sweep(
        &demo(),
        &d.path().join("big"),
        &["--shard", "0/18446744073709551615"],
    ));
    assert_input_error(&o, &["--shard", "at most 100000 shards"], "huge N");
    let shards = two_shards(d.path());
    for n in [18_446_744_073_709_551_615_u64, 100_000_000] {
        edit_shard(&shards[0], |v| {
            v["shard"]["count"] = json!(n);
            v["sweep"]["shards"] = json!(n);
        });
        edit_shard(&shards[1], |v| {
            v["shard"]["count"] = json!(n);
            v["sweep"]["shards"] = json!(n);
        });
        let o = merge(&shards, &d.path().join(format!("m{n}")));
        assert_input_error(&o, &["a sweep of", "between 1 and 100000"], &n.to_string());
    }
}

/// An edit of a shard file's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn shard_contents_are_validated_naming_file_and_field() {
    let d = tempfile::tempdir().unwrap();
    let shards = two_shards(d.path());
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["points"][0]["reports"] = json!([1, "x"])),
            "points[0].reports[0]: is a number, not a run report",
        ),
        (
            Box::new(|v| v["points"][1]["reports"][1]["seed"] = json!(7)),
            "points[1].reports[1]: seed is 7",
        ),
        (
            Box::new(|v| v["points"][0]["reports"][0]["jobs_per_hour"] = json!("fast")),
            "jobs_per_hour is missing or not a number",
        ),
        (
            Box::new(|v| v["sweep"]["seeds_per_point"] = json!(1_000_000_000_000u64)),
            "sweep.seeds_per_point",
        ),
    ];
    let original = std::fs::read(shards[0].join("shard.json")).unwrap();
    for (i, (f, needle)) in cases.into_iter().enumerate() {
        std::fs::write(shards[0].join("shard.json"), &original).unwrap();
        edit_shard(&shards[0], f);
        let o = merge(&shards, &d.path().join(format!("m{i}")));
        assert_input_error(&o, &[needle, "s0/shard.json"], needle);
    }
    std::fs::write(shards[0].join("shard.json"), &original).unwrap();
    assert_ok(
        &merge(&shards, &d.path().join("good")),
        "untouched shards merge",
    );
}

// ---- 3. Stdout and outputs -------------------------------------------------------------

fn to_full_stdout(c: &mut Command) -> Output {
    c.stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_stdout_is_an_error_in_every_command_not_a_panic() {
    let d = tempfile::tempdir().unwrap();
    let measurements = root().join("tests/fixtures/runs/calibrate/h200-run13/calib-raw.json");
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec![
            "replay".into(),
            "scenarios/c2-mini-h200.toml".into(),
            "--dry-run".into(),
        ],
        vec![
            "replay".into(),
            "scenarios/c2-mini-h200.toml".into(),
            "--repredict".into(),
            "tests/fixtures/runs/replay/h200-run2".into(),
            "--out".into(),
            d.path().join("re").into(),
        ],
        vec![
            "calibrate".into(),
            "--refit".into(),
            measurements.into(),
            "--out".into(),
            d.path().join("refit.toml").into(),
        ],
    ];
    for args in cases {
        let o = to_full_stdout(bwsim().args(&args));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("<stdout>"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[cfg(unix)]
#[test]
fn outputs_are_checked_together_before_any_work() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f.log");
    // Two outputs on one path.
    let o = out(bwsim()
        .arg("run")
        .arg(demo())
        .arg("--trace")
        .arg(&f)
        .arg("--timeline-log")
        .arg(&f));
    assert_input_error(&o, &["--trace", "--timeline-log"], "one path twice");
    assert!(o.stdout.is_empty() && !f.exists());
    // An output that is an input: the scenario, an include, the trace CSV.
    let copy = d.path().join("s.toml");
    std::fs::copy(demo(), &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let o = out(bwsim().arg("run").arg(&copy).arg("--trace").arg(&copy));
    assert_input_error(&o, &["the scenario", "input"], "trace over the scenario");
    assert_eq!(std::fs::read(&copy).unwrap(), before);
    let main = demo_with_include(d.path());
    let o = out(bwsim()
        .arg("run")
        .arg(&main)
        .arg("--timeline-log")
        .arg(d.path().join("hardware.toml")));
    assert_input_error(&o, &["a file the scenario includes"], "over an include");
    // A chart's sibling format that cannot be written, before any simulation.
    let png = d.path().join("hosts.png");
    std::os::unix::fs::symlink("/etc/hostname", d.path().join("hosts.svg")).unwrap();
    let o = out(bwsim()
        .args(["compare", "scenarios/demo.toml"])
        .args(["--host", "scenarios/hosts/c2-reference.toml", "--plot"])
        .arg(&png));
    assert_input_error(&o, &["hosts.svg", "symlink"], "compare --plot sibling");
    assert!(!png.exists() && o.stdout.is_empty());
    let png = d.path().join("log.png");
    std::fs::create_dir(d.path().join("log.svg")).unwrap();
    let o = out(bwsim()
        .args([
            "log",
            "tests/fixtures/runs/replay/h200-run2/timeline-p3-r0.log",
            "--plot",
        ])
        .arg(&png));
    assert_input_error(&o, &["log.svg", "a folder"], "log --plot sibling");
    assert!(!png.exists() && o.stdout.is_empty());
    // calibrate: --out and --json on one path, --out over the measurements.
    let m = d.path().join("m.json");
    std::fs::copy(
        root().join("tests/fixtures/runs/calibrate/h200-run13/calib-raw.json"),
        &m,
    )
    .unwrap();
    let o = out(bwsim()
        .args(["calibrate", "--refit"])
        .arg(&m)
        .arg("--out")
        .arg(&m));
    assert_input_error(&o, &["the --refit measurements"], "refit over its input");
}

#[test]
fn repredict_never_writes_over_another_replays_results() {
    let d = tempfile::tempdir().unwrap();
    let other = d.path().join("other");
    let src = root().join("tests/fixtures/runs/replay/h200-run2");
    std::fs::create_dir(&other).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), other.join(e.file_name())).unwrap();
        }
    }
    let before = std::fs::read(other.join("replay.json")).unwrap();
    let o = out(bwsim()
        .args(["replay", "scenarios/c2-mini-h200.toml", "--repredict"])
        .arg("tests/fixtures/runs/replay/h200-run2")
        .arg("--out")
        .arg(&other));
    assert_input_error(&o, &["holds the results of another replay"], "other replay");
    assert_eq!(std::fs::read(other.join("replay.json")).unwrap(), before);
    // Nor over the replay it reads.
    let o = out(bwsim()
        .args(["replay", "scenarios/c2-mini-h200.toml", "--repredict"])
        .arg(&other)
        .arg("--out")
        .arg(&other));
    assert_input_error(&o, &["being re-predicted"], "its own input");
    // A re-prediction may be re-predicted into the same folder.
    let re = d.path().join("re");
    for _ in 0..2 {
        let o = out(bwsim()
            .args(["replay", "scenarios/c2-mini-h200.toml", "--repredict"])
            .arg(&other)
            .arg("--out")
            .arg(&re));
        assert_ok(&o, "re-prediction over a re-prediction of the same replay");
    }
}

// ---- 4. Cost ----------------------------------------------------------------------------

#[test]
fn a_150k_point_toml_array_loads_in_linear_time() {
    let d = tempfile::tempdir().unwrap();
    let n = 150_000;
    let pts: Vec<String> = (0..n)
        .map(|i| format!("[{}, {:.6}]", i + 1, 1.0 - i as f64 * 0.5 / n as f64))
        .collect();
    let text = format!(
        "name = \"long array\"\n[hardware]\ncpu_cores = 8\n[hardware.cpu]\nphysical_cores = 8\n\
         per_core_throughput = [{}]\n[workload]\npartitions = 1\n[[workload.stages]]\n\
         name = \"a\"\nduration_s = 0.001\ncores = 1\n[arrivals]\nkind = \"closed\"\n\
         concurrency = 2\njobs = 10\n",
        pts.join(", ")
    );
    let f = d.path().join("long.toml");
    std::fs::write(&f, text).unwrap();
    let mut c = bwsim();
    c.arg("check").arg(&f);
    // Counting columns from the line's start for each of 300,000 values took minutes.
    let o = common::output_within(c, Duration::from_secs(60));
    assert_ok(&o, "150k-point array");
}

#[test]
fn includes_that_fan_out_are_read_once_each_and_bounded() {
    let d = tempfile::tempdir().unwrap();
    // f0 includes f1 ten times, f1 includes f2 ten times, ...: 10^8 inclusions before.
    for i in 0..8 {
        let inc = if i < 7 {
            let names = vec![format!("\"f{}.toml\"", i + 1); 10];
            format!("include = [{}]\n", names.join(", "))
        } else {
            String::new()
        };
        std::fs::write(
            d.path().join(format!("f{i}.toml")),
            format!("{inc}[params]\nk{i} = {{ default = {i} }}\n"),
        )
        .unwrap();
    }
    let main = d.path().join("main.toml");
    std::fs::write(
        &main,
        "include = [\"f0.toml\"]\n[hardware]\ncpu_cores = 2\n[workload]\npartitions = 1\n\
         [[workload.stages]]\nname = \"a\"\nduration_s = 1\n[arrivals]\nkind = \"closed\"\n\
         concurrency = 1\njobs = 2\n",
    )
    .unwrap();
    let mut c = bwsim();
    c.arg("check").arg(&main);
    let o = common::output_within(c, Duration::from_secs(30));
    assert_ok(&o, "fan-out");
    // Every file once in the list of files read.
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(s.matches("f7.toml").count(), 1, "{s}");
    // Without any repetition to skip, too many entries are refused, naming the limit.
    let names: Vec<String> = (0..300).map(|i| format!("\"g{i}.toml\"")).collect();
    for i in 0..300 {
        std::fs::write(d.path().join(format!("g{i}.toml")), "").unwrap();
    }
    std::fs::write(
        &main,
        format!(
            "include = [{}]\n{}",
            names.join(", "),
            std::fs::read_to_string(demo()).unwrap()
        ),
    )
    .unwrap();
    let o = out(bwsim().arg("check").arg(&main));
    assert_input_error(&o, &["include entries"], "too many include entries");
}

#[test]
fn sweep_jobs_are_bounded() {
    let d = tempfile::tempdir().unwrap();
    let mut c = bwsim();
    c.arg("sweep")
        .arg(demo())
        .args([
            "--param",
            "params.concurrency=1..6",
            "--jobs",
            "100000",
            "--out",
        ])
        .arg(d.path().join("j"));
    let o = common::output_within(c, Duration::from_secs(60));
    assert_input_error(&o, &["--jobs 100000", "at most 1024"], "--jobs 100000");
}

#[test]
fn per_gpu_state_counts_toward_the_memory_limit() {
    let o = out(bwsim().arg("check").arg(demo()).args([
        "--set",
        "hardware.gpu.count=65536",
        "--max-memory-gib",
        "1",
    ]));
    assert_input_error(&o, &["hardware.gpu.count", "65536 GPUs"], "65,536 GPUs");
}

#[test]
fn a_replay_range_past_max_hours_is_refused_after_a_few_points() {
    let mut c = bwsim();
    c.args(["replay", "scenarios/demo.toml", "--dry-run"])
        .args(["--param", "arrivals.jobs=100000..109999"]);
    // Simulating all 10,001 points first took minutes.
    let o = common::output_within(c, Duration::from_secs(120));
    assert_input_error(
        &o,
        &["the first", "of its 10000 points", "--max-hours"],
        "range",
    );
}

// ---- 5. Numbers -------------------------------------------------------------------------

fn demo_with(dir: &Path, name: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, edit(&std::fs::read_to_string(demo()).unwrap())).unwrap();
    p
}

#[test]
fn compare_numbers_are_checked() {
    let d = tempfile::tempdir().unwrap();
    let host = |name: &str, cores: &str, threads: &str, ram: &str| {
        let p = d.path().join(name);
        std::fs::write(
            &p,
            format!(
                "name = \"{name}\"\n[cpu]\nmodel = \"x\"\ncores = {cores}\nthreads = {threads}\n\
                 [dram]\nram_gib = {ram}\nchannels = 8\nmts = 4800\n[gpu]\nmodel = \"y\"\n\
                 count = 1\nvram_gib = 24\npcie_gen = 4\n[cost]\nprice_usd = 10000\n\
                 power_w = 500\n"
            ),
        )
        .unwrap();
        p
    };
    let ok = host("ok", "32", "64", "256");
    let compare = |hosts: &[&Path], extra: &[&str]| {
        let mut c = bwsim();
        c.args(["compare", "scenarios/demo.toml", "--search"])
            .arg("params.concurrency=2,4");
        for h in hosts {
            c.arg("--host").arg(h);
        }
        c.args(extra);
        out(&mut c)
    };
    // A target no fleet reaches: no saturated count.
    let o = compare(&[&ok], &["--target-proofs-per-day", "1e15"]);
    assert_ok(&o, "1e15 proofs/day");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("No fleet reaches"), "{text}");
    assert!(!text.contains("4294967295"), "{text}");
    // 2^29 cores: no overflow of 8 x cores (a panic before).
    let huge = host("huge", "536870912", "4294967295", "256");
    let o = compare(&[&huge], &[]);
    assert!(matches!(o.status.code(), Some(0..=2)), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    // A host too small for the scenario: the real cause, not only "cannot load".
    let small = host("small", "2", "4", "1");
    let o = compare(&[&small], &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("needs 8 cores, but the host has 4"), "{text}");
    // A --search key twice, or a grid over the limit: the flags' fault (exit 2).
    let mut c = bwsim();
    c.args(["compare", "scenarios/demo.toml", "--host"])
        .arg(&ok)
        .args(["--search", "params.concurrency=1,2"])
        .args(["--search", "params.concurrency=3"]);
    let o = out(&mut c);
    assert_input_error(&o, &["--search", "given twice"], "key twice");
    assert!(!stderr(&o).contains("--param"), "{}", stderr(&o));
    let mut c = bwsim();
    c.args(["compare", "scenarios/demo.toml", "--host"])
        .arg(&ok)
        .args(["--search", "params.concurrency=1..1000"])
        .args(["--search", "params.synth_cores=1..1000"]);
    let o = out(&mut c);
    assert_input_error(&o, &["--search"], "grid over the limit");
}

#[test]
fn refit_and_remeasured_files_are_checked() {
    let d = tempfile::tempdir().unwrap();
    // Pinned PCIe rates of 0: the fit would write a calibration bwsim refuses.
    let mut m: Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/fixtures/runs/calibrate/h200-run13/calib-raw.json"))
            .unwrap(),
    )
    .unwrap();
    for p in m["pcie"].as_array_mut().unwrap() {
        p["h2d_gbps"] = json!(0.0);
        p["d2h_gbps"] = json!(0.0);
    }
    let mf = d.path().join("m.json");
    std::fs::write(&mf, m.to_string()).unwrap();
    let cal = d.path().join("cal.toml");
    let o = out(bwsim()
        .args(["calibrate", "--refit"])
        .arg(&mf)
        .arg("--out")
        .arg(&cal));
    assert_input_error(&o, &["would refuse", "m.json"], "zero pinned rates");
    assert!(!cal.exists());

    let calibration = root().join("scenarios/calibration/h200-host.toml");
    let validate = |table: &Value, name: &str| {
        let f = d.path().join(name);
        std::fs::write(&f, table.to_string()).unwrap();
        let mut c = bwsim();
        c.args(["validate", "--calibration"])
            .arg(&calibration)
            .arg("--remeasured")
            .arg(&f)
            .arg("--out-dir")
            .arg(d.path().join(format!("{name}.out")));
        common::output_within(c, Duration::from_secs(120))
    };
    let table: Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/fixtures/runs/calibrate/validate-h200-run4.json"))
            .unwrap(),
    )
    .unwrap();
    let mut empty = table.clone();
    empty["experiments"] = json!([]);
    assert_input_error(
        &validate(&empty, "empty.json"),
        &["nothing to re-predict"],
        "empty",
    );
    let mut negative = table.clone();
    let e0 = &mut negative["experiments"][0]["outcome"];
    let key = ["stream_gbps", "chase_ns", "dma_gbps", "pipe_iter_ms"]
        .into_iter()
        .find(|k| e0[*k].is_number())
        .unwrap();
    e0[key] = json!(-5.0);
    assert_input_error(
        &validate(&negative, "negative.json"),
        &[&format!("outcome.{key}"), "-5"],
        "negative rate",
    );
    let mut streams = table.clone();
    streams["experiments"][0]["setup"]["streams"] = json!(["copy", 4294967295u64]);
    assert_input_error(
        &validate(&streams, "streams.json"),
        &["experiments[0]", "setup.streams", "streams.json"],
        "4,294,967,295 streams",
    );
}

#[test]
fn repredict_checks_the_measured_numbers_and_names_recorded_sets_and_overrides() {
    let d = tempfile::tempdir().unwrap();
    let doc: Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/fixtures/runs/replay/h200-run2/replay.json")).unwrap(),
    )
    .unwrap();
    let repredict = |doc: &Value, name: &str| {
        let dir = d.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("replay.json"), doc.to_string()).unwrap();
        out(bwsim()
            .args(["replay", "scenarios/c2-mini-h200.toml", "--repredict"])
            .arg(&dir))
    };
    for (v, name) in [(json!(0.0), "zero"), (json!(-5.0), "negative")] {
        let mut bad = doc.clone();
        bad["points"][0]["measured"]["runs"][0]["seconds_per_job"] = v;
        assert_input_error(
            &repredict(&bad, name),
            &["points[0].measured.runs[0].seconds_per_job"],
            name,
        );
    }
    // A replay.json that lists its overrides (none here), so no note about them.
    let mut bad = doc.clone();
    bad["overrides"] = json!([]);
    bad["points"][0]["sets"] = json!(["params.nope=1"]);
    let o = repredict(&bad, "sets");
    assert_input_error(&o, &["points[0].sets[0]", "params.nope=1"], "recorded sets");
    assert!(!stderr(&o).contains("--set"), "{}", stderr(&o));
    let mut bad = doc.clone();
    bad["overrides"] = json!(["params.nope=1"]);
    let o = repredict(&bad, "overrides");
    assert_input_error(&o, &["overrides[0]", "params.nope=1"], "recorded overrides");
    assert!(!stderr(&o).contains("--set"), "{}", stderr(&o));
}

#[test]
fn scenario_numbers_are_checked() {
    let d = tempfile::tempdir().unwrap();
    // A trace with every arrival at t = 0: the offered-load warning.
    std::fs::write(d.path().join("zero.csv"), "time_s\n0\n0\n0\n0\n0\n0\n").unwrap();
    let burst = demo_with(d.path(), "burst.toml", |t| {
        t.replace(
            "kind = \"closed\"\nconcurrency = \"$concurrency\"\njobs = 200\nwarmup_jobs = \"10%\"",
            "kind = \"trace\"\ntrace = \"zero.csv\"",
        )
    });
    let o = out(bwsim().arg("run").arg(&burst));
    assert!(
        stderr(&o).contains("all 6 arrivals of the trace come at t = 0"),
        "{}",
        stderr(&o)
    );
    // A warm-up share that is not one.
    let pct = demo_with(d.path(), "pct.toml", |t| t.replace("\"10%\"", "\"5%%\""));
    assert_input_error(
        &out(bwsim().arg("check").arg(&pct)),
        &["warmup_jobs"],
        "5%%",
    );
    // A GPU probe named but missing.
    let o = out(bwsim()
        .args([
            "calibrate",
            "--mode",
            "tiny",
            "--gpu-probe",
            "/nonexistent/probe",
        ])
        .arg("--out")
        .arg(d.path().join("c.toml")));
    assert_input_error(&o, &["--gpu-probe", "does not exist"], "missing probe");
    // Host RAM that is not modelled is not reported as 17 billion GiB.
    let no_ram = d.path().join("noram.toml");
    std::fs::write(
        &no_ram,
        "[hardware]\ncpu_cores = 2\n[workload]\npartitions = 1\n[[workload.stages]]\n\
         name = \"a\"\nduration_s = 1\ncores = 1\n[arrivals]\nkind = \"closed\"\n\
         concurrency = 2\njobs = 10\n",
    )
    .unwrap();
    let o = out(bwsim()
        .arg("run")
        .arg(&no_ram)
        .args(["--format", "json", "--no-ideal"]));
    assert_ok(&o, "no host RAM");
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["ram"]["capacity_gib"].is_null(), "{}", r["ram"]);
    // A --set that makes a key of the file wrong is named with the error.
    for set in ["workload.stages[0].duration_s=1", "hardware.cpu_cores=4"] {
        let o = out(bwsim().arg("check").arg(demo()).args(["--set", set]));
        assert_input_error(&o, &[&format!("(given --set {set})")], set);
    }
    // 1e308 GiB is too large, not "not a finite number".
    let o = out(bwsim()
        .arg("check")
        .arg(demo())
        .args(["--set", "hardware.host_ram_gib=1e308"]));
    assert_input_error(&o, &["too large", "hardware.host_ram_gib"], "1e308");
    assert!(
        !stderr(&o).contains("not a finite number"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_long_scenario_name_makes_a_default_folder_that_fits() {
    let d = tempfile::tempdir().unwrap();
    let long = demo_with(d.path(), "long.toml", |t| {
        t.replace(
            "name = \"demo\"",
            &format!("name = \"{}\"", "n".repeat(300)),
        )
    });
    let mut c = bwsim();
    c.current_dir(d.path())
        .arg("sweep")
        .arg(&long)
        .args(["--param", "params.concurrency=1,2", "--replications", "1"])
        .args(["--set", "arrivals.jobs=20"]);
    assert_ok(&out(&mut c), "300-character name");
    let made: Vec<_> = std::fs::read_dir(d.path().join("output"))
        .unwrap()
        .collect();
    assert_eq!(made.len(), 1);
    let name = made[0].as_ref().unwrap().file_name();
    assert!(name.len() <= bwsim::output::MAX_FOLDER_NAME, "{name:?}");
}

#[test]
fn replay_with_a_calibration_under_a_combining_accent() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("cafe\u{301}");
    std::fs::create_dir_all(dir.join("calibration")).unwrap();
    let s = dir.join("s.toml");
    std::fs::copy(root().join("scenarios/c2-mini-h200.toml"), &s).unwrap();
    std::fs::copy(
        root().join("scenarios/calibration/h200-host.toml"),
        dir.join("calibration/h200-host.toml"),
    )
    .unwrap();
    let o = out(bwsim()
        .arg("replay")
        .arg(&s)
        .arg("--calibration")
        .arg(root().join("scenarios/calibration/h200-host.toml"))
        .arg("--dry-run"));
    assert!(!stderr(&o).contains("TOML syntax error"), "{}", stderr(&o));
    assert_ne!(o.status.code(), Some(101));
}

// ---- 6. Issue 50: bursts, charts and limits ----------------------------------------------

/// The demo scenario fed by a trace of `times` (a CSV beside it).
fn demo_with_trace(dir: &Path, name: &str, times: impl Iterator<Item = f64>) -> PathBuf {
    let mut csv = String::from("time_s\n");
    for t in times {
        csv.push_str(&format!("{t}\n"));
    }
    std::fs::write(dir.join(format!("{name}.csv")), csv).unwrap();
    demo_with(dir, &format!("{name}.toml"), |t| {
        t.replace(
            "kind = \"closed\"\nconcurrency = \"$concurrency\"\njobs = 200\nwarmup_jobs = \"10%\"",
            &format!("kind = \"trace\"\ntrace = \"{name}.csv\""),
        )
    })
}

#[test]
fn the_offered_load_warning_counts_bursts() {
    let d = tempfile::tempdir().unwrap();
    // `check` lists the scenario's warnings in its summary.
    let warnings = |s: &Path| {
        let o = out(bwsim().arg("check").arg(s));
        assert_ok(&o, "check");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // 12,500 jobs spread over 100 s offer GPU compute a load of 3.75.
    let spread = demo_with_trace(
        d.path(),
        "spread",
        (0..12_500).map(|i| f64::from(i) * 0.008),
    );
    let w = warnings(&spread);
    assert!(w.contains("offered load on"), "{w}");
    // The same jobs at t = 0, before one more an hour later: a low mean rate (there was
    // no warning), but a queue of 12,500 jobs.
    let burst = demo_with_trace(
        d.path(),
        "burst",
        std::iter::repeat_n(0.0, 12_500).chain([3600.0]),
    );
    let w = warnings(&burst);
    assert!(
        w.contains("a burst of the trace queues about 12500 jobs' demand on")
            && w.contains("at t = 0 s")
            && w.contains("of the trace's 12501 jobs"),
        "{w}"
    );
    // A burst of a tenth of the jobs warns; a few jobs arriving together do not.
    let tenth = demo_with_trace(
        d.path(),
        "tenth",
        std::iter::repeat_n(5.0, 200).chain((0..1800).map(|i| 10.0 + f64::from(i))),
    );
    let w = warnings(&tenth);
    assert!(w.contains("about 200 jobs' demand"), "{w}");
    let few = demo_with_trace(
        d.path(),
        "few",
        std::iter::repeat_n(5.0, 8).chain((0..1800).map(|i| 10.0 + f64::from(i))),
    );
    let w = warnings(&few);
    assert!(!w.contains("warning"), "{w}");
}

#[test]
fn a_trace_of_a_burst_is_written_event_by_event() {
    // 3,000 arrivals at t = 0 (each job's JSON values held at once took 180 KB a job:
    // 18 GB for 100,000). The trace is whole, and its lanes are the greedy ones.
    let d = tempfile::tempdir().unwrap();
    let s = demo_with_trace(d.path(), "zeros", std::iter::repeat_n(0.0, 3000));
    let trace = d.path().join("t.json");
    let o = out(bwsim()
        .arg("run")
        .arg(&s)
        .args([
            "--replications",
            "1",
            "--no-what-if",
            "--no-ideal",
            "--trace",
        ])
        .arg(&trace));
    assert_ok(&o, "run --trace");
    let doc: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let finalize: std::collections::BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == "finalize")
        .map(|e| e["args"]["job"].as_u64().unwrap())
        .collect();
    assert_eq!(finalize.len(), 3000);
    assert_eq!(doc["otherData"]["generator"], "bwsim");
}

#[test]
fn a_chart_of_too_many_series_is_refused_with_the_limit() {
    // 2,000 series took 2.2 GB to draw (a GPU panel each).
    let d = tempfile::tempdir().unwrap();
    let csv = |series: usize| {
        let mut t = String::from(
            "scenario,a,b,seeds,stalled,jobs_per_hour_mean,jobs_per_hour_ci95,\
             gpu.true_busy_frac_mean,gpu.true_busy_frac_ci95,bottleneck\n",
        );
        for b in 0..series {
            for a in [1, 2] {
                t.push_str(&format!("demo,{a},{b},1,0,{},,0.5,,dram\n", a * 10 + b));
            }
        }
        t
    };
    let many = d.path().join("many.csv");
    std::fs::write(&many, csv(2000)).unwrap();
    let o = out(bwsim().arg("plot").arg(&many));
    assert_input_error(
        &o,
        &[
            "many.csv",
            "2000 series",
            "values of b",
            "more than the 64 a chart draws",
        ],
        "2,000 series",
    );
    assert!(
        std::fs::read_dir(d.path()).unwrap().count() == 1,
        "no chart written"
    );
    for (series, refused) in [(64, false), (65, true)] {
        let table = bwsim::sweep::csv::from_csv(&csv(series)).unwrap();
        assert_eq!(
            bwsim::plot::too_many_series(&table).is_some(),
            refused,
            "{series}"
        );
    }
}

#[test]
fn a_whole_number_past_its_type_says_the_limit() {
    let d = tempfile::tempdir().unwrap();
    let s = demo_with(d.path(), "cores.toml", |t| {
        t.replace(
            "[hardware.gpu]",
            "[hardware.cpu]\nphysical_cores = 9223372036854775807\n\n[hardware.gpu]",
        )
    });
    assert_input_error(
        &out(bwsim().arg("check").arg(&s)),
        &[
            "hardware.cpu.physical_cores",
            "from 0 to 4294967295 (2^32 - 1)",
        ],
        "physical_cores",
    );
}
