//! The knee of a throughput curve: the smallest parameter value whose mean throughput is
//! within a tolerance (2%) of the best. Past it, more concurrency only adds memory use
//! and latency.

use serde_json::{Value, json};

use super::table::SweepTable;

/// Default tolerance: within 2% of the best throughput.
pub const KNEE_TOLERANCE: f64 = 0.02;

/// The metric the knee is found on.
pub const THROUGHPUT: &str = "jobs_per_hour";

/// Index of the knee among `(x, throughput)` points: the smallest x whose throughput is
/// at least `(1 - tol) * best`. None when no point has a positive finite throughput
/// (nothing completed: there is no knee to speak of).
pub fn knee_index(points: &[(f64, f64)], tol: f64) -> Option<usize> {
    let best = points
        .iter()
        .map(|p| p.1)
        .filter(|y| y.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !(best.is_finite() && best > 0.0) {
        return None;
    }
    points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.1.is_finite() && p.1 >= best * (1.0 - tol))
        .min_by(|a, b| a.1.0.total_cmp(&b.1.0))
        .map(|(i, _)| i)
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
    /// Throughput at the knee, jobs/hour.
    pub jobs_per_hour: f64,
    /// Best throughput, jobs/hour.
    pub best_jobs_per_hour: f64,
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
            let pts: Vec<(usize, (f64, f64))> = s
                .rows
                .iter()
                .filter_map(|&r| Some((r, (table.x(r), table.stat(r, THROUGHPUT)?.mean))))
                .collect();
            let xy: Vec<(f64, f64)> = pts.iter().map(|p| p.1).collect();
            let k = knee_index(&xy, tol)?;
            let b = (0..xy.len()).max_by(|&a, &b| xy[a].1.total_cmp(&xy[b].1))?;
            Some(Knee {
                series: s.label,
                row: pts[k].0,
                best_row: pts[b].0,
                jobs_per_hour: xy[k].1,
                best_jobs_per_hour: xy[b].1,
            })
        })
        .collect()
}

/// One line for the terminal, e.g.
/// `knee: params.synthesis_concurrency = 12 (1180 jobs/h; best 1200 at 20, within 2%)`.
pub fn describe(table: &SweepTable, k: &Knee, tol: f64) -> String {
    let v = &table.rows[k.row].values[0];
    let bv = &table.rows[k.best_row].values[0];
    let series = k
        .series
        .as_ref()
        .map(|s| format!(" [{s}]"))
        .unwrap_or_default();
    format!(
        "knee{series}: {} = {v} ({:.1} jobs/h; best {:.1} at {bv}, within {}%)",
        table.x_key(),
        k.jobs_per_hour,
        k.best_jobs_per_hour,
        tol * 100.0
    )
}

/// JSON form for sweep.json.
pub fn to_json(table: &SweepTable, k: &Knee, tol: f64) -> Value {
    json!({
        "param": table.x_key(),
        "series": k.series,
        "value": table.rows[k.row].values[0].to_json(),
        "jobs_per_hour": k.jobs_per_hour,
        "best_value": table.rows[k.best_row].values[0].to_json(),
        "best_jobs_per_hour": k.best_jobs_per_hour,
        "tolerance": tol,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
