//! Fuzzing with proptest: generated and mutated scenario files, `--set` strings, sweep
//! SPECs and CSVs must never panic or hang; what loads (under tight limits) must run.
//! The files bwsim reads back are fuzzed the same way: host profiles (`compare --host`),
//! a shard's `shard.json` (`sweep merge`) and a replay's `replay.json` (`replay
//! --repredict`), mutated from real ones, must be refused with a message or accepted,
//! never panic or hang; so must cuzk logs (`bwsim log`), mutated from the real-format
//! fixtures, whatever their warm-up and workers per GPU. A few cases go through the binary, whose exit code must be 0, 1
//! or 2.
//!
//! CI runs a bounded number of cases (about a minute on 2 cores); set `PROPTEST_CASES`
//! for longer runs. Inputs worth keeping live in `tests/fixtures/fuzz-corpus/` (scenario files as
//! `.toml`, sweep `--param` arguments one per line as `.spec`, shard files as `.json`;
//! `shard.json` is also the seed the shard fuzzer mutates) and are replayed by
//! `corpus_replays_without_panic`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use proptest::prelude::*;

use bwsim::scenario::{self, Limits};

/// Cases per property: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Tight limits keep every case that loads fast to run.
const TIGHT: Limits = Limits {
    max_events: 20_000,
    max_memory_bytes: 64 << 20,
};

/// Runs `f` on a thread and fails if it does not return within `limit` (a hang).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("no result within {limit:?}: a hang"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the case panicked"),
    }
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Loads `text` as if it were a file in `scenarios/` and, when it loads under the tight
/// limits, runs it. Returns whether it loaded.
fn load_and_run(text: String, sets: Vec<String>) -> bool {
    within(Duration::from_secs(20), move || {
        let origin = scenarios_dir().join("fuzz.toml");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fuzz.toml");
        std::fs::write(&path, &text).unwrap();
        // Through a real file (includes resolve beside it) and as text in scenarios/.
        let _ = scenario::load_with(&path, &sets, &TIGHT);
        match scenario::load_str_with(&text, &origin, &sets, &TIGHT) {
            Ok(l) => {
                let _ = bwsim::run::run_model(&l.model);
                true
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                false
            }
        }
    })
}

/// A number as a scenario might spell it, including hostile ones.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..100).prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        Just("1e300".to_string()),
        Just("-0.0".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just("9223372036854775808".to_string()),
        Just("\"= (1 + 2) * 3\"".to_string()),
        Just("\"12 GiB\"".to_string()),
        Just("\"5 ms\"".to_string()),
        Just("\"$x\"".to_string()),
        Just("true".to_string()),
    ]
}

/// A structured scenario with every value drawn from [`number`].
fn scenario_text() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(number(), 12),
        prop_oneof![Just("closed"), Just("poisson"), Just("trace"), Just("nope")],
        prop_oneof![
            Just("fixed"),
            Just("exponential"),
            Just("lognormal"),
            Just("normal"),
            Just("uniform"),
            Just("gamma"),
            Just("weibull"),
            Just("erlang")
        ],
        any::<bool>(),
    )
        .prop_map(|(n, kind, dist, gpu)| {
            let mut t = format!(
                "seed = {}\n[hardware]\ncpu_cores = {}\nhost_ram_gib = {}\ndram = {{ capacity_gbps = {} }}\n",
                n[0], n[1], n[2], n[3]
            );
            if gpu {
                t.push_str(&format!(
                    "[hardware.gpu]\ncount = {}\nvram_gib = 80\npcie_h2d_gbps = 50\npcie_d2h_gbps = 50\n",
                    n[4]
                ));
            }
            t.push_str(&format!(
                "[workload]\npartitions = {}\n[[workload.stages]]\nname = \"a\"\nduration = {{ dist = \"{dist}\", mean_s = {}, std_s = {}, value_s = {}, min_s = 0, max_s = {}, shape = 2, scale_s = 1, k = 2 }}\ncores = 1\ndram_gbps = {}\n",
                n[5], n[6], n[7], n[6], n[7], n[8]
            ));
            t.push_str("[[workload.stages]]\nname = \"b\"\nafter = [\"a\"]\nduration_s = 0.5\nper_partition = false\n");
            t.push_str(&format!(
                "[arrivals]\nkind = \"{kind}\"\nconcurrency = {}\nrate_per_s = {}\njobs = {}\n[params]\nx = 1\n",
                n[9], n[10], n[11]
            ));
            t
        })
}

/// A bundled scenario with a few random edits (replace, delete or insert a span).
fn mutated_bundled() -> impl Strategy<Value = String> {
    let bundled = ["demo.toml", "c2-32g-stock.toml", "c2-32g-cuzk.toml"];
    (0..bundled.len(), edits()).prop_map(move |(i, edits)| {
        let t = std::fs::read_to_string(scenarios_dir().join(bundled[i])).unwrap();
        mutate(t, edits)
    })
}

/// `text` with a few edits: insert (0), delete (1) or replace (2) a span at an index.
fn mutate(mut t: String, edits: Vec<(prop::sample::Index, usize, String)>) -> String {
    for (at, op, s) in edits {
        let mut pos = at.index(t.len() + 1);
        while !t.is_char_boundary(pos) {
            pos -= 1;
        }
        match op {
            0 => t.insert_str(pos, &s),
            1 => {
                let mut end = (pos + s.len().max(1)).min(t.len());
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                t.replace_range(pos..end, "");
            }
            _ => {
                let mut end = (pos + s.len()).min(t.len());
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                t.replace_range(pos..end, &s);
            }
        }
    }
    t
}

/// Edits for [`mutate`]: up to three, of printable text (newlines too).
fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, String)>> {
    proptest::collection::vec(
        (any::<prop::sample::Index>(), 0usize..3, "[ -~\n]{0,12}"),
        1..4,
    )
}

/// A JSON value swapped in by [`mutate_json`]: hostile numbers, wrong types, huge counts.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    prop_oneof![
        Just(json!(null)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1e308)),
        Just(json!(-5.5)),
        Just(json!(u64::MAX)),
        Just(json!(100_000_000u64)),
        Just(json!("x")),
        Just(json!([1, "x"])),
        Just(json!({})),
        Just(json!([])),
        any::<i64>().prop_map(|n| json!(n)),
    ]
}

/// `v` with the value at a random path (one of its nodes, by walk order) replaced.
fn mutate_json(v: &mut serde_json::Value, at: prop::sample::Index, with: serde_json::Value) {
    fn count(v: &serde_json::Value) -> usize {
        1 + match v {
            serde_json::Value::Array(a) => a.iter().map(count).sum(),
            serde_json::Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    fn walk(v: &mut serde_json::Value, n: &mut usize, with: &mut Option<serde_json::Value>) {
        if *n == 0 {
            if let Some(w) = with.take() {
                *v = w;
            }
            return;
        }
        *n -= 1;
        match v {
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, n, with)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| walk(x, n, with)),
            _ => {}
        }
    }
    let mut n = at.index(count(v));
    walk(v, &mut n, &mut Some(with));
}

/// Host profiles as bwsim reads them (`compare --host`) and maps them onto a scenario.
fn host_survives(text: String) {
    within(Duration::from_secs(10), move || {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("host.toml");
        std::fs::write(&f, &text).unwrap();
        if let Ok(host) = bwsim::compare::load_host(&f) {
            let knobs = bwsim::compare::ScenarioKnobs {
                params: vec!["concurrency".into()],
                pools: vec!["cpu".into()],
                cpu_pool_stages: vec![("msm".into(), 64.0)],
                smt_yield: Some(1.2),
                measured_on: false,
            };
            let sets = bwsim::compare::host_overrides(&host, &knobs);
            let _ = bwsim::scenario::load_with(&scenarios_dir().join("demo.toml"), &sets, &TIGHT);
            let _ = host.dram_gbps();
        }
    });
}

/// A real shard.json (from the corpus), read, validated and merged as `sweep merge`
/// does; a mutated one must be refused with a message or merge, never panic or hang.
fn shard_survives(text: String) {
    within(Duration::from_secs(10), move || {
        let Ok(file) = serde_json::from_str::<bwsim::sweep::ShardFile>(&text) else {
            return;
        };
        let Ok(params) = (file.sweep.params.iter())
            .map(|p| bwsim::sweep::parse_param(p))
            .collect::<Result<Vec<_>, _>>()
        else {
            return;
        };
        let Ok(grid) = bwsim::sweep::Grid::new(params) else {
            return;
        };
        if let Err(e) = bwsim::sweep::shard::validate(&file, "shard.json", &grid) {
            assert!(e.to_string().contains("shard.json"), "{e}");
            return;
        }
        let other = {
            let mut o = file.clone();
            o.shard.index = o.shard.index.wrapping_add(1) % o.shard.count.max(1);
            o
        };
        let names = ["a".to_string(), "b".to_string()];
        let _ = bwsim::sweep::shard::merge(&[file, other], &names, &grid);
    });
}

/// A replay.json, read and checked as `replay --repredict` reads it.
fn replay_survives(text: String) {
    within(Duration::from_secs(10), move || {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("replay.json"), &text).unwrap();
        if let Err(e) = bwsim::replay::repredict::check_replay_file(dir.path()) {
            assert!(e.to_string().contains("replay.json"), "{e}");
        }
    });
}

/// A cuzk log, read and analysed as `bwsim log` does: never a panic or a hang, and GPU
/// busy a fraction.
fn log_survives(text: String, warmup_jobs: usize, per_gpu: u32) {
    within(Duration::from_secs(10), move || {
        let mut log = bwsim::cuzk_log::ParsedLog::default();
        log.add_text("fuzz.log", &text);
        let opts = bwsim::cuzk_log::AnalyseOptions {
            warmup_jobs,
            workers: bwsim::cuzk_log::WorkerLayout {
                per_gpu,
                source: "fuzz".into(),
                explicit: true,
            },
        };
        let a = bwsim::cuzk_log::analyse(&log, &opts);
        let files = ["fuzz.log".to_string()];
        let _ = bwsim::cuzk_log::report::to_text(&files, &log, &a);
        let _ = bwsim::cuzk_log::report::to_json(&files, &log, &a);
    });
}

fn log_fixture(i: usize) -> String {
    let names = ["porep-1gpu-stderr.log", "mixed-2gpu-journald-crlf.log"];
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cuzk-logs")
            .join(names[i]),
    )
    .unwrap()
}

fn corpus(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fuzz-corpus")
            .join(name),
    )
    .unwrap()
}

fn replay_json() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/runs/replay/h200-run2/replay.json"),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(cases(48))]

    #[test]
    fn structured_scenarios_never_panic(text in scenario_text()) {
        load_and_run(text, Vec::new());
    }

    #[test]
    fn mutated_bundled_scenarios_never_panic(text in mutated_bundled()) {
        load_and_run(text, Vec::new());
    }

    #[test]
    fn set_strings_never_panic(
        key in prop_oneof![
            Just("arrivals.jobs".to_string()),
            Just("params.concurrency".to_string()),
            Just("workload.stages[0].duration_s".to_string()),
            Just("workload.partitions".to_string()),
            Just("hardware.gpu.count".to_string()),
            "[a-z_.\\[\\]0-9]{0,20}",
        ],
        value in prop_oneof![number(), "[ -~]{0,16}"],
    ) {
        let demo = std::fs::read_to_string(scenarios_dir().join("demo.toml")).unwrap();
        load_and_run(demo, vec![format!("{key}={value}")]);
    }

    #[test]
    fn mutated_host_profiles_never_panic(
        i in 0usize..4,
        e in edits(),
    ) {
        let hosts = [
            "c2-reference.toml",
            "h200-host.toml",
            "epyc-9555-2x5090.toml",
            "tr-7970x-5070ti.toml",
        ];
        let text = std::fs::read_to_string(scenarios_dir().join("hosts").join(hosts[i])).unwrap();
        host_survives(mutate(text, e));
    }

    #[test]
    fn mutated_shard_files_never_panic(
        at in any::<prop::sample::Index>(),
        with in json_value(),
        e in edits(),
        textual in any::<bool>(),
    ) {
        let text = corpus("shard.json");
        if textual {
            shard_survives(mutate(text, e));
        } else {
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            mutate_json(&mut v, at, with);
            shard_survives(v.to_string());
        }
    }

    #[test]
    fn mutated_replay_files_never_panic(
        at in any::<prop::sample::Index>(),
        with in json_value(),
        e in edits(),
        textual in any::<bool>(),
    ) {
        let text = replay_json();
        if textual {
            replay_survives(mutate(text, e));
        } else {
            let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
            mutate_json(&mut v, at, with);
            replay_survives(v.to_string());
        }
    }

    #[test]
    fn mutated_cuzk_logs_never_panic(
        i in 0usize..2,
        e in edits(),
        warmup in 0usize..40,
        per_gpu in 0u32..5,
    ) {
        log_survives(mutate(log_fixture(i), e), warmup, per_gpu);
    }

    #[test]
    fn sweep_specs_never_panic(spec in "[ -~]{0,24}", key in "[a-z.]{0,12}") {
        let arg = format!("{key}={spec}");
        let params = within(Duration::from_secs(5), move || {
            bwsim::sweep::parse_param(&arg).map(|p| p.values.len())
        });
        if let Ok(n) = params {
            prop_assert!(n <= bwsim::sweep::spec::MAX_VALUES);
        }
    }

    #[test]
    fn csvs_never_panic(rows in proptest::collection::vec(
        proptest::collection::vec(prop_oneof![number(), "[ -~]{0,8}"], 1..5), 0..6)
    ) {
        let body: Vec<String> = rows.iter().map(|r| r.join(",")).collect();
        let trace = format!("time_s\n{}", body.join("\n"));
        let csv = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/sweep-c2-concurrency.csv"),
        ).unwrap();
        let header = csv.lines().next().unwrap().to_string();
        let sweep = format!("{header}\n{}", body.join("\n"));
        within(Duration::from_secs(5), move || {
            let _ = bwsim::scenario::trace_csv::parse(&trace);
            let _ = bwsim::sweep::csv::from_csv(&sweep);
        });
    }
}

/// The stall case of issue 50: downloads and a CPU stream on the bundled H200 host.
const DOWNLOADS: &str = r#"
name = "downloads"
include = ["calibration/h200-host.toml"]
[hardware]
host_ram_gib = 64
[hardware.locks]
gpu_mutex = { capacity = 1, per_gpu = true }
[[workload.stages]]
name = "copy"
duration_s = 0.5
cores = 1
dram_gb = 6
[[workload.stages]]
name = "kernel"
after = ["copy"]
duration_s = 0.02
gpu_kernel = true
holds = [{ resource = "gpu_mutex", until = "download" }]
[[workload.stages]]
name = "download"
after = ["kernel"]
transfer = { dir = "d2h", gb = 0.537, pinned = true }
[arrivals]
kind = "closed"
concurrency = 4
jobs = 12
"#;

/// A host key a calibration writes, for [`calibration_sets_always_progress`].
fn host_key() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "hardware.gpu.d2h_dram_factor",
        "hardware.gpu.h2d_dram_factor",
        "hardware.gpu.pageable_copy_dram_factor",
        "hardware.gpu.pinned_d2h_latency_frac",
        "hardware.gpu.pageable_d2h_latency_frac",
        "hardware.gpu.pcie_d2h_gbps",
        "hardware.gpu.pageable_d2h_gbps",
        "hardware.gpu.count",
        "hardware.gpu.pageable_staging.d2h.memcpy_gbps",
        "hardware.gpu.pageable_staging.d2h.setup_s",
        "hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent",
        "hardware.dram.capacity_gbps",
        "hardware.dram.lines_in_flight_per_thread",
        "hardware.dram.efficiency_loss_per_stream",
        "hardware.dram.dma_d2h.policy",
        "workload.stages[2].transfer.pinned",
        "workload.stages[2].transfer.dir",
        "arrivals.concurrency",
    ])
}

proptest! {
    #![proptest_config(cases(48))]

    /// Calibration keys set to anything, hostile values too: what loads runs to its end,
    /// every automatic what-if step included (a stage that sharing slowed never pushes the
    /// clock past its range), or the run fails with an error that names the stage.
    #[test]
    fn calibration_sets_always_progress(
        sets in proptest::collection::vec(
            (host_key(), prop_oneof![
                number(),
                Just("\"priority\"".to_string()),
                Just("\"max-min\"".to_string()),
                Just("\"h2d\"".to_string()),
                Just("false".to_string()),
            ]),
            1..5,
        ),
    ) {
        let sets: Vec<String> = sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
        within(Duration::from_secs(20), move || {
            let origin = scenarios_dir().join("downloads.toml");
            let Ok(l) = scenario::load_str_with(DOWNLOADS, &origin, &sets, &TIGHT) else {
                return;
            };
            let limits = bwsim::engine::EngineLimits { max_events: TIGHT.max_events };
            let opts = bwsim::run::RunOptions { ideal: false };
            let base = bwsim::run::run_model_within(&l.model, opts, limits, &mut bwsim::engine::NullObserver);
            let check = |e: &bwsim::engine::EngineError| {
                assert!(
                    !matches!(e, bwsim::engine::EngineError::ClockOverflow { .. }),
                    "{sets:?}: {e}"
                );
            };
            match base {
                Ok(r) => {
                    let knobs = bwsim::run::what_if::what_ifs(&l.model, r.seconds_per_job, limits);
                    for f in &knobs.failed {
                        assert!(!f.reason.contains("clock overflowed"), "{sets:?}: {}", f.reason);
                    }
                }
                Err(e) => check(&e),
            }
        });
    }
}

proptest! {
    #![proptest_config(cases(6))]

    /// A few generated scenarios through the binary: exit 0, 1 or 2, never 101 or a hang.
    #[test]
    fn binary_exit_codes_are_0_1_or_2(text in scenario_text()) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.toml");
        std::fs::write(&p, &text).unwrap();
        let code = within(Duration::from_secs(60), move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_bwsim"))
                .args(["run", "--no-ideal", "--max-events", "20000"])
                .arg(&p)
                .output()
                .unwrap()
                .status
                .code()
        });
        prop_assert!(matches!(code, Some(0..=2)), "exit {code:?} for\n{text}");
    }
}

/// Every committed corpus input loads or is refused without a panic or a hang.
#[test]
fn corpus_replays_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz-corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&p).unwrap();
            load_and_run(text, Vec::new());
            n += 1;
        }
        // A shard's shard.json: read, validated and merged as `sweep merge` does.
        if p.extension().is_some_and(|e| e == "json") {
            shard_survives(std::fs::read_to_string(&p).unwrap());
            n += 1;
        }
        // Sweep `--param` arguments, one per line: parsed, never a panic.
        if p.extension().is_some_and(|e| e == "spec") {
            for arg in std::fs::read_to_string(&p).unwrap().lines() {
                let arg = arg.to_string();
                let parsed = within(Duration::from_secs(5), move || {
                    bwsim::sweep::parse_param(&arg).map(|p| p.values.len())
                });
                if let Ok(len) = parsed {
                    assert!(len <= bwsim::sweep::spec::MAX_VALUES);
                }
                n += 1;
            }
        }
    }
    assert!(n > 0, "no corpus in {}", dir.display());
}
