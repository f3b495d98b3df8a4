//! The points of a replay, planned: the scenario loaded at each point of `--param`
//! (on the host `--calibration` describes, if given), simulated for the prediction, and turned
//! into a [`PointPlan`]: its stages' plan and the memory its replay takes. Planning stops as soon as the
//! points so far already run past `--max-hours`.

use serde_json::Value;

use crate::run::{RunOptions, run_model_with};
use crate::scenario::{self, Loaded};
use crate::sweep::grid::Grid;
use crate::sweep::spec::parse_param;

use super::error::{Context, Result};
use super::limits::check_duration_of;
use super::options::ReplayOptions;
use super::plan::{GIB, PointPlan, memory_need, stage_plans};

/// Loads the scenario at each point of `--param`, simulates it and plans its replay.
/// Stops, before simulating the next point, as soon as the points planned so far are
/// expected to take longer than `opts.max_wall_s` (x `opts.runs`): a range of 10,000
/// points is refused after the few that already exceed the limit, not after all.
pub fn plan_points(opts: &ReplayOptions) -> Result<Vec<PointPlan>> {
    let (param_key, values) = match &opts.param {
        Some(p) => {
            let param = parse_param(p)?;
            let grid = Grid::new(vec![param.clone()])?;
            let pts = grid.points();
            let sets: Vec<(Vec<String>, f64)> = pts
                .iter()
                .map(|pt| {
                    let x = pt.values[0].to_string().parse::<f64>().unwrap_or(0.0);
                    (grid.sets(pt), x)
                })
                .collect();
            (Some(param.key), sets)
        }
        None => (None, vec![(Vec::new(), 0.0)]),
    };
    let _ = param_key;
    let total = values.len();
    let mut out: Vec<PointPlan> = Vec::new();
    for (point_sets, x) in values {
        check_duration_of(&out, total, opts.runs, opts.max_wall_s)?;
        let mut sets = opts.sets.clone();
        sets.extend(point_sets.iter().cloned());
        let loaded = load(opts, &sets)?;
        let stages = stage_plans(&loaded.model, &loaded.replay);
        let report = predict_point(opts, &loaded, &sets)?;
        let gib = |path: &[&str]| {
            let mut v = &report;
            for p in path {
                v = &v[*p];
            }
            v.as_f64().unwrap_or(0.0) * GIB
        };
        let memory = memory_need(
            &stages,
            gib(&["ram", "peak_gib"]),
            gib(&["vram", "peak_gib"]),
            opts.buffers,
        );
        out.push(PointPlan {
            sets: point_sets,
            x,
            loaded,
            stages,
            report,
            memory,
        });
    }
    check_duration_of(&out, total, opts.runs, opts.max_wall_s)?;
    Ok(out)
}

/// The simulator's report (JSON) of one point: the prediction a replay is set beside.
pub(crate) fn predict_point(
    opts: &ReplayOptions,
    loaded: &Loaded,
    sets: &[String],
) -> Result<Value> {
    Ok(run_model_with(
        &loaded.model,
        RunOptions { ideal: false },
        &mut crate::engine::NullObserver,
    )
    .with_context(|| {
        format!(
            "simulating {} at {}",
            opts.scenario.display(),
            sets.join(" ")
        )
    })?
    .to_json())
}

/// Loads the scenario with `sets`, on the host the calibration file (if any) describes.
fn load(opts: &ReplayOptions, sets: &[String]) -> Result<Loaded> {
    Ok(load_scenario(opts, sets)?)
}

/// [`load`], with the scenario layer's own error (which names the `--set` at fault).
pub(crate) fn load_scenario(
    opts: &ReplayOptions,
    sets: &[String],
) -> std::result::Result<Loaded, scenario::ScenarioError> {
    match &opts.calibration {
        Some(cal) => scenario::load_with_calibration(&opts.scenario, cal, sets),
        None => scenario::load(&opts.scenario, sets),
    }
}

/// The fingerprint of every file a replay's scenario was read from (the scenario, its
/// includes, `--calibration`, data files), so that `--repredict` can tell whether it reads
/// the same inputs; None when a file cannot be read back.
pub(crate) fn inputs_fingerprint(loaded: &Loaded) -> Option<String> {
    let s = &loaded.summary;
    let files: Vec<std::path::PathBuf> = s.files.iter().chain(&s.data_files).cloned().collect();
    scenario::fingerprint_files(&files).ok()
}
