//! The calibration's share of a prediction's uncertainty, by linearisation: the scenario
//! run again with each host key one standard deviation down and up (on the same seed,
//! so that only the key moves the answer), and the central difference of log seconds
//! per job taken as that key's effect. Keys move independently; their effects add in
//! quadrature.

use rayon::prelude::*;

use crate::engine::{EngineError, EngineLimits, NullObserver};
use crate::run::{RunOptions, run_model_within};
use crate::scenario::{Loaded, ScenarioError};

use super::spread::{HostKey, HostSpread};

/// What one key's spread does to seconds per job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyEffect {
    pub key: HostKey,
    /// The key's spread (see [`super::spread::Spread`]).
    pub sd: f64,
    /// Seconds per job with the key one spread down and one up.
    pub down_s: f64,
    pub up_s: f64,
}

impl KeyEffect {
    /// The standard deviation of log seconds per job this key's spread gives.
    pub fn log_sd(&self) -> f64 {
        central_log_sd(self.down_s, self.up_s)
    }
}

/// One standard deviation of log seconds per job, from runs with a quantity one standard
/// deviation down and one up: half their log difference (a central difference).
pub fn central_log_sd(down_s: f64, up_s: f64) -> f64 {
    ((up_s.ln() - down_s.ln()) / 2.0).abs()
}

/// Why one stepped run failed.
#[derive(Debug)]
pub enum SteppedRunError {
    /// The scenario with the step did not load.
    Load(ScenarioError),
    /// It loaded but did not run.
    Run(EngineError),
}

/// One stepped run of a linearisation: the scenario reloaded with `sets` after its own
/// (`reload`), run once on its seed without its contention-free counterpart; its seconds
/// per job. A host key here, the GPU kernel speed in `compare`.
pub fn stepped_seconds_per_job(
    reload: &impl Fn(&[String]) -> Result<Loaded, ScenarioError>,
    sets: &[String],
    limits: EngineLimits,
) -> Result<f64, SteppedRunError> {
    let stepped = reload(sets).map_err(SteppedRunError::Load)?;
    let opts = RunOptions { ideal: false };
    run_model_within(&stepped.model, opts, limits, &mut NullObserver)
        .map(|report| report.seconds_per_job)
        .map_err(SteppedRunError::Run)
}

/// Every key's effect on one prediction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sensitivity {
    /// Keys the model has (a key with nothing to move is left out), in
    /// [`HostKey::ALL`] order.
    pub effects: Vec<KeyEffect>,
}

impl Sensitivity {
    /// The standard deviation of log seconds per job from all keys together.
    pub fn log_sd(&self) -> f64 {
        (self.effects.iter())
            .map(|e| e.log_sd().powi(2))
            .sum::<f64>()
            .sqrt()
    }

    /// The key that moves the answer most, if any moves it.
    pub fn largest(&self) -> Option<&KeyEffect> {
        (self.effects.iter())
            .filter(|e| e.log_sd() > 0.0)
            .max_by(|a, b| a.log_sd().total_cmp(&b.log_sd()))
    }
}

/// Why a sensitivity run failed.
#[derive(Debug, thiserror::Error)]
pub enum SensitivityError {
    /// The scenario with one key stepped did not load.
    #[error("the scenario with {key} stepped by its spread ({sets}): {source}")]
    Load {
        key: &'static str,
        sets: String,
        source: Box<ScenarioError>,
    },
    /// The scenario with one key stepped did not run.
    #[error("the scenario with {key} stepped by its spread ({sets}): {source}")]
    Run {
        key: &'static str,
        sets: String,
        source: EngineError,
    },
}

/// Each key of `spread` that `loaded` has, stepped down and up by its spread and run
/// once on the scenario's seed (`reload` loads the scenario with extra `--set`s after
/// its own). A stepped run that finishes no job leaves its key out.
pub fn sensitivity(
    loaded: &Loaded,
    reload: impl Fn(&[String]) -> Result<Loaded, ScenarioError> + Sync,
    spread: &HostSpread,
    limits: EngineLimits,
) -> Result<Sensitivity, SensitivityError> {
    let steps: Vec<(HostKey, f64, f64, Vec<String>)> = (spread.spreads.iter())
        .filter(|s| s.sd > 0.0)
        .flat_map(|s| [-1.0, 1.0].map(|dir| (s.key, s.sd, dir, s.key.step(loaded, s.sd, dir))))
        .filter(|(_, _, _, sets)| !sets.is_empty())
        .collect();
    let seconds: Vec<f64> = (steps.par_iter())
        .map(|(key, _, _, sets)| {
            stepped_seconds_per_job(&reload, sets, limits).map_err(|e| {
                let (key, sets) = (key.name(), sets.join(" "));
                match e {
                    SteppedRunError::Load(source) => SensitivityError::Load {
                        key,
                        sets,
                        source: Box::new(source),
                    },
                    SteppedRunError::Run(source) => SensitivityError::Run { key, sets, source },
                }
            })
        })
        .collect::<Result<_, SensitivityError>>()?;
    let effects = (steps.chunks(2).zip(seconds.chunks(2)))
        .filter(|(_, s)| s.iter().all(|x| x.is_finite() && *x > 0.0))
        .map(|(pair, s)| KeyEffect {
            key: pair[0].0,
            sd: pair[0].1,
            down_s: s[0],
            up_s: s[1],
        })
        .collect();
    Ok(Sensitivity { effects })
}
