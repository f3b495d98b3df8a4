//! One measured point predicted again by today's model: its scenario with a calibration
//! over it (the replay's own boot's, or another's), its flags, one run on the scenario's
//! seed, and the host keys' spread carried through the engine.

use std::path::Path;

use crate::engine::{EngineLimits, NullObserver};
use crate::prediction::{HostSpread, largest_inflation, sensitivity::sensitivity};
use crate::run::{RunOptions, run_model_within};
use crate::scenario::{self, Loaded, ScenarioError};

use super::AccuracyError;

/// A point's prediction and what its interval needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    pub seconds_per_job: f64,
    /// The largest stage inflation the prediction shows.
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

/// Predicts `scenario` under `calibration` with `sets`, and propagates `spread`.
pub fn predict(
    scenario: &Path,
    calibration: &Path,
    sets: &[String],
    spread: &HostSpread,
) -> Result<Prediction, AccuracyError> {
    let what = || format!("{} with {}", scenario.display(), sets.join(" "));
    let loaded =
        load(scenario, calibration, sets).map_err(|e| AccuracyError::predict(what(), e))?;
    let limits = EngineLimits::default();
    let report = run_model_within(
        &loaded.model,
        RunOptions { ideal: false },
        limits,
        &mut NullObserver,
    )
    .map_err(|e| AccuracyError::predict(what(), e))?;
    let reload = |extra: &[String]| {
        let mut all = sets.to_vec();
        all.extend(extra.iter().cloned());
        load(scenario, calibration, &all)
    };
    let sens = sensitivity(&loaded, reload, spread, limits)
        .map_err(|e| AccuracyError::predict(what(), e))?;
    Ok(Prediction {
        seconds_per_job: report.seconds_per_job,
        inflation: largest_inflation(&report),
        host_log_sd: sens.log_sd(),
    })
}
