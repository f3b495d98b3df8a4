//! Prediction intervals: what the host will do (`run`, `sweep` and `compare` lead with
//! them). A prediction's interval combines the seeds' noise, the host keys' spread
//! propagated through the engine ([`sensitivity`]) and the model's own error, with the
//! spreads and the error model of [`data`] (measured on committed replays; `bwsim
//! accuracy` rebuilds them). See [`crate::analysis::prediction`] for the arithmetic.

pub mod data;
pub mod sensitivity;
pub mod spread;

use crate::analysis::interval::t975;
use crate::analysis::prediction::{HostKnowledge, PredictionInterval};
use crate::analysis::report::Report;
use crate::engine::EngineLimits;
use crate::scenario::{Loaded, ScenarioError};

pub use sensitivity::{Sensitivity, SensitivityError};
pub use spread::{HostKey, HostSpread, Spread};

/// How the host under `loaded` is known: calibrated when a calibration file is among
/// its includes or given with `--calibration`; its stages moved when it states they were measured elsewhere
/// (`[workload.measured_on]`).
pub fn knowledge(loaded: &Loaded) -> HostKnowledge {
    HostKnowledge::of(
        loaded.summary.calibration_summary.is_some() || loaded.summary.calibration.is_some(),
        loaded.summary.measured_on.is_some(),
    )
}

/// The relative standard error of a report's seconds per job over its replications (0
/// for one run, whose seed noise the model error's floor already holds).
pub fn sim_relative_se(report: &Report) -> f64 {
    let Some(r) = &report.replications else {
        return 0.0;
    };
    let s = &r.seconds_per_job;
    relative_se(s.mean, s.ci95, s.n)
}

/// The relative standard error of a mean over `n` seeds whose 95% half-width is `ci95`
/// (0 without one).
fn relative_se(mean: f64, ci95: Option<f64>, n: usize) -> f64 {
    match ci95 {
        Some(h) if n >= 2 && mean > 0.0 => h / t975(n - 1) / mean,
        _ => 0.0,
    }
}

/// How far contention moves the answer: seconds per job over the same run's without
/// DRAM, PCIe or pool contention (the `ideal` run), at least 1. The model errs where its
/// contention rules decide the answer, not where stages inflate behind a bottleneck that
/// hides them. Without an ideal run (`--no-ideal`), the stages' summed time over their
/// summed standalone time stands in.
pub fn contention_stretch(report: &Report) -> f64 {
    let ideal = (report.replications.as_ref())
        .and_then(|r| r.ideal_seconds_per_job)
        .map(|s| s.mean)
        .or(report.ideal_seconds_per_job);
    stretch(mean_seconds_per_job(report), ideal, || {
        work_inflation(report)
    })
}

/// `seconds` over the contention-free `ideal`, at least 1 (`fallback` without an ideal;
/// 1 where it is not finite).
fn stretch(seconds: f64, ideal: Option<f64>, fallback: impl FnOnce() -> f64) -> f64 {
    let x = match ideal {
        Some(i) if i > 0.0 => seconds / i,
        _ => fallback(),
    };
    if x.is_finite() { x.max(1.0) } else { 1.0 }
}

fn work_inflation(report: &Report) -> f64 {
    let (mut loaded, mut alone) = (0.0, 0.0);
    for s in (report.stages.iter()).filter(|s| s.count > 0 && s.standalone_mean_s > 0.0) {
        loaded += s.count as f64 * s.mean_s;
        alone += s.count as f64 * s.standalone_mean_s;
    }
    loaded / alone
}

/// The mean seconds per job of a report (over its replications, when it has them).
pub fn mean_seconds_per_job(report: &Report) -> f64 {
    (report.replications.as_ref()).map_or(report.seconds_per_job, |r| r.seconds_per_job.mean)
}

/// What an interval is built around: the answer's seconds per job, how far contention
/// stretches it ([`contention_stretch`]) and its seeds' relative standard error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    pub seconds_per_job: f64,
    pub contention_stretch: f64,
    pub sim_rel_se: f64,
}

impl Answer {
    /// A run's answer.
    pub fn of_report(report: &Report) -> Self {
        Self {
            seconds_per_job: mean_seconds_per_job(report),
            contention_stretch: contention_stretch(report),
            sim_rel_se: sim_relative_se(report),
        }
    }

    /// A sweep point's answer: its seconds per job over `n` seeds (`ci95` the half-width
    /// of their 95% interval) and its contention-free counterpart's mean.
    pub fn of_point(mean_s: f64, ci95: Option<f64>, n: usize, ideal_s: Option<f64>) -> Self {
        Self {
            seconds_per_job: mean_s,
            contention_stretch: stretch(mean_s, ideal_s, || 1.0),
            sim_rel_se: relative_se(mean_s, ci95, n),
        }
    }
}

/// The prediction interval of `report`, the answer of `loaded` (which `reload` loads
/// again with extra `--set`s after its own), with the spreads and error model for how
/// its host is known.
pub fn predict(
    loaded: &Loaded,
    reload: impl Fn(&[String]) -> Result<Loaded, ScenarioError> + Sync,
    report: &Report,
    limits: EngineLimits,
) -> Result<(PredictionInterval, Sensitivity), SensitivityError> {
    predict_answer(loaded, reload, Answer::of_report(report), limits)
}

/// The prediction interval of `answer`, the answer of `loaded`, as [`predict`] makes it.
pub fn predict_answer(
    loaded: &Loaded,
    reload: impl Fn(&[String]) -> Result<Loaded, ScenarioError> + Sync,
    answer: Answer,
    limits: EngineLimits,
) -> Result<(PredictionInterval, Sensitivity), SensitivityError> {
    let k = knowledge(loaded);
    let basis = data::intervals().basis(k);
    // Where the fitted error model gives the host keys no weight (their spread between
    // boots did not add to the measured errors), the sensitivity runs would change
    // nothing: skip them.
    let sens = if basis.error.weight > 0.0 {
        sensitivity::sensitivity(loaded, reload, &basis.spread, limits)?
    } else {
        Sensitivity {
            effects: Vec::new(),
        }
    };
    let largest = sens.largest().map(|e| (e.key.name(), e.log_sd()));
    let pi = PredictionInterval::new(
        answer.seconds_per_job,
        answer.contention_stretch,
        answer.sim_rel_se,
        sens.log_sd(),
        &basis.error,
        k,
        largest,
    );
    Ok((pi, sens))
}
