//! Runs every (point, seed) of a sweep on a local rayon pool of `--jobs` threads.
//! Results come back in grid order whatever the completion order, and each seed is a
//! pure function of the scenario seed and the indices, so output never depends on
//! `--jobs`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::Context;
use rayon::prelude::*;
use serde_json::Value;

use super::grid::{Grid, Point};
use super::progress::Progress;
use super::seeds::point_seeds;

/// Runs one simulation: the `--set` overrides (`KEY=VALUE`) and the seed, to the run's
/// JSON report. The sweep's only contact with the engine.
pub type RunFn<'a> = dyn Fn(&[String], u64) -> anyhow::Result<Value> + Sync + 'a;

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Replicates per point (`--seeds`).
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
    pub reports: Vec<Value>,
}

/// Runs the sweep. On failure, stops starting new runs and returns the first error in
/// grid order, naming the point and seed.
pub fn run_sweep(
    grid: &Grid,
    opts: &RunOptions,
    runner: &RunFn,
    progress: &Progress,
) -> anyhow::Result<Vec<PointRun>> {
    anyhow::ensure!(opts.seeds >= 1, "--seeds must be at least 1");
    anyhow::ensure!(opts.jobs >= 1, "--jobs must be at least 1");
    let points = grid.points();
    let plans: Vec<(Vec<String>, Vec<u64>)> = points
        .iter()
        .map(|p| {
            let mut sets = opts.base_sets.clone();
            sets.extend(grid.sets(p));
            (sets, point_seeds(opts.base_seed, p.index, opts.seeds))
        })
        .collect();
    let tasks: Vec<(usize, usize)> = (0..points.len())
        .flat_map(|p| (0..opts.seeds).map(move |r| (p, r)))
        .collect();

    let remaining: Vec<AtomicUsize> = points
        .iter()
        .map(|_| AtomicUsize::new(opts.seeds))
        .collect();
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .build()
        .context("cannot start the sweep's worker threads")?;

    let results: Vec<Option<anyhow::Result<Value>>> = pool.install(|| {
        tasks
            .par_iter()
            .map(|&(p, r)| {
                if failed.load(Ordering::Relaxed) {
                    return None;
                }
                let (sets, seeds) = &plans[p];
                let out = runner(sets, seeds[r]).with_context(|| {
                    format!(
                        "sweep point {} ({}), seed {}",
                        p + 1,
                        if sets.is_empty() {
                            "no overrides".into()
                        } else {
                            sets.join(" ")
                        },
                        seeds[r]
                    )
                });
                if out.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if remaining[p].fetch_sub(1, Ordering::AcqRel) == 1 {
                    progress.point_done(done.fetch_add(1, Ordering::AcqRel) + 1);
                }
                Some(out)
            })
            .collect()
    });
    progress.finish();

    let mut reports = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Some(Ok(v)) => reports.push(v),
            Some(Err(e)) => return Err(e),
            None => {} // skipped after another failure; that error comes in order below
        }
    }
    if failed.load(Ordering::Relaxed) {
        anyhow::bail!("sweep stopped after a failed run");
    }
    let mut reports = reports.into_iter();
    Ok(points
        .into_iter()
        .zip(plans)
        .map(|(point, (sets, seeds))| PointRun {
            point,
            sets,
            reports: reports.by_ref().take(seeds.len()).collect(),
            seeds,
        })
        .collect())
}
