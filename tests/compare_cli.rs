//! `bwsim compare`: the bundled hosts on the C2 scenario (README's table is this
//! command's output), JSON, the target fleet, the chart, and bad host files as input
//! errors naming file and key.

mod common;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const HOSTS: [&str; 4] = [
    "scenarios/hosts/c2-reference.toml",
    "scenarios/hosts/h200-host.toml",
    "scenarios/hosts/epyc-9555-2x5090.toml",
    "scenarios/hosts/tr-7970x-5070ti.toml",
];

fn compare(extra: &[&str]) -> Command {
    let mut c = Command::cargo_bin("bwsim").unwrap();
    c.args(["compare", "scenarios/c2-32g-cuzk.toml"]);
    for h in HOSTS {
        c.args(["--host", h]);
    }
    c.args(extra);
    c
}

/// Runs `cmd`, which must succeed, and parses its stdout as JSON.
fn json_of(mut cmd: Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

/// README's table is a sample that `tests/readme_samples.rs` regenerates; here: that it
/// is there, marked with the command it shows.
#[test]
fn readme_marks_the_table_as_a_regenerated_sample() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut args = vec!["compare", "scenarios/c2-32g-cuzk.toml"];
    for h in HOSTS {
        args.extend(["--host", h]);
    }
    args.extend(["--target-proofs-per-day", "5000"]);
    let mark = format!("<!-- sample: bwsim {} -->", args.join(" "));
    assert!(readme.contains(&mark), "README.md lacks {mark}");
}

#[test]
fn json_has_every_host_the_target_and_the_assumptions() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("hosts.png");
    let out = compare(&[
        "--format",
        "json",
        "--target-proofs-per-day",
        "3000",
        "--plot",
    ])
    .arg(&plot)
    .assert()
    .success()
    .get_output()
    .stdout
    .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 4);
    for h in hosts {
        let r = &h["result"];
        let ppd = r["proofs_per_day"].as_f64().unwrap();
        let spp = r["seconds_per_proof"].as_f64().unwrap();
        // proofs/day and s/proof describe the same steady state.
        assert!((ppd * spp / 86400.0 - 1.0).abs() < 0.05, "{h}");
        assert!(r["usd_per_proof"].as_f64().unwrap() > 0.0);
        assert!(
            r["ram_needed_gib"].as_f64().unwrap()
                <= h["profile"]["dram"]["ram_gib"].as_f64().unwrap() + 1e-9
        );
        // The bottleneck is the what-if step that saves most, as `run` names it; the
        // busiest resource is said apart.
        let bottleneck = r["bottleneck"].as_str().unwrap();
        assert!(
            (common::what_if_steps().iter())
                .any(|s| bottleneck.starts_with(&format!("{s} saves "))),
            "{h}"
        );
        assert!(!r["busiest"].as_str().unwrap().is_empty(), "{h}");
        // Three seeds by default: an interval, a few percent of the value at most.
        assert_eq!(r["seeds"], 3, "{h}");
        let ci = r["proofs_per_day_ci95"].as_f64().unwrap();
        assert!(ci > 0.0 && ci < 0.2 * ppd, "{h}");
        assert!(r["seconds_per_proof_ci95"].as_f64().unwrap() > 0.0, "{h}");
        // The prediction interval holds the seeds' mean and is far wider than their
        // scatter: a spec-sheet host carried from where the stages were measured.
        let p = &r["prediction"];
        let (lo, hi) = (
            p["jobs_per_day_low"].as_f64().unwrap(),
            p["jobs_per_day_high"].as_f64().unwrap(),
        );
        assert!(lo < ppd - ci && ppd + ci < hi, "{h}");
        assert!(hi / lo > 1.3 && hi / lo < 3.0, "{h}");
        assert_eq!(p["host"], "typical_stages_moved", "{h}");
    }
    // The ranking lists every host, most proofs/day first; the last has no next.
    let ranking = v["ranking"].as_array().unwrap();
    assert_eq!(ranking.len(), 4);
    let ppd_of = |name: &Value| {
        let h = hosts.iter().find(|h| &h["name"] == name).unwrap();
        h["result"]["proofs_per_day"].as_f64().unwrap()
    };
    for pair in ranking.windows(2) {
        assert!(
            ppd_of(&pair[0]["host"]) >= ppd_of(&pair[1]["host"]),
            "{pair:?}"
        );
        assert!(pair[0]["resolved_against_next"].is_boolean());
        assert!(pair[0]["resolved_by_prediction_against_next"].is_boolean());
    }
    assert!(ranking[3]["resolved_against_next"].is_null());
    // The reference box's best is near the scenario's documented 14-17: the smallest
    // setting inside the best's interval, on a top that is flat within a few percent.
    let best = hosts[0]["result"]["best"][0].as_str().unwrap();
    let c: u32 = best.split('=').nth(1).unwrap().parse().unwrap();
    assert!((11..=17).contains(&c), "{best}");
    // Every host's answer says the throughput line as `run` does.
    let line = hosts[0]["result"]["throughput"]["line"].as_str().unwrap();
    assert!(
        line.contains(" s/proof   ") && line.ends_with(" proofs/day"),
        "{line}"
    );
    let cheapest = &v["target"]["cheapest"];
    assert!(cheapest["total_proofs_per_day"].as_f64().unwrap() >= 3000.0);
    assert_eq!(v["amortise_years"], 3.0);
    assert!(!v["assumptions"].as_array().unwrap().is_empty());
    assert!(plot.is_file() && dir.path().join("hosts.svg").is_file());
}

#[test]
fn cost_flags_change_dollars_not_throughput() {
    // One seed per setting: dollars need no interval, and it saves two thirds of the runs.
    let run = |extra: &[&str]| -> Value {
        let mut args = vec!["--format", "json", "--replications", "1"];
        args.extend_from_slice(extra);
        json_of(compare(&args))
    };
    let a = run(&[]);
    let b = run(&["--amortise-years", "6", "--power-price-per-kwh", "0"]);
    let r = |v: &Value, k: &str| v["hosts"][0]["result"][k].as_f64().unwrap();
    assert_eq!(r(&a, "proofs_per_day"), r(&b, "proofs_per_day"));
    // Reference box: 17000 / (3 x 365) + 0.8 kW x 24 h x 0.15 vs 17000 / (6 x 365).
    assert!((r(&a, "daily_usd") - (17000.0 / 1095.0 + 0.8 * 24.0 * 0.15)).abs() < 1e-9);
    assert!((r(&b, "daily_usd") - 17000.0 / 2190.0).abs() < 1e-9);
    // A rented host ignores both.
    let h = |v: &Value| v["hosts"][1]["result"]["daily_usd"].as_f64().unwrap();
    assert_eq!(h(&a), 3.5 * 24.0);
    assert_eq!(h(&b), 3.5 * 24.0);
}

#[test]
fn bad_host_files_and_flags_are_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(HOSTS[0]).unwrap();
    let cases = [
        (
            "pcie_gen = 5",
            "pcie_gen = 9",
            "gpu.pcie_gen",
            "give 3, 4, 5 or 6",
        ),
        (
            "channels = 8",
            "chanels = 8",
            "dram",
            "unknown field `chanels`",
        ),
        (
            "price_usd = 17000",
            "price_usd = -1",
            "cost.price_usd",
            "> 0",
        ),
    ];
    for (from, to, key, allowed) in cases {
        assert!(good.contains(from), "{from}");
        let f = dir.path().join("bad.toml");
        std::fs::write(&f, good.replacen(from, to, 1)).unwrap();
        Command::cargo_bin("bwsim")
            .unwrap()
            .args(["compare", "scenarios/c2-32g-cuzk.toml", "--host"])
            .arg(&f)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("bad.toml"))
            .stderr(predicate::str::contains(key))
            .stderr(predicate::str::contains(allowed));
    }
    Command::cargo_bin("bwsim")
        .unwrap()
        .args([
            "compare",
            "scenarios/c2-32g-cuzk.toml",
            "--host",
            "/nonexistent.toml",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent.toml"));
    compare(&["--amortise-years", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--amortise-years"));
}

/// A setting whose measured proofs mostly start together at t = 0 (demo: 200 jobs at
/// 100,000 in flight) times one batch draining, at millions of proofs a day: it is no
/// result, so the best setting is the steady one, whatever the burst read.
#[test]
fn a_setting_without_a_steady_state_is_not_the_best() {
    let run = |search: &str| -> Value {
        let mut cmd = Command::cargo_bin("bwsim").unwrap();
        cmd.args(["compare", "scenarios/demo.toml"])
            .args(["--host", HOSTS[1], "--format", "json", "--search", search]);
        json_of(cmd)
    };
    let both = run("params.concurrency=4,100000");
    let result = &both["hosts"][0]["result"];
    assert_eq!(result["best"][0], "concurrency=4", "{both:#}");
    let alone = run("params.concurrency=4");
    assert_eq!(
        result["proofs_per_day"],
        alone["hosts"][0]["result"]["proofs_per_day"]
    );
    // Only settings without a steady state: the host has no result, and says why.
    let burst = run("params.concurrency=100000");
    let why = burst["hosts"][0]["error"].as_str().unwrap();
    assert!(why.contains("no steady state"), "{why}");
}

/// A --search no host could run is the command line's fault: exit 2 naming the flag,
/// not a table of hosts that "do not run".
#[test]
fn a_bad_search_is_an_input_error() {
    for (search, says) in [
        ("params.concurrency=1..100000000", "more than 10000"),
        ("params.nope=1..3", "unknown parameter \"nope\""),
        ("params.concurrency=1.5,2.5", "wrong type"),
    ] {
        Command::cargo_bin("bwsim")
            .unwrap()
            .args(["compare", "scenarios/demo.toml", "--host", HOSTS[1]])
            .args(["--search", search])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains("--search").and(predicate::str::contains(says)));
    }
}

/// The named setting is the smallest one inside the best's interval, as `sweep` names
/// its knee: the plateau (every setting as good as the highest mean) starts with it and
/// holds the highest mean; the table marks a plateau and lists its settings.
#[test]
fn the_best_setting_is_the_smallest_inside_the_best_interval_and_plateaus_are_marked() {
    let v = json_of(compare(&["--format", "json"]));
    for h in v["hosts"].as_array().unwrap() {
        let r = &h["result"];
        let plateau = r["plateau"].as_array().unwrap();
        assert_eq!(plateau[0], r["best"], "{h}");
        assert!(plateau.contains(&r["best_mean"]), "{h}");
    }
    let text = compare(&[]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains(" † |"), "{text}");
    assert!(
        text.contains("† a plateau: these settings are as good as the best"),
        "{text}"
    );
}

/// `compare` runs on every bundled C2 scenario, the multi-GPU ones included (their
/// `host_ram_gib` is an expression a host's number replaces, and their `gpus` knob takes
/// the host's count): every host gets a result or a reason, and the reference box runs
/// on all of them.
#[test]
fn compare_runs_on_every_bundled_c2_scenario() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut scenarios: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("c2-") && name.ends_with(".toml")
        })
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 6, "{scenarios:?}");
    for scenario in &scenarios {
        let mut cmd = Command::cargo_bin("bwsim").unwrap();
        cmd.arg("compare")
            .arg(scenario)
            .args(["--host", HOSTS[0], "--host", HOSTS[1]])
            .args(["--replications", "2", "--format", "json"]);
        let v = json_of(cmd);
        let hosts = v["hosts"].as_array().unwrap();
        assert!(
            hosts[0]["result"]["proofs_per_day"].as_f64().unwrap() > 0.0,
            "{}: {:#}",
            scenario.display(),
            hosts[0]
        );
        for h in hosts {
            let why = h["error"].as_str().unwrap_or_default();
            assert!(h["result"].is_object() || !why.is_empty(), "{h}");
            assert!(!why.contains("is an integer, but"), "{why}");
        }
        assert_eq!(v["job_name"], "proof", "{}", scenario.display());
    }
}

/// One host, two C2 scenarios: the answers agree within their intervals, or the table
/// says why not, naming what each scenario keeps on every host that the other says
/// differently (the reference box under the H200 calibration loses no DRAM capacity per
/// stream, under its own estimate it does).
#[test]
fn one_host_gives_one_answer_or_the_table_says_why_not() {
    let run = |scenario: &str| -> (Value, String) {
        let args = ["compare", scenario, "--host", HOSTS[0]];
        let mut cmd = Command::cargo_bin("bwsim").unwrap();
        cmd.args(args)
            .args(["--search", "params.synthesis_concurrency=9..17:2"]);
        let text = cmd.assert().success().get_output().stdout.clone();
        let mut cmd = Command::cargo_bin("bwsim").unwrap();
        cmd.args(args).args([
            "--search",
            "params.synthesis_concurrency=9..17:2",
            "--format",
            "json",
        ]);
        (json_of(cmd), String::from_utf8(text).unwrap())
    };
    let (a, a_text) = run("scenarios/c2-32g-cuzk.toml");
    let (b, b_text) = run("scenarios/c2-32g-h200.toml");
    let per_day = |v: &Value| {
        let t = &v["hosts"][0]["result"]["throughput"]["jobs_per_day"];
        (t["mean"].as_f64().unwrap(), t["ci95"].as_f64().unwrap())
    };
    let ((ma, ha), (mb, hb)) = (per_day(&a), per_day(&b));
    let overlap = (ma - mb).abs() <= ha + hb;
    let kept = |v: &Value| v["kept_host_model"].clone();
    if !overlap {
        assert_ne!(kept(&a), kept(&b), "two answers and no difference named");
        for (text, name) in [(&a_text, "c2-32g-cuzk"), (&b_text, "c2-32g-h200")] {
            assert!(
                text.contains(&format!("What `{name}` keeps on every host")),
                "{text}"
            );
        }
    }
    assert!(a_text.contains("DRAM efficiency: ") && b_text.contains("DRAM efficiency: "));
}

/// The chart: a bar per host with its 95% interval as a whisker and its value at the
/// interval's precision; the rented H200's $/proof, 25 times the others', puts that
/// panel on a log scale that says so.
#[test]
fn the_chart_has_error_bars_and_a_readable_dollar_scale() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("hosts.png");
    let out = compare(&["--format", "json", "--plot"])
        .arg(&plot)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let svg = std::fs::read_to_string(dir.path().join("hosts.svg")).unwrap();
    assert!(svg.contains("$/proof (log scale"), "no log scale note");
    assert!(svg.contains("95% interval"));
    let cell = v["hosts"][0]["result"]["throughput"]["line"]
        .as_str()
        .unwrap()
        .rsplit("   ")
        .next()
        .unwrap()
        .trim_end_matches(" proofs/day")
        .to_string();
    assert!(svg.contains(&cell), "the chart lacks {cell:?}");
}

/// The old name of the repeat count still works for a release, and says so.
#[test]
fn seeds_is_a_deprecated_name_of_replications() {
    let mut cmd = Command::cargo_bin("bwsim").unwrap();
    cmd.args(["compare", "scenarios/demo.toml", "--host", HOSTS[1]])
        .args([
            "--search",
            "params.concurrency=2,4",
            "--seeds",
            "2",
            "--format",
            "json",
        ]);
    let out = cmd.assert().success().get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--seeds is deprecated"), "{stderr}");
    assert!(stderr.contains("--replications"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hosts"][0]["result"]["seeds"], 2);
}

#[test]
fn hosts_the_seeds_tell_apart_but_the_model_error_does_not_are_not_ranked() {
    // The budget box and the same box with 28 of its 32 cores: about 10% apart, far
    // beyond three seeds' noise, well inside two ±25% prediction intervals.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("scenarios/hosts/tr-7970x-5070ti.toml").unwrap();
    let fewer = (text.replace("name = \"tr-7970x\"", "name = \"tr-28c\""))
        .replace("cores = 32 ", "cores = 28 ")
        .replace("threads = 64", "threads = 56");
    assert_ne!(fewer, text);
    let host = dir.path().join("tr-28c.toml");
    std::fs::write(&host, fewer).unwrap();
    let pair = || {
        let mut c = Command::cargo_bin("bwsim").unwrap();
        c.args(["compare", "scenarios/c2-32g-cuzk.toml"])
            .args(["--host", "scenarios/hosts/tr-7970x-5070ti.toml", "--host"])
            .arg(&host);
        c
    };
    let v = json_of({
        let mut c = pair();
        c.args(["--format", "json"]);
        c
    });
    let first = &v["ranking"][0];
    assert_eq!(first["host"], "tr-7970x", "{v:#}");
    assert_eq!(first["resolved_against_next"], true, "{first}");
    assert_eq!(
        first["resolved_by_prediction_against_next"], false,
        "{first}"
    );
    let md = pair().assert().success().get_output().stdout.clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("tr-7970x ~ tr-28c."), "{md}");
    assert!(md.contains("within the model's error"), "{md}");
}
