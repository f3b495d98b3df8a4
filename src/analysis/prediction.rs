//! The prediction interval: what the host will do, not only what the seeds do. Three
//! sources of doubt add on a log scale: the simulation's own noise (the seeds), the
//! calibration's (each host key off by its measured spread, propagated through the
//! engine), and the model's (what it gets wrong with a perfect calibration, measured on
//! committed replays). The combination's scale is set so that the interval covers the
//! share of measured points it claims (normalised conformal prediction: the quantile of
//! the measured residuals over their predicted spread).

use crate::analysis::throughput::sig3;

/// How well the host under a prediction is known: it picks the spreads and error model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostKnowledge {
    /// A calibration `bwsim calibrate` wrote; the prediction is for another boot of that
    /// host (the spreads between boots of one host type). The stage times are this
    /// host's own.
    Calibrated,
    /// Calibrated, but the stage times were measured on another host
    /// (`[workload.measured_on]`) and carried here by host scaling.
    CalibratedStagesMoved,
    /// Typical values: no calibration, so every host key may be off by what separates
    /// host types, and the interval is wider.
    Typical,
    /// Typical values, and stage times measured on another host.
    TypicalStagesMoved,
}

impl HostKnowledge {
    /// Every way, in the data file's order.
    pub const ALL: [HostKnowledge; 4] = [
        HostKnowledge::Calibrated,
        HostKnowledge::CalibratedStagesMoved,
        HostKnowledge::Typical,
        HostKnowledge::TypicalStagesMoved,
    ];

    /// How a host is known from whether it was calibrated and whether its stage times
    /// were measured elsewhere.
    pub fn of(calibrated: bool, stages_moved: bool) -> Self {
        match (calibrated, stages_moved) {
            (true, false) => HostKnowledge::Calibrated,
            (true, true) => HostKnowledge::CalibratedStagesMoved,
            (false, false) => HostKnowledge::Typical,
            (false, true) => HostKnowledge::TypicalStagesMoved,
        }
    }

    /// Whether the host keys come from a calibration.
    pub fn calibrated(self) -> bool {
        matches!(
            self,
            HostKnowledge::Calibrated | HostKnowledge::CalibratedStagesMoved
        )
    }

    /// Its name in reports and in the data file.
    pub fn name(self) -> &'static str {
        match self {
            HostKnowledge::Calibrated => "calibrated",
            HostKnowledge::CalibratedStagesMoved => "calibrated_stages_moved",
            HostKnowledge::Typical => "typical",
            HostKnowledge::TypicalStagesMoved => "typical_stages_moved",
        }
    }

    /// Why the interval is as wide as it is, for the report.
    pub fn why(self) -> &'static str {
        match self {
            HostKnowledge::Calibrated => {
                "host keys from a calibration, each off by its spread between boots of one host type"
            }
            HostKnowledge::CalibratedStagesMoved => {
                "host keys from a calibration; stage times measured on another host and carried here by host scaling, off by what that scaling missed between measured boots"
            }
            HostKnowledge::Typical => {
                "no calibration: host keys are typical values, each off by what separates host types, so the interval is wider; calibrate the host to narrow it"
            }
            HostKnowledge::TypicalStagesMoved => {
                "no calibration: host keys are typical values, and stage times were measured on another host, so the interval is wider; calibrate the host to narrow it"
            }
        }
    }
}

/// What the model gets wrong, as measured. A prediction's model log spread is
/// `sqrt(floor^2 + (contention x ln c)^2 + (weight x host)^2)`, where `c` is the
/// contention stretch of the prediction itself (its seconds per job over the same run's
/// without contention: the model errs more where contention decides the answer) and
/// `host` the host keys' propagated log spread; that spread times `quantile` is the
/// model's part of the interval, around the prediction times `exp(bias)`. The seeds'
/// part is their own 95% scatter, added in quadrature: the quantile was fitted to the
/// model's residuals and does not scale the seeds'.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorModel {
    /// Log spread of the model error where nothing contends.
    pub floor: f64,
    /// Log spread per unit of ln(contention stretch).
    pub contention: f64,
    /// The weight of the host keys' propagated spread.
    pub weight: f64,
    /// |log(measured / predicted) - bias| / spread at the coverage claimed (95%): the
    /// quantile of the committed points' normalised residuals.
    pub quantile: f64,
    /// Mean log(measured / predicted).
    pub bias: f64,
}

impl ErrorModel {
    /// The model's log spread (before the quantile) of a prediction whose contention
    /// stretch is `inflation` and whose host keys move it by `host_log_sd`.
    pub fn spread(&self, inflation: f64, host_log_sd: f64) -> f64 {
        let c = self.contention * inflation.max(1.0).ln();
        (self.floor.powi(2) + c.powi(2) + (self.weight * host_log_sd).powi(2)).sqrt()
    }
}

/// A normal 95% interval's half-width in standard deviations (the seeds' scatter, a GPU
/// speed's uncertainty: parts measured as standard deviations, not fitted quantiles).
const SEEDS_95: f64 = 1.96;

/// A prediction with its interval, in seconds per job.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionInterval {
    /// The prediction (the simulation's mean, corrected by the bias).
    pub seconds_per_job: f64,
    /// The 95% prediction interval's bounds.
    pub low_s: f64,
    pub high_s: f64,
    /// What makes its log half-width, each part as the half-width it alone would give
    /// (the parts add in quadrature): the seeds', the host keys' (weighted), the model's
    /// (floor and contention together).
    pub sim_log_sd: f64,
    pub host_log_sd: f64,
    pub model_log_sd: f64,
    /// The GPU kernel speed's part: a host whose GPU speed is scaled from another GPU by
    /// a published rule, 1.96 x that rule's relative uncertainty carried through the
    /// engine (0 where the stage times were timed on the same GPU).
    pub gpu_log_sd: f64,
    /// How the host is known.
    pub knowledge: HostKnowledge,
    /// The host key that moves the answer most, and its part of the log half-width.
    pub largest: Option<(&'static str, f64)>,
}

impl PredictionInterval {
    /// The interval of a prediction `seconds_per_job` whose contention stretch is
    /// `inflation`, whose replications' mean has the relative standard error
    /// `sim_rel_se` and whose host keys move it by `host_log_sd`.
    pub fn new(
        seconds_per_job: f64,
        inflation: f64,
        sim_rel_se: f64,
        host_log_sd: f64,
        err: &ErrorModel,
        knowledge: HostKnowledge,
        largest: Option<(&'static str, f64)>,
    ) -> Self {
        let q = err.quantile;
        let seeds = SEEDS_95 * sim_rel_se;
        let spread = (q * err.spread(inflation, host_log_sd)).hypot(seeds);
        let center = seconds_per_job * err.bias.exp();
        Self {
            seconds_per_job: center,
            low_s: center * (-spread).exp(),
            high_s: center * spread.exp(),
            sim_log_sd: seeds,
            host_log_sd: q * err.weight * host_log_sd,
            model_log_sd: q * err.spread(inflation, 0.0),
            gpu_log_sd: 0.0,
            knowledge,
            largest: largest.map(|(k, sd)| (k, q * err.weight * sd)),
        }
    }

    /// Its log half-width: ln(high / prediction), equal to ln(prediction / low).
    pub fn log_half_width(&self) -> f64 {
        (self.high_s / self.seconds_per_job).ln()
    }

    /// Jobs per day's bounds as `low-high`, three significant digits each.
    pub fn per_day_range(&self) -> String {
        let (lo, _, hi) = self.jobs_per_day();
        format!("{}-{}", sig3(lo), sig3(hi))
    }

    /// Seconds per job's bounds as `low-high`, three significant digits each.
    pub fn seconds_range(&self) -> String {
        format!("{}-{}", sig3(self.low_s), sig3(self.high_s))
    }

    /// The interval widened by a GPU kernel speed's uncertainty, `log_sd` (one standard
    /// deviation of log seconds per job), added in quadrature as its 95% part.
    pub fn with_gpu_kernel_speed(mut self, log_sd: f64) -> Self {
        let part = SEEDS_95 * log_sd;
        let half = self.log_half_width().hypot(part);
        self.low_s = self.seconds_per_job * (-half).exp();
        self.high_s = self.seconds_per_job * half.exp();
        self.gpu_log_sd = part;
        self
    }

    /// Jobs per day at the prediction and the interval's bounds (low, mid, high).
    pub fn jobs_per_day(&self) -> (f64, f64, f64) {
        let per_day = |s: f64| 86_400.0 / s;
        (
            per_day(self.high_s),
            per_day(self.seconds_per_job),
            per_day(self.low_s),
        )
    }

    /// The interval's half-width relative to the prediction (the larger side).
    pub fn relative_half_width(&self) -> f64 {
        (self.high_s / self.seconds_per_job - 1.0).max(1.0 - self.low_s / self.seconds_per_job)
    }

    /// Whether `seconds_per_job` lies inside it.
    pub fn holds(&self, seconds_per_job: f64) -> bool {
        (self.low_s..=self.high_s).contains(&seconds_per_job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_add_in_quadrature_on_a_log_scale() {
        let err = ErrorModel {
            floor: 0.03,
            contention: 0.0,
            weight: 1.0,
            quantile: 2.0,
            bias: 0.0,
        };
        let pi =
            PredictionInterval::new(10.0, 1.0, 0.0, 0.04, &err, HostKnowledge::Calibrated, None);
        // sqrt(0.03^2 + 0.04^2) = 0.05; x 2 = 0.1 on the log scale.
        assert!((pi.high_s - 10.0 * 0.1f64.exp()).abs() < 1e-12);
        assert!((pi.low_s - 10.0 * (-0.1f64).exp()).abs() < 1e-12);
        assert!(pi.holds(10.5) && !pi.holds(11.2));
        let (lo, mid, hi) = pi.jobs_per_day();
        assert!(lo < mid && mid < hi && (mid - 8640.0).abs() < 1e-9);
        // A bias moves the centre: the model predicts 5% fast, so the host is slower.
        let biased = ErrorModel { bias: 0.05, ..err };
        let pi =
            PredictionInterval::new(10.0, 1.0, 0.0, 0.0, &biased, HostKnowledge::Typical, None);
        assert!((pi.seconds_per_job - 10.0 * 0.05f64.exp()).abs() < 1e-12);
        // Contention widens it: a stage 2x its standalone time adds 0.1 x ln 2.
        let contended = ErrorModel {
            contention: 0.1,
            ..err
        };
        let s = contended.spread(2.0, 0.04);
        assert!(
            (s - (0.03f64.powi(2) + (0.1 * 2f64.ln()).powi(2) + 0.04f64.powi(2)).sqrt()).abs()
                < 1e-12
        );
        assert_eq!(
            contended.spread(0.5, 0.0),
            0.03,
            "inflation below 1 adds nothing"
        );
    }

    #[test]
    fn a_gpu_speeds_uncertainty_widens_the_interval_in_quadrature() {
        let err = ErrorModel {
            floor: 0.1,
            contention: 0.0,
            weight: 0.0,
            quantile: 2.0,
            bias: 0.0,
        };
        let pi = PredictionInterval::new(1.0, 1.0, 0.0, 0.0, &err, HostKnowledge::Typical, None);
        let wider = pi.clone().with_gpu_kernel_speed(0.1);
        let half = 0.2f64.hypot(0.196);
        assert!(
            (wider.high_s - half.exp()).abs() < 1e-12
                && (wider.low_s - (-half).exp()).abs() < 1e-12
        );
        assert_eq!(
            pi.clone().with_gpu_kernel_speed(0.0),
            pi,
            "no uncertainty, no change"
        );
    }

    #[test]
    fn the_seeds_scatter_is_added_as_measured_not_scaled_by_the_model_quantile() {
        let err = ErrorModel {
            floor: 0.01,
            contention: 0.0,
            weight: 0.0,
            quantile: 10.0,
            bias: 0.0,
        };
        let pi = PredictionInterval::new(1.0, 1.0, 0.01, 0.0, &err, HostKnowledge::Typical, None);
        // The model's part 0.01 x 10 = 0.1; the seeds' 1.96 x 0.01, in quadrature.
        let half = 0.1f64.hypot(0.0196);
        assert!((pi.high_s - half.exp()).abs() < 1e-12, "{}", pi.high_s);
        assert!((pi.sim_log_sd - 0.0196).abs() < 1e-12 && (pi.model_log_sd - 0.1).abs() < 1e-12);
    }
}
