//! Hostile input, as a specification: one test per defect of issue 12 (numbered items
//! and the "Also" paragraph) that this branch fixes. Each asserts what bwsim does now:
//! a clear error naming the file and key (exit 2), a warning, or a prompt result.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use bwsim::scenario::{self, ErrorKind, ScenarioError};

/// A small valid scenario; `extra` is appended (later keys cannot repeat earlier ones).
const BASE: &str = r#"
[hardware]
cpu_cores = 4
host_ram_gib = 16
[[workload.stages]]
name = "a"
duration_s = 1
cores = 1
[[workload.stages]]
name = "b"
after = ["a"]
duration_s = 1
cores = 1
"#;

const CLOSED: &str = "[arrivals]\nkind = \"closed\"\nconcurrency = 2\njobs = 10\n";

fn load(text: &str) -> Result<scenario::Loaded, ScenarioError> {
    scenario::load_str(text, Path::new("hostile.toml"), &[])
}

fn load_err(text: &str) -> ScenarioError {
    match load(text) {
        Ok(_) => panic!("loaded, but should have been refused:\n{text}"),
        Err(e) => e,
    }
}

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("the bwsim binary is built")
}

/// Runs `cmd` with a deadline; returns (exit code, stdout, stderr). A hang fails the test.
fn run_within(cmd: Command, limit: Duration) -> (i32, String, String) {
    let out = common::output_within(cmd, limit);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Makes a FIFO `name` in `dir`; None where there is no `mkfifo`.
fn fifo_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    let made = Command::new("mkfifo").arg(&path).status();
    made.is_ok_and(|s| s.success()).then_some(path)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn defect_2_run_plot_without_dram_returns() {
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.toml", &format!("{BASE}{CLOSED}"));
    let mut cmd = bwsim();
    cmd.arg("run")
        .arg(&s)
        .arg("--no-ideal")
        .arg("--plot")
        .arg(dir.path().join("plots"));
    let (code, _, err) = run_within(cmd, Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(dir.path().join("plots/timeline.png").is_file(), "{err}");
}

#[test]
fn defect_2_plot_with_huge_csv_cells_returns() {
    let csv = std::fs::read_to_string("tests/golden/sweep-c2-concurrency.csv").unwrap();
    let mut lines: Vec<String> = csv.lines().take(4).map(String::from).collect();
    // Every numeric cell of one row, then one cell of another, at the edge of f64.
    let huge = |line: &str, all: bool| -> String {
        line.split(',')
            .enumerate()
            .map(|(i, c)| {
                if i >= 3 && !c.is_empty() && (all || i == 3) {
                    "1.7e308".to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    lines[1] = huge(&lines[1], true);
    lines[2] = huge(&lines[2], false);
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "sweep.csv", &(lines.join("\n") + "\n"));
    let mut cmd = bwsim();
    cmd.arg("plot").arg(&p);
    let (code, _, err) = run_within(cmd, Duration::from_secs(60));
    assert!(code == 0 || code == 2, "exit {code}: {err}");
}

#[test]
fn defect_2_axis_ranges_are_always_tickable() {
    use bwsim::plot::common::{AXIS_LIMIT, axis_range, log_axis_range};
    let nasty = [
        0.0,
        -0.0,
        1.7e308,
        -1.7e308,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-320,
        1e300,
    ];
    for &a in &nasty {
        for &b in &nasty {
            let (lo, hi) = axis_range(a, b);
            assert!(lo.is_finite() && hi.is_finite() && hi > lo, "{a} {b}");
            assert!((hi - lo).is_finite() && lo >= -2.0 * AXIS_LIMIT && hi <= 2.0 * AXIS_LIMIT);
            assert!(hi - lo >= hi.abs().max(lo.abs()) * 1e-10, "{a} {b}");
            let (lo, hi) = log_axis_range(a, b);
            assert!(lo > 0.0 && hi.is_finite() && hi > lo, "log {a} {b}");
        }
    }
}

#[test]
fn defect_3_trace_arrival_beyond_the_clock_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "time_s\n0\n1e300\n");
    let s = write(
        dir.path(),
        "s.toml",
        &format!("{BASE}[arrivals]\nkind = \"trace\"\ntrace = \"t.csv\"\n"),
    );
    let e = scenario::load(&s, &[]).unwrap_err();
    assert_eq!(e.key, "arrivals.trace", "{e}");
    assert!(e.to_string().contains("clock"), "{e}");
}

#[test]
fn defect_3_long_durations_overflowing_the_clock_name_the_key() {
    let text = BASE.replace(
        "duration_s = 1\ncores = 1\n[[",
        "duration_s = 1e9\ncores = 1\n[[",
    );
    let e = load_err(&format!(
        "{text}[arrivals]\nkind = \"closed\"\nconcurrency = 1\njobs = 100\n"
    ));
    assert_eq!(e.key, "arrivals.jobs", "{e}");
    assert!(e.to_string().contains("clock"), "{e}");
    let e = load_err(&format!(
        "{}{CLOSED}",
        BASE.replacen("duration_s = 1\n", "duration_s = 1e12\n", 1)
    ));
    assert_eq!(e.key, "workload.stages[0]", "{e}");
}

#[test]
fn defect_3_binary_exits_2_on_clock_overflow() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "time_s\n0\n1e300\n");
    let s = write(
        dir.path(),
        "s.toml",
        &format!("{BASE}[arrivals]\nkind = \"trace\"\ntrace = \"t.csv\"\n"),
    );
    let mut cmd = bwsim();
    cmd.arg("run").arg(&s);
    let (code, out, err) = run_within(cmd, Duration::from_secs(30));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("arrivals.trace"), "{err}");
}

#[test]
fn defect_7_huge_partitions_are_refused_before_allocating() {
    let text = format!(
        "{}{CLOSED}",
        BASE.replace(
            "[hardware]",
            "[workload]\npartitions = 1000000000\n[hardware]"
        )
    );
    let e = load_err(&text);
    assert_eq!(e.key, "workload.partitions", "{e}");
    assert!(e.to_string().contains("--max-events"), "{e}");
}

#[test]
fn defect_7_huge_gpu_count_is_refused() {
    let text = format!(
        "{BASE}{CLOSED}[hardware.gpu]\ncount = 1000000000\nvram_gib = 80\npcie_h2d_gbps = 50\npcie_d2h_gbps = 50\n"
    );
    let e = load_err(&text);
    assert_eq!(e.key, "hardware.gpu.count", "{e}");
}

#[test]
fn defect_7_huge_concurrency_and_jobs_are_refused() {
    let e = load_err(&format!(
        "{BASE}[arrivals]\nkind = \"closed\"\nconcurrency = 1000000000\njobs = 100000000\n"
    ));
    assert!(e.key.starts_with("arrivals."), "{e}");
    assert!(e.to_string().contains("GiB"), "{e}");
}

#[test]
fn defect_7_limits_can_be_raised() {
    let text = format!("{BASE}[arrivals]\nkind = \"closed\"\nconcurrency = 2\njobs = 1000000\n");
    let tight = scenario::Limits {
        max_events: 1000,
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.toml", &text);
    let e = scenario::load_with(&s, &[], &tight).unwrap_err();
    assert_eq!(e.key, "arrivals.jobs", "{e}");
    assert!(scenario::load_with(&s, &[], &scenario::Limits::default()).is_ok());
    let mut cmd = bwsim();
    cmd.arg("check").arg(&s).args(["--max-events", "1000"]);
    let (code, _, err) = run_within(cmd, Duration::from_secs(30));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-events"), "{err}");
}

#[test]
fn defect_7_open_arrivals_of_1e12_jobs_are_refused() {
    let e = load_err(&format!(
        "{BASE}[arrivals]\nkind = \"poisson\"\nrate_per_s = 0.1\njobs = 1000000000000\n"
    ));
    assert_eq!(e.key, "arrivals.jobs", "{e}");
}

#[test]
fn defect_7_non_regular_and_oversized_inputs_are_refused() {
    // /dev/zero as the scenario, as an include and as a trace: an error, not gigabytes.
    if Path::new("/dev/zero").exists() {
        let e = scenario::load(Path::new("/dev/zero"), &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Io);
        assert!(e.to_string().contains("regular file"), "{e}");
        let e = load_err(&format!("include = [\"/dev/zero\"]\n{BASE}{CLOSED}"));
        assert_eq!(e.key, "include", "{e}");
        assert!(e.to_string().contains("regular file"), "{e}");
        let e = load_err(&format!(
            "{BASE}[arrivals]\nkind = \"trace\"\ntrace = \"/dev/zero\"\n"
        ));
        assert_eq!(e.key, "arrivals.trace", "{e}");
    }
    let dir = tempfile::tempdir().unwrap();
    let e = scenario::load(dir.path(), &[]).unwrap_err();
    assert!(e.to_string().contains("directory"), "{e}");
    let big = write(dir.path(), "big.toml", &"# padding\n".repeat(2 << 20));
    let e = scenario::load(&big, &[]).unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}

#[cfg(unix)]
#[test]
fn defect_7_fifo_include_does_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_) = fifo_in(dir.path(), "fifo.toml") else {
        return; // no mkfifo here: nothing to test
    };
    let s = write(
        dir.path(),
        "s.toml",
        &format!("include = [\"fifo.toml\"]\n{BASE}{CLOSED}"),
    );
    let mut cmd = bwsim();
    cmd.arg("check").arg(&s);
    let (code, _, err) = run_within(cmd, Duration::from_secs(30));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("regular file"), "{err}");
}

/// Every file a command reads back (a calibration, measurements, a validate table, a
/// host profile, a replay's or a shard's JSON) is refused when it is a FIFO: reading one
/// would block until a writer came, which no one ever does.
#[cfg(unix)]
#[test]
fn also_fifos_as_calibration_measurement_and_result_files_do_not_hang() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fifo) = fifo_in(dir.path(), "fifo") else {
        return; // no mkfifo here: nothing to test
    };
    // Folders whose replay.json and shard.json are FIFOs.
    let replay = dir.path().join("replay-out");
    let shard = dir.path().join("shard-out");
    for (folder, name) in [(&replay, "replay.json"), (&shard, "shard.json")] {
        std::fs::create_dir(folder).unwrap();
        assert!(fifo_in(folder, name).is_some());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let calibration = root.join("scenarios/calibration/h200-host.toml");
    let scenario = root.join("scenarios/demo.toml");
    let f = fifo.to_str().unwrap();
    let merged = dir.path().join("merged");
    let cases: Vec<(Vec<&std::ffi::OsStr>, PathBuf)> = vec![
        (
            vec!["validate".as_ref(), "--calibration".as_ref(), f.as_ref()],
            fifo.clone(),
        ),
        (
            vec![
                "validate".as_ref(),
                "--calibration".as_ref(),
                calibration.as_os_str(),
                "--remeasured".as_ref(),
                f.as_ref(),
            ],
            fifo.clone(),
        ),
        (
            vec!["calibrate".as_ref(), "--refit".as_ref(), f.as_ref()],
            fifo.clone(),
        ),
        (
            vec![
                "compare".as_ref(),
                scenario.as_os_str(),
                "--host".as_ref(),
                f.as_ref(),
            ],
            fifo.clone(),
        ),
        (
            vec![
                "replay".as_ref(),
                scenario.as_os_str(),
                "--repredict".as_ref(),
                replay.as_os_str(),
            ],
            replay.join("replay.json"),
        ),
        (
            vec![
                "sweep".as_ref(),
                "merge".as_ref(),
                "--out".as_ref(),
                merged.as_os_str(),
                shard.as_os_str(),
            ],
            shard.join("shard.json"),
        ),
    ];
    for (args, named) in cases {
        let mut cmd = bwsim();
        cmd.args(&args).current_dir(dir.path());
        let (code, _, err) = run_within(cmd, Duration::from_secs(30));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&named.display().to_string()),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("regular file") || err.contains("not a readable file"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn defect_7_huge_sweep_grids_and_seed_counts_are_refused() {
    use bwsim::sweep::SpecError;
    use bwsim::sweep::grid::Grid;
    use bwsim::sweep::spec::parse_param;
    let params: Vec<_> = ["a=1..10000", "b=1..10000", "c=1..10000"]
        .iter()
        .map(|p| parse_param(p).unwrap())
        .collect();
    assert!(matches!(Grid::new(params), Err(SpecError::TooLarge { .. })));
    let g = Grid::new(vec![parse_param("a=1..10").unwrap()]).unwrap();
    assert!(g.check_runs(3).is_ok());
    assert!(matches!(
        g.check_runs(4_294_967_295),
        Err(SpecError::TooLarge { .. })
    ));
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.toml", &format!("{BASE}{CLOSED}"));
    let mut cmd = bwsim();
    cmd.arg("sweep")
        .arg(&s)
        .args([
            "--param",
            "arrivals.jobs=1..10",
            "--replications",
            "4294967295",
        ])
        .arg("--out")
        .arg(dir.path().join("out"));
    let (code, _, err) = run_within(cmd, Duration::from_secs(30));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("seeds"), "{err}");
}

#[test]
fn defect_9_overloaded_open_queue_warns() {
    let open = |rate: f64| {
        format!("{BASE}[arrivals]\nkind = \"poisson\"\nrate_per_s = {rate}\njobs = 100\n")
    };
    // Each job holds a core for 2 s in all; 4 cores serve 2 jobs/s.
    let l = load(&open(5.0)).unwrap();
    let w = l.summary.overload.expect("an overload warning");
    assert!(w.contains("CPU cores") && w.contains(">= 1"), "{w}");
    assert!(l.summary.warnings.contains(&w));
    assert!(load(&open(0.5)).unwrap().summary.overload.is_none());
    let dir = tempfile::tempdir().unwrap();
    let s = write(dir.path(), "s.toml", &open(5.0));
    let mut cmd = bwsim();
    cmd.arg("run").arg(&s).arg("--no-ideal");
    let (code, out, err) = run_within(cmd, Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning:") && err.contains("offered load"),
        "{err}"
    );
    assert!(
        out.contains("offered load"),
        "the report's notes carry it:\n{out}"
    );
}

#[test]
fn defect_10_reversed_span_is_refused() {
    let instr = |from: &str, to: &str| {
        format!(
            "{BASE}{CLOSED}[[instrumentation.markers]]\nname = \"S\"\nat = \"a:start\"\n\
             [[instrumentation.markers]]\nname = \"E\"\nat = \"b:end\"\n\
             [[instrumentation.spans]]\nname = \"X\"\nfrom = \"{from}\"\nto = \"{to}\"\n"
        )
    };
    assert!(load(&instr("S", "E")).is_ok());
    let e = load_err(&instr("E", "S"));
    assert_eq!(e.key, "instrumentation.spans[0].to", "{e}");
    assert!(e.to_string().contains("swapped"), "{e}");
    let e = load_err(&instr("S", "nope"));
    assert_eq!(e.kind, ErrorKind::Reference, "{e}");
}

#[test]
fn also_deep_include_chains_are_refused_not_overflowed() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 200;
    for i in 0..depth {
        write(
            dir.path(),
            &format!("i{i}.toml"),
            &format!("include = [\"i{}.toml\"]\n", i + 1),
        );
    }
    write(dir.path(), &format!("i{depth}.toml"), "");
    let s = write(
        dir.path(),
        "s.toml",
        &format!("include = [\"i0.toml\"]\n{BASE}{CLOSED}"),
    );
    let e = scenario::load(&s, &[]).unwrap_err();
    assert_eq!(e.key, "include", "{e}");
    assert!(e.to_string().contains("deep"), "{e}");
}

#[test]
fn also_deeply_nested_expressions_are_refused_not_overflowed() {
    let n = 100_000;
    let expr = format!("= {}1{}", "(".repeat(n), ")".repeat(n));
    let text = format!("{BASE}{CLOSED}[params]\nx = {{ default = \"{expr}\" }}\n");
    let e = load_err(&text);
    assert_eq!(e.kind, ErrorKind::Param, "{e}");
    assert!(e.to_string().contains("params.x"), "{e}");
    // A modest nesting still works.
    let text = format!(
        "{BASE}{CLOSED}[params]\nx = {{ default = \"= {}2{}\" }}\n",
        "(".repeat(20),
        ")".repeat(20)
    );
    assert!(load(&text).is_ok());
}

#[test]
fn also_long_parameter_chains_are_refused_not_overflowed() {
    let mut text = format!("{BASE}{CLOSED}[params]\np0 = 1\n");
    for i in 1..5000 {
        text.push_str(&format!("p{i} = \"$p{}\"\n", i - 1));
    }
    let e = load_err(&text);
    assert_eq!(e.kind, ErrorKind::Param, "{e}");
}

#[test]
fn also_16000_stage_chain_loads_in_linear_time() {
    let mut text = String::from("[hardware]\ncpu_cores = 4\n");
    for i in 0..16_000 {
        text.push_str(&format!(
            "[[workload.stages]]\nname = \"s{i}\"\nduration_s = 0.001\ncores = 1\n"
        ));
        if i > 0 {
            text.push_str(&format!("after = [\"s{}\"]\n", i - 1));
        }
    }
    text.push_str("[arrivals]\nkind = \"closed\"\nconcurrency = 1\njobs = 1\n");
    let start = Instant::now();
    let l = load(&text).unwrap();
    let took = start.elapsed();
    assert_eq!(l.model.workload.stages.len(), 16_000);
    // A complexity guard, not a timing: quadratic loading took 14 s for 8,000 stages, so
    // about a minute for these 16,000; linear takes well under a second, and the bound
    // leaves a busy CI machine 30x room.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn also_80k_knobs_load_in_linear_time() {
    let mut text = format!("{BASE}{CLOSED}[params]\n");
    for i in 0..80_000 {
        text.push_str(&format!("k{i} = {{ default = {i}, doc = \"knob {i}\" }}\n"));
    }
    let start = Instant::now();
    let l = load(&text).unwrap();
    let took = start.elapsed();
    assert_eq!(l.params.len(), 80_000);
    // A complexity guard, not a timing: quadratic loading took 31 s for 40,000 knobs, so
    // about two minutes for these 80,000; linear takes a second or two.
    assert!(took < Duration::from_secs(45), "took {took:?}");
}

#[test]
fn also_lognormal_with_huge_std_is_an_input_error() {
    let text = format!(
        "{}{CLOSED}",
        BASE.replacen(
            "duration_s = 1\n",
            "duration = { dist = \"lognormal\", mean_s = 1, std_s = 1e300 }\n",
            1
        )
    );
    let e = load_err(&text);
    assert!(e.key.ends_with("duration.std_s"), "{e}");
}

#[test]
fn also_seed_beyond_i64_and_309_digit_numbers_are_clear() {
    let e = load_err(&format!("seed = 9223372036854775808\n{BASE}{CLOSED}"));
    assert!(e.to_string().contains("hostile.toml"), "{e}");
    assert!(e.line_col.is_some(), "{e}");
    let big = "9".repeat(309);
    let e = load_err(&format!(
        "{BASE}[arrivals]\nkind = \"closed\"\nconcurrency = 2\njobs = {big}\n"
    ));
    assert!(e.line_col.is_some(), "{e}");
    let e = load_err(&format!(
        "{BASE}[arrivals]\nkind = \"closed\"\nconcurrency = 2\njobs = {big}.0\n"
    ));
    assert!(e.to_string().contains("arrivals.jobs"), "{e}");
}

#[test]
fn also_utf8_bom_trace_csv_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "t.csv", "\u{feff}time_s\n0\n1\n2\n");
    let s = write(
        dir.path(),
        "s.toml",
        &format!("{BASE}[arrivals]\nkind = \"trace\"\ntrace = \"t.csv\"\n"),
    );
    let l = scenario::load(&s, &[]).unwrap();
    assert_eq!(l.model.arrivals.jobs, 3);
}

#[test]
fn also_set_errors_name_the_set() {
    let sets = [
        "arrivals.jobs=0",
        "arrivals.concurrency=-1",
        "arrivals.kind=nope",
        "workload.stages[0].duration_s=-1",
        "workload.stages[7].duration_s=1",
        "hardware.cpu_cores=x",
        "nope.key=1",
        "=1",
        "a[x]=1",
    ];
    for set in sets {
        let e = scenario::load_str(
            &format!("{BASE}{CLOSED}"),
            Path::new("hostile.toml"),
            &[set.to_string()],
        )
        .unwrap_err();
        assert!(
            e.set.is_some() && e.to_string().contains("--set"),
            "--set {set}: {e}"
        );
    }
}
