//! The C2 reference scenarios stay within the stated tolerance of every target the fit
//! was made against (tests/fixtures/c2-fit/targets.csv): the figures docs/reference
//! publishes for the reference box ([S]) and, on the concurrency curve and the RAM tiers
//! where nothing is published, a proxy (the first fit under `rules = "v1"`, which the
//! reference box's own runs at those loads put within 3%). Each row names its load, its
//! metric and its band; the runs are the harness's (tests/fixtures/c2-fit/fit.py): 40
//! proofs, 8 of them warm-up, 4 seeds.

use std::collections::HashMap;
use std::path::Path;

const TARGETS: &str = "tests/fixtures/c2-fit/targets.csv";
const GPU_STAGES: [&str; 6] = [
    "gpu_setup",
    "upload_abc",
    "ntt",
    "h_msm",
    "batch_add",
    "tail_msm",
];

struct Target {
    name: String,
    source: String,
    scenario: String,
    sets: Vec<String>,
    metric: String,
    target: f64,
    band_pct: f64,
}

fn targets() -> Vec<Target> {
    let text = std::fs::read_to_string(TARGETS).expect("targets file");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("name,source,scenario,sets,metric,target,band_pct")
    );
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f.len(), 7, "{TARGETS}: {line}");
            Target {
                name: f[0].to_string(),
                source: f[1].to_string(),
                scenario: f[2].to_string(),
                sets: f[3].split_whitespace().map(str::to_string).collect(),
                metric: f[4].to_string(),
                target: f[5].parse().expect("target is a number"),
                band_pct: f[6].parse().expect("band is a number"),
            }
        })
        .collect()
}

/// First SYNTH_START to last SYNTH_END of each proof in a TIMELINE log, mean over proofs.
fn mean_synthesis_span_s(log: &str) -> f64 {
    let mut span: HashMap<&str, (f64, f64)> = HashMap::new();
    for line in log.lines().filter(|l| l.starts_with("TIMELINE,")) {
        let f: Vec<&str> = line.split(',').collect();
        let t = f[1].parse::<f64>().unwrap() / 1e3;
        let s = span
            .entry(f[3])
            .or_insert((f64::INFINITY, f64::NEG_INFINITY));
        match f[2] {
            "SYNTH_START" => s.0 = s.0.min(t),
            "SYNTH_END" => s.1 = s.1.max(t),
            _ => {}
        }
    }
    let spans: Vec<f64> = span.values().map(|(a, b)| b - a).collect();
    assert!(!spans.is_empty(), "no SYNTH lines in the log");
    spans.iter().sum::<f64>() / spans.len() as f64
}

fn measure(t: &Target) -> f64 {
    let scenario = match t.scenario.as_str() {
        "cuzk" => "scenarios/c2-32g-cuzk.toml",
        "stock" => "scenarios/c2-32g-stock.toml",
        other => panic!("{TARGETS}: unknown scenario {other}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("timeline.log");
    let mut cmd = assert_cmd::Command::cargo_bin("bwsim").unwrap();
    cmd.args([
        "run",
        scenario,
        "--format",
        "json",
        "--no-what-if",
        "--no-ideal",
        "--replications",
        "4",
    ]);
    for set in ["arrivals.jobs=40", "arrivals.warmup_jobs=8"]
        .into_iter()
        .chain(t.sets.iter().map(String::as_str))
    {
        cmd.args(["--set", set]);
    }
    if t.metric == "synth_span" {
        cmd.arg("--timeline-log").arg(&log);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        t.name,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let stage = |name: &str| report["stages"][name]["mean_s"].as_f64().unwrap();
    let spj = report["replications"]["seconds_per_job"]["mean"]
        .as_f64()
        .unwrap();
    match t.metric.as_str() {
        "spj" => spj,
        "gpu_stages" => GPU_STAGES.iter().map(|s| stage(s)).sum(),
        "bracketed" => report["gpu"]["bracketed_busy_frac"].as_f64().unwrap(),
        "stock_gpu" => spj - stage("synthesize"),
        "synth_span" => mean_synthesis_span_s(&std::fs::read_to_string(&log).unwrap()),
        m => match m.strip_prefix("stage:") {
            Some(name) => stage(name),
            None => panic!("{TARGETS}: unknown metric {m}"),
        },
    }
}

#[test]
fn the_c2_scenarios_stay_within_the_band_of_every_fitted_target() {
    assert!(Path::new(TARGETS).exists());
    let rows = targets();
    assert!(rows.iter().any(|t| t.source == "S"));
    assert!(rows.iter().any(|t| t.source == "proxy"));
    let mut outside = Vec::new();
    for t in &rows {
        assert!(
            matches!(t.source.as_str(), "S" | "proxy"),
            "{}: source {}",
            t.name,
            t.source
        );
        let model = measure(t);
        let error_pct = (model / t.target - 1.0) * 100.0;
        if error_pct.abs() > t.band_pct {
            outside.push(format!(
                "{} [{}]: model {model:.3} vs {} ({error_pct:+.1}%, band ±{}%)",
                t.name, t.source, t.target, t.band_pct
            ));
        }
    }
    assert!(
        outside.is_empty(),
        "outside their band:\n{}",
        outside.join("\n")
    );
}
