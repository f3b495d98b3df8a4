//! What a capacity planner reads, run as the planner runs it: DRAM is shown at its usable
//! capacity beside the nominal one.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn bwsim() -> Command {
    Command::cargo_bin("bwsim").expect("the bwsim binary is built")
}

fn scenario(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(rel)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_json(file: &Path) -> Value {
    let out = bwsim()
        .arg("run")
        .arg(file)
        .args(["--format", "json", "--replications", "1", "--no-what-if"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn dram_is_shown_at_its_usable_capacity_beside_the_nominal_one() {
    // The flagship loses 2.1% of DRAM's capacity per extra stream.
    let cuzk = scenario("c2-32g-cuzk.toml");
    let r = run_json(&cuzk);
    let dram = &r["dram"];
    let nominal = dram["capacity_gbps"].as_f64().unwrap();
    let usable = dram["usable_gbps"].as_f64().unwrap();
    let streams = dram["mean_streams"].as_f64().unwrap();
    assert!(streams > 2.0, "{dram}");
    assert!(usable < 0.8 * nominal, "{dram}");
    let peak = dram["peak_gbps"].as_f64().unwrap();
    assert!(peak <= nominal, "{dram}");
    // The share of what is usable is the larger one, and no share passes 100%.
    let of_usable = dram["usable_utilization"].as_f64().unwrap();
    let of_nominal = dram["mean_utilization"].as_f64().unwrap();
    assert!(of_usable > of_nominal && of_usable <= 1.0, "{dram}");

    let out = bwsim()
        .arg("run")
        .arg(&cuzk)
        .args(["--replications", "1", "--no-what-if"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("DRAM")).unwrap();
    assert!(
        line.contains("GB/s usable at") && line.contains("GB/s nominal"),
        "{line}"
    );
    let next = stdout.lines().skip_while(|l| !l.starts_with("DRAM")).nth(1);
    assert!(next.unwrap().contains("loaded latency x"), "{stdout}");

    // A DRAM that loses nothing per stream: usable is nominal and no stream count.
    let demo = run_json(&scenario("demo.toml"));
    let d = &demo["dram"];
    assert_eq!(d["usable_gbps"], d["capacity_gbps"], "{d}");
    assert!(d["mean_streams"].is_null(), "{d}");
}

#[test]
fn the_bottleneck_shares_of_lost_time_cannot_pass_100_percent() {
    let r = run_json(&scenario("c2-32g-cuzk.toml"));
    let reason = r["bottleneck"]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("of the time lost in it"), "{reason}");
    let percents: Vec<f64> = reason
        .split('%')
        .filter_map(|p| p.rsplit(' ').next()?.parse().ok())
        .collect();
    assert!(percents.iter().all(|p| *p <= 100.0), "{reason}");
}
