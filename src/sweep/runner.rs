//! Runs every (point, seed) of a sweep on a local rayon pool of `--jobs` threads.
//! Results come back in grid order whatever the completion order, and each seed is a
//! pure function of the scenario seed and the indices, so output never depends on
//! `--jobs`. Each finished point is handed to a sink (the resume journal) as soon as its
//! last seed is done, and points finished by an earlier, interrupted attempt are reused.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::error::{Result, SweepError};
use super::grid::{Grid, Point};
use super::progress::Progress;
use super::seed_report::SeedReport;
use super::seeds::point_seeds;
use crate::analysis::report::Report;
use crate::input_file::InputError;

/// Runs one simulation: the `--set` overrides (`KEY=VALUE`) and the seed, to the run's
/// report. The sweep's only contact with the engine.
pub type RunFn<'a> = dyn Fn(&[String], u64) -> Result<Report> + Sync + 'a;

/// Receives each point as soon as all its seeds are done (in completion order). An error
/// stops the sweep, as a failed run does.
pub type PointSink<'a> = dyn Fn(&PointRun) -> Result<()> + Sync + 'a;

/// The most worker threads a sweep starts (`--jobs`); a pool never has more threads than
/// runs to do either.
pub const MAX_JOBS: usize = 1024;

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Replicates per point (`--replications`).
    pub seeds: usize,
    /// The scenario's own seed, from which per-point seeds are derived.
    pub base_seed: u64,
    /// Worker threads (`--jobs`).
    pub jobs: usize,
    /// `--set` overrides applied at every point, before the point's own.
    pub base_sets: Vec<String>,
}

/// One point's runs.
#[derive(Debug, Clone)]
pub struct PointRun {
    /// The point.
    pub point: Point,
    /// Everything passed to `--set`, base overrides first.
    pub sets: Vec<String>,
    /// The seed of each replicate.
    pub seeds: Vec<u64>,
    /// The report of each replicate, in seed order.
    pub reports: Vec<SeedReport>,
}

/// Runs the sweep. `finished[p]`, when present, holds the reports of point `p` from an
/// earlier attempt (they are reused, not rerun). On failure, stops starting new runs and
/// returns the first error in grid order, naming the point and seed.
pub fn run_sweep(
    grid: &Grid,
    opts: &RunOptions,
    runner: &RunFn,
    progress: &Progress,
    finished: &[Option<Vec<SeedReport>>],
    sink: &PointSink,
) -> Result<Vec<PointRun>> {
    run_points(grid, grid.points(), opts, runner, progress, finished, sink)
}

/// Runs only `points` (a shard's slice of the grid, in grid order) as [`run_sweep`] runs
/// them all; `finished` is indexed by grid index. Seeds are those of the full grid, so a
/// point's results do not depend on how the grid was sliced.
pub fn run_points(
    grid: &Grid,
    points: Vec<Point>,
    opts: &RunOptions,
    runner: &RunFn,
    progress: &Progress,
    finished: &[Option<Vec<SeedReport>>],
    sink: &PointSink,
) -> Result<Vec<PointRun>> {
    if opts.seeds < 1 {
        return Err(InputError::new("--replications must be at least 1").into());
    }
    if opts.jobs < 1 {
        return Err(InputError::new("--jobs must be at least 1").into());
    }
    let plans: Vec<(Vec<String>, Vec<u64>)> = points
        .iter()
        .map(|p| {
            let mut sets = opts.base_sets.clone();
            sets.extend(grid.sets(p));
            (sets, point_seeds(opts.base_seed, p.index, opts.seeds))
        })
        .collect();
    let is_finished = |p: usize| finished.get(points[p].index).is_some_and(Option::is_some);
    let tasks: Vec<(usize, usize)> = (0..points.len())
        .filter(|&p| !is_finished(p))
        .flat_map(|p| (0..opts.seeds).map(move |r| (p, r)))
        .collect();

    let slots: Vec<Mutex<Vec<Option<SeedReport>>>> = points
        .iter()
        .map(|_| Mutex::new(vec![None; opts.seeds]))
        .collect();
    let remaining: Vec<AtomicUsize> = points
        .iter()
        .map(|_| AtomicUsize::new(opts.seeds))
        .collect();
    let done = AtomicUsize::new((0..points.len()).filter(|&p| is_finished(p)).count());
    let failed = AtomicBool::new(false);
    let sink_error: Mutex<Option<SweepError>> = Mutex::new(None);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.clamp(1, MAX_JOBS).min(tasks.len().max(1)))
        .build()
        .map_err(SweepError::WorkerThreads)?;

    let errors: Vec<Option<SweepError>> = pool.install(|| {
        tasks
            .par_iter()
            .map(|&(p, r)| {
                if failed.load(Ordering::Relaxed) {
                    return None;
                }
                let (sets, seeds) = &plans[p];
                let out = runner(sets, seeds[r]).map_err(|e| {
                    e.at(format!(
                        "sweep point {} ({}), seed {}",
                        points[p].index + 1,
                        if sets.is_empty() {
                            "no overrides".into()
                        } else {
                            sets.join(" ")
                        },
                        seeds[r]
                    ))
                });
                let report = match out {
                    Ok(report) => SeedReport::from(&report),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        return Some(e);
                    }
                };
                slots[p].lock().expect("slot lock")[r] = Some(report);
                if remaining[p].fetch_sub(1, Ordering::AcqRel) == 1 {
                    let run = point_run(&points[p], &plans[p], &slots[p]);
                    if let Err(e) = sink(&run) {
                        failed.store(true, Ordering::Relaxed);
                        sink_error.lock().expect("sink lock").get_or_insert(e);
                    }
                    progress.point_done(done.fetch_add(1, Ordering::AcqRel) + 1);
                }
                None
            })
            .collect()
    });
    progress.finish();

    if let Some(e) = errors.into_iter().flatten().next() {
        return Err(e);
    }
    if let Some(e) = sink_error.into_inner().expect("sink lock") {
        return Err(e);
    }
    if failed.load(Ordering::Relaxed) {
        return Err(SweepError::StoppedAfterFailedRun);
    }
    Ok(points
        .iter()
        .enumerate()
        .map(
            |(p, point)| match finished.get(point.index).and_then(Option::as_ref) {
                Some(reports) => PointRun {
                    point: point.clone(),
                    sets: plans[p].0.clone(),
                    seeds: plans[p].1.clone(),
                    reports: reports.clone(),
                },
                None => point_run(point, &plans[p], &slots[p]),
            },
        )
        .collect())
}

fn point_run(
    point: &Point,
    (sets, seeds): &(Vec<String>, Vec<u64>),
    slot: &Mutex<Vec<Option<SeedReport>>>,
) -> PointRun {
    PointRun {
        point: point.clone(),
        sets: sets.clone(),
        seeds: seeds.clone(),
        reports: slot
            .lock()
            .expect("slot lock")
            .iter()
            .map(|r| r.clone().expect("every seed of a finished point has run"))
            .collect(),
    }
}
