//! `bwsim compare`: the bundled hosts on the C2 scenario (README's table is this
//! command's output), JSON, the target fleet, the chart, and bad host files as input
//! errors naming file and key.

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

#[test]
fn readme_shows_the_table_the_command_prints() {
    let out = compare(&["--target-proofs-per-day", "5000"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.contains(&text),
        "README.md's compare table differs from the command's output; paste this:\n{text}"
    );
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
        assert!(!r["bottleneck"].as_str().unwrap().is_empty());
        // Three seeds by default: an interval, a few percent of the value at most.
        assert_eq!(r["seeds"], 3, "{h}");
        let ci = r["proofs_per_day_ci95"].as_f64().unwrap();
        assert!(ci > 0.0 && ci < 0.2 * ppd, "{h}");
        assert!(r["seconds_per_proof_ci95"].as_f64().unwrap() > 0.0, "{h}");
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
    }
    assert!(ranking[3]["resolved_against_next"].is_null());
    // The reference box's best is near the scenario's documented 14-17: with 3 seeds the
    // top of its curve is flat within about +-10% (model v2 picks 23, inside the interval
    // of the settings from 15 up), so the bound is the plateau, not the point.
    let best = hosts[0]["result"]["best"][0].as_str().unwrap();
    let c: u32 = best.split('=').nth(1).unwrap().parse().unwrap();
    assert!((11..=25).contains(&c), "{best}");
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
        let mut args = vec!["--format", "json", "--seeds", "1"];
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
