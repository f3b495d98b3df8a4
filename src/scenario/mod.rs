//! Scenario files: TOML in, a validated [`Model`] out.
//!
//! The steps, one module each: read the file and its `include`s and merge them
//! ([`include`]), apply `--set KEY=VALUE` overrides ([`overrides`]), resolve `[params]`
//! knobs and substitute `"$name"` / `"= expression"` values ([`params`]), deserialize into
//! the schema with unknown keys rejected ([`schema`]), then check every value and build the
//! typed model (`build`, `stages`). Every error names the file (and line when known), the
//! dotted key and the problem; see [`ScenarioError`].
//!
//! ```
//! use std::path::Path;
//! let text = r#"
//! [hardware]
//! cpu_cores = 4
//! host_ram_gib = 16
//! dram = { capacity_gbps = 50 }
//! [[workload.stages]]
//! name = "work"
//! duration_s = "= 2 * $base"
//! cores = 1
//! [arrivals]
//! kind = "closed"
//! concurrency = 2
//! jobs = 10
//! [params]
//! base = { default = 0.5, doc = "seconds of work" }
//! "#;
//! let loaded = bwsim::scenario::load_str(text, Path::new("ex.toml"), &["params.base=2".into()]).unwrap();
//! assert_eq!(loaded.model.workload.stages[0].duration.mean_s(), 4.0);
//! ```

mod build;
mod capacity;
pub mod cpu_load;
mod dag;
mod error;
mod fingerprint;
pub mod host_keys;
pub mod host_scaling;
pub mod ignored;
pub mod include;
pub mod limits;
mod offered_load;
pub mod overrides;
pub mod params;
pub mod replay_info;
pub mod rules;
pub mod schema;
mod stages;
mod summary;
pub mod trace_csv;
pub mod units;
mod values;
mod with_calibration;

use std::path::{Path, PathBuf};

use crate::model::Model;

pub use error::{ErrorKind, Loc, ScenarioError};
pub use fingerprint::{fingerprint, fingerprint_files};
pub use limits::Limits;
pub use params::ParamInfo;
pub use values::{UNLIMITED_DRAM, UNLIMITED_RAM};
pub use with_calibration::{
    CalibrationUse, MissingKey, load_str_with_calibration, load_with_calibration,
};

use error::{Locator, join_key};
use include::Document;
use overrides::Segment;

/// A loaded scenario: the model, its knobs and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The validated model, stages in topological order.
    pub model: Model,
    /// Declared `[params]` knobs with defaults, values in effect and docs.
    pub params: Vec<ParamInfo>,
    /// The scenario file.
    pub source: PathBuf,
    /// Provenance and notes (included files, overrides, warnings).
    pub summary: Summary,
    /// What `bwsim replay` needs beyond the model, per stage (by [`crate::model::StageId`]):
    /// the transfer as written and the GPU kernel to run.
    pub replay: Vec<replay_info::StageReplayInfo>,
}

/// Where a scenario came from and what was noticed while loading it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Every file read, included files first, the scenario last.
    pub files: Vec<PathBuf>,
    /// Data files the model was read from beside the TOML files (an arrivals trace).
    pub data_files: Vec<PathBuf>,
    /// The `--set` arguments applied, in order.
    pub sets: Vec<String>,
    /// Accepted keys that have no effect (e.g. `concurrency` with Poisson arrivals).
    pub warnings: Vec<String>,
    /// The same keys typed, each with the key that overrides it.
    pub ignored: Vec<ignored::IgnoredKey>,
    /// Which scenario keys each `[params]` knob feeds (before substitution).
    pub param_uses: std::collections::BTreeMap<String, Vec<String>>,
    /// The scenario's `description`, if any.
    pub description: Option<String>,
    /// Open arrivals offer more work than the busiest resource serves (also in
    /// `warnings`); `run` prints it and adds it to the report's notes.
    pub overload: Option<String>,
    /// Stages whose time was carried from `[workload.measured_on]` to this host (`check`
    /// lists them, `run` adds them to the report's notes, `compare` to each host's row).
    pub host_scaling: Vec<host_scaling::ScaledStage>,
    /// The scenario states where its stage times were measured
    /// (`[workload.measured_on]`): that host's `host` text, or "" when unnamed.
    pub measured_on: Option<String>,
    /// Loaded with `--calibration` ([`load_with_calibration`]): the file, and what the
    /// run took for each key it lacks.
    pub calibration: Option<CalibrationUse>,
    /// `hardware.dram.latency_scale` and `latency_rise_scale` in effect (1, 1 unset).
    pub latency_scaling: (f64, f64),
    /// The summary line of the calibration the host keys come from (`[calibration]
    /// summary`, written by `bwsim calibrate`); None when the scenario includes none.
    pub calibration_summary: Option<String>,
}

impl Loaded {
    /// Why setting `key` (a dotted key as `--set` takes it) changes nothing here: it is a
    /// key another key overrides, or a knob that only feeds such keys. None when it may
    /// have an effect.
    pub fn no_effect(&self, key: &str) -> Option<String> {
        ignored::no_effect(key, &self.summary.ignored, &self.summary.param_uses)
    }

    /// `no_effect` for the key of each `KEY=VALUE` (or `KEY=SPEC`) argument: (argument,
    /// why), in order.
    pub fn no_effect_of(&self, args: &[String]) -> Vec<(String, String)> {
        (args.iter())
            .filter_map(|a| {
                let key = a.split_once('=').map_or(a.as_str(), |(k, _)| k);
                Some((a.clone(), self.no_effect(key)?))
            })
            .collect()
    }

    /// A short human summary for `bwsim check`: hardware, stages with standalone means,
    /// arrivals, instrumentation and knobs with defaults and docs.
    pub fn summary(&self) -> String {
        summary::render(self)
    }
}

/// Loads a scenario file, applying `sets` (`"dotted.key=VALUE"`) after includes, with
/// the default [`Limits`].
pub fn load(path: &Path, sets: &[String]) -> Result<Loaded, ScenarioError> {
    load_with(path, sets, &Limits::default())
}

/// [`load`] with explicit caps on the run's estimated size.
pub fn load_with(path: &Path, sets: &[String], limits: &Limits) -> Result<Loaded, ScenarioError> {
    let doc = include::load_file(path)?;
    finish(doc, path, sets, limits)
}

/// Loads a scenario from text as if it were the file `origin` (includes and trace files
/// resolve relative to `origin`'s directory).
pub fn load_str(text: &str, origin: &Path, sets: &[String]) -> Result<Loaded, ScenarioError> {
    load_str_with(text, origin, sets, &Limits::default())
}

/// [`load_str`] with explicit caps on the run's estimated size.
pub fn load_str_with(
    text: &str,
    origin: &Path,
    sets: &[String],
    limits: &Limits,
) -> Result<Loaded, ScenarioError> {
    let doc = include::load_str(text, origin)?;
    finish(doc, origin, sets, limits)
}

fn finish(
    mut doc: Document,
    root: &Path,
    sets: &[String],
    limits: &Limits,
) -> Result<Loaded, ScenarioError> {
    // --set: parameter values are set on the knob; everything else edits the document.
    let mut param_sets = Vec::new();
    for arg in sets {
        let set = overrides::parse_set(arg, root)?;
        match set.segments.as_slice() {
            [Segment::Key(p), Segment::Key(name)] if p == "params" => {
                param_sets.push((name.clone(), set));
            }
            _ => {
                overrides::apply(&mut doc, &set, root)?;
            }
        }
    }
    let mut loc = Locator {
        root: root.to_path_buf(),
        locs: std::mem::take(&mut doc.locs),
        notes: Default::default(),
    };
    let mut params = params::collect(&doc.table, &loc)?;
    for (name, set) in param_sets {
        let key = join_key("params", &name);
        loc.locs.insert(key.clone(), Loc::Set(set.arg.clone()));
        params::set_value(&mut params, &name, set.value, &loc)?;
    }
    params::resolve(&mut params, &loc)?;
    let param_uses = ignored::param_uses(&doc.table);
    params::substitute(&mut doc.table, &params, &mut loc)?;

    let spec: schema::ScenarioSpec =
        serde_path_to_error::deserialize(toml::Value::Table(doc.table))
            .map_err(|e| serde_error(e, &loc))?;
    let mut warnings = Vec::new();
    let mut ignored = Vec::new();
    let mut host_scaling = Vec::new();
    let model = build::build(&spec, &loc, &mut warnings, &mut ignored, &mut host_scaling)?;
    limits::check(&model, limits, &loc)?;
    let overload = offered_load::overload_warning(&model);
    warnings.extend(overload.clone());
    // The run's report carries the same note; `check` shows it before anything runs.
    warnings.extend(crate::analysis::report::first_wave_note(&model.arrivals));
    let replay = replay_info::collect(&spec.workload, &model, &loc)?;
    // The trace is read beside the file that names it (as `build` reads it).
    let data_files = match (&model.arrivals.kind, &spec.arrivals.trace) {
        (crate::model::ArrivalKind::Trace { .. }, Some(t)) => {
            let base = loc
                .file_of("arrivals.trace")
                .and_then(Path::parent)
                .unwrap_or(Path::new(""));
            vec![base.join(t)]
        }
        _ => Vec::new(),
    };
    Ok(Loaded {
        model,
        replay,
        params,
        source: root.to_path_buf(),
        summary: Summary {
            files: doc.files,
            data_files,
            sets: sets.to_vec(),
            warnings,
            ignored,
            param_uses,
            description: spec.description.clone(),
            overload,
            host_scaling,
            measured_on: (spec.workload.measured_on.as_ref())
                .map(|m| m.host.clone().unwrap_or_default()),
            calibration: None,
            latency_scaling: spec.hardware.dram.as_ref().map_or((1.0, 1.0), |d| {
                (
                    d.latency_scale.unwrap_or(1.0),
                    d.latency_rise_scale.unwrap_or(1.0),
                )
            }),
            calibration_summary: (spec.calibration.as_ref())
                .and_then(|c| c.get("summary"))
                .and_then(|s| s.as_str())
                .map(str::to_string),
        },
    })
}

/// Turns a serde error (with its key path) into a [`ScenarioError`] naming key and file.
fn serde_error(e: serde_path_to_error::Error<toml::de::Error>, loc: &Locator) -> ScenarioError {
    let mut path = String::new();
    for seg in e.path().iter() {
        match seg {
            serde_path_to_error::Segment::Map { key } => path = join_key(&path, key),
            serde_path_to_error::Segment::Seq { index } => path = error::join_index(&path, *index),
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    let msg = e.inner().message().trim().to_string();
    let field = |prefix: &str| -> Option<String> {
        let rest = msg.strip_prefix(prefix)?;
        let name = rest.split('`').next()?;
        Some(name.to_string())
    };
    if let Some(f) = field("unknown field `") {
        let allowed = msg
            .split_once("expected ")
            .map(|(_, a)| format!("; allowed here: {}", a.replace("one of ", "")))
            .unwrap_or_default();
        // serde_path_to_error may or may not include the unknown key itself in the path
        let key = if path.ends_with(&f) {
            path.clone()
        } else {
            join_key(&path, &f)
        };
        return loc.error(ErrorKind::UnknownKey, &key, format!("unknown key{allowed}"));
    }
    if let Some(f) = field("missing field `") {
        return loc.error(
            ErrorKind::MissingKey,
            &join_key(&path, &f),
            "required key is missing (see scenarios/README.md)",
        );
    }
    if msg.starts_with("invalid length") && path.contains("latency_curve") {
        return loc.error(
            ErrorKind::Type,
            &path,
            "a latency-curve point is a pair [utilisation, ns]",
        );
    }
    let kind = if msg.starts_with("invalid type") {
        ErrorKind::Type
    } else {
        ErrorKind::Value
    };
    let msg = msg
        .replace("invalid type: ", "wrong type: got ")
        .replace(", expected ", "; expected ")
        .replace(
            "expected u32",
            "expected a whole number from 0 to 4294967295 (2^32 - 1)",
        )
        .replace(
            "expected u64",
            "expected a whole number from 0 to 18446744073709551615 (2^64 - 1)",
        )
        .replace("expected f64", "expected a number")
        .replace("integer `", "`")
        .replace("expected a boolean", "expected true or false");
    loc.error(kind, &path, msg)
}
