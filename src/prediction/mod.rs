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
    match s.ci95 {
        Some(h) if s.n >= 2 && s.mean > 0.0 => h / t975(s.n - 1) / s.mean,
        _ => 0.0,
    }
}

/// How far contention stretches the work as a whole: the stages' summed time over their
/// summed standalone time, at least 1. A stage that is short but badly slowed weighs
/// little, as it does in the answer.
pub fn work_inflation(report: &Report) -> f64 {
    let (mut loaded, mut alone) = (0.0, 0.0);
    for s in (report.stages.iter()).filter(|s| s.count > 0 && s.standalone_mean_s > 0.0) {
        loaded += s.count as f64 * s.mean_s;
        alone += s.count as f64 * s.standalone_mean_s;
    }
    let x = loaded / alone;
    if x.is_finite() { x.max(1.0) } else { 1.0 }
}

/// The mean seconds per job of a report (over its replications, when it has them).
pub fn mean_seconds_per_job(report: &Report) -> f64 {
    (report.replications.as_ref()).map_or(report.seconds_per_job, |r| r.seconds_per_job.mean)
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
    let k = knowledge(loaded);
    let basis = data::intervals().basis(k);
    let sens = sensitivity::sensitivity(loaded, reload, &basis.spread, limits)?;
    let largest = sens.largest().map(|e| (e.key.name(), e.log_sd()));
    let pi = PredictionInterval::new(
        mean_seconds_per_job(report),
        work_inflation(report),
        sim_relative_se(report),
        sens.log_sd(),
        &basis.error,
        k,
        largest,
    );
    Ok((pi, sens))
}
