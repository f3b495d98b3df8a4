//! `bwsim sweep merge DIR... --out DIR`: reads the shard.json of each folder written by
//! `bwsim sweep --shard I/N`, checks that they are the slices of one sweep (same
//! scenario bytes, grid, overrides and seeds; every shard once) and writes, into a staged
//! `--out` folder, the sweep.csv, sweep.json, plots and manifest that the same sweep run
//! on one machine writes (sweep.csv byte for byte; sweep.json but for its timing).

use std::path::{Path, PathBuf};

use super::error::Result;
use super::sweep::{MANIFEST, Manifest, SweepOutcome, check_stalls, print_outcome, write_manifest};
use crate::cli::SweepMergeCli;
use crate::input_file::InputError;
use crate::output::{StagedDir, print_stdout};
use crate::sweep::json::SweepMeta;
use crate::sweep::knee::{self, KNEE_TOLERANCE};
use crate::sweep::shard::merge_error;
use crate::sweep::{
    Grid, PointRun, RunOptions, SHARD_FILE, ScenarioInfo, SeedReport, ShardFile, SweepArgs,
    SweepPlan, aggregate_table, parse_param, write_results,
};

/// Runs `bwsim sweep merge`.
pub fn merge(cli: SweepMergeCli) -> Result<()> {
    let shards: Vec<ShardFile> = cli
        .shards
        .iter()
        .map(|d| read_shard(d))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = cli.shards.iter().map(|d| d.display().to_string()).collect();
    let first = shards
        .first()
        .ok_or_else(|| merge_error("give the shard folders to merge"))?;
    let params = first
        .sweep
        .params
        .iter()
        .map(|p| parse_param(p))
        .collect::<Result<Vec<_>, _>>()?;
    let grid = Grid::new(params)?;
    for (s, name) in shards.iter().zip(&names) {
        let file = Path::new(name).join(SHARD_FILE).display().to_string();
        crate::sweep::shard::validate(s, &file, &grid)?;
    }
    let reports = crate::sweep::shard::merge(&shards, &names, &grid)?;
    // Each report passed `validate`, so reading its verdicts cannot fail; still an error.
    let reports: Vec<Vec<SeedReport>> = (reports.into_iter())
        .map(|point| point.into_iter().map(SeedReport::from_json).collect())
        .collect::<Result<_, _>>()
        .map_err(|why| merge_error(format!("a shard's report {why}")))?;

    let id = &first.sweep;
    let plan = SweepPlan {
        info: ScenarioInfo {
            name: id.scenario.clone(),
            seed: id.base_seed,
        },
        opts: RunOptions {
            seeds: id.seeds_per_point,
            base_seed: id.base_seed,
            jobs: shards.iter().map(|s| s.jobs).max().unwrap_or(1),
            base_sets: id.sets.clone(),
        },
        shard: None,
        grid,
    };
    let runs: Vec<PointRun> = plan
        .grid
        .points()
        .into_iter()
        .zip(reports)
        .map(|(point, reports)| {
            let mut sets = id.sets.clone();
            sets.extend(plan.grid.sets(&point));
            PointRun {
                seeds: crate::sweep::seeds::point_seeds(
                    id.base_seed,
                    point.index,
                    id.seeds_per_point,
                ),
                point,
                sets,
                reports,
            }
        })
        .collect();
    let wall_s: f64 = shards.iter().map(|s| s.wall_s).sum();
    let inputs = SweepArgs {
        scenario: PathBuf::from(&first.scenario_path),
        params: id.params.clone(),
        seeds: id.seeds_per_point,
        jobs: None,
        out: Some(cli.out.clone()),
        sets: id.sets.clone(),
        seed: Some(id.base_seed),
        shard: None,
    };
    let out = write_merged(&plan, &runs, inputs, &id.scenario_hash, wall_s, &cli.out)?;
    print_stdout(&format!("merged {} shard folders\n", shards.len()))?;
    print_outcome(&out, id.seeds_per_point)?;
    check_stalls(&out)
}

fn read_shard(dir: &Path) -> Result<ShardFile, InputError> {
    let path = dir.join(SHARD_FILE);
    let text =
        crate::input_file::read_text(&path, crate::input_file::MAX_JSON_BYTES).map_err(|e| {
            merge_error(format!("cannot read ({e})"))
                .file(&path)
                .allowed("give the folders written by `bwsim sweep --shard I/N`")
        })?;
    serde_json::from_str(&text).map_err(|e| {
        merge_error(format!(
            "not a shard file written by `bwsim sweep --shard`: {e}"
        ))
        .file(&path)
    })
}

/// Writes the merged sweep into a staged `out` folder, as a sweep on one machine does.
fn write_merged(
    plan: &SweepPlan,
    runs: &[PointRun],
    inputs: SweepArgs,
    scenario_hash: &str,
    wall_s: f64,
    out: &Path,
) -> Result<SweepOutcome> {
    let staged = StagedDir::begin(out)?;
    let table = aggregate_table(plan, runs);
    let meta = SweepMeta {
        scenario_path: inputs.scenario.display().to_string(),
        base_seed: plan.opts.base_seed,
        base_sets: plan.opts.base_sets.clone(),
        seeds: plan.opts.seeds,
        jobs: plan.opts.jobs,
        wall_s,
    };
    let mut files = write_results(plan, &table, runs, &meta, &staged.staging)?;
    files.extend(crate::plot::sweep_plots(&table, &staged.staging)?);
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let manifest = Manifest {
        status: "complete".into(),
        bwsim_version: env!("CARGO_PKG_VERSION").into(),
        scenario_hash: Some(scenario_hash.to_string()),
        inputs,
        base_seed: plan.opts.base_seed,
        points: plan.grid.len(),
        seeds_per_point: plan.opts.seeds,
        files: names.clone(),
    };
    write_manifest(&staged.file(MANIFEST), &manifest)?;
    let dir = staged.commit()?;
    let mut files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    files.push(dir.join(MANIFEST));
    Ok(SweepOutcome {
        no_steady_state: super::sweep::rows_without_steady_state(runs),
        knees: knee::find_knees(&table, KNEE_TOLERANCE),
        dir,
        table,
        files,
        wall_s,
        shard: None,
        grid_points: plan.grid.len(),
    })
}
