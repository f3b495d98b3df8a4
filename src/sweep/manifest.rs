//! `manifest.json`, in every sweep folder: the sweep's flags (enough to rerun or resume
//! it), the fingerprint of the files its model was read from, the grid's size, the seeds
//! and the files the finished folder holds. It says "partial" while the sweep runs in its
//! staging folder and "complete" once the folder is renamed into place.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::session::{SweepArgs, SweepPlan};
use crate::input_file::InputError;
use crate::output::{OutputError, write_atomic};

/// The manifest's file name.
pub const MANIFEST: &str = "manifest.json";

/// The manifest's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// "partial" while running, "complete" once renamed into place.
    pub status: String,
    /// The bwsim that wrote it.
    pub bwsim_version: String,
    /// The sweep's flags, enough to rerun or resume it.
    pub inputs: SweepArgs,
    /// The fingerprint of the scenario, every file it includes and its arrivals trace
    /// when the sweep started ([`crate::scenario::fingerprint`]); a resume refuses other
    /// bytes. Absent in manifests of older versions, which therefore cannot be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_hash: Option<String>,
    /// The base of the per-point seeds (the scenario's seed unless `--seed`).
    pub base_seed: u64,
    /// Points in the whole grid.
    pub points: usize,
    /// Seeds per point.
    pub seeds_per_point: usize,
    /// The files of the finished folder (empty while partial).
    pub files: Vec<String>,
}

impl Manifest {
    /// The manifest of a sweep that starts now.
    pub fn partial(inputs: &SweepArgs, plan: &SweepPlan, scenario_hash: String) -> Manifest {
        Manifest {
            status: "partial".into(),
            bwsim_version: env!("CARGO_PKG_VERSION").into(),
            inputs: inputs.clone(),
            scenario_hash: Some(scenario_hash),
            base_seed: plan.opts.base_seed,
            points: plan.grid.len(),
            seeds_per_point: plan.opts.seeds,
            files: Vec::new(),
        }
    }

    /// Writes it (pretty JSON and a newline) to `path`, atomically.
    pub fn write(&self, path: &Path) -> Result<(), OutputError> {
        let text = serde_json::to_string_pretty(self).expect("a manifest serializes");
        write_atomic(path, format!("{text}\n").as_bytes())
    }

    /// Reads the manifest of an interrupted sweep; the error says it cannot be resumed.
    pub fn read_for_resume(path: &Path) -> Result<Manifest, InputError> {
        let text = crate::input_file::read_text(path, crate::input_file::MAX_JSON_BYTES)
            .map_err(|e| cannot_resume(e.to_string()).file(path))?;
        serde_json::from_str(&text).map_err(|e| cannot_resume(e.to_string()).file(path))
    }
}

/// An interrupted sweep that cannot be resumed (a damaged or foreign staging folder).
pub fn cannot_resume(problem: impl Into<String>) -> InputError {
    InputError::new(problem).action("cannot resume")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            status: "partial".into(),
            bwsim_version: "0".into(),
            inputs: SweepArgs::new("s.toml", vec!["a=1..3".into()]),
            scenario_hash: Some("abc".into()),
            base_seed: 7,
            points: 3,
            seeds_per_point: 3,
            files: Vec::new(),
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST);
        manifest().write(&path).unwrap();
        assert_eq!(Manifest::read_for_resume(&path).unwrap(), manifest());
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
    }

    #[test]
    fn a_manifest_that_is_not_one_cannot_be_resumed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MANIFEST);
        std::fs::write(&path, "{\"status\": 3}").unwrap();
        let e = Manifest::read_for_resume(&path).unwrap_err();
        assert_eq!(e.action, Some("cannot resume"));
        assert!(e.to_string().contains(MANIFEST), "{e}");
        let missing = dir.path().join("none.json");
        assert!(Manifest::read_for_resume(&missing).is_err());
    }

    #[test]
    fn an_older_manifest_without_a_fingerprint_still_parses() {
        let mut m = manifest();
        m.scenario_hash = None;
        let text = serde_json::to_string(&m).unwrap();
        assert!(!text.contains("scenario_hash"));
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back.scenario_hash, None);
    }
}
