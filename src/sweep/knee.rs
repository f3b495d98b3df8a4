//! The knee of a throughput curve: the smallest parameter value whose mean throughput is
//! not significantly below the best. Past it, more concurrency only adds memory use and
//! latency.
//!
//! "Not significantly below": the gap to the best is within the 95% interval of the
//! difference of the two means (the half-widths combined in quadrature), or within a
//! practical tolerance (2% of the best), whichever is wider. With one seed there is no
//! interval, and the knee rests on the tolerance alone.

use serde_json::{Value, json};

use super::table::SweepTable;
use super::value::is_top_of_range;
use crate::analysis::interval::half_width_text;
use crate::analysis::throughput::significant;

/// The practical tolerance: a setting within 2% of the best throughput is as good.
pub const KNEE_TOLERANCE: f64 = 0.02;

/// Fewer seeds per point than this and the intervals are too wide (or absent) to trust:
/// sweeps and charts warn.
pub const FEW_SEEDS: usize = 3;

/// The metric the knee is found on (read through [`SweepTable::per_day`], so a sweep.csv
/// from before it existed gives 24 x `jobs_per_hour`).
pub const THROUGHPUT: &str = "jobs_per_day";

/// One point of a throughput curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// The swept value.
    pub x: f64,
    /// Mean throughput over seeds.
    pub mean: f64,
    /// 95% interval half-width of the mean; None with one seed.
    pub ci95: Option<f64>,
}

/// Where a curve's knee is, and how far below the best it was allowed to be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeFit {
    /// Index of the knee among the points.
    pub knee: usize,
    /// Index of the best mean.
    pub best: usize,
    /// How far below the best the knee's mean may lie and still count as "as good".
    pub margin: f64,
    /// True when the margin is the 95% interval of the difference (it was wider than
    /// the tolerance); false when it is the tolerance.
    pub by_interval: bool,
}

/// The knee of a curve (points in any order): the smallest x whose mean is at least
/// `best - margin`, the margin being the wider of `tol * best` and the 95% interval of
/// the difference from the best. None when no point has a positive finite mean
/// (nothing completed: there is no knee to speak of).
pub fn fit_knee(points: &[CurvePoint], tol: f64) -> Option<KneeFit> {
    let best = (0..points.len())
        .filter(|&i| points[i].mean.is_finite())
        .max_by(|&a, &b| points[a].mean.total_cmp(&points[b].mean))?;
    let top = points[best].mean;
    if top <= 0.0 {
        return None;
    }
    let best_ci = points[best].ci95.unwrap_or(0.0);
    let margin_at = |p: &CurvePoint| {
        let interval = p.ci95.unwrap_or(0.0).hypot(best_ci);
        let tolerance = tol * top;
        (interval.max(tolerance), interval > tolerance)
    };
    let knee = (0..points.len())
        .filter(|&i| points[i].mean.is_finite() && points[i].mean >= top - margin_at(&points[i]).0)
        .min_by(|&a, &b| points[a].x.total_cmp(&points[b].x))?;
    let (margin, by_interval) = margin_at(&points[knee]);
    Some(KneeFit {
        knee,
        best,
        margin,
        by_interval,
    })
}

/// Index of the knee among `(x, throughput)` points without intervals: the smallest x
/// whose throughput is at least `(1 - tol) * best`.
pub fn knee_index(points: &[(f64, f64)], tol: f64) -> Option<usize> {
    let pts: Vec<CurvePoint> = (points.iter())
        .map(|&(x, mean)| CurvePoint {
            x,
            mean,
            ci95: None,
        })
        .collect();
    fit_knee(&pts, tol).map(|f| f.knee)
}

/// The knee of one series of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Knee {
    /// The series (other parameters' values), None for a one-parameter sweep.
    pub series: Option<String>,
    /// Row of the knee in the table.
    pub row: usize,
    /// Row of the best throughput.
    pub best_row: usize,
    /// Throughput at the knee, jobs/day.
    pub jobs_per_day: f64,
    /// Best throughput, jobs/day.
    pub best_jobs_per_day: f64,
    /// How far below the best the knee may lie, jobs/day (see [`KneeFit::margin`]).
    pub margin_jobs_per_day: f64,
    /// The margin is the 95% interval (not the tolerance).
    pub by_interval: bool,
    /// The fewest seeds behind any point of the series.
    pub seeds: usize,
    /// The knee is the largest value swept: throughput may still rise past the range.
    pub at_range_top: bool,
}

/// Knees of every series of a table (none without parameters or throughput).
pub fn find_knees(table: &SweepTable, tol: f64) -> Vec<Knee> {
    if table.params.is_empty() {
        return Vec::new();
    }
    table
        .series()
        .into_iter()
        .filter_map(|s| {
            let rows: Vec<usize> = (s.rows.iter().copied())
                .filter(|&r| table.per_day(r).is_some())
                .collect();
            let pts: Vec<CurvePoint> = (rows.iter())
                .map(|&r| {
                    let st = table.per_day(r).expect("filtered on it");
                    CurvePoint {
                        x: table.x(r),
                        mean: st.mean,
                        ci95: st.ci95,
                    }
                })
                .collect();
            let fit = fit_knee(&pts, tol)?;
            let knee_value = &table.rows[rows[fit.knee]].values[0];
            let swept: Vec<_> = (s.rows.iter())
                .map(|&r| table.rows[r].values[0].clone())
                .collect();
            Some(Knee {
                series: s.label,
                row: rows[fit.knee],
                best_row: rows[fit.best],
                jobs_per_day: pts[fit.knee].mean,
                best_jobs_per_day: pts[fit.best].mean,
                margin_jobs_per_day: fit.margin,
                by_interval: fit.by_interval,
                seeds: s
                    .rows
                    .iter()
                    .map(|&r| table.rows[r].seeds)
                    .min()
                    .unwrap_or(0),
                at_range_top: is_top_of_range(&swept, knee_value),
            })
        })
        .collect()
}

/// One line for the terminal, e.g. `knee: params.synthesis_concurrency = 13: 40.7 ± 0.4
/// s/proof   2124 ± 20 proofs/day (best 2127 at 14; within 31 proofs/day of it, the 95%
/// interval of the difference)`, then what to distrust: one seed, a knee at the top of
/// the range.
pub fn describe(table: &SweepTable, k: &Knee, tol: f64) -> String {
    let v = &table.rows[k.row].values[0];
    let bv = &table.rows[k.best_row].values[0];
    let unit = table.job_name.per_day();
    let series = k
        .series
        .as_ref()
        .map(|s| format!(" [{s}]"))
        .unwrap_or_default();
    let why = if k.seeds < 2 {
        format!("within {}% of it; one seed, so no interval", tol * 100.0)
    } else if k.by_interval {
        format!(
            "within {} {unit} of it, the 95% interval of the difference",
            half_width_text(k.margin_jobs_per_day)
        )
    } else {
        format!(
            "within {}% of it, wider than the 95% interval of the difference",
            tol * 100.0
        )
    };
    let edge = if k.at_range_top {
        "; the largest value swept: throughput may still rise past it, widen the range"
    } else {
        ""
    };
    let at_knee = match table.throughput(k.row) {
        Some(t) => t.line(),
        None => format!("{} {unit}", significant(k.jobs_per_day)),
    };
    let best = match table.throughput(k.best_row) {
        Some(t) => t.per_day_cell(),
        None => significant(k.best_jobs_per_day),
    };
    format!(
        "knee{series}: {} = {v}: {at_knee} (best {best} at {bv}; {why}){edge}",
        table.x_key(),
    )
}

/// The warning a sweep with fewer than [`FEW_SEEDS`] seeds per point carries, if it does.
pub fn few_seeds_warning(table: &SweepTable) -> Option<String> {
    let seeds = table.rows.iter().map(|r| r.seeds).min()?;
    (seeds < FEW_SEEDS).then(|| match seeds {
        0 | 1 => format!(
            "1 seed per point: no confidence intervals, the knee rests on the {}% tolerance \
             alone; use --replications {FEW_SEEDS} or more",
            KNEE_TOLERANCE * 100.0
        ),
        n => format!(
            "{n} seeds per point: the 95% intervals are wide; use --replications {FEW_SEEDS} or \
             more"
        ),
    })
}

/// JSON form for sweep.json.
pub fn to_json(table: &SweepTable, k: &Knee, tol: f64) -> Value {
    json!({
        "param": table.x_key(),
        "series": k.series,
        "value": table.rows[k.row].values[0].to_json(),
        "jobs_per_day": k.jobs_per_day,
        "throughput": table.throughput(k.row).map(|t| t.to_json()),
        "best_value": table.rows[k.best_row].values[0].to_json(),
        "best_jobs_per_day": k.best_jobs_per_day,
        "margin_jobs_per_day": k.margin_jobs_per_day,
        "margin_from": if k.by_interval { "interval" } else { "tolerance" },
        "tolerance": tol,
        "seeds": k.seeds,
        "at_range_top": k.at_range_top,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::table::{Row, Stat};
    use crate::sweep::value::ParamValue;

    /// A saturating curve y = 1000 * (1 - exp(-x / 4)) over x = 1..32 levels out; the
    /// knee is the first x with y >= 0.98 * y(32), i.e. x >= -4 ln(0.02 + ...) = 16.
    #[test]
    fn knee_of_a_saturating_curve() {
        let pts: Vec<(f64, f64)> = (1..=32)
            .map(|x| (x as f64, 1000.0 * (1.0 - (-(x as f64) / 4.0).exp())))
            .collect();
        let best = pts[31].1;
        let expect = pts.iter().position(|p| p.1 >= 0.98 * best).unwrap();
        assert_eq!(knee_index(&pts, 0.02), Some(expect));
        assert_eq!(pts[expect].0, 16.0);
    }

    /// Throughput that peaks and falls (thrashing): the knee is before the peak, never
    /// past it, and points are found by value not position.
    #[test]
    fn knee_of_a_peaked_unsorted_curve() {
        let pts = [
            (8.0, 990.0),
            (1.0, 300.0),
            (4.0, 900.0),
            (12.0, 1000.0),
            (16.0, 700.0),
        ];
        assert_eq!(knee_index(&pts, 0.02), Some(0)); // x = 8 is within 2% of 1000
        assert_eq!(knee_index(&pts, 0.0), Some(3));
    }

    #[test]
    fn no_knee_without_data() {
        assert_eq!(knee_index(&[], 0.02), None);
        assert_eq!(knee_index(&[(1.0, f64::NAN)], 0.02), None);
        assert_eq!(knee_index(&[(1.0, 0.0), (2.0, 0.0)], 0.02), None);
    }

    fn curve(points: &[(f64, f64, f64)]) -> Vec<CurvePoint> {
        (points.iter())
            .map(|&(x, mean, ci)| CurvePoint {
                x,
                mean,
                ci95: Some(ci),
            })
            .collect()
    }

    /// Wide intervals: 900 +- 60 against 1000 +- 80 differ by 100, inside the combined
    /// interval of 100.0 (hypot(60, 80)); 800 +- 30 does not (85.4 < 200). So the knee
    /// moves from the tolerance's 1000 back to 900, and says it came from the interval.
    #[test]
    fn a_wide_interval_moves_the_knee_down() {
        let pts = curve(&[(1.0, 800.0, 30.0), (2.0, 900.0, 60.0), (3.0, 1000.0, 80.0)]);
        let fit = fit_knee(&pts, 0.02).unwrap();
        assert_eq!((fit.knee, fit.best), (1, 2));
        assert!((fit.margin - 100.0).abs() < 1e-9 && fit.by_interval);
    }

    /// Narrow intervals: the 2% tolerance is the wider margin and decides.
    #[test]
    fn narrow_intervals_leave_the_tolerance_in_charge() {
        let pts = curve(&[(1.0, 970.0, 1.0), (2.0, 985.0, 1.0), (3.0, 1000.0, 1.0)]);
        let fit = fit_knee(&pts, 0.02).unwrap();
        assert_eq!(fit.knee, 1);
        assert!((fit.margin - 20.0).abs() < 1e-9 && !fit.by_interval);
    }

    fn table(points: &[(i64, f64, Option<f64>)], seeds: usize) -> SweepTable {
        SweepTable {
            scenario: "t".into(),
            job_name: Default::default(),
            params: vec!["params.c".into()],
            metrics: vec![THROUGHPUT.into()],
            rows: (points.iter())
                .map(|&(x, mean, ci95)| Row {
                    values: vec![ParamValue::Int(x)],
                    seeds,
                    stalled: 0,
                    stats: vec![Some(Stat { mean, ci95 })],
                    bottleneck: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_knee_at_the_largest_value_swept_is_flagged() {
        let rising = table(&[(1, 100.0, Some(1.0)), (2, 200.0, Some(1.0))], 3);
        let k = &find_knees(&rising, KNEE_TOLERANCE)[0];
        assert!(k.at_range_top);
        let text = describe(&rising, k, KNEE_TOLERANCE);
        assert!(text.contains("widen the range"), "{text}");
        let level = table(
            &[
                (1, 100.0, Some(1.0)),
                (2, 200.0, Some(1.0)),
                (4, 201.0, Some(1.0)),
            ],
            3,
        );
        let k = &find_knees(&level, KNEE_TOLERANCE)[0];
        assert!(!k.at_range_top && k.row == 1);
        assert!(!describe(&level, k, KNEE_TOLERANCE).contains("widen"));
    }

    #[test]
    fn fewer_than_three_seeds_warn() {
        let one = table(&[(1, 100.0, None), (2, 200.0, None)], 1);
        assert!(
            few_seeds_warning(&one)
                .unwrap()
                .contains("no confidence intervals")
        );
        let k = &find_knees(&one, KNEE_TOLERANCE)[0];
        assert!(describe(&one, k, KNEE_TOLERANCE).contains("one seed"));
        let two = table(&[(1, 100.0, Some(9.0))], 2);
        assert!(
            few_seeds_warning(&two)
                .unwrap()
                .starts_with("2 seeds per point")
        );
        let three = table(&[(1, 100.0, Some(9.0))], 3);
        assert_eq!(few_seeds_warning(&three), None);
    }
}
