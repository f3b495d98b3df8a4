//! sweep.json: the sweep's inputs (scenario, swept keys and values, seeds per point),
//! every point's aggregated metrics with its seeds and bottleneck reason, and the
//! knee(s). Everything except `timing` is a pure function of the inputs.

use serde_json::{Map, Value, json};

use super::aggregate::modal_bottleneck;
use super::grid::Grid;
use super::knee::{self, KNEE_TOLERANCE};
use super::runner::PointRun;
use super::table::SweepTable;

/// What sweep.json records about how the sweep was run.
#[derive(Debug, Clone)]
pub struct SweepMeta {
    /// Scenario file as given.
    pub scenario_path: String,
    /// The scenario's seed (per-point seeds derive from it).
    pub base_seed: u64,
    /// `--set` overrides applied at every point.
    pub base_sets: Vec<String>,
    /// Replicates per point.
    pub seeds: usize,
    /// Worker threads (timing only).
    pub jobs: usize,
    /// Wall-clock seconds of the whole sweep (timing only).
    pub wall_s: f64,
}

/// Builds sweep.json.
pub fn to_json(table: &SweepTable, grid: &Grid, runs: &[PointRun], meta: &SweepMeta) -> Value {
    let params: Vec<Value> = grid
        .params
        .iter()
        .map(|p| json!({"key": p.key, "values": p.values.iter().map(|v| v.to_json()).collect::<Vec<_>>()}))
        .collect();
    let points: Vec<Value> = table
        .rows
        .iter()
        .zip(runs)
        .map(|(row, run)| {
            let mut metrics = Map::new();
            for (m, s) in table.metrics.iter().zip(&row.stats) {
                if let Some(s) = s {
                    metrics.insert(m.clone(), json!({"mean": s.mean, "ci95": s.ci95}));
                }
            }
            let values: Map<String, Value> = table
                .params
                .iter()
                .zip(&row.values)
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
            let reason =
                modal_bottleneck(run.reports.iter().map(|r| &r.json)).and_then(|(_, why)| why);
            json!({
                "index": run.point.index,
                "params": values,
                "sets": run.sets,
                "seeds": run.seeds,
                "stalled": row.stalled,
                "bottleneck": row.bottleneck,
                "bottleneck_reason": reason,
                "metrics": metrics,
            })
        })
        .collect();
    let knees: Vec<Value> = knee::find_knees(table, KNEE_TOLERANCE)
        .iter()
        .map(|k| knee::to_json(table, k, KNEE_TOLERANCE))
        .collect();
    json!({
        "scenario": table.scenario,
        "scenario_path": meta.scenario_path,
        "base_seed": meta.base_seed,
        "sets": meta.base_sets,
        "seeds_per_point": meta.seeds,
        "params": params,
        "knee": knees.first().cloned(),
        "knees": knees,
        "points": points,
        "timing": {"wall_s": meta.wall_s, "jobs": meta.jobs, "runs": runs.len() * meta.seeds},
    })
}
