//! What a capacity planner reads, run as the planner runs it: a key another key overrides
//! says so wherever it is changed (`run --set`, `--what-if`, `sweep --param`, `compare`),
//! and DRAM is shown at its usable capacity beside the nominal one.

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

/// The calibrated H200's measured capacity overrides the DRAM geometry.
const OVERRIDDEN: &str = "hardware.dram.capacity_gbps is given (in ";

#[test]
fn a_what_if_on_an_overridden_key_says_identical_on_every_seed_and_why() {
    let out = bwsim()
        .arg("run")
        .arg(scenario("c2-32g-h200.toml"))
        .args([
            "--what-if",
            "hardware.dram.channels=12",
            "--replications",
            "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stderr.contains("warning: --what-if hardware.dram.channels=12: hardware.dram.channels has no effect here")
            && stderr.contains(OVERRIDDEN),
        "{stderr}"
    );
    assert!(
        stdout.contains("identical on every seed: hardware.dram.channels has no effect here"),
        "{stdout}"
    );
    assert!(!stdout.contains("noise"), "{stdout}");
}

#[test]
fn run_warns_of_a_set_that_changes_nothing_and_notes_it_in_the_report() {
    let out = bwsim()
        .arg("run")
        .arg(scenario("c2-32g-h200.toml"))
        .args(["--set", "hardware.dram.mts=4800"])
        .args(["--replications", "1", "--no-what-if"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let why = "--set hardware.dram.mts=4800: hardware.dram.mts has no effect here";
    assert!(text(&out.stderr).contains(why), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(why), "{}", text(&out.stdout));
    // A key that decides gets no such warning.
    let out = bwsim()
        .arg("run")
        .arg(scenario("c2-32g-h200.toml"))
        .args(["--set", "hardware.dram.capacity_gbps=150"])
        .args(["--replications", "1", "--no-what-if"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("no effect"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn sweeping_an_overridden_key_is_refused_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("sweep");
    let sweep = |extra: &[&str]| {
        bwsim()
            .arg("sweep")
            .arg(scenario("c2-32g-h200.toml"))
            .args(["--param", "hardware.dram.channels=4,12"])
            .args(["--replications", "1"])
            .arg("--out")
            .arg(&out_dir)
            .args(extra)
            .output()
            .unwrap()
    };
    let refused = sweep(&[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("cannot sweep a key that changes nothing")
            && stderr.contains(OVERRIDDEN)
            && stderr.contains("--allow-ignored"),
        "{stderr}"
    );
    assert!(!out_dir.exists(), "nothing is written before the refusal");

    let allowed = sweep(&["--allow-ignored"]);
    assert!(allowed.status.success(), "{}", text(&allowed.stderr));
    let stderr = text(&allowed.stderr);
    assert!(
        stderr.contains("warning: --param hardware.dram.channels=4,12: hardware.dram.channels has no effect here"),
        "{stderr}"
    );
}

#[test]
fn compare_warns_of_a_searched_key_that_changes_nothing() {
    let out = bwsim()
        .arg("compare")
        .arg(scenario("c2-32g-h200.toml"))
        .arg("--host")
        .arg(scenario("hosts/h200-host.toml"))
        .args(["--search", "hardware.dram.channels=4,12"])
        .args(["--replications", "1"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: --search hardware.dram.channels=4,12: hardware.dram.channels has no effect here")
            && stderr.contains("every setting runs the same scenario"),
        "{stderr}"
    );
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
    // The flagship loses 3.1% of DRAM's capacity per extra stream.
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
    // Two GPUs on one DRAM: its synthesis slots are a serial section DRAM slows.
    let r = run_json(&scenario("c2-32g-h200-multi.toml"));
    let reason = r["bottleneck"]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("of the time lost in it"), "{reason}");
    let percents: Vec<f64> = reason
        .split('%')
        .filter_map(|p| p.rsplit(' ').next()?.parse().ok())
        .collect();
    assert!(percents.iter().all(|p| *p <= 100.0), "{reason}");
}

#[test]
fn one_seed_is_said_at_four_significant_digits_and_a_sum_of_waits_is_no_time_per_job() {
    let out = bwsim()
        .arg("run")
        .arg(scenario("c2-32g-h200.toml"))
        .args(["--replications", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The automatic what-if steps: one seed each, in the scenario's word for a job.
    let steps: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("what if"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(steps.len(), 5, "{stdout}");
    for step in steps {
        let value = step
            .split(" s/proof")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap();
        let digits = value.chars().filter(char::is_ascii_digit).count();
        assert_eq!(digits, 4, "{step}");
    }
    // host RAM's waits overlap: their sum is said as stages waiting, not as s per job.
    let note = stdout.lines().find(|l| l.contains("host_ram has")).unwrap();
    assert!(
        note.contains("stages waited for it on average over the window"),
        "{note}"
    );
    assert!(!note.contains("per measured job"), "{note}");
}

#[test]
fn a_multi_gpu_host_gets_a_kernel_duty_line_per_gpu_and_one_gpu_none() {
    let run_text = |s: &str| {
        let out = bwsim()
            .arg("run")
            .arg(scenario(s))
            .args(["--replications", "1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let two = run_text("c2-32g-h200-multi.toml");
    let line = (two.lines())
        .find(|l| l.contains("kernel duty per GPU: "))
        .unwrap_or_else(|| panic!("{two}"));
    let duties: Vec<f64> = (line.split("GPU: ").nth(1).unwrap().split(", "))
        .map(|g| {
            g.split(' ')
                .nth(1)
                .unwrap()
                .trim_end_matches('%')
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(duties.len(), 2, "{line}");
    // The host-wide true duty is their mean.
    let json = run_json(&scenario("c2-32g-h200-multi.toml"));
    let mean = duties.iter().sum::<f64>() / 2.0;
    let true_duty = json["gpu"]["true_busy_frac"].as_f64().unwrap() * 100.0;
    assert!((mean - true_duty).abs() < 0.2, "{line} against {true_duty}");
    assert!(!run_text("c2-32g-h200.toml").contains("kernel duty per GPU"));
}

fn run_text(file: &Path, args: &[&str]) -> String {
    let out = bwsim().arg("run").arg(file).args(args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn line_starting<'a>(stdout: &'a str, head: &str) -> &'a str {
    (stdout.lines())
        .find(|l| l.starts_with(head))
        .unwrap_or_else(|| panic!("no line starting {head:?} in\n{stdout}"))
}

#[test]
fn the_bottleneck_is_the_step_that_buys_most_and_the_busiest_resource_is_said_apart() {
    // The demo's GPU is its busiest resource (74%), yet one GPU more buys nothing while
    // 25% more DRAM bandwidth buys most.
    let demo = scenario("demo.toml");
    let stdout = run_text(&demo, &[]);
    let bottleneck = line_starting(&stdout, "bottleneck");
    assert!(
        bottleneck.starts_with("bottleneck   DRAM bandwidth +25%: "),
        "{bottleneck}"
    );
    let busiest = line_starting(&stdout, "busiest");
    assert!(
        busiest.contains("gpu0.compute") && busiest.contains("busy, not binding"),
        "{busiest}"
    );

    let out = bwsim()
        .arg("run")
        .arg(&demo)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &r["bottleneck"];
    assert_eq!(b["named_by"], "what_if_steps", "{b}");
    assert_eq!(b["busiest"]["resource"], "gpu0.compute", "{b}");
    assert_eq!(b["busiest"]["step"], "gpus", "{b}");
    // The resource named is the step with the largest gain.
    let steps = ["threads", "host_ram", "dram", "pcie", "gpus"];
    let gain = |k: &str| r["what_if"][k]["gain"].as_f64().unwrap_or(f64::MIN);
    let best = steps.iter().max_by(|a, b| gain(a).total_cmp(&gain(b)));
    assert_eq!(b["resource"], *best.unwrap(), "{}", r["what_if"]);

    // Without the steps, the bottleneck is the busiest resource, and says so.
    let skipped = run_text(&demo, &["--no-what-if", "--replications", "1"]);
    let line = line_starting(&skipped, "bottleneck");
    assert!(
        line.contains("gpu0.compute") && line.contains("(by occupancy"),
        "{line}"
    );
}

/// Decimals of a number as printed ("0.0374" -> 4).
fn decimals(cell: &str) -> usize {
    cell.split('.').nth(1).map_or(0, str::len)
}

#[test]
fn replicated_what_ifs_and_stages_are_said_at_the_precision_of_the_seeds_interval() {
    let demo = scenario("demo.toml");
    let stdout = run_text(&demo, &[]);
    // "0.0388 ± 0.0013 s/job": the half-width's two significant digits set the places.
    let throughput = line_starting(&stdout, "throughput");
    let half = throughput
        .split(" ± ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    for step in (stdout.lines())
        .skip_while(|l| !l.starts_with("what if"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
    {
        let value = step
            .split(" s/job")
            .next()
            .unwrap()
            .rsplit(' ')
            .next()
            .unwrap();
        assert_eq!(
            decimals(value),
            decimals(half),
            "{step} against {throughput}"
        );
    }

    // Each stage's mean at the places its own spread over the seeds allows.
    let out = bwsim()
        .arg("run")
        .arg(&demo)
        .args(["--format", "json", "--no-what-if"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let table: Vec<&str> = (stdout.lines())
        .skip_while(|l| !l.starts_with("stage "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(table.len(), 5, "{stdout}");
    for row in table {
        let cells: Vec<&str> = row.split_whitespace().collect();
        let stage = &r["stages"][cells[0]];
        let (mean, ci95) = (
            stage["mean_s"].as_f64().unwrap(),
            stage["mean_s_ci95"].as_f64().unwrap(),
        );
        // Two significant digits of the half-width; four of the mean where the spread is
        // float noise (a stage whose time no seed changes).
        let places = if ci95 > 1e-6 * mean {
            (1 - ci95.log10().floor() as i32).max(0) as usize
        } else {
            (3 - mean.log10().floor() as i32).max(0) as usize
        };
        assert_eq!(decimals(cells[2]), places, "{row}: ± {ci95}");
    }
}

#[test]
fn host_ram_near_its_capacity_carries_a_headroom_note() {
    // The calibrated H200 VM's C2 run peaks at 93% of the RAM its stages may hold.
    let tight = run_text(
        &scenario("c2-32g-h200.toml"),
        &["--replications", "1", "--no-what-if"],
    );
    let note = (tight.lines())
        .find(|l| l.starts_with("note         host RAM peaks at"))
        .unwrap_or_else(|| panic!("{tight}"));
    assert!(
        note.contains("GiB free") && note.contains("keep about 10% free (an estimate)"),
        "{note}"
    );
    // The flagship peaks at 69%: no note.
    let roomy = run_text(
        &scenario("c2-32g-cuzk.toml"),
        &["--replications", "1", "--no-what-if"],
    );
    assert!(!roomy.contains("host RAM peaks at"), "{roomy}");
}

#[test]
fn log_against_a_scenario_of_another_partition_count_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mini.log");
    bwsim()
        .arg("run")
        .arg(scenario("c2-mini-h200.toml"))
        .args(["--replications", "1", "--no-what-if", "--timeline-log"])
        .arg(&log)
        .assert()
        .success();
    let out = bwsim()
        .arg("log")
        .arg(&log)
        .arg("--against")
        .arg(scenario("c2-32g-cuzk.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let warning = line_starting(&stdout, "warning: the log's jobs have 3 partitions each");
    assert!(
        warning.contains("the scenario's 10")
            && warning.contains("jobs/day compares different jobs"),
        "{warning}"
    );
    // Against its own scenario: the same count, no warning.
    let same = bwsim()
        .arg("log")
        .arg(&log)
        .arg("--against")
        .arg(scenario("c2-mini-h200.toml"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(
        v["against"]["partitions_per_job"]["log"], 3,
        "{}",
        v["against"]
    );
    assert_eq!(v["against"]["partitions_per_job"]["model"], 3);
    assert_eq!(v["against"]["warnings"], serde_json::json!([]));
}

#[test]
fn the_repeat_count_has_one_name_and_a_wrong_one_points_to_it() {
    // `run --seeds 3` is refused with a pointer to the flag of the same meaning.
    let out = bwsim()
        .arg("run")
        .arg(scenario("demo.toml"))
        .args(["--seeds", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("'--replications'"), "{stderr}");
    // `replay --runs` still works for a release, and says what replaced it.
    let out = bwsim()
        .arg("replay")
        .arg(scenario("demo.toml"))
        .args(["--runs", "2"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--runs is deprecated")
            && stderr.contains("the repeat count is --replications in every command"),
        "{stderr}"
    );
    // Every command says throughput per day: run with one replication too.
    let one = run_text(
        &scenario("demo.toml"),
        &["--replications", "1", "--no-what-if"],
    );
    let line = line_starting(&one, "throughput");
    assert!(
        line.contains(" jobs/day") && !line.contains("/hour"),
        "{line}"
    );
}
