//! The prediction interval of one point of a sweep (a compared host's named setting, a
//! sweep's knee): the scenario loaded again with the point's setting, the seeds' mean and
//! interval and the contention-free run the sweep recorded there.

use std::path::Path;

use crate::analysis::keys;
use crate::analysis::prediction::PredictionInterval;
use crate::engine::EngineLimits;
use crate::prediction::{Answer, predict_answer};

use super::SweepTable;

/// The prediction interval of row `row` of a sweep's `table`: the scenario with `sets`
/// and the row's setting, its seeds' mean and interval, its ideal run.
/// The error says why there is none.
pub fn at_row(
    scenario: &Path,
    sets: &[String],
    table: &SweepTable,
    row: usize,
) -> Result<PredictionInterval, String> {
    let all = row_sets(sets, table, row);
    let spj = (table.stat(row, keys::SECONDS_PER_JOB)).ok_or("no job finished")?;
    let ideal = table.stat(row, keys::IDEAL_SECONDS_PER_JOB).map(|s| s.mean);
    let answer = Answer::of_point(spj.mean, spj.ci95, table.rows[row].seeds, ideal);
    let loaded = crate::scenario::load(scenario, &all).map_err(|e| e.to_string())?;
    let reload = |extra: &[String]| {
        let mut more = all.clone();
        more.extend(extra.iter().cloned());
        crate::scenario::load(scenario, &more)
    };
    predict_answer(&loaded, reload, answer, EngineLimits::default())
        .map(|(pi, _)| pi)
        .map_err(|e| e.to_string())
}

/// The what-if step that buys most at a setting, as `run` names its bottleneck ("GPUs +1
/// saves 6.1%"): the scenario with `sets` (a point's, from [`row_sets`]) run on its seed
/// with one step more of each resource. The error says why a run failed.
pub fn bottleneck_at(scenario: &Path, sets: &[String]) -> Result<String, String> {
    let loaded = crate::scenario::load(scenario, sets).map_err(|e| e.to_string())?;
    let knobs = crate::run::what_if::what_ifs_of(&loaded.model, EngineLimits::default())
        .map_err(|e| e.to_string())?;
    Ok(knobs.short_verdict())
}

/// `sets` and then row `row`'s setting, as `--set`s: the scenario as that point ran.
pub fn row_sets(sets: &[String], table: &SweepTable, row: usize) -> Vec<String> {
    let mut all = sets.to_vec();
    all.extend(
        (table.params.iter())
            .zip(&table.rows[row].values)
            .map(|(k, v)| format!("{k}={v}")),
    );
    all
}
