//! A replay's results folder: checked before anything runs (it may hold no other
//! replay's measurements), then written: replay.csv, replay.json and the chart.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ReplayInputError;
use super::chart;
use super::compare::{self, PointResult};
use super::error::Result;

/// The files a replay (or a re-prediction) writes into its folder.
pub const RESULT_FILES: &[&str] = &["replay.csv", "replay.json", "replay.png", "replay.svg"];

/// Checks, before anything runs, a folder a replay (`repredicted_from: None`) or a
/// re-prediction of the replay in `DIR` (`Some(DIR)`) is to write into: it may be
/// written, it is not `DIR` (whose replay.json is the input), and it holds no other
/// replay's results, which are measurements that rerunning bwsim cannot make again. A
/// re-prediction may replace an earlier re-prediction of the same `DIR`: one that names
/// `DIR` as its source, or (written before re-predictions named their source) an
/// unnamed one in `DIR/repredicted` with no replay logs beside it.
pub fn check_results_folder(dir: &Path, repredicted_from: Option<&Path>) -> Result<()> {
    let mut inputs = Vec::new();
    if let Some(src) = repredicted_from {
        inputs.push((
            format!("the replay being re-predicted ({})", src.display()),
            src.join("replay.json"),
        ));
    }
    crate::output::check_outputs(
        &[crate::output::Output::new(
            "--out",
            dir,
            crate::output::OutputKind::Folder(RESULT_FILES),
        )],
        &inputs,
    )?;
    let existing = dir.join("replay.json");
    if !existing.is_file() {
        return Ok(());
    }
    let earlier = crate::input_file::read_text(&existing, crate::input_file::MAX_JSON_BYTES)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let from = earlier
        .as_ref()
        .and_then(|d| d.get(REPREDICTED_FROM))
        .and_then(Value::as_str);
    let has_logs = std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("timeline-p") && n.ends_with(".log")
        })
    });
    let replaceable = match (from, repredicted_from) {
        (Some(f), Some(src)) => crate::output::same_file(Path::new(f), src),
        (None, Some(src)) => !has_logs && crate::output::same_file(dir, &src.join("repredicted")),
        (_, None) => false,
    };
    if !replaceable {
        return Err(ReplayInputError::FolderTaken {
            dir: dir.to_path_buf(),
            repredicted_from: from.map(str::to_string),
            has_logs,
        }
        .into());
    }
    Ok(())
}

/// The key of a re-prediction's replay.json that names the replay it was made from.
pub const REPREDICTED_FROM: &str = "repredicted_from";

/// The key of replay.json that lists the `--set` overrides applied at every point (the
/// points' own `sets` hold only the swept key), so that `--repredict` simulates the
/// experiment that ran.
pub const OVERRIDES: &str = "overrides";

/// The key of replay.json with the fingerprint of the files the scenario was read from.
pub const INPUTS_FINGERPRINT: &str = "inputs_fingerprint";

/// The key of replay.json recording `--calibration`: `file`, and `missing`, each key the
/// file lacks with what the run took (`key`, `took`).
pub const CALIBRATION: &str = "calibration";

fn calibration_json(c: &crate::scenario::CalibrationUse) -> Value {
    serde_json::json!({
        "file": c.file.display().to_string(),
        "missing": c.missing,
    })
}

/// What a replay.json records of the inputs beside its points.
pub(crate) struct RecordedInputs<'a> {
    /// The `--set` overrides applied at every point.
    pub overrides: &'a [String],
    /// [`super::points::inputs_fingerprint`] of the scenario as read.
    pub fingerprint: Option<String>,
    /// `--calibration`: the file and what the run took for each key it lacks.
    pub calibration: Option<&'a crate::scenario::CalibrationUse>,
    /// The replay a re-prediction was made from.
    pub repredicted_from: Option<&'a Path>,
}

/// Writes replay.csv, replay.json and the plot of `results` into `dir`; returns the files.
/// replay.json records the `inputs`.
pub(crate) fn write_results(
    dir: &Path,
    scenario: &str,
    host: Value,
    results: &[PointResult],
    x_key: &str,
    inputs: &RecordedInputs,
) -> Result<Vec<PathBuf>> {
    let csv = dir.join("replay.csv");
    crate::output::write_atomic(&csv, compare::to_csv(results).as_bytes())?;
    let json_path = dir.join("replay.json");
    let mut doc = compare::to_json(scenario, host, results);
    if let Some(o) = doc.as_object_mut() {
        o.insert(OVERRIDES.into(), Value::from(inputs.overrides.to_vec()));
        o.insert(
            INPUTS_FINGERPRINT.into(),
            Value::from(inputs.fingerprint.clone()),
        );
        if let Some(c) = inputs.calibration {
            o.insert(CALIBRATION.into(), calibration_json(c));
        }
        if let Some(src) = inputs.repredicted_from {
            o.insert(
                REPREDICTED_FROM.into(),
                Value::from(src.display().to_string()),
            );
        }
    }
    crate::output::write_atomic(&json_path, format!("{doc:#}\n").as_bytes())?;
    let mut files = vec![csv, json_path];
    let chart = chart::ReplayChart {
        scenario,
        x_key,
        points: results,
    };
    files.extend(crate::plot::render::render(&chart, dir, "replay")?);
    Ok(files)
}
