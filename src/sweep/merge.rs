//! `bwsim sweep merge`'s work: read the `shard.json` of each folder written by
//! `bwsim sweep --shard I/N`, check that they are the slices of one sweep (same scenario
//! bytes, grid, overrides and seeds; every shard once: [`super::shard::merge`]) and stage,
//! in a new `--out` folder, the sweep.csv and sweep.json that the same sweep run on one
//! machine writes (sweep.csv byte for byte; sweep.json but for its timing). The caller
//! adds the charts and commits the folder ([`RanSweep::commit`]).

use std::path::{Path, PathBuf};

use super::error::Result;
use super::folder::RanSweep;
use super::grid::Grid;
use super::manifest::Manifest;
use super::runner::{PointRun, RunOptions};
use super::seed_report::SeedReport;
use super::seeds::point_seeds;
use super::session::{ScenarioInfo, SweepArgs, SweepPlan};
use super::shard::{self, SHARD_FILE, ShardFile, merge_error};
use super::spec::parse_param;

/// Reads, checks and merges the shards in `dirs`, staging the merged sweep in `out`.
pub fn merge_folders(dirs: &[PathBuf], out: &Path) -> Result<RanSweep> {
    let shards: Vec<ShardFile> = dirs
        .iter()
        .map(|d| ShardFile::read_from(d))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
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
        shard::validate(s, &file, &grid)?;
    }
    let reports = shard::merge(&shards, &names, &grid)?;
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
                seeds: point_seeds(id.base_seed, point.index, id.seeds_per_point),
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
        out: Some(out.to_path_buf()),
        sets: id.sets.clone(),
        seed: Some(id.base_seed),
        shard: None,
    };
    let mut manifest = Manifest::partial(&inputs, &plan, id.scenario_hash.clone());
    manifest.status = "complete".into();
    RanSweep::merged(plan, runs, manifest, wall_s, out)
}
