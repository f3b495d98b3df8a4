//! `bwsim sweep`: plan the grid (bad input fails before any simulation), pick the output
//! folder (a unique default, or a new or empty `--out`), run every point into a staging
//! folder beside it, saving each finished point to a journal, then write sweep.csv,
//! sweep.json, the plots and a manifest and rename the staging folder into place. So a
//! folder is whole or absent, and `--resume DIR` finishes an interrupted sweep to the
//! same bytes as an uninterrupted one. With `--shard I/N` only that slice of the grid
//! runs and the folder holds shard.json instead (`sweep merge`, in
//! `sweep_merge`, joins the slices).
//!
//! A resume trusts nothing it cannot check: the manifest records the fingerprint of the
//! scenario, its includes and its trace, and a resume whose files differ is refused (the
//! finished points are of the old model); the staging folder is locked while a process works in
//! it and is emptied of everything but the manifest and the journal; a journal line cut
//! by an interruption is cut off before new lines are appended.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::error::{CommandError, InputError, Result};
use crate::cli::SweepCli;
use crate::output::{
    OutputError, StagedDir, check_staged_target, default_folder, print_stdout,
    reserve_unique_folder, test_kill, test_kill_due,
};
use crate::sweep::json::SweepMeta;
use crate::sweep::knee::{self, KNEE_TOLERANCE, Knee};
use crate::sweep::seeds::point_seeds;
use crate::sweep::shard::SHARD_FORMAT;
use crate::sweep::{
    PointRun, ProgressMode, SHARD_FILE, ScenarioSimulator, SeedReport, ShardFile, ShardPoint,
    ShardSpec, Simulator, SweepArgs, SweepError, SweepIdentity, SweepPlan, SweepTable,
    aggregate_table, execute, plan, write_results,
};

/// The manifest in every sweep folder: inputs, point count, seeds, files.
pub const MANIFEST: &str = "manifest.json";
/// One line per finished point, in the staging folder only (removed when complete).
const JOURNAL: &str = "points.jsonl";

/// An interrupted sweep that cannot be resumed (a damaged or foreign staging folder).
fn cannot_resume(problem: impl Into<String>) -> InputError {
    InputError::new(problem).action("cannot resume")
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

/// The manifest's content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// "partial" while running, "complete" once renamed into place.
    pub status: String,
    pub bwsim_version: String,
    /// The sweep's flags, enough to rerun or resume it.
    pub inputs: SweepArgs,
    /// The fingerprint of the scenario, every file it includes and its arrivals trace
    /// when the sweep started ([`crate::scenario::fingerprint`]); a resume refuses other
    /// bytes. Absent in manifests of older versions, which therefore cannot be resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_hash: Option<String>,
    /// The base of the per-point seeds (the scenario's seed unless `--seed`).
    pub base_seed: u64,
    pub points: usize,
    pub seeds_per_point: usize,
    pub files: Vec<String>,
}

/// Runs `bwsim sweep` with the real engine; exit 1 when any point stalled.
pub fn sweep(cli: SweepCli) -> Result<()> {
    if cli.action.is_some() {
        // Dispatched to `sweep_merge` by the command table before it gets here.
        return Err(CommandError::run(
            "bwsim sweep: a subcommand reached the sweep runner",
        ));
    }
    let stop_after = cli.stop_after;
    let (out, seeds) = match &cli.resume {
        Some(dir) => {
            let jobs = cli.jobs.map(|j| j as usize);
            let out = resume_with(
                dir,
                |args| Box::new(ScenarioSimulator::new(&args.scenario)),
                jobs,
                ProgressMode::Auto,
                stop_after,
            )?;
            let seeds = out.table.rows.first().map_or(0, |r| r.seeds);
            (out, seeds)
        }
        None => {
            let (replications, note) =
                crate::cli::replications(cli.replications, cli.seeds, "--seeds");
            if let Some(note) = note {
                eprintln!("warning: {note}");
            }
            let args = SweepArgs {
                scenario: cli
                    .scenario
                    .expect("clap requires SCENARIO without --resume"),
                params: cli.params,
                seeds: replications as usize,
                jobs: cli.jobs.map(|j| j as usize),
                out: cli.out,
                sets: cli.sets,
                seed: cli.seed,
                shard: cli.shard,
            };
            check_effect(&args, cli.allow_ignored)?;
            let sim = ScenarioSimulator::new(&args.scenario);
            let out = start(&args, &sim, ProgressMode::Auto, stop_after)?;
            (out, args.seeds)
        }
    };
    print_outcome(&out, seeds)?;
    check_stalls(&out)
}

/// A swept key with no effect on the scenario (another key overrides it) is refused
/// before anything runs, unless `--allow-ignored`: its sweep would be a flat line with a
/// knee picked from noise. With the flag it is a warning; a `--set` that changes nothing
/// is always a warning.
fn check_effect(args: &SweepArgs, allow: bool) -> Result<()> {
    use crate::sweep::no_effect::swept_without_effect;
    for (set, why) in swept_without_effect(&args.scenario, &[], &args.sets) {
        eprintln!("warning: --set {set}: {why}");
    }
    let swept = swept_without_effect(&args.scenario, &args.sets, &args.params);
    match swept.first() {
        Some((param, why)) if !allow => Err(InputError::new(format!(
            "{why}: every point would run the same scenario"
        ))
        .action("cannot sweep a key that changes nothing")
        .key(format!("--param {param}"))
        .allowed("sweep the key that decides (or pass --allow-ignored to sweep it anyway)")
        .into()),
        _ => {
            for (param, why) in &swept {
                eprintln!("warning: --param {param}: {why}");
            }
            Ok(())
        }
    }
}

/// Runs a sweep against `sim` into `args.out` (or a unique default folder).
pub fn sweep_with(
    args: &SweepArgs,
    sim: &dyn Simulator,
    mode: ProgressMode,
) -> Result<SweepOutcome> {
    start(args, sim, mode, None)
}

/// A new sweep; `stop_after` interrupts it after that many points are saved (tests).
pub fn start(
    args: &SweepArgs,
    sim: &dyn Simulator,
    mode: ProgressMode,
    stop_after: Option<usize>,
) -> Result<SweepOutcome> {
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
    let manifest = Manifest {
        status: "partial".into(),
        bwsim_version: env!("CARGO_PKG_VERSION").into(),
        inputs: args.clone(),
        scenario_hash: Some(scenario_hash),
        base_seed: plan.opts.base_seed,
        points: plan.grid.len(),
        seeds_per_point: plan.opts.seeds,
        files: Vec::new(),
    };
    write_manifest(&staged.file(MANIFEST), &manifest)?;
    let none = vec![None; plan.grid.len()];
    finish(
        &plan, sim, mode, staged, manifest, &none, stop_after, reserved,
    )
}

/// Finishes the interrupted sweep whose output folder was `dir`; `jobs` overrides the
/// thread count saved in its manifest.
pub fn resume_with(
    dir: &Path,
    simulator: impl FnOnce(&SweepArgs) -> Box<dyn Simulator>,
    jobs: Option<usize>,
    mode: ProgressMode,
    stop_after: Option<usize>,
) -> Result<SweepOutcome> {
    let staged = StagedDir::reopen(dir, &[MANIFEST, JOURNAL])?;
    let manifest_path = staged.file(MANIFEST);
    let text = crate::input_file::read_text(&manifest_path, crate::input_file::MAX_JSON_BYTES)
        .map_err(|e| cannot_resume(e.to_string()).file(&manifest_path))?;
    let mut manifest: Manifest = serde_json::from_str(&text)
        .map_err(|e| cannot_resume(e.to_string()).file(&manifest_path))?;
    if let Some(j) = jobs {
        manifest.inputs.jobs = Some(j);
    }
    let scenario = manifest.inputs.scenario.display().to_string();
    let Some(recorded) = manifest.scenario_hash.clone() else {
        return Err(cannot_resume(format!(
            "{} records no fingerprint of {scenario} (it was written by an older bwsim), so \
             an edited scenario could not be told from the one the finished points were \
             simulated with",
            manifest_path.display()
        ))
        .allowed("start the sweep again")
        .into());
    };
    let sim = simulator(&manifest.inputs);
    let changed = |now: &str| {
        cannot_resume(format!(
            "{scenario}, or a file it includes, is not what this sweep started with \
             (fingerprint {recorded} then, {now} now), so its finished points were simulated \
             with another model"
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
    finish(
        &plan,
        sim.as_ref(),
        mode,
        staged,
        manifest,
        &finished,
        stop_after,
        false,
    )
}

#[allow(clippy::too_many_arguments)]
fn finish(
    plan: &SweepPlan,
    sim: &dyn Simulator,
    mode: ProgressMode,
    staged: StagedDir,
    mut manifest: Manifest,
    finished: &[Option<Vec<SeedReport>>],
    stop_after: Option<usize>,
    reserved: bool,
) -> Result<SweepOutcome> {
    // The fingerprint recorded when the sweep started (and checked on resume): a shard
    // carries it to the merge, so slices of two models are never merged.
    let scenario_hash = manifest.scenario_hash.clone().unwrap_or_default();
    let journal_path = staged.file(JOURNAL);
    let journal = Mutex::new(open_journal(&journal_path)?);
    let saved = AtomicUsize::new(0);
    let sink = |run: &PointRun| -> Result<(), SweepError> {
        let reports: Vec<&Value> = run.reports.iter().map(|r| &r.json).collect();
        let line = json!({"index": run.point.index, "seeds": run.seeds, "reports": reports});
        // One write per line: an interruption cuts at most the last line, which the next
        // resume cuts off.
        let line = format!("{line}\n");
        let mut f = journal.lock().expect("journal lock");
        if test_kill_due("journal") {
            let _ = f.write_all(&line.as_bytes()[..line.len() / 2]);
            test_kill();
        }
        f.write_all(line.as_bytes())
            .and_then(|()| f.flush())
            .map_err(|e| OutputError::Io {
                path: journal_path.clone(),
                source: e,
            })?;
        drop(f);
        if test_kill_due("point") {
            test_kill();
        }
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
    let runs = match execute(plan, sim, mode, finished, &sink) {
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
            return Err(e.into());
        }
    };
    let wall_s = started.elapsed().as_secs_f64();
    drop(journal);

    let table = aggregate_table(plan, &runs);
    let files = match plan.shard {
        Some(shard) => {
            let file = shard_file(plan, shard, &manifest.inputs, scenario_hash, &runs, wall_s);
            vec![write_shard(&file, &staged.staging)?]
        }
        None => {
            let meta = SweepMeta {
                scenario_path: manifest.inputs.scenario.display().to_string(),
                base_seed: plan.opts.base_seed,
                base_sets: plan.opts.base_sets.clone(),
                seeds: plan.opts.seeds,
                jobs: plan.opts.jobs,
                wall_s,
            };
            let mut files = write_results(plan, &table, &runs, &meta, &staged.staging)?;
            files.extend(crate::plot::sweep_plots(&table, &staged.staging)?);
            files
        }
    };
    std::fs::remove_file(&journal_path).map_err(|e| OutputError::Io {
        path: journal_path.clone(),
        source: e,
    })?;
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    manifest.status = "complete".into();
    manifest.files = names.clone();
    write_manifest(&staged.file(MANIFEST), &manifest)?;
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

fn write_shard(file: &ShardFile, dir: &Path) -> Result<PathBuf, OutputError> {
    let path = dir.join(SHARD_FILE);
    let text = serde_json::to_string(file).expect("a shard file serializes");
    crate::output::write_atomic(&path, format!("{text}\n").as_bytes())?;
    Ok(path)
}

pub(crate) fn write_manifest(path: &Path, m: &Manifest) -> Result<(), OutputError> {
    let text = serde_json::to_string_pretty(m).expect("a manifest serializes");
    crate::output::write_atomic(path, format!("{text}\n").as_bytes())
}

fn open_journal(path: &Path) -> Result<File, OutputError> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| OutputError::Io {
            path: path.to_path_buf(),
            source: e,
        })
}

/// Plans the sweep and fingerprints the files its model is read from, refusing when they
/// change while the plan reads them (its points would then be of two models).
fn plan_and_fingerprint(
    args: &SweepArgs,
    sim: &dyn Simulator,
) -> Result<(SweepPlan, String), SweepError> {
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

/// The points an interrupted attempt finished. A last line cut short by the interruption
/// is cut off the file (that point runs again), so that the lines appended next start on
/// a line of their own: an attempt interrupted twice loses nothing it had saved.
fn read_journal(path: &Path, plan: &SweepPlan) -> Result<Vec<Option<Vec<SeedReport>>>, InputError> {
    let mut finished = vec![None; plan.grid.len()];
    let text = match crate::input_file::read_text(path, crate::input_file::MAX_JSON_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(finished),
        Err(e) => return Err(cannot_resume(e.to_string()).file(path)),
    };
    let whole = text.rfind('\n').map_or(0, |i| i + 1);
    if whole < text.len() {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| {
                f.set_len(whole as u64)?;
                f.sync_all()
            })
            .map_err(|e| {
                cannot_resume(format!(
                    "cannot cut off the line an interruption left unfinished: {e}"
                ))
                .file(path)
            })?;
    }
    for (i, line) in text[..whole].lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Err(cannot_resume(format!("line {} is damaged", i + 1)).file(path));
        };
        let bad = || cannot_resume(format!("line {} is not a sweep point", i + 1)).file(path);
        let index = v["index"].as_u64().ok_or_else(bad)? as usize;
        let seeds: Vec<u64> = serde_json::from_value(v["seeds"].clone()).map_err(|_| bad())?;
        let reports: Vec<Value> =
            serde_json::from_value(v["reports"].clone()).map_err(|_| bad())?;
        if index >= finished.len()
            || seeds != point_seeds(plan.opts.base_seed, index, plan.opts.seeds)
            || reports.len() != seeds.len()
        {
            return Err(bad());
        }
        let reports = (reports.into_iter())
            .map(SeedReport::from_json)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad())?;
        finished[index] = Some(reports);
    }
    Ok(finished)
}

/// Prints a sweep's summary: timing, knee(s), files.
pub fn print_outcome(out: &SweepOutcome, seeds: usize) -> Result<(), OutputError> {
    let mut text = match out.shard {
        Some(shard) => format!(
            "shard {shard}: {} of {} points x {seeds} seeds in {:.2} s\n",
            out.table.rows.len(),
            out.grid_points,
            out.wall_s
        ),
        None => format!(
            "sweep: {} points x {seeds} seeds in {:.2} s\n",
            out.table.rows.len(),
            out.wall_s
        ),
    };
    if out.shard.is_none()
        && let Some(w) = knee::few_seeds_warning(&out.table)
    {
        eprintln!("warning: {w}");
    }
    for k in &out.knees {
        text.push_str(&knee::describe(&out.table, k, KNEE_TOLERANCE));
        text.push('\n');
    }
    text.push_str(&format!("wrote {}/\n", out.dir.display()));
    for f in &out.files {
        let name = f.file_name().map_or(f.as_os_str(), |n| n);
        text.push_str(&format!("  {}\n", name.to_string_lossy()));
    }
    print_stdout(&text)
}

/// The points (in run order, as the table's rows) where a seed had no steady state, each
/// with that seed's note.
pub(crate) fn rows_without_steady_state(runs: &[PointRun]) -> Vec<(usize, String)> {
    (runs.iter().enumerate())
        .filter_map(|(i, p)| Some((i, p.reports.iter().find_map(|r| r.steady_state.note())?)))
        .collect()
}

/// `KEY=VALUE ...` of a table row's point.
fn point_label(table: &SweepTable, row: usize) -> String {
    let at: Vec<String> = (table.params.iter())
        .zip(&table.rows[row].values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    at.join(" ")
}

/// Warns of points without a steady state (their numbers stand, marked by a warning);
/// fails when a point stalled (its numbers are no result).
pub(crate) fn check_stalls(out: &SweepOutcome) -> Result<()> {
    for (i, note) in &out.no_steady_state {
        // The report's own note: what it found, and what to change.
        eprintln!(
            "warning: sweep point {} ({}): {note}",
            i + 1,
            point_label(&out.table, *i)
        );
    }
    let stalled: Vec<_> = out
        .table
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.stalled > 0)
        .collect();
    for (i, row) in &stalled {
        eprintln!(
            "warning: sweep point {} ({}) stalled in {} of {} seeds",
            i + 1,
            point_label(&out.table, *i),
            row.stalled,
            row.seeds
        );
    }
    if !stalled.is_empty() {
        return Err(CommandError::run(format!(
            "{} of {} sweep points stalled; their numbers are not results (the 'stalled' \
             column of {})",
            stalled.len(),
            out.table.rows.len(),
            out.dir.join("sweep.csv").display()
        )));
    }
    Ok(())
}
