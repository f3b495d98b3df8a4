//! The real [`Simulator`]: scenario files through `scenario::load` (with `--set`
//! overrides) and the engine through `run::run_model`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::error::{Result, SweepError};
use super::session::{ScenarioInfo, Simulator};
use crate::analysis::report::Report;
use crate::model::Model;

/// A scenario file, loaded once per distinct set of overrides.
pub struct ScenarioSimulator {
    path: PathBuf,
    // Seeds of one point share the loaded model; loading is cheap but not free.
    cache: Mutex<HashMap<Vec<String>, Model>>,
}

impl ScenarioSimulator {
    /// A simulator for the scenario at `path`.
    pub fn new(path: impl Into<PathBuf>) -> ScenarioSimulator {
        ScenarioSimulator {
            path: path.into(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    fn model(&self, sets: &[String]) -> Result<Model> {
        if let Some(m) = self.cache.lock().expect("cache lock").get(sets) {
            return Ok(m.clone());
        }
        let loaded = crate::scenario::load(&self.path, sets)?;
        self.cache
            .lock()
            .expect("cache lock")
            .insert(sets.to_vec(), loaded.model.clone());
        Ok(loaded.model)
    }
}

impl Simulator for ScenarioSimulator {
    fn describe(&self, sets: &[String]) -> Result<ScenarioInfo> {
        let m = self.model(sets)?;
        Ok(ScenarioInfo {
            name: m.name,
            seed: m.seed,
        })
    }

    fn run(&self, sets: &[String], seed: u64) -> Result<Report> {
        let mut m = self.model(sets)?;
        m.seed = seed;
        crate::run::run_model(&m).map_err(SweepError::Engine)
    }

    fn fingerprint(&self, sets: &[String]) -> Result<String> {
        let loaded = crate::scenario::load(&self.path, sets)?;
        Ok(crate::scenario::fingerprint(&loaded)?)
    }
}
