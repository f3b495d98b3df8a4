//! Fuzzing with proptest: generated and mutated scenario files, `--set` strings, sweep
//! SPECs and CSVs must never panic or hang; what loads (under tight limits) must run.
//! A few cases go through the binary, whose exit code must be 0, 1 or 2.
//!
//! CI runs a bounded number of cases (about a minute on 2 cores); set `PROPTEST_CASES`
//! for longer runs. Inputs worth keeping live in `tests/fuzz_corpus/` (scenario files as
//! `.toml`, sweep `--param` arguments one per line as `.spec`) and are replayed by
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
    (
        0..bundled.len(),
        proptest::collection::vec(
            (any::<prop::sample::Index>(), 0usize..3, "[ -~\n]{0,12}"),
            1..4,
        ),
    )
        .prop_map(move |(i, edits)| {
            let mut t = std::fs::read_to_string(scenarios_dir().join(bundled[i])).unwrap();
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
        })
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
            Path::new(env!("CARGO_MANIFEST_DIR")).join("output/examples/c2-concurrency/sweep.csv"),
        ).unwrap();
        let header = csv.lines().next().unwrap().to_string();
        let sweep = format!("{header}\n{}", body.join("\n"));
        within(Duration::from_secs(5), move || {
            let _ = bwsim::scenario::trace_csv::parse(&trace);
            let _ = bwsim::sweep::csv::from_csv(&sweep);
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&p).unwrap();
            load_and_run(text, Vec::new());
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
