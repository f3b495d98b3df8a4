//! Golden outputs: every bundled scenario, oracle and example gives byte-identical
//! reports, TIMELINE logs, Chrome traces and sweep CSVs from one commit to the next.
//!
//! A refactor must leave every file in `tests/golden/` unchanged. A deliberate model
//! change regenerates them with `BWSIM_BLESS=1 cargo test --test golden` and says in its
//! commit which answers moved and why. The charts README.md and docs/ show
//! (`docs/images/`) are drawn by these same runs and held to them the same way. The only value masked is the simulator's own
//! wall-clock time (`engine.wall_s`, the text report's `engine` line, sweep timing).

use std::path::{Path, PathBuf};
use std::process::Command;

fn bwsim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bwsim"))
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Compares `actual` with the golden file `name`, or writes it under `BWSIM_BLESS=1`.
fn check_golden(name: &str, actual: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("BWSIM_BLESS").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (generate with BWSIM_BLESS=1 cargo test --test golden)",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its golden file at line {}:\n  golden: {}\n  now:    {}",
            line + 1,
            expected.lines().nth(line).unwrap_or("<end>"),
            actual.lines().nth(line).unwrap_or("<end>"),
        );
    }
}

/// Compares a chart bwsim drew (`drawn`) with the one the docs show,
/// `docs/images/{name}`, or copies it there under `BWSIM_BLESS=1`.
fn check_picture(name: &str, drawn: &Path) {
    let shown = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/images")
        .join(name);
    let drawn = std::fs::read(drawn).unwrap_or_else(|e| panic!("{}: {e}", drawn.display()));
    if std::env::var_os("BWSIM_BLESS").is_some() {
        std::fs::create_dir_all(shown.parent().unwrap()).unwrap();
        std::fs::write(&shown, drawn).unwrap();
        return;
    }
    let before = std::fs::read(&shown).unwrap_or_else(|e| panic!("{}: {e}", shown.display()));
    assert!(
        before == drawn,
        "{} is no longer what bwsim draws (redraw with BWSIM_BLESS=1 cargo test --test golden)",
        shown.display()
    );
}

/// Runs bwsim and returns its stdout; panics with stderr when the exit code is not `code`.
fn output(args: &[&str], code: i32) -> String {
    let out = bwsim()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("bwsim runs");
    assert_eq!(
        out.status.code(),
        Some(code),
        "bwsim {args:?}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `"wall_s":<number>` -> `"wall_s":"masked"`, wherever it stands in a JSON text.
fn mask_wall_s(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut rest = json;
    while let Some(at) = rest.find("\"wall_s\"") {
        let (head, tail) = rest.split_at(at + "\"wall_s\"".len());
        out.push_str(head);
        let tail = tail.trim_start_matches([':', ' ']);
        let end = tail
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
            .unwrap_or(tail.len());
        out.push_str(":\"masked\"");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// The text report without its `engine` line (wall-clock speed of the simulator).
fn mask_engine_line(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("engine ") {
                "engine <masked>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const SCENARIOS: &[&str] = &[
    "scenarios/demo.toml",
    "scenarios/c2-32g-cuzk.toml",
    "scenarios/c2-32g-stock.toml",
    "scenarios/c2-32g-h200.toml",
];

const ORACLES: &[&str] = &[
    "scenarios/oracles/closed.toml",
    "scenarios/oracles/md1.toml",
    "scenarios/oracles/md1_ps.toml",
    "scenarios/oracles/mm1.toml",
    "scenarios/oracles/mmc.toml",
    "scenarios/oracles/ps.toml",
];

fn stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// One run per scenario (`--replications 1`): every number of the report is that seed's.
#[test]
fn every_bundled_scenario_and_oracle_reports_as_before() {
    for path in SCENARIOS.iter().chain(ORACLES) {
        let json = output(&["run", path, "--replications", "1", "--format", "json"], 0);
        check_golden(&format!("run-{}.json", stem(path)), &mask_wall_s(&json));
    }
    for path in SCENARIOS {
        let text = output(&["run", path, "--replications", "1"], 0);
        check_golden(&format!("run-{}.txt", stem(path)), &mask_engine_line(&text));
        let summary = output(&["check", path], 0);
        check_golden(&format!("check-{}.txt", stem(path)), &summary);
    }
}

/// The default run (5 replications): the throughput as mean ± 95% interval, the rest
/// of the report from the first seed; the `engine` line and `wall_s` are masked as above.
#[test]
fn replicated_runs_report_as_before() {
    for path in ["scenarios/demo.toml", "scenarios/c2-32g-cuzk.toml"] {
        let text = output(&["run", path], 0);
        check_golden(
            &format!("run-replicated-{}.txt", stem(path)),
            &mask_engine_line(&text),
        );
        let json = output(&["run", path, "--format", "json"], 0);
        check_golden(
            &format!("run-replicated-{}.json", stem(path)),
            &mask_wall_s(&json),
        );
    }
    let what_if = output(
        &[
            "run",
            "scenarios/c2-32g-cuzk.toml",
            "--what-if",
            "params.synthesis_concurrency=8",
        ],
        0,
    );
    check_golden("what-if-c2-32g-cuzk.txt", &what_if);
}

#[test]
fn timeline_logs_and_traces_are_as_before() {
    let dir = tempfile::tempdir().unwrap();
    for path in SCENARIOS {
        let log = dir.path().join(format!("{}.log", stem(path)));
        let trace = dir.path().join(format!("{}.trace.json", stem(path)));
        output(
            &[
                "run",
                path,
                "--no-ideal",
                "--set",
                "arrivals.jobs=8",
                "--set",
                "arrivals.warmup_jobs=2",
                "--timeline-log",
                log.to_str().unwrap(),
                "--trace",
                trace.to_str().unwrap(),
            ],
            0,
        );
        let log = std::fs::read_to_string(&log).unwrap();
        check_golden(&format!("timeline-{}.log", stem(path)), &log);
        let trace = std::fs::read_to_string(&trace).unwrap();
        check_golden(&format!("trace-{}.json", stem(path)), &trace);
    }
    // The timeline README.md shows: the C2 reference's run above, drawn.
    let plots = dir.path().join("c2-run");
    output(
        &[
            "run",
            "scenarios/c2-32g-cuzk.toml",
            "--no-ideal",
            "--set",
            "arrivals.jobs=8",
            "--set",
            "arrivals.warmup_jobs=2",
            "--plot",
            plots.to_str().unwrap(),
        ],
        0,
    );
    check_picture("c2-run/timeline.png", &plots.join("timeline.png"));
    check_picture(
        "c2-run/timeline_steady.svg",
        &plots.join("timeline_steady.svg"),
    );
}

/// A sweep's CSV and JSON against their golden files, and the charts the docs show
/// (`charts`, SVG) against `docs/images/{name}/`.
fn sweep(args: &[&str], name: &str, charts: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep");
    let mut all = vec!["sweep", "scenarios/c2-32g-cuzk.toml", "--jobs", "2"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    output(&all, 0);
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    check_golden(&format!("sweep-{name}.csv"), &csv);
    let json = std::fs::read_to_string(out.join("sweep.json")).unwrap();
    check_golden(&format!("sweep-{name}.json"), &mask_wall_s(&json));
    for chart in charts {
        let file = format!("{chart}.svg");
        check_picture(&format!("{name}/{file}"), &out.join(&file));
    }
}

#[test]
fn the_example_concurrency_sweep_is_as_before() {
    sweep(
        &["--param", "params.synthesis_concurrency=1..32"],
        "c2-concurrency",
        &[
            "throughput",
            "gpu_utilisation",
            "gpu_breakdown",
            "inflation",
            "dram",
        ],
    );
}

#[test]
fn the_example_grid_sweep_is_as_before() {
    sweep(
        &[
            "--param",
            "params.synthesis_concurrency=2..32:2",
            "--param",
            "params.pinned_abc=true,false",
        ],
        "c2-pinned-grid",
        &["gpu_utilisation"],
    );
}

#[test]
fn masking_touches_only_wall_clock_values() {
    assert_eq!(
        mask_wall_s(r#"{"a":1,"engine":{"events":5,"wall_s":0.0123},"b":2e-3}"#),
        r#"{"a":1,"engine":{"events":5,"wall_s":"masked"},"b":2e-3}"#
    );
    assert_eq!(
        mask_wall_s("\"timing\": {\n    \"wall_s\": 1.5e-3,\n    \"jobs\": 2"),
        "\"timing\": {\n    \"wall_s\":\"masked\",\n    \"jobs\": 2"
    );
    assert_eq!(
        mask_engine_line("a\nengine 1 events in 2 s\nb"),
        "a\nengine <masked>\nb"
    );
}
