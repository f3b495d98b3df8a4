//! From per-seed run reports to a [`SweepTable`]: every numeric leaf of a report's JSON
//! becomes a dotted metric name, averaged over seeds with a 95% CI; the stalled seeds are
//! counted from the reports' typed verdicts; the bottleneck is the most common across
//! seeds.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::runner::PointRun;
use super::table::{Row, Stat, SweepTable};
use crate::analysis::interval::summarize;
use crate::analysis::keys;
use crate::analysis::throughput::JobName;

/// Metrics listed first in the CSV, when present; the rest follow in report order.
const HEADLINE: [&str; 5] = [
    keys::JOBS_PER_DAY,
    keys::JOBS_PER_HOUR,
    keys::SECONDS_PER_JOB,
    keys::JOBS_COMPLETED,
    keys::SIM_TIME_S,
];

/// Leaves that are not metrics of the simulated system: wall-clock times measure the
/// host running the simulator (they differ between identical runs, and the table must
/// not), `seed` is an input (sweep.json lists the seeds), and the `throughput` object
/// repeats `seconds_per_job` and `jobs_per_day` as one run's answer.
pub fn is_excluded(key: &str) -> bool {
    key == "wall_s" || key.ends_with(".wall_s") || key == "seed" || key.starts_with("throughput.")
}

/// Numeric leaves of a JSON value as (dotted path, value); array items are indexed
/// (`gpu.per_gpu.0`). Non-finite numbers, strings, bools and nulls are skipped.
pub fn flatten(value: &Value) -> Vec<(String, f64)> {
    fn walk(v: &Value, path: &mut String, out: &mut Vec<(String, f64)>) {
        let child = |key: &str, v: &Value, path: &mut String, out: &mut Vec<_>| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            walk(v, path, out);
            path.truncate(len);
        };
        match v {
            Value::Object(map) => map.iter().for_each(|(k, v)| child(k, v, path, out)),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, v)| child(&i.to_string(), v, path, out)),
            Value::Number(n) => {
                if let Some(f) = n.as_f64().filter(|f| f.is_finite()) {
                    out.push((path.clone(), f));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut String::new(), &mut out);
    out
}

/// The bottleneck resource a report names: `bottleneck.resource`, or `bottleneck` when
/// it is a plain string.
pub fn bottleneck_of(report: &Value) -> Option<(&str, Option<&str>)> {
    match report.get("bottleneck")? {
        Value::String(s) => Some((s.as_str(), None)),
        b => Some((
            b.get("resource")?.as_str()?,
            b.get("reason").and_then(Value::as_str),
        )),
    }
}

/// The most common bottleneck across reports (ties: the one seen first) and the reason
/// the first report naming it gave.
pub fn modal_bottleneck<'a>(
    reports: impl IntoIterator<Item = &'a Value>,
) -> Option<(String, Option<String>)> {
    let named: Vec<(&str, Option<&str>)> = reports.into_iter().filter_map(bottleneck_of).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (n, _) in &named {
        *counts.entry(n).or_default() += 1;
    }
    let count = |r: &str| counts[r];
    let mut best: Option<(&str, Option<&str>)> = None;
    for &(r, why) in &named {
        if best.is_none_or(|(b, _)| count(r) > count(b)) {
            best = Some((r, why));
        }
    }
    best.map(|(r, why)| (r.to_string(), why.map(str::to_string)))
}

/// Aggregates point runs into a table.
pub fn aggregate(scenario: &str, keys: &[String], runs: &[PointRun]) -> SweepTable {
    let flat: Vec<Vec<Vec<(String, f64)>>> = runs
        .iter()
        .map(|p| {
            p.reports
                .iter()
                .map(|r| {
                    flatten(&r.json)
                        .into_iter()
                        .filter(|(k, _)| !is_excluded(k))
                        .collect()
                })
                .collect()
        })
        .collect();

    // Columns: the union of keys in first-seen order, headline metrics first (a set
    // beside the list: reports read back from files may have any number of keys).
    let mut metrics: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (k, _) in flat.iter().flatten().flatten() {
        if seen.insert(k) {
            metrics.push(k.clone());
        }
    }
    let rank = |m: &String| {
        HEADLINE
            .iter()
            .position(|h| h == m)
            .unwrap_or(HEADLINE.len())
    };
    metrics.sort_by_key(rank); // stable: keeps report order within the tail

    let rows = runs
        .iter()
        .zip(&flat)
        .map(|(p, seeds)| {
            // Each seed's leaves by name (the first of a repeated name, as a scan would).
            let by_key: Vec<HashMap<&str, f64>> = (seeds.iter())
                .map(|s| {
                    let mut m = HashMap::with_capacity(s.len());
                    for (k, v) in s {
                        m.entry(k.as_str()).or_insert(*v);
                    }
                    m
                })
                .collect();
            let stats = metrics
                .iter()
                .map(|m| {
                    let vals: Vec<f64> = (by_key.iter())
                        .filter_map(|s| s.get(m.as_str()).copied())
                        .collect();
                    summarize(&vals).map(|s| Stat {
                        mean: s.mean,
                        ci95: s.ci95,
                    })
                })
                .collect();
            Row {
                values: p.point.values.clone(),
                seeds: p.reports.len(),
                stalled: p.reports.iter().filter(|r| r.stalled.is_some()).count(),
                stats,
                bottleneck: modal_bottleneck(p.reports.iter().map(|r| &r.json))
                    .map(|(r, _)| r)
                    .unwrap_or_default(),
            }
        })
        .collect();
    let job_name = (runs.iter().flat_map(|p| &p.reports))
        .find_map(|r| r.json.get(keys::JOB_NAME)?.as_str())
        .map(JobName::new)
        .unwrap_or_default();
    SweepTable {
        scenario: scenario.to_string(),
        job_name,
        params: keys.to_vec(),
        metrics,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flattens_numeric_leaves_with_dotted_names() {
        let r = json!({"jobs_per_hour": 10.0, "gpu": {"true_busy_frac": 0.5, "per_gpu": [0.4, 0.6]},
                       "bottleneck": {"resource": "dram", "reason": "saturated"}, "ok": true,
                       "stages": {"synth": {"inflation": 2.0, "mean_s": null}}});
        let keys: Vec<String> = flatten(&r).into_iter().map(|(k, _)| k).collect();
        let mut keys = keys;
        keys.sort(); // map order depends on serde_json's preserve_order feature
        assert_eq!(
            keys,
            [
                "gpu.per_gpu.0",
                "gpu.per_gpu.1",
                "gpu.true_busy_frac",
                "jobs_per_hour",
                "stages.synth.inflation"
            ]
        );
    }

    #[test]
    fn modal_bottleneck_prefers_majority_then_first_seen() {
        let b = |r: &str| json!({"bottleneck": {"resource": r, "reason": format!("{r} why")}});
        let (r, why) = modal_bottleneck(&[b("gpu0"), b("dram"), b("dram")]).unwrap();
        assert_eq!((r.as_str(), why.as_deref()), ("dram", Some("dram why")));
        let (r, _) = modal_bottleneck(&[b("gpu0"), b("dram")]).unwrap();
        assert_eq!(r, "gpu0");
        assert!(modal_bottleneck(&[json!({})]).is_none());
    }

    #[test]
    fn wall_clock_and_seed_are_excluded() {
        assert!(is_excluded("engine.wall_s"));
        assert!(is_excluded("seed"));
        assert!(is_excluded("throughput.jobs_per_day.mean"));
        assert!(!is_excluded("sim_time_s"));
    }
}
