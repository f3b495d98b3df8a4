//! One measured point predicted again by today's model: its scenario with a calibration
//! over it (the replay's own boot's, or another's), its flags, one run on the scenario's
//! seed, and the host keys' spread carried through the engine.

use std::path::Path;

use crate::engine::{EngineLimits, NullObserver};
use crate::prediction::{HostSpread, contention_stretch, sensitivity::sensitivity};
use crate::run::{RunOptions, run_model_within};
use crate::scenario::{self, Loaded, ScenarioError};

use super::AccuracyError;

/// A point's prediction and what its interval needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub seconds_per_job: f64,
    /// How far contention moves the prediction ([`crate::prediction::contention_stretch`]).
    pub inflation: f64,
    /// The host keys' spread carried to log seconds per job.
    pub host_log_sd: f64,
}

/// `scenario` with `calibration` merged over it (as `replay --calibration` merges it)
/// and `sets` applied.
pub fn load(scenario: &Path, calibration: &Path, sets: &[String]) -> Result<Loaded, ScenarioError> {
    let quoted = |p: &Path| {
        let abs = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        toml::Value::String(abs.display().to_string()).to_string()
    };
    let text = format!(
        "include = [{}, {}]\n",
        quoted(scenario),
        quoted(calibration)
    );
    let origin = scenario
        .parent()
        .unwrap_or(Path::new("."))
        .join(".bwsim-accuracy.toml");
    scenario::load_str(&text, &origin, sets)
}

/// Predicts `scenario` under `calibration` with `sets`: one run on its seed.
fn run_once(
    scenario: &Path,
    calibration: &Path,
    sets: &[String],
) -> Result<(Loaded, crate::analysis::report::Report), AccuracyError> {
    let what = || format!("{} with {}", scenario.display(), sets.join(" "));
    let loaded =
        load(scenario, calibration, sets).map_err(|e| AccuracyError::predict(what(), e))?;
    let report = run_model_within(
        &loaded.model,
        RunOptions { ideal: true },
        EngineLimits::default(),
        &mut NullObserver,
    )
    .map_err(|e| AccuracyError::predict(what(), e))?;
    Ok((loaded, report))
}

/// Predicts `scenario` under `calibration` with `sets`, and propagates `spread`.
pub fn predict(
    scenario: &Path,
    calibration: &Path,
    sets: &[String],
    spread: &HostSpread,
) -> Result<Prediction, AccuracyError> {
    let (loaded, report) = run_once(scenario, calibration, sets)?;
    let reload = |extra: &[String]| {
        let mut all = sets.to_vec();
        all.extend(extra.iter().cloned());
        load(scenario, calibration, &all)
    };
    let sens = sensitivity(&loaded, reload, spread, EngineLimits::default()).map_err(|e| {
        AccuracyError::predict(format!("{} with {}", scenario.display(), sets.join(" ")), e)
    })?;
    Ok(Prediction {
        seconds_per_job: report.seconds_per_job,
        inflation: contention_stretch(&report),
        host_log_sd: sens.log_sd(),
    })
}

/// Predicts as [`predict`] does, with the host keys' spread already known (that of the
/// same point under the same calibration).
pub fn predict_once(
    scenario: &Path,
    calibration: &Path,
    sets: &[String],
    host_log_sd: f64,
) -> Result<Prediction, AccuracyError> {
    let (_, report) = run_once(scenario, calibration, sets)?;
    Ok(Prediction {
        seconds_per_job: report.seconds_per_job,
        inflation: contention_stretch(&report),
        host_log_sd,
    })
}
