//! A sweep's steps as plain functions: [`plan`] (parse and validate every point before
//! simulating), [`execute`] (run, reusing finished points) and [`write_results`]
//! (sweep.csv and sweep.json). The engine is reached through [`Simulator`], so sweeps
//! are testable with synthetic models; folders, plots and printing belong to the caller.

use std::path::{Path, PathBuf};

use super::aggregate::aggregate;
use super::csv;
use super::error::Result;
use super::grid::Grid;
use super::json::{self, SweepMeta};
use super::progress::{Progress, ProgressMode};
use super::runner::{PointRun, PointSink, RunOptions, run_points};
use super::seed_report::SeedReport;
use super::shard::{MAX_SHARDS, ShardSpec};
use super::spec::parse_param;
use super::table::SweepTable;
use crate::analysis::report::Report;
use crate::input_file::InputError;
use crate::output::{OutputError, write_atomic};

/// Arguments of `bwsim sweep`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SweepArgs {
    /// Scenario file.
    pub scenario: PathBuf,
    /// `--param KEY=SPEC`, in order (the first is the plots' x axis).
    pub params: Vec<String>,
    /// `--replications N`: replicates per point (default 3).
    pub seeds: usize,
    /// `--jobs N`: worker threads (default: all cores).
    pub jobs: Option<usize>,
    /// `--out DIR`: output folder (default `output/<scenario>/<timestamp>`).
    pub out: Option<PathBuf>,
    /// `--set KEY=VALUE` applied at every point.
    pub sets: Vec<String>,
    /// `--seed N`: replaces the scenario's seed as the base of per-point seeds.
    pub seed: Option<u64>,
    /// `--shard I/N`: run only the points of this slice of the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardSpec>,
}

impl SweepArgs {
    /// Arguments with the defaults: 3 seeds, all cores, default folder.
    pub fn new(scenario: impl Into<PathBuf>, params: Vec<String>) -> SweepArgs {
        SweepArgs {
            scenario: scenario.into(),
            params,
            seeds: 3,
            jobs: None,
            out: None,
            sets: Vec::new(),
            seed: None,
            shard: None,
        }
    }
}

/// Name and seed of a loaded scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioInfo {
    /// Scenario name (titles, output folder).
    pub name: String,
    /// Its seed.
    pub seed: u64,
}

/// The engine as a sweep sees it.
pub trait Simulator: Sync {
    /// Loads and validates the scenario with these overrides, without running it.
    fn describe(&self, sets: &[String]) -> Result<ScenarioInfo>;
    /// Runs it with these overrides and seed; the run's report.
    fn run(&self, sets: &[String], seed: u64) -> Result<Report>;
    /// A hash of everything the model was read from (shards of one sweep must agree on
    /// it); empty when the simulator has no files.
    fn fingerprint(&self, _sets: &[String]) -> Result<String> {
        Ok(String::new())
    }
}

/// A validated sweep, ready to run.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// The grid of points.
    pub grid: Grid,
    /// The scenario's name and seed.
    pub info: ScenarioInfo,
    /// Seeds, threads and base overrides.
    pub opts: RunOptions,
    /// The slice of the grid to run (`--shard`), or all of it.
    pub shard: Option<ShardSpec>,
}

/// Parses the `--param` SPECs and loads the scenario at every point (without running),
/// so that bad input fails before any simulation.
pub fn plan(args: &SweepArgs, sim: &dyn Simulator) -> Result<SweepPlan> {
    let params = args
        .params
        .iter()
        .map(|p| parse_param(p))
        .collect::<Result<Vec<_>, _>>()?;
    if params.is_empty() {
        return Err(InputError::new(
            "give at least one --param KEY=SPEC, e.g. --param arrivals.concurrency=1..32",
        )
        .into());
    }
    let grid = Grid::new(params)?;
    grid.check_runs(args.seeds)?;
    if let Some(shard) = args.shard
        && shard.count > MAX_SHARDS
    {
        return Err(InputError::new(format!(
            "at most {MAX_SHARDS} shards (as many as the largest grid has points); shards \
             past the grid's {} points run none and write an empty shard.json",
            grid.len()
        ))
        .key(format!("--shard {shard}"))
        .into());
    }
    let info = sim
        .describe(&args.sets)
        .map_err(|e| e.at(format!("cannot load {}", args.scenario.display())))?;
    for p in grid.points() {
        let mut sets = args.sets.clone();
        sets.extend(grid.sets(&p));
        sim.describe(&sets).map_err(|e| {
            e.at(format!(
                "sweep point {}: {}",
                p.index + 1,
                grid.sets(&p).join(" ")
            ))
        })?;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs > super::runner::MAX_JOBS {
        return Err(InputError::new(format!(
            "at most {} worker threads (each runs one simulation at a time; more threads \
             than cores only add memory)",
            super::runner::MAX_JOBS
        ))
        .key(format!("--jobs {jobs}"))
        .into());
    }
    let opts = RunOptions {
        seeds: args.seeds,
        base_seed: args.seed.unwrap_or(info.seed),
        jobs,
        base_sets: args.sets.clone(),
    };
    Ok(SweepPlan {
        grid,
        info,
        opts,
        shard: args.shard,
    })
}

/// Runs every point (of the shard, when sharded) not in `finished`, handing each to `sink` when done; returns all
/// points' runs in grid order.
pub fn execute(
    plan: &SweepPlan,
    sim: &dyn Simulator,
    mode: ProgressMode,
    finished: &[Option<Vec<SeedReport>>],
    sink: &PointSink,
) -> Result<Vec<PointRun>> {
    let points = match plan.shard {
        Some(shard) => shard.points(&plan.grid),
        None => plan.grid.points(),
    };
    let progress = Progress::new(points.len(), mode);
    run_points(
        &plan.grid,
        points,
        &plan.opts,
        &|sets: &[String], seed| sim.run(sets, seed),
        &progress,
        finished,
        sink,
    )
}

/// The aggregated table of a sweep's runs.
pub fn table(plan: &SweepPlan, runs: &[PointRun]) -> SweepTable {
    aggregate(&plan.info.name, &plan.grid.keys(), runs)
}

/// Writes sweep.csv and sweep.json into `dir`; returns their paths.
pub fn write_results(
    plan: &SweepPlan,
    table: &SweepTable,
    runs: &[PointRun],
    meta: &SweepMeta,
    dir: &Path,
) -> Result<Vec<PathBuf>, OutputError> {
    let csv_path = dir.join("sweep.csv");
    write_atomic(&csv_path, csv::to_csv(table).as_bytes())?;
    let json_path = dir.join("sweep.json");
    let doc = json::to_json(table, &plan.grid, runs, meta);
    write_atomic(&json_path, format!("{doc:#}\n").as_bytes())?;
    Ok(vec![csv_path, json_path])
}
