//! The study end to end: calibrations fitted again, spreads measured, every committed
//! point predicted under the calibrations asked for, and the error models fitted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::analysis::prediction::ErrorModel;
use crate::model::Hardware;
use crate::prediction::HostSpread;

use super::evidence::{Evidence, Replay};
use super::fit::{self, Fitted, Row};
use super::predict::predict;
use super::spreads;
use super::AccuracyError;

/// Which predictions to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// Every boot's points under every other boot's calibration too (the transfer
    /// matrix), not only under their own.
    pub matrix: bool,
    /// The points with typical values (no calibration) too.
    pub typical: bool,
}

/// What the study found.
#[derive(Debug, Clone)]
pub struct Study {
    pub evidence: Evidence,
    /// Each boot's name and card.
    pub boots: Vec<(String, String)>,
    /// The host keys' spreads between boots, and the typical values'.
    pub spread: HostSpread,
    pub typical_spread: HostSpread,
    /// Each key's values, by (key, card).
    pub key_values: BTreeMap<(crate::prediction::HostKey, String), Vec<f64>>,
    /// Every point under its own boot's calibration.
    pub own: Vec<Row>,
    /// Every point under each other boot's calibration (empty unless asked).
    pub others: Vec<Row>,
    /// Every point with typical values (empty unless asked).
    pub typical: Vec<Row>,
    /// The error model for a calibrated host, fitted on `own`, and its intervals.
    pub calibrated: Fitted,
    /// The same model on the other boots' calibrations (same card, other card).
    pub same_card: Option<Fitted>,
    pub other_card: Option<Fitted>,
    /// The error model fitted on the transferred points themselves.
    pub transferred: Option<Fitted>,
    /// The error model for typical values, fitted on `typical`.
    pub typical_fit: Option<Fitted>,
}

/// A point group: the repeats of one point of one shape on one boot, pooled.
struct Group {
    boot: usize,
    shape: String,
    scenario: PathBuf,
    sets: Vec<String>,
    x: f64,
    runs: Vec<f64>,
}

/// Pools the repeats: the points of the replays of one shape on one boot with the same
/// flags.
fn groups(replays: &[Replay]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for r in replays {
        for p in &r.points {
            let mut sets = r.sets.clone();
            sets.extend(p.sets.iter().cloned());
            match (out.iter_mut()).find(|g| {
                g.boot == r.boot && g.shape == r.shape && g.sets == sets && g.scenario == r.scenario
            }) {
                Some(g) => g.runs.extend(p.runs.iter().copied()),
                None => out.push(Group {
                    boot: r.boot,
                    shape: r.shape.clone(),
                    scenario: r.scenario.clone(),
                    sets,
                    x: p.x,
                    runs: p.runs.clone(),
                }),
            }
        }
    }
    out
}

/// Fits `raw` (a calibration's raw measurements) again and writes the calibration into
/// `dir` as `name.toml`; its path, the host it gives and its card (the GPU's model: `H100`,
/// `H200`, else the GPU's name).
fn refit(
    raw: &Path,
    dir: &Path,
    name: &str,
) -> Result<(PathBuf, Hardware, String), AccuracyError> {
    let json = crate::input_file::read_text(raw, crate::input_file::MAX_JSON_BYTES)
        .map_err(|e| AccuracyError::file(raw, format!("cannot read it: {e}")))?;
    let (m, _, text) = crate::calibrate::command::refit(raw, &json)
        .map_err(|e| AccuracyError::file(raw, e.to_string()))?;
    let host = spreads::host_of_text(&text, dir, name)?;
    let gpu = m.gpu.map(|g| g.name).unwrap_or_else(|| "no GPU".into());
    let card = ["H100", "H200"]
        .into_iter()
        .find(|c| gpu.contains(c))
        .map_or(gpu.clone(), str::to_string);
    Ok((dir.join(format!("{name}.toml")), host, card))
}

/// Runs the study on `evidence`, writing scratch files into `scratch`.
pub fn run(evidence: Evidence, scope: Scope, scratch: &Path) -> Result<Study, AccuracyError> {
    // The spreads, from every calibration listed.
    let mut hosts = Vec::new();
    for (i, (_, raw)) in evidence.spread_calibrations.iter().enumerate() {
        let (_, host, card) = refit(raw, scratch, &format!("spread-{i}"))?;
        hosts.push((card, host));
    }
    let (spread, key_values) = spreads::measure(&hosts);
    let typical_spread = spreads::typical(&spread);
    // Each boot's own calibration.
    let mut calibrations = Vec::new();
    for boot in &evidence.boots {
        let (path, _, _) = refit(&boot.calibration, scratch, &boot.name)?;
        calibrations.push(path);
    }
    let typical_cal = scratch.join("typical.toml");
    std::fs::write(
        &typical_cal,
        "[calibration]\nsummary = \"typical values: no host key measured\"\n",
    )
    .map_err(|e| AccuracyError::file(&typical_cal, e.to_string()))?;
    let replays = evidence.replays()?;
    let groups = groups(&replays);
    // (group, calibration index or None for typical)
    let mut jobs: Vec<(usize, Option<usize>)> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        jobs.push((g, Some(group.boot)));
        if scope.matrix {
            jobs.extend((0..evidence.boots.len()).filter(|c| *c != group.boot).map(|c| (g, Some(c))));
        }
        if scope.typical {
            jobs.push((g, None));
        }
    }
    let rows: Vec<(Option<usize>, Row)> = (jobs.par_iter())
        .map(|&(g, cal)| {
            let group = &groups[g];
            let (path, spread) = match cal {
                Some(c) => (&calibrations[c], &spread),
                None => (&typical_cal, &typical_spread),
            };
            let predicted = predict(&group.scenario, path, &group.sets, spread)?;
            let boot = &evidence.boots[group.boot];
            let (calibration, calibration_card) = match cal {
                Some(c) => (evidence.boots[c].name.clone(), evidence.boots[c].card.clone()),
                None => ("typical".to_string(), String::new()),
            };
            Ok((
                cal,
                Row {
                    run: boot.run.clone(),
                    boot: boot.name.clone(),
                    card: boot.card.clone(),
                    calibration,
                    calibration_card,
                    shape: group.shape.clone(),
                    x: group.x,
                    measured: group.runs.iter().sum::<f64>() / group.runs.len() as f64,
                    runs: group.runs.len(),
                    predicted,
                },
            ))
        })
        .collect::<Result<_, AccuracyError>>()?;
    let (mut own, mut others, mut typical) = (Vec::new(), Vec::new(), Vec::new());
    for (cal, row) in rows {
        match cal {
            None => typical.push(row),
            Some(_) if row.calibration == row.boot => own.push(row),
            Some(_) => others.push(row),
        }
    }
    let calibrated = fit::fit(&own.iter().collect::<Vec<_>>());
    let select = |same: bool| -> Vec<&Row> {
        (others.iter())
            .filter(|r| (r.card == r.calibration_card) == same)
            .collect()
    };
    let (same_card, other_card, transferred) = if others.is_empty() {
        (None, None, None)
    } else {
        (
            Some(fit::apply(&select(true), &calibrated.error)),
            Some(fit::apply(&select(false), &calibrated.error)),
            Some(fit::fit(&others.iter().collect::<Vec<_>>())),
        )
    };
    let typical_fit =
        (!typical.is_empty()).then(|| fit::fit(&typical.iter().collect::<Vec<_>>()));
    Ok(Study {
        boots: (evidence.boots.iter())
            .map(|b| (b.name.clone(), b.card.clone()))
            .collect(),
        evidence,
        spread,
        typical_spread,
        key_values,
        own,
        others,
        typical,
        calibrated,
        same_card,
        other_card,
        transferred,
        typical_fit,
    })
}

impl Study {
    /// The error model the intervals of a host known as `typical` or calibrated read.
    pub fn error_model(&self, typical: bool) -> ErrorModel {
        match (&self.typical_fit, typical) {
            (Some(t), true) => t.error,
            _ => self.calibrated.error,
        }
    }
}
