//! The model's error, fitted to the committed points: the error model's three spreads
//! chosen on a grid, its quantile by normalised conformal prediction, and each point's
//! interval left out with its run (leave-one-run-out: the quantile from the other runs).

use std::collections::BTreeSet;

use crate::analysis::prediction::ErrorModel;

use super::predict::Prediction;

/// The coverage the intervals claim.
pub const COVERAGE: f64 = 0.95;

/// One measured point beside its prediction under one calibration.
#[derive(Debug, Clone)]
pub struct Row {
    /// The accuracy run and boot it was measured in.
    pub run: String,
    pub boot: String,
    pub card: String,
    /// The boot whose calibration predicted it (`typical` for none).
    pub calibration: String,
    /// The boot its stage times were profiled on: its own, or another whose stage times
    /// were carried to it ([`super::moved`]).
    pub profile: String,
    pub profile_card: String,
    pub shape: String,
    pub x: f64,
    /// Mean seconds per job over its repeats and their runs.
    pub measured: f64,
    /// Measured runs behind it.
    pub runs: usize,
    pub predicted: Prediction,
}

impl Row {
    /// log(measured / predicted).
    pub fn log_ratio(&self) -> f64 {
        (self.measured / self.predicted.seconds_per_job).ln()
    }

    /// (predicted - measured) / measured.
    pub fn error(&self) -> f64 {
        self.predicted.seconds_per_job / self.measured - 1.0
    }

    fn spread(&self, e: &ErrorModel) -> f64 {
        e.spread(self.predicted.inflation, self.predicted.host_log_sd)
    }
}

/// An error model and how its intervals did on the points, each left out with its run.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub error: ErrorModel,
    /// Per row (in the order given): whether its interval, fitted without its run, held
    /// the measured value, and that interval's relative half-width.
    pub held: Vec<bool>,
    pub half_width: Vec<f64>,
}

impl Fitted {
    /// The share of rows held.
    pub fn coverage(&self) -> f64 {
        self.held.iter().filter(|h| **h).count() as f64 / self.held.len().max(1) as f64
    }

    /// The median relative half-width.
    pub fn median_half_width(&self) -> f64 {
        median(&self.half_width)
    }

    /// The mean log half-width: what the fit makes as small as it can. A median alone
    /// lets the upper half of the intervals grow without bound (seen: 130% at the 90th
    /// percentile for a 27% median); the mean on the log scale keeps every one in view
    /// without letting one wide point decide.
    pub fn mean_log_half_width(&self) -> f64 {
        let n = self.half_width.len().max(1) as f64;
        self.half_width.iter().map(|h| h.ln_1p()).sum::<f64>() / n
    }
}

/// The conformal quantile of normalised scores: the ceil((n + 1) x coverage)-th smallest
/// (the largest when there are too few).
pub fn quantile(mut scores: Vec<f64>, coverage: f64) -> f64 {
    if scores.is_empty() {
        return f64::NAN;
    }
    scores.sort_by(f64::total_cmp);
    let k = (((scores.len() + 1) as f64 * coverage).ceil() as usize).clamp(1, scores.len());
    scores[k - 1]
}

/// The intervals of `rows` under `spreads` (floor, contention, weight), each row's
/// quantile taken from the rows of the other runs.
fn left_out(rows: &[&Row], floor: f64, contention: f64, weight: f64) -> Fitted {
    let e = ErrorModel {
        floor,
        contention,
        weight,
        quantile: 1.0,
        bias: 0.0,
    };
    let runs: BTreeSet<&str> = rows.iter().map(|r| r.run.as_str()).collect();
    let (mut held, mut half_width) = (vec![false; rows.len()], vec![0.0; rows.len()]);
    for run in runs {
        let scores = (rows.iter())
            .filter(|r| r.run != run)
            .map(|r| r.log_ratio().abs() / r.spread(&e))
            .collect();
        let q = quantile(scores, COVERAGE);
        for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.run == run) {
            let s = q * r.spread(&e);
            held[i] = r.log_ratio().abs() <= s;
            half_width[i] = s.exp() - 1.0;
        }
    }
    let scores = rows
        .iter()
        .map(|r| r.log_ratio().abs() / r.spread(&e))
        .collect();
    Fitted {
        error: ErrorModel {
            quantile: quantile(scores, COVERAGE),
            ..e
        },
        held,
        half_width,
    }
}

/// The grid the error model's spreads are chosen on.
const FLOORS: [f64; 9] = [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12];
const CONTENTIONS: [f64; 7] = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5];
const WEIGHTS: [f64; 6] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0];

/// The error model for `rows`: of the grid's spreads whose intervals, left out run by
/// run, hold at least [`COVERAGE`] less a point, those with the smallest mean log
/// half-width; its quantile from every row.
pub fn fit(rows: &[&Row]) -> Fitted {
    let mut best: Option<Fitted> = None;
    for floor in FLOORS {
        for contention in CONTENTIONS {
            for weight in WEIGHTS {
                let f = left_out(rows, floor, contention, weight);
                if f.coverage() < COVERAGE - 0.01 {
                    continue;
                }
                if best
                    .as_ref()
                    .is_none_or(|b| f.mean_log_half_width() < b.mean_log_half_width())
                {
                    best = Some(f);
                }
            }
        }
    }
    best.unwrap_or_else(|| left_out(rows, 0.05, 0.0, 1.0))
}

/// The intervals of `rows` under an error model fitted elsewhere (its quantile as is).
pub fn apply(rows: &[&Row], error: &ErrorModel) -> Fitted {
    let (mut held, mut half_width) = (Vec::new(), Vec::new());
    for r in rows {
        let s = error.quantile * r.spread(error);
        held.push(r.log_ratio().abs() <= s);
        half_width.push(s.exp() - 1.0);
    }
    Fitted {
        error: *error,
        held,
        half_width,
    }
}

/// The median of `v` (NaN when empty), for tables.
pub fn median(v: &[f64]) -> f64 {
    crate::analysis::median::median(v).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run: &str, ratio: f64, host: f64) -> Row {
        Row {
            run: run.into(),
            boot: run.into(),
            card: "H200".into(),
            calibration: run.into(),
            profile: run.into(),
            profile_card: "H200".into(),
            shape: "s".into(),
            x: 1.0,
            measured: ratio,
            runs: 1,
            predicted: Prediction {
                seconds_per_job: 1.0,
                inflation: 1.0,
                host_log_sd: host,
            },
        }
    }

    #[test]
    fn the_conformal_quantile_is_the_rank_the_coverage_asks() {
        let v: Vec<f64> = (1..=19).map(f64::from).collect();
        // (19 + 1) x 0.95 = 19: the largest.
        assert_eq!(quantile(v.clone(), 0.95), 19.0);
        assert_eq!(quantile(v, 0.5), 10.0);
        assert!(quantile(Vec::new(), 0.95).is_nan());
    }

    #[test]
    fn intervals_left_out_by_run_cover_what_they_claim_on_exchangeable_runs() {
        // Ten runs of 40 points whose log errors are spread by their host spread: the
        // fitted intervals hold about 95% of each left-out run, and weigh the host
        // spread (narrow where it is small).
        let mut rows = Vec::new();
        let mut u = 0.1234_f64;
        for run in 0..10 {
            for i in 0..40 {
                u = (u * 9301.0 + 0.4927).fract();
                let host = if i % 2 == 0 { 0.01 } else { 0.08 };
                let z = (u - 0.5) * 3.4; // roughly uniform on +-1.7
                rows.push(row(&format!("r{run}"), (z * host).exp(), host));
            }
        }
        let refs: Vec<&Row> = rows.iter().collect();
        let f = fit(&refs);
        assert!(
            f.coverage() >= 0.94 && f.coverage() <= 0.99,
            "{}",
            f.coverage()
        );
        assert!(f.error.weight > 0.0, "{:?}", f.error);
        let narrow = f.half_width.iter().step_by(2).sum::<f64>();
        let wide = f.half_width.iter().skip(1).step_by(2).sum::<f64>();
        assert!(narrow < wide / 2.0, "{narrow} {wide}");
    }
}
