//! A sweep's output folder, whole or absent: [`SweepFolder::create`] plans the grid (bad
//! input fails before any simulation) and stages a new folder with its manifest, or
//! [`SweepFolder::resume`] reopens an interrupted one, trusting nothing it cannot check;
//! [`SweepFolder::run`] runs every point not yet finished, saving each to the journal,
//! and writes sweep.csv and sweep.json (or, for a shard, shard.json) into the staging
//! folder; the caller may add files there (the charts) before [`RanSweep::commit`] marks
//! the manifest complete and renames the folder into place.
//!
//! A resume refuses a manifest without a fingerprint or whose scenario files changed
//! since the sweep started (the finished points are of the old model), and a plan that
//! no longer gives the grid or seeds; the staging folder is locked while a process works
//! in it and is emptied of everything but the manifest and the journal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use super::error::{Result, SweepError};
use super::journal::{Finished, JOURNAL, Journal, read_journal};
use super::json::SweepMeta;
use super::knee::{self, KNEE_TOLERANCE, Knee};
use super::manifest::{MANIFEST, Manifest, cannot_resume};
use super::progress::ProgressMode;
use super::runner::PointRun;
use super::session::{Simulator, SweepArgs, SweepPlan, execute, plan, table, write_results};
use super::shard::{SHARD_FORMAT, ShardFile, ShardPoint, ShardSpec, SweepIdentity};
use super::table::SweepTable;
use crate::input_file::InputError;
use crate::output::{
    OutputError, StagedDir, check_staged_target, default_folder, reserve_unique_folder,
};

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
    /// Wall-clock seconds of the simulations (of this attempt, when resumed).
    pub wall_s: f64,
    /// The slice that ran, for a `--shard` sweep (the table then holds its points only).
    pub shard: Option<ShardSpec>,
    /// Points in the whole grid.
    pub grid_points: usize,
    /// Rows (of `table`) where a seed's closed loop had no steady state (most measured
    /// jobs started together at t = 0, so the row's throughput times one batch draining),
    /// each with the first such seed's note.
    pub no_steady_state: Vec<(usize, String)>,
}

/// A staged sweep folder whose points are still to run (some may be finished).
pub struct SweepFolder {
    plan: SweepPlan,
    staged: StagedDir,
    manifest: Manifest,
    finished: Finished,
    /// The target is a default folder this process reserved (removed if the run fails).
    reserved: bool,
}

impl SweepFolder {
    /// Plans a new sweep and stages its folder (`args.out`, or a unique default folder)
    /// with a partial manifest.
    pub fn create(args: &SweepArgs, sim: &dyn Simulator) -> Result<SweepFolder> {
        let (plan, scenario_hash) = plan_and_fingerprint(args, sim)?;
        let (target, reserved) = match &args.out {
            Some(dir) => {
                check_staged_target(dir)?;
                (dir.clone(), false)
            }
            None => (
                reserve_unique_folder(&default_folder(&plan.info.name))?,
                true,
            ),
        };
        let staged = StagedDir::begin(&target).inspect_err(|_| {
            if reserved {
                let _ = std::fs::remove_dir(&target);
            }
        })?;
        let manifest = Manifest::partial(args, &plan, scenario_hash);
        manifest.write(&staged.file(MANIFEST))?;
        let finished = vec![None; plan.grid.len()];
        Ok(SweepFolder {
            plan,
            staged,
            manifest,
            finished,
            reserved,
        })
    }

    /// Reopens the interrupted sweep whose output folder was `dir`, with the simulator
    /// its manifest's flags call for; `jobs` overrides the thread count saved there.
    pub fn resume(
        dir: &Path,
        simulator: impl FnOnce(&SweepArgs) -> Box<dyn Simulator>,
        jobs: Option<usize>,
    ) -> Result<(SweepFolder, Box<dyn Simulator>)> {
        let staged = StagedDir::reopen(dir, &[MANIFEST, JOURNAL])?;
        let manifest_path = staged.file(MANIFEST);
        let mut manifest = Manifest::read_for_resume(&manifest_path)?;
        if let Some(j) = jobs {
            manifest.inputs.jobs = Some(j);
        }
        let scenario = manifest.inputs.scenario.display().to_string();
        let Some(recorded) = manifest.scenario_hash.clone() else {
            return Err(cannot_resume(format!(
                "{} records no fingerprint of {scenario} (it was written by an older bwsim), \
                 so an edited scenario could not be told from the one the finished points \
                 were simulated with",
                manifest_path.display()
            ))
            .allowed("start the sweep again")
            .into());
        };
        let sim = simulator(&manifest.inputs);
        let changed = |now: &str| {
            cannot_resume(format!(
                "{scenario}, or a file it includes, is not what this sweep started with \
                 (fingerprint {recorded} then, {now} now), so its finished points were \
                 simulated with another model"
            ))
            .allowed("put the files back as they were to finish it, or start a new sweep")
        };
        match sim.fingerprint(&manifest.inputs.sets) {
            Ok(now) if now == recorded => {}
            Ok(now) => return Err(changed(&now).into()),
            Err(e) => {
                return Err(cannot_resume(format!(
                    "cannot read the scenario this sweep started with: {e}"
                ))
                .into());
            }
        }
        let (plan, now) = plan_and_fingerprint(&manifest.inputs, sim.as_ref())?;
        if now != recorded {
            return Err(changed(&now).into());
        }
        if plan.opts.base_seed != manifest.base_seed || plan.grid.len() != manifest.points {
            return Err(cannot_resume(format!(
                "{} no longer gives the grid or seeds this sweep started with",
                manifest.inputs.scenario.display()
            ))
            .into());
        }
        let finished = read_journal(&staged.file(JOURNAL), &plan)?;
        let folder = SweepFolder {
            plan,
            staged,
            manifest,
            finished,
            reserved: false,
        };
        Ok((folder, sim))
    }

    /// The plan it runs.
    pub fn plan(&self) -> &SweepPlan {
        &self.plan
    }

    /// Runs every point (of its shard) not yet finished, saving each to the journal, and
    /// writes the results into the staging folder. `stop_after` interrupts it after that
    /// many points are saved (tests). A failed run removes the staging folder (and a
    /// default folder this process reserved); an interrupted one stays resumable.
    pub fn run(
        self,
        sim: &dyn Simulator,
        mode: ProgressMode,
        stop_after: Option<usize>,
    ) -> Result<RanSweep> {
        let SweepFolder {
            plan,
            staged,
            manifest,
            finished,
            reserved,
        } = self;
        let journal_path = staged.file(JOURNAL);
        let journal = Journal::open(&journal_path)?;
        let saved = AtomicUsize::new(0);
        let sink = |run: &PointRun| -> Result<(), SweepError> {
            journal.save(run)?;
            let n = saved.fetch_add(1, Ordering::AcqRel) + 1;
            if stop_after.is_some_and(|k| n >= k) {
                return Err(SweepError::StoppedAfter {
                    points: n,
                    resume: staged.target.clone(),
                });
            }
            Ok(())
        };
        let started = Instant::now();
        let runs = match execute(&plan, sim, mode, &finished, &sink) {
            Ok(runs) => runs,
            Err(e) => {
                // An interrupted sweep stays resumable; a failed run would fail again.
                if stop_after.is_none() {
                    let target = staged.target.clone();
                    staged.abandon();
                    if reserved {
                        let _ = std::fs::remove_dir(&target);
                    }
                }
                return Err(e);
            }
        };
        let wall_s = started.elapsed().as_secs_f64();
        drop(journal);

        let table = table(&plan, &runs);
        let files = match plan.shard {
            Some(shard) => {
                // The fingerprint recorded when the sweep started (and checked on
                // resume): a shard carries it to the merge, so slices of two models are
                // never merged.
                let scenario_hash = manifest.scenario_hash.clone().unwrap_or_default();
                let file = shard_file(&plan, shard, &manifest.inputs, scenario_hash, &runs, wall_s);
                vec![file.write_into(&staged.staging)?]
            }
            None => {
                let meta = sweep_meta(&plan, &manifest, wall_s);
                write_results(&plan, &table, &runs, &meta, &staged.staging)?
            }
        };
        Ok(RanSweep {
            plan,
            staged,
            manifest,
            journal: Some(journal_path),
            table,
            runs,
            files,
            wall_s,
        })
    }
}

/// What sweep.json says of the sweep besides its points.
fn sweep_meta(plan: &SweepPlan, manifest: &Manifest, wall_s: f64) -> SweepMeta {
    SweepMeta {
        scenario_path: manifest.inputs.scenario.display().to_string(),
        base_seed: plan.opts.base_seed,
        base_sets: plan.opts.base_sets.clone(),
        seeds: plan.opts.seeds,
        jobs: plan.opts.jobs,
        wall_s,
    }
}

/// A sweep whose results are written in its staging folder, not yet in place.
pub struct RanSweep {
    plan: SweepPlan,
    staged: StagedDir,
    manifest: Manifest,
    /// The journal to remove before the folder is complete (a merge has none).
    journal: Option<PathBuf>,
    table: SweepTable,
    runs: Vec<PointRun>,
    files: Vec<PathBuf>,
    wall_s: f64,
}

impl RanSweep {
    /// A merged sweep staged in `out`, its sweep.csv and sweep.json written there.
    pub fn merged(
        plan: SweepPlan,
        runs: Vec<PointRun>,
        manifest: Manifest,
        wall_s: f64,
        out: &Path,
    ) -> Result<RanSweep> {
        let staged = StagedDir::begin(out)?;
        let table = table(&plan, &runs);
        let meta = sweep_meta(&plan, &manifest, wall_s);
        let files = write_results(&plan, &table, &runs, &meta, &staged.staging)?;
        Ok(RanSweep {
            plan,
            staged,
            manifest,
            journal: None,
            table,
            runs,
            files,
            wall_s,
        })
    }

    /// The plan it ran.
    pub fn plan(&self) -> &SweepPlan {
        &self.plan
    }

    /// The aggregated table.
    pub fn table(&self) -> &SweepTable {
        &self.table
    }

    /// The folder the results are staged in (the caller's extra files go here).
    pub fn staging(&self) -> &Path {
        &self.staged.staging
    }

    /// A shard's results (a slice of the grid: no sweep.csv, no charts).
    pub fn is_shard(&self) -> bool {
        self.plan.shard.is_some()
    }

    /// Removes the journal, marks the manifest complete with the files written (its own
    /// and `extra`, in that order) and renames the folder into place.
    pub fn commit(self, extra: Vec<PathBuf>) -> Result<SweepOutcome> {
        let RanSweep {
            plan,
            staged,
            mut manifest,
            journal,
            table,
            runs,
            mut files,
            wall_s,
        } = self;
        files.extend(extra);
        if let Some(journal) = journal {
            std::fs::remove_file(&journal).map_err(|e| OutputError::Io {
                path: journal.clone(),
                source: e,
            })?;
        }
        let names: Vec<String> = files
            .iter()
            .filter_map(|f| f.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        manifest.status = "complete".into();
        manifest.files = names.clone();
        manifest.write(&staged.file(MANIFEST))?;
        let dir = staged.commit()?;
        let mut files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
        files.push(dir.join(MANIFEST));
        Ok(SweepOutcome {
            no_steady_state: rows_without_steady_state(&runs),
            knees: match plan.shard {
                Some(_) => Vec::new(), // a slice's knee is not the sweep's
                None => knee::find_knees(&table, KNEE_TOLERANCE),
            },
            dir,
            table,
            files,
            wall_s,
            shard: plan.shard,
            grid_points: plan.grid.len(),
        })
    }
}

/// A finished shard's record: its identity and its points with their reports.
fn shard_file(
    plan: &SweepPlan,
    shard: ShardSpec,
    inputs: &SweepArgs,
    scenario_hash: String,
    runs: &[PointRun],
    wall_s: f64,
) -> ShardFile {
    ShardFile {
        format: SHARD_FORMAT.into(),
        shard,
        sweep: SweepIdentity {
            scenario: plan.info.name.clone(),
            scenario_hash,
            params: inputs.params.clone(),
            sets: plan.opts.base_sets.clone(),
            base_seed: plan.opts.base_seed,
            seeds_per_point: plan.opts.seeds,
            shards: shard.count,
        },
        scenario_path: inputs.scenario.display().to_string(),
        jobs: plan.opts.jobs,
        wall_s,
        points: runs
            .iter()
            .map(|r| ShardPoint {
                index: r.point.index,
                seeds: r.seeds.clone(),
                reports: r.reports.iter().map(|r| r.json.clone()).collect(),
            })
            .collect(),
    }
}

/// Plans the sweep and fingerprints the files its model is read from, refusing when they
/// change while the plan reads them (its points would then be of two models).
fn plan_and_fingerprint(args: &SweepArgs, sim: &dyn Simulator) -> Result<(SweepPlan, String)> {
    let before = sim.fingerprint(&args.sets).ok();
    let plan = plan(args, sim)?;
    let after = sim.fingerprint(&args.sets)?;
    if before.as_deref() != Some(after.as_str()) {
        return Err(InputError::new(format!(
            "{}, or a file it includes, changed while the sweep was reading it",
            args.scenario.display()
        ))
        .allowed("run the sweep again once the files are saved")
        .into());
    }
    Ok((plan, after))
}

/// The points (in run order, as the table's rows) where a seed had no steady state, each
/// with that seed's note.
pub fn rows_without_steady_state(runs: &[PointRun]) -> Vec<(usize, String)> {
    (runs.iter().enumerate())
        .filter_map(|(i, p)| Some((i, p.reports.iter().find_map(|r| r.steady_state.note())?)))
        .collect()
}
