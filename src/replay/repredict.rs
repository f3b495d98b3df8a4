//! `bwsim replay --repredict DIR`: sets the current model's prediction beside the
//! measurements of an earlier replay. It reads `DIR/replay.json` (the `overrides` the
//! replay ran with, each point's `sets`, `x` and `measured.runs`), simulates the scenario
//! at each point again, and writes a new replay.json / replay.csv / plot, with the summary
//! before and after. The recorded overrides apply first and a `--set` given here after
//! them, so a re-prediction with no `--set` simulates the experiment that ran.

use std::fmt::Write as _;
use std::path::Path;

use super::error::{Context, ReplayError, ReplayInputError, Result};
use crate::input_file::InputError;
use serde_json::Value;

use super::command::ReplayOutcome;
use super::compare::{self, PointResult, Predicted, Summary};
use super::measure::Measured;
use super::options::ReplayOptions;
use super::points::{inputs_fingerprint, load_scenario, predict_point};
use super::results::{
    INPUTS_FINGERPRINT, OVERRIDES, RecordedInputs, check_results_folder, write_results,
};

/// One measured point of an earlier replay.
struct OldPoint {
    sets: Vec<String>,
    x: f64,
    runs: Vec<Measured>,
    predicted: Predicted,
}

/// An earlier replay as `--repredict` reads it.
struct OldReplay {
    doc: Value,
    /// The `--set` overrides it ran with; None for a replay.json written before they
    /// were recorded.
    overrides: Option<Vec<String>>,
    /// The fingerprint of the files its scenario was read from (None: not recorded).
    fingerprint: Option<String>,
    points: Vec<OldPoint>,
}

/// Reads the measured points of `dir/replay.json`; a clear error names the file, the key
/// and what is wrong with it.
fn read_points(dir: &Path) -> Result<OldReplay> {
    let path = dir.join("replay.json");
    let bad = |key: String, problem: &str| {
        ReplayInputError::ReplayFile(InputError::new(problem).file(&path).key(key))
    };
    let text =
        crate::input_file::read_text(&path, crate::input_file::MAX_JSON_BYTES).map_err(|e| {
            InputError::new(format!("cannot read it ({e})"))
                .file(&path)
                .allowed("--repredict wants a replay's output folder")
        })?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| InputError::new(format!("not JSON: {e}")).file(&path))?;
    let overrides = match doc.get(OVERRIDES) {
        None => None,
        Some(v) => Some(
            serde_json::from_value::<Vec<String>>(v.clone())
                .map_err(|_| bad(OVERRIDES.into(), "not a list of strings"))?,
        ),
    };
    let fingerprint = match doc.get(INPUTS_FINGERPRINT) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad(INPUTS_FINGERPRINT.into(), "not a string").into()),
    };
    let points = doc
        .get("points")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("points".into(), "missing or not an array"))?;
    let mut out = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let sets = p
            .get("sets")
            .and_then(|s| serde_json::from_value::<Vec<String>>(s.clone()).ok())
            .ok_or_else(|| {
                bad(
                    format!("points[{i}].sets"),
                    "missing or not a list of strings",
                )
            })?;
        let x = match p.get("x") {
            None | Some(Value::Null) => 0.0,
            Some(v) => v.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
                bad(
                    format!("points[{i}].x"),
                    &format!("{v} is not a finite number"),
                )
            })?,
        };
        let runs = p
            .pointer("/measured/runs")
            .and_then(|r| serde_json::from_value::<Vec<Measured>>(r.clone()).ok())
            .ok_or_else(|| bad(format!("points[{i}].measured.runs"), "missing or malformed"))?;
        if runs.is_empty() {
            return Err(bad(
                format!("points[{i}].measured.runs"),
                "empty; a point needs at least one measured run",
            )
            .into());
        }
        for (r, m) in runs.iter().enumerate() {
            m.check().map_err(|e| {
                bad(
                    format!("points[{i}].measured.runs[{r}].{}", e.field),
                    &format!("{} is not {}", e.value, e.allowed),
                )
            })?;
        }
        let predicted = Predicted::from_replay_json(p.get("predicted").unwrap_or(&Value::Null));
        out.push(OldPoint {
            sets,
            x,
            runs,
            predicted,
        });
    }
    if out.is_empty() {
        return Err(bad(
            "points".into(),
            "empty; there is no measured point to re-predict",
        )
        .into());
    }
    Ok(OldReplay {
        doc,
        overrides,
        fingerprint,
        points: out,
    })
}

/// Reads and checks `dir/replay.json` as `--repredict` does, simulating nothing; the
/// number of measured points (for the fuzz harness, and to fail fast).
pub fn check_replay_file(dir: &Path) -> Result<usize> {
    Ok(read_points(dir)?.points.len())
}

/// Runs `bwsim replay SCENARIO --repredict DIR`: writes to `opts.out` (default
/// `DIR/repredicted`) and prints the table and the summary before and after.
pub fn repredict_command(opts: &ReplayOptions, dir: &Path) -> Result<ReplayOutcome> {
    let OldReplay {
        doc,
        overrides,
        fingerprint: recorded_fingerprint,
        points: old,
    } = read_points(dir)?;
    let recorded = overrides.unwrap_or_else(|| {
        eprintln!(
            "note: {} records no `--set` overrides (written before replays recorded them): \
             the re-prediction applies only the --set given here; give the replay's own \
             --set flags if it had any",
            dir.join("replay.json").display()
        );
        Vec::new()
    });
    // The replay's overrides, then this command's: a --set given here wins.
    let overrides: Vec<String> = recorded.iter().chain(&opts.sets).cloned().collect();
    // Before anything is simulated: the results go to a folder that is not the replay
    // being read and holds no other replay's measurements.
    let out = opts.out.clone().unwrap_or_else(|| dir.join("repredicted"));
    check_results_folder(&out, Some(dir))?;
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut name = String::new();
    let mut fingerprint = None;
    let mut calibration = None;
    for (i, p) in old.into_iter().enumerate() {
        let mut sets = overrides.clone();
        sets.extend(p.sets.iter().cloned());
        // A bad recorded entry (an override or a point's `sets`) is the file's, not a
        // `--set` the user typed.
        let recorded_at = |arg: &String| {
            if opts.sets.contains(arg) {
                None
            } else if let Some(j) = p.sets.iter().position(|s| s == arg) {
                Some(format!("points[{i}].sets[{j}]"))
            } else {
                (recorded.iter().position(|s| s == arg)).map(|j| format!("{OVERRIDES}[{j}]"))
            }
        };
        let loaded =
            load_scenario(opts, &sets).map_err(|e| match e.set.as_ref().map(recorded_at) {
                Some(Some(key)) => {
                    let arg = e.set.as_deref().unwrap_or_default();
                    let at = if e.key.is_empty() {
                        String::new()
                    } else {
                        format!("{}: ", e.key)
                    };
                    let problem = format!(
                        "{arg:?} does not apply to {}: {at}{}",
                        opts.scenario.display(),
                        e.message
                    );
                    let file = dir.join("replay.json");
                    ReplayError::from(ReplayInputError::ReplayFile(
                        InputError::new(problem).file(file).key(key),
                    ))
                }
                _ => ReplayError::from(e),
            })?;
        name.clone_from(&loaded.model.name);
        if i == 0 {
            fingerprint = inputs_fingerprint(&loaded);
            calibration = loaded.summary.calibration.clone();
            if let Some(note) = calibration.as_ref().and_then(|c| c.note()) {
                eprintln!("{note}");
            }
        }
        let report = predict_point(opts, &loaded, &sets)?;
        before.push(PointResult {
            sets: p.sets.clone(),
            x: p.x,
            predicted: p.predicted,
            runs: p.runs.clone(),
        });
        after.push(PointResult {
            sets: p.sets,
            x: p.x,
            predicted: Predicted::from_report(&report),
            runs: p.runs,
        });
    }
    if let (Some(then), Some(now)) = (&recorded_fingerprint, &fingerprint)
        && then != now
    {
        eprintln!(
            "note: the scenario, its includes or the calibration read differently from when \
             {} was replayed (inputs fingerprint {then} then, {now} now): the re-prediction \
             is of changed inputs, not only of a changed model",
            dir.display()
        );
    }
    check_results_folder(&out, Some(dir))?;
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let x_key = after[0]
        .sets
        .first()
        .and_then(|s| s.split_once('='))
        .map(|(k, _)| k.to_string())
        .unwrap_or_else(|| "point".into());
    let host = doc.get("host").cloned().unwrap_or(Value::Null);
    let source = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let inputs = RecordedInputs {
        overrides: &overrides,
        fingerprint,
        calibration: calibration.as_ref(),
        repredicted_from: Some(&source),
    };
    let files = write_results(&out, &name, host, &after, &x_key, &inputs)?;
    crate::output::print_stdout(&format!(
        "{}{}",
        compare::to_text(&after),
        before_after(&compare::summarize(&before), &compare::summarize(&after))
    ))?;
    Ok(ReplayOutcome {
        dir: Some(out),
        files,
        points: after,
    })
}

/// The summary as recorded and as re-predicted, one line per number.
pub fn before_after(before: &Summary, after: &Summary) -> String {
    let pct = |v: f64| format!("{:.1}%", v * 100.0);
    let x = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    let pts = |v: Option<f64>| {
        v.map(|v| format!("{v:.1} pts"))
            .unwrap_or_else(|| "-".into())
    };
    let mut s = String::new();
    let _ = writeln!(s, "{:<44} {:>12} {:>12}", "", "recorded", "re-predicted");
    let _ = writeln!(
        s,
        "{:<44} {:>12} {:>12}",
        "median |error| of s/job",
        pct(before.median_abs_error),
        pct(after.median_abs_error)
    );
    let _ = writeln!(
        s,
        "{:<44} {:>12} {:>12}",
        format!("knee predicted (measured {})", x(after.knee_measured)),
        x(before.knee_predicted),
        x(after.knee_predicted)
    );
    let _ = writeln!(
        s,
        "{:<44} {:>12} {:>12}",
        "largest (bracketed - true) gap difference",
        pts(before.max_gap_difference_pts),
        pts(after.max_gap_difference_pts)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replay.json that is not one a replay writes is refused with the file and the key.
    #[test]
    fn a_bad_replay_file_names_the_file_and_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("replay.json");
        let refused = |text: &str| -> InputError {
            std::fs::write(&file, text).unwrap();
            match read_points(dir.path()) {
                Err(ReplayError::Input(ReplayInputError::ReplayFile(e))) => e,
                Err(e) => panic!("not a replay-file error: {e}"),
                Ok(_) => panic!("{text} was read"),
            }
        };
        let e = refused(r#"{"points": [{"sets": [1]}]}"#);
        assert_eq!(e.file.as_deref(), Some(file.as_path()));
        assert_eq!(e.key.as_deref(), Some("points[0].sets"));
        assert_eq!(e.problem, "missing or not a list of strings");
        let e = refused(r#"{"overrides": "hardware.cpu_cores=2", "points": []}"#);
        assert_eq!(e.key.as_deref(), Some("overrides"));
        assert_eq!(e.problem, "not a list of strings");
        let e = refused(r#"{"inputs_fingerprint": 7, "points": []}"#);
        assert_eq!(e.key.as_deref(), Some("inputs_fingerprint"));
        let e = refused(r#"{"points": []}"#);
        assert_eq!(e.key.as_deref(), Some("points"));
        let e = refused("{");
        assert_eq!((e.key, e.file.is_some()), (None, true));
        assert!(e.problem.starts_with("not JSON"), "{}", e.problem);
    }
}
