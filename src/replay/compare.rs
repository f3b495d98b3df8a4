//! Measured vs predicted, point by point: the simulator's report for the same scenario
//! and calibration beside each replay's numbers, as CSV and JSON (`points[].measured`
//! and `points[].predicted`, each with `seconds_per_job`), plus the summary the issue
//! asks for: median |error| of throughput, knee predicted vs measured, and the gap
//! between bracketed and true GPU busy.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::analysis::median::median;
use crate::sweep::knee::{KNEE_TOLERANCE, knee_index};

use super::measure::Measured;

/// What the simulator predicts for one point (read from its JSON report).
#[derive(Debug, Clone, PartialEq)]
pub struct Predicted {
    /// Throughput, seconds per job.
    pub seconds_per_job: f64,
    /// `gpu.true_busy_frac`.
    pub gpu_true_busy_frac: Option<f64>,
    /// `gpu.bracketed_busy_frac`.
    pub gpu_bracketed_busy_frac: Option<f64>,
    /// `gpu.sampled_busy_frac` (the nvidia-smi view), when the report has it.
    pub gpu_sampled_busy_frac: Option<f64>,
    /// `dram.mean_gbps`.
    pub dram_gbps: Option<f64>,
    /// `stages.<s>.inflation`.
    pub inflation: BTreeMap<String, f64>,
}

impl Predicted {
    /// Reads the numbers from a `bwsim run --format json` report.
    pub fn from_report(r: &Value) -> Predicted {
        let f = |path: &[&str]| {
            let mut v = r;
            for p in path {
                v = v.get(*p)?;
            }
            v.as_f64()
        };
        let inflation = r
            .get("stages")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.get("inflation")?.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        Predicted {
            seconds_per_job: f(&["seconds_per_job"]).unwrap_or(f64::NAN),
            gpu_true_busy_frac: f(&["gpu", "true_busy_frac"]),
            gpu_bracketed_busy_frac: f(&["gpu", "bracketed_busy_frac"]),
            gpu_sampled_busy_frac: f(&["gpu", "sampled_busy_frac"]),
            dram_gbps: f(&["dram", "mean_gbps"]),
            inflation,
        }
    }
}

impl Predicted {
    /// Reads a `points[].predicted` object of a replay.json (what [`to_json`] writes).
    pub fn from_replay_json(p: &Value) -> Predicted {
        let f = |k: &str| p.get(k).and_then(Value::as_f64);
        Predicted {
            seconds_per_job: f("seconds_per_job").unwrap_or(f64::NAN),
            gpu_true_busy_frac: f("gpu_true_busy_frac"),
            gpu_bracketed_busy_frac: f("gpu_bracketed_busy_frac"),
            gpu_sampled_busy_frac: f("gpu_sampled_busy_frac"),
            dram_gbps: f("dram_gbps"),
            inflation: p
                .get("inflation")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// One concurrency point: the prediction and every replay run of it.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// `KEY=VALUE` overrides of the point.
    pub sets: Vec<String>,
    /// The x value (the swept parameter), for plots and the knee.
    pub x: f64,
    /// The simulator's numbers.
    pub predicted: Predicted,
    /// One entry per replay run.
    pub runs: Vec<Measured>,
}

impl PointResult {
    /// Median measured seconds per job over the runs.
    pub fn measured_spj(&self) -> f64 {
        finite_median(self.runs.iter().map(|m| m.seconds_per_job))
    }

    /// Smallest and largest measured seconds per job.
    pub fn measured_spread(&self) -> (f64, f64) {
        let v: Vec<f64> = self
            .runs
            .iter()
            .map(|m| m.seconds_per_job)
            .filter(|v| v.is_finite())
            .collect();
        (
            v.iter().copied().fold(f64::INFINITY, f64::min),
            v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    }

    /// (predicted - measured) / measured of seconds per job.
    pub fn error(&self) -> f64 {
        let m = self.measured_spj();
        (self.predicted.seconds_per_job - m) / m
    }

    fn measured_opt(&self, f: impl Fn(&Measured) -> Option<f64>) -> Option<f64> {
        let v: Vec<f64> = self.runs.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| finite_median(v))
    }
}

/// The median of the finite values (NaN for none): a run that measured nothing, or an
/// error against such a run, does not move a point's median.
fn finite_median(values: impl IntoIterator<Item = f64>) -> f64 {
    let finite: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
    median(&finite).unwrap_or(f64::NAN)
}

/// The headline numbers of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Median over points of |predicted - measured| / measured seconds per job.
    pub median_abs_error: f64,
    /// The point with the largest |error|: its index and error.
    pub worst: Option<(usize, f64)>,
    /// Knee x (smallest x within 2% of the best throughput), predicted and measured.
    pub knee_predicted: Option<f64>,
    /// See `knee_predicted`.
    pub knee_measured: Option<f64>,
    /// Largest |bracketed - true| GPU busy gap difference between measurement and
    /// prediction, in percentage points (None without GPU numbers).
    pub max_gap_difference_pts: Option<f64>,
}

/// Computes the summary of a set of points.
pub fn summarize(points: &[PointResult]) -> Summary {
    let errors: Vec<f64> = points.iter().map(|p| p.error().abs()).collect();
    let worst = errors
        .iter()
        .enumerate()
        .filter(|(_, e)| e.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| (i, points[i].error()));
    let knee = |f: &dyn Fn(&PointResult) -> f64| {
        let pts: Vec<(f64, f64)> = points.iter().map(|p| (p.x, 3600.0 / f(p))).collect();
        knee_index(&pts, KNEE_TOLERANCE).map(|i| points[i].x)
    };
    let gaps: Vec<f64> = points
        .iter()
        .filter_map(|p| {
            let mg = p.measured_opt(|m| m.gpu_bracketed_busy_frac)?
                - p.measured_opt(|m| m.gpu_true_busy_frac)?;
            let pg = p.predicted.gpu_bracketed_busy_frac? - p.predicted.gpu_true_busy_frac?;
            Some((mg - pg).abs() * 100.0)
        })
        .collect();
    Summary {
        median_abs_error: finite_median(errors),
        worst,
        knee_predicted: knee(&|p| p.predicted.seconds_per_job),
        knee_measured: knee(&|p| p.measured_spj()),
        max_gap_difference_pts: (!gaps.is_empty())
            .then(|| gaps.iter().copied().fold(0.0, f64::max)),
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

/// CSV, one row per point: the overrides, then measured (median of runs) and predicted
/// numbers side by side.
pub fn to_csv(points: &[PointResult]) -> String {
    let mut out = String::from(
        "point,x,runs,measured_seconds_per_job,measured_min,measured_max,predicted_seconds_per_job,error,\
measured_gpu_true_busy,predicted_gpu_true_busy,measured_gpu_bracketed_busy,predicted_gpu_bracketed_busy,\
measured_gpu_sampled_busy,predicted_gpu_sampled_busy,measured_gpu_power_w,measured_dram_gbps,predicted_dram_gbps\n",
    );
    for p in points {
        let (lo, hi) = p.measured_spread();
        let _ = writeln!(
            out,
            "{},{},{},{:.6},{:.6},{:.6},{:.6},{:.4},{},{},{},{},{},{},{},{},{}",
            p.sets.join(" "),
            p.x,
            p.runs.len(),
            p.measured_spj(),
            lo,
            hi,
            p.predicted.seconds_per_job,
            p.error(),
            opt(p.measured_opt(|m| m.gpu_true_busy_frac)),
            opt(p.predicted.gpu_true_busy_frac),
            opt(p.measured_opt(|m| m.gpu_bracketed_busy_frac)),
            opt(p.predicted.gpu_bracketed_busy_frac),
            opt(p.measured_opt(|m| m.gpu_sampled_busy_frac)),
            opt(p.predicted.gpu_sampled_busy_frac),
            opt(p.measured_opt(|m| m.gpu_power_w)),
            opt(p.measured_opt(|m| Some(m.dram_gbps))),
            opt(p.predicted.dram_gbps),
        );
    }
    out
}

fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

/// The JSON document: scenario, host, summary and `points[]` with `measured`
/// (median of runs, spread, every run) and `predicted`.
pub fn to_json(scenario: &str, host: Value, points: &[PointResult]) -> Value {
    let s = summarize(points);
    let pts: Vec<Value> = points
        .iter()
        .map(|p| {
            let (lo, hi) = p.measured_spread();
            let inflation: BTreeMap<String, Value> = p
                .runs
                .first()
                .map(|_| {
                    p.predicted
                        .inflation
                        .keys()
                        .filter_map(|k| {
                            let v = finite_median(
                                p.runs
                                    .iter()
                                    .filter_map(|m| m.stages.get(k).map(|s| s.inflation)),
                            );
                            v.is_finite().then(|| (k.clone(), json!(v)))
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "sets": p.sets,
                "x": p.x,
                "measured": {
                    "seconds_per_job": num(p.measured_spj()),
                    "seconds_per_job_min": num(lo),
                    "seconds_per_job_max": num(hi),
                    "gpu_true_busy_frac": p.measured_opt(|m| m.gpu_true_busy_frac),
                    "gpu_bracketed_busy_frac": p.measured_opt(|m| m.gpu_bracketed_busy_frac),
                    "gpu_sampled_busy_frac": p.measured_opt(|m| m.gpu_sampled_busy_frac),
                    "gpu_power_w": p.measured_opt(|m| m.gpu_power_w),
                    "dram_gbps": p.measured_opt(|m| Some(m.dram_gbps)),
                    "inflation": inflation,
                    "runs": p.runs,
                },
                "predicted": {
                    "seconds_per_job": num(p.predicted.seconds_per_job),
                    "gpu_true_busy_frac": p.predicted.gpu_true_busy_frac,
                    "gpu_bracketed_busy_frac": p.predicted.gpu_bracketed_busy_frac,
                    "gpu_sampled_busy_frac": p.predicted.gpu_sampled_busy_frac,
                    "dram_gbps": p.predicted.dram_gbps,
                    "inflation": p.predicted.inflation,
                },
                "error": num(p.error()),
            })
        })
        .collect();
    json!({
        "scenario": scenario,
        "host": host,
        "summary": {
            "median_abs_error": num(s.median_abs_error),
            "worst_point": s.worst.map(|(i, e)| json!({"x": points[i].x, "error": e})),
            "knee_predicted": s.knee_predicted,
            "knee_measured": s.knee_measured,
            "max_bracketed_true_gap_difference_pts": s.max_gap_difference_pts,
        },
        "points": pts,
    })
}

/// A short human table for the terminal.
pub fn to_text(points: &[PointResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<28} {:>5} {:>12} {:>12} {:>8} {:>16} {:>16} {:>9}",
        "point",
        "runs",
        "measured s/j",
        "predicted",
        "error",
        "true busy m/p",
        "bracketed m/p",
        "nvml"
    );
    let pct = |v: Option<f64>| {
        v.map(|x| format!("{:.0}%", x * 100.0))
            .unwrap_or_else(|| "-".into())
    };
    for p in points {
        let _ = writeln!(
            out,
            "{:<28} {:>5} {:>12.3} {:>12.3} {:>+7.1}% {:>16} {:>16} {:>9}",
            p.sets.join(" "),
            p.runs.len(),
            p.measured_spj(),
            p.predicted.seconds_per_job,
            p.error() * 100.0,
            format!(
                "{}/{}",
                pct(p.measured_opt(|m| m.gpu_true_busy_frac)),
                pct(p.predicted.gpu_true_busy_frac)
            ),
            format!(
                "{}/{}",
                pct(p.measured_opt(|m| m.gpu_bracketed_busy_frac)),
                pct(p.predicted.gpu_bracketed_busy_frac)
            ),
            pct(p.measured_opt(|m| m.gpu_sampled_busy_frac)),
        );
    }
    let s = summarize(points);
    let _ = writeln!(
        out,
        "median |error| {:.1}%; knee predicted {} measured {}",
        s.median_abs_error * 100.0,
        s.knee_predicted
            .map(|x| x.to_string())
            .unwrap_or("-".into()),
        s.knee_measured.map(|x| x.to_string()).unwrap_or("-".into()),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(spj: f64) -> Measured {
        Measured {
            seconds_per_job: spj,
            jobs_in_window: 10,
            window_s: spj * 10.0,
            gpu_true_busy_frac: Some(0.5),
            gpu_bracketed_busy_frac: Some(0.8),
            gpu_brackets_summed_frac: Some(0.8),
            gpu_mean_gap_s: None,
            gpu_sampled_busy_frac: None,
            gpu_power_w: None,
            dram_gbps: 1.0,
            stages: BTreeMap::new(),
            wall_s: 1.0,
            host_before: None,
        }
    }

    fn point(x: f64, pred: f64, runs: &[f64]) -> PointResult {
        PointResult {
            sets: vec![format!("params.c={x}")],
            x,
            predicted: Predicted::from_report(&json!({
                "seconds_per_job": pred,
                "gpu": {"true_busy_frac": 0.5, "bracketed_busy_frac": 0.85}
            })),
            runs: runs.iter().map(|&s| measured(s)).collect(),
        }
    }

    #[test]
    fn summary_has_median_error_knees_and_gap() {
        let pts = vec![
            point(1.0, 2.0, &[2.0, 2.2]),
            point(2.0, 1.0, &[1.1, 1.1]),
            point(4.0, 1.0, &[1.0, 1.0]),
        ];
        let s = summarize(&pts);
        // errors: 2/2.1-1 = -4.8%, 1/1.1-1 = -9.1%, 0
        assert!((s.median_abs_error - (1.0 - 2.0 / 2.1)).abs() < 1e-9);
        assert_eq!(s.worst.map(|w| w.0), Some(1));
        assert_eq!(s.knee_predicted, Some(2.0));
        assert_eq!(s.knee_measured, Some(4.0));
        assert!((s.max_gap_difference_pts.unwrap() - 5.0).abs() < 1e-9);
        let j = to_json("t", json!({}), &pts);
        assert_eq!(j["points"][0]["measured"]["seconds_per_job"], json!(2.1));
        assert_eq!(j["points"][0]["predicted"]["seconds_per_job"], json!(2.0));
        assert_eq!(
            j["points"][0]["measured"]["runs"].as_array().unwrap().len(),
            2
        );
        let csv = to_csv(&pts);
        assert_eq!(csv.lines().count(), 4);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("params.c=1,1,2,2.100000,2.000000,2.200000,2.000000,")
        );
    }
}
