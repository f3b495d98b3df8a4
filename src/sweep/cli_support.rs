//! What `bwsim sweep` and `bwsim plot` do, as plain functions the CLI calls. The engine
//! is reached through [`Simulator`], so sweeps are testable with synthetic models.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use serde_json::Value;

use super::aggregate::aggregate;
use super::csv;
use super::grid::Grid;
use super::json::{self, SweepMeta};
use super::knee::{self, KNEE_TOLERANCE, Knee};
use super::outdir;
use super::progress::{Progress, ProgressMode};
use super::runner::{RunOptions, run_sweep};
use super::spec::parse_param;
use super::table::SweepTable;
use crate::atomic_file::write_atomic;

/// Arguments of `bwsim sweep`.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepArgs {
    /// Scenario file.
    pub scenario: PathBuf,
    /// `--param KEY=SPEC`, in order (the first is the plots' x axis).
    pub params: Vec<String>,
    /// `--seeds N`: replicates per point (default 3).
    pub seeds: usize,
    /// `--jobs N`: worker threads (default: all cores).
    pub jobs: Option<usize>,
    /// `--out DIR`: output folder (default `output/<scenario>/<timestamp>`).
    pub out: Option<PathBuf>,
    /// `--set KEY=VALUE` applied at every point.
    pub sets: Vec<String>,
    /// `--seed N`: replaces the scenario's seed as the base of per-point seeds.
    pub seed: Option<u64>,
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
    fn describe(&self, sets: &[String]) -> anyhow::Result<ScenarioInfo>;
    /// Runs it with these overrides and seed; the run's JSON report.
    fn run(&self, sets: &[String], seed: u64) -> anyhow::Result<Value>;
}

/// What a finished sweep produced.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// Output folder.
    pub dir: PathBuf,
    /// The aggregated table.
    pub table: SweepTable,
    /// Knee per series.
    pub knees: Vec<Knee>,
    /// Files written, in order.
    pub files: Vec<PathBuf>,
    /// Wall-clock seconds of the simulations.
    pub wall_s: f64,
}

/// Runs a sweep against `sim` and writes sweep.csv, sweep.json and the plots.
pub fn sweep_with(
    args: &SweepArgs,
    sim: &dyn Simulator,
    mode: ProgressMode,
) -> anyhow::Result<SweepOutcome> {
    let params = args
        .params
        .iter()
        .map(|p| parse_param(p))
        .collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(
        !params.is_empty(),
        "give at least one --param KEY=SPEC, e.g. --param arrivals.concurrency=1..32"
    );
    let grid = Grid::new(params)?;
    grid.check_runs(args.seeds)?;
    let info = sim
        .describe(&args.sets)
        .with_context(|| format!("cannot load {}", args.scenario.display()))?;
    // Validate every point's overrides before simulating anything.
    for p in grid.points() {
        let mut sets = args.sets.clone();
        sets.extend(grid.sets(&p));
        sim.describe(&sets)
            .with_context(|| format!("sweep point {}: {}", p.index + 1, grid.sets(&p).join(" ")))?;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = RunOptions {
        seeds: args.seeds,
        base_seed: args.seed.unwrap_or(info.seed),
        jobs,
        base_sets: args.sets.clone(),
    };
    let progress = Progress::new(grid.len(), mode);
    let started = Instant::now();
    let runs = run_sweep(
        &grid,
        &opts,
        &|sets: &[String], seed| sim.run(sets, seed),
        &progress,
    )?;
    let wall_s = started.elapsed().as_secs_f64();

    let table = aggregate(&info.name, &grid.keys(), &runs);
    let dir = outdir::resolve(args.out.as_deref(), &info.name);
    let meta = SweepMeta {
        scenario_path: args.scenario.display().to_string(),
        base_seed: opts.base_seed,
        base_sets: args.sets.clone(),
        seeds: args.seeds,
        jobs,
        wall_s,
    };
    let mut files = Vec::new();
    let csv_path = dir.join("sweep.csv");
    write_atomic(&csv_path, csv::to_csv(&table).as_bytes())?;
    files.push(csv_path);
    let json_path = dir.join("sweep.json");
    let doc = json::to_json(&table, &grid, &runs, &meta);
    write_atomic(&json_path, format!("{doc:#}\n").as_bytes())?;
    files.push(json_path);
    files.extend(crate::plot::sweep_plots(&table, &dir)?);
    Ok(SweepOutcome {
        dir,
        knees: knee::find_knees(&table, KNEE_TOLERANCE),
        table,
        files,
        wall_s,
    })
}

/// Prints a sweep's summary: timing, knee(s), files.
pub fn print_outcome(out: &SweepOutcome, seeds: usize) {
    println!(
        "sweep: {} points x {seeds} seeds in {:.2} s",
        out.table.rows.len(),
        out.wall_s
    );
    for k in &out.knees {
        println!("{}", knee::describe(&out.table, k, KNEE_TOLERANCE));
    }
    println!("wrote {}/", out.dir.display());
    for f in &out.files {
        println!(
            "  {}",
            f.file_name().map_or(f.as_os_str(), |n| n).to_string_lossy()
        );
    }
}

/// `bwsim plot sweep.csv [--out DIR]`: redraws the plots of a saved sweep (into the
/// CSV's folder by default) without simulating; returns the files written.
pub fn plot_command(csv_path: &Path, out: Option<&Path>) -> anyhow::Result<Vec<PathBuf>> {
    let input = |msg: String| csv::CsvError(format!("{}: {msg}", csv_path.display()));
    let text = crate::input_file::read_text(csv_path, crate::input_file::MAX_CSV_BYTES)
        .map_err(|e| input(format!("cannot read: {e}")))?;
    let table = csv::from_csv(&text).map_err(|e| input(e.0))?;
    if table.rows.is_empty() {
        return Err(input("no rows".into()).into());
    }
    let dir = match out {
        Some(d) => d.to_path_buf(),
        None => csv_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf(),
    };
    let files = crate::plot::sweep_plots(&table, &dir)?;
    for k in knee::find_knees(&table, KNEE_TOLERANCE) {
        println!("{}", knee::describe(&table, &k, KNEE_TOLERANCE));
    }
    for f in &files {
        println!("wrote {}", f.display());
    }
    Ok(files)
}

/// `bwsim sweep` as clap arguments, ready to embed in the CLI's subcommand enum
/// (`Sweep(bwsim::sweep::SweepCli)`), then `sweep_command(cli.into())`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepCli {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// A swept parameter: KEY=SPEC, SPEC being 1..32, 1..64:4, or 4,8,12 (repeat for a grid).
    #[arg(long = "param", value_name = "KEY=SPEC", required = true)]
    pub params: Vec<String>,
    /// Independent seeds per point.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub seeds: u32,
    /// Worker threads [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Output folder [default: output/<scenario>/<UTC timestamp>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override a scenario key at every point, e.g. --set arrivals.jobs=200.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Base seed for the per-point seeds [default: the scenario's seed].
    #[arg(long)]
    pub seed: Option<u64>,
}

impl From<SweepCli> for SweepArgs {
    fn from(c: SweepCli) -> SweepArgs {
        SweepArgs {
            scenario: c.scenario,
            params: c.params,
            seeds: c.seeds as usize,
            jobs: c.jobs.map(|j| j as usize),
            out: c.out,
            sets: c.sets,
            seed: c.seed,
        }
    }
}

/// `bwsim plot` as clap arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotCli {
    /// A sweep.csv written by `bwsim sweep`.
    pub csv: PathBuf,
    /// Folder for the plots [default: the CSV's folder].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
