//! `bwsim sweep`: parse the flags, run the sweep in its staged folder
//! ([`crate::sweep::SweepFolder`]: plan, journal, resume, shard file), draw the charts
//! into it, commit it and print what was written. With `--shard I/N` only that slice of
//! the grid runs and the folder holds shard.json instead (`sweep merge`, in
//! `sweep_merge`, joins the slices).

use std::path::Path;

use super::error::{CommandError, InputError, Result};
use crate::cli::SweepCli;
use crate::output::{OutputError, print_stdout};
use crate::sweep::knee::{self, KNEE_TOLERANCE};
use crate::sweep::{
    ProgressMode, RanSweep, ScenarioSimulator, Simulator, SweepArgs, SweepFolder, SweepOutcome,
    SweepTable,
};

/// Runs `bwsim sweep` with the real engine; exit 1 when any point stalled.
pub fn sweep(cli: SweepCli) -> Result<()> {
    if cli.action.is_some() {
        // Dispatched to `sweep_merge` by the command table before it gets here.
        return Err(CommandError::run(
            "bwsim sweep: a subcommand reached the sweep runner",
        ));
    }
    let stop_after = cli.stop_after;
    let (out, seeds, known) = match &cli.resume {
        Some(dir) => {
            let jobs = cli.jobs.map(|j| j as usize);
            let mut known = None;
            let out = resume_with(
                dir,
                |args| {
                    known = Some((args.scenario.clone(), args.sets.clone()));
                    Box::new(ScenarioSimulator::new(&args.scenario))
                },
                jobs,
                ProgressMode::Auto,
                stop_after,
            )?;
            let seeds = out.table.rows.first().map_or(0, |r| r.seeds);
            (out, seeds, known)
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
            (out, args.seeds, Some((args.scenario, args.sets)))
        }
    };
    let scenario = known.as_ref().map(|(p, s)| (p.as_path(), s.as_slice()));
    print_outcome(&out, seeds, scenario)?;
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
    let folder = SweepFolder::create(args, sim)?;
    with_charts(folder.run(sim, mode, stop_after)?)
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
    let (folder, sim) = SweepFolder::resume(dir, simulator, jobs)?;
    with_charts(folder.run(sim.as_ref(), mode, stop_after)?)
}

/// Draws the charts of a whole sweep into its staging folder (a shard has none), then
/// puts the folder in place.
pub(crate) fn with_charts(ran: RanSweep) -> Result<SweepOutcome> {
    let charts = match ran.is_shard() {
        true => Vec::new(),
        false => {
            if let Some(why) = crate::plot::too_many_series(ran.table()) {
                eprintln!(
                    "warning: no charts drawn: {why} (sweep.csv and sweep.json hold every point)"
                );
            }
            crate::plot::sweep_plots(ran.table(), ran.staging())?
        }
    };
    Ok(ran.commit(charts)?)
}

/// Prints a sweep's summary: timing, knee(s) with their prediction intervals (where the
/// `scenario` and its `--set`s are known), files.
pub fn print_outcome(
    out: &SweepOutcome,
    seeds: usize,
    scenario: Option<(&Path, &[String])>,
) -> Result<(), OutputError> {
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
        if let (Some((path, sets)), None) = (scenario, out.shard) {
            text.push_str(&knee_prediction(path, sets, &out.table, k.row));
            text.push('\n');
            text.push_str(&knee_bottleneck(path, sets, &out.table, k.row));
            text.push('\n');
        }
    }
    text.push_str(&format!("wrote {}/\n", out.dir.display()));
    for f in &out.files {
        let name = f.file_name().map_or(f.as_os_str(), |n| n);
        text.push_str(&format!("  {}\n", name.to_string_lossy()));
    }
    print_stdout(&text)
}

/// The knee's prediction interval as a line under the knee's: what the host will do
/// there, beside the seeds' ± on the knee line.
fn knee_prediction(scenario: &Path, sets: &[String], table: &SweepTable, row: usize) -> String {
    match crate::sweep::prediction::at_row(scenario, sets, table, row) {
        Ok(p) => format!(
            "      95% prediction interval there: {} {} ({} {}; the ± above is the seeds' alone; {})",
            p.per_day_range(),
            table.job_name.per_day(),
            p.seconds_range(),
            table.job_name.seconds_per(),
            p.knowledge.why()
        ),
        Err(e) => format!("      no prediction interval there: {e}"),
    }
}

/// The knee's bottleneck as `run` names it (the what-if step that saves most there, on
/// the scenario's seed), beside the busiest resource the sweep's column holds.
fn knee_bottleneck(scenario: &Path, sets: &[String], table: &SweepTable, row: usize) -> String {
    let at = crate::sweep::prediction::row_sets(sets, table, row);
    let busiest = &table.rows[row].bottleneck;
    match crate::sweep::prediction::bottleneck_at(scenario, &at) {
        Ok(step) => format!("      bottleneck there: {step} (the busiest resource: {busiest})"),
        Err(e) => format!("      no what-if steps there: {e} (the busiest resource: {busiest})"),
    }
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
