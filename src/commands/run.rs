//! `bwsim run`: simulate one scenario on several seeds, print the report (mean ± 95%
//! interval), then write the exports asked for (trace, TIMELINE log, timeline plot) of
//! its first replication. With `--what-if`, the changed scenario against the scenario as
//! given, on the same seeds. Export locations are checked before the simulation; the
//! report is printed even if an export fails later.

use std::path::PathBuf;

use super::error::{CommandError, Result};
use crate::analysis::report::{Report, WhatIf};
use crate::cli::{Format, RunArgs, RunExportArgs};
use crate::engine::{EngineError, EngineLimits, NullObserver};
use crate::output::{
    Output, OutputKind, check_dir_target, check_outputs, default_folder, print_stdout,
    reserve_unique_folder,
};
use crate::run::{Replicas, RunOptions, run_replications};
use crate::trace::{TraceRecorder, write_chrome_trace, write_timeline_log};

/// Runs the scenario and prints its report; exit 1 (after the report) when it stalled.
pub fn run(args: RunArgs) -> Result<()> {
    if !args.what_if.is_empty() {
        return what_if(args);
    }
    let scenario = args.input.scenario.display().to_string();
    let (loaded, notes, inputs) = load(&args, &args.input.sets)?;
    let model = loaded.model.clone();
    let plot_dir = check_exports(&args.exports, &model.name, &inputs)?;
    let mut recorder = args.exports.any().then(|| TraceRecorder::new(&model));
    let report = match recorder.as_mut() {
        Some(rec) => replicate(&args, &model, rec),
        None => replicate(&args, &model, &mut NullObserver),
    }
    .map_err(|e| engine_error(e, &scenario))?;
    let mut report = report;
    let limits = EngineLimits {
        max_events: args.limits.max_events,
    };
    if report.stall().is_none() {
        report.prediction = prediction_interval(&args, &loaded, &report, limits);
    }
    if !args.no_what_if && report.stall().is_none() {
        let knobs = crate::run::what_if::what_ifs(&model, report.seconds_per_job, limits);
        for f in &knobs.failed {
            eprintln!(
                "warning: {scenario}: what-if step {} failed: {}",
                f.resource.with_step(),
                f.reason
            );
        }
        report.knobs = Some(knobs);
    }
    report.notes.extend(notes);
    match args.format {
        Format::Text => print_stdout(&report.to_text())?,
        Format::Json => print_stdout(&format!("{}\n", report.to_json()))?,
    }
    if let Some(rec) = &recorder {
        write_exports(rec, &args.exports, plot_dir, &model.name)?;
    }
    // A stalled run still prints its (partial) report, but exits 1 and says why on stderr
    // so that scripts do not mistake it for a result.
    if let Some(why) = report.stall() {
        return Err(CommandError::run(format!("{scenario}: run stalled: {why}")));
    }
    Ok(())
}

/// `--what-if`: the scenario (with `--set`) as the baseline, the same plus the changes,
/// both over the same seeds; prints both throughputs and their paired difference.
fn what_if(args: RunArgs) -> Result<()> {
    let scenario = args.input.scenario.display().to_string();
    let mut changed_sets = args.input.sets.clone();
    changed_sets.extend(args.what_if.iter().cloned());
    let base_loaded = load(&args, &args.input.sets)?.0;
    let base_model = base_loaded.model.clone();
    let changed_model = load(&args, &changed_sets)?.0.model;
    let changed = crate::scenario::load(&args.input.scenario, &changed_sets)?;
    let no_effect: Vec<String> = (changed.no_effect_of(&args.what_if).into_iter())
        .map(|(change, why)| {
            eprintln!("warning: --what-if {change}: {why}");
            why
        })
        .collect();
    let side =
        |model| replicate(&args, model, &mut NullObserver).map_err(|e| engine_error(e, &scenario));
    let (baseline, changed) = (side(&base_model)?, side(&changed_model)?);
    let report = WhatIf {
        changes: args.what_if.clone(),
        no_effect,
        unshared_error: Some(unshared_error(&base_loaded, &baseline, &changed)),
        baseline,
        changed,
    };
    match args.format {
        Format::Text => print_stdout(&report.to_text())?,
        Format::Json => print_stdout(&format!("{}\n", report.to_json()))?,
    }
    for (label, r) in [("baseline", &report.baseline), ("changed", &report.changed)] {
        if let Some(why) = r.stall() {
            return Err(CommandError::run(format!(
                "{scenario}: the {label} run stalled: {why}"
            )));
        }
    }
    Ok(())
}

/// The model error the two arms of a what-if do not share: both run on the same host
/// keys, stage times and rules, so the error model's floor and host-key spread move them
/// alike; its contention term differs by how far contention moves each (95% half-width
/// on the log of their ratio).
fn unshared_error(loaded: &crate::scenario::Loaded, baseline: &Report, changed: &Report) -> f64 {
    let basis = crate::prediction::data::intervals().basis(crate::prediction::knowledge(loaded));
    let stretch = crate::prediction::contention_stretch;
    let e = &basis.error;
    e.quantile * e.contention * (stretch(changed).ln() - stretch(baseline).ln()).abs()
}

/// What [`load`] gives: the scenario (seeded by `--seed`), the report's notes from
/// loading (overload, stage times scaled to this host, a `--set` that changes nothing)
/// and the files it was read from.
type Loaded = (crate::scenario::Loaded, Vec<String>, Vec<(String, PathBuf)>);

/// The prediction interval of `report`, the answer of `loaded`; None (with a warning)
/// when a sensitivity run fails, which leaves the simulation's answer standing.
fn prediction_interval(
    args: &RunArgs,
    loaded: &crate::scenario::Loaded,
    report: &Report,
    limits: EngineLimits,
) -> Option<crate::analysis::prediction::PredictionInterval> {
    let reload = |extra: &[String]| {
        let mut sets = args.input.sets.clone();
        sets.extend(extra.iter().cloned());
        let mut l = crate::scenario::load_with(&args.input.scenario, &sets, &args.limits.limits())?;
        l.model.seed = loaded.model.seed;
        Ok(l)
    };
    match crate::prediction::predict(loaded, reload, report, limits) {
        Ok((pi, _)) => Some(pi),
        Err(e) => {
            eprintln!(
                "warning: {}: no prediction interval: {e}",
                args.input.scenario.display()
            );
            None
        }
    }
}

/// The scenario with `sets`, seeded by `--seed` when given, its notes (the overload
/// warning and a `--set` that lands on a key another key overrides are also printed on
/// stderr) and its input files (which no output may overwrite).
fn load(args: &RunArgs, sets: &[String]) -> Result<Loaded> {
    let loaded = crate::scenario::load_with(&args.input.scenario, sets, &args.limits.limits())?;
    let inputs = super::scenario_inputs(&loaded.summary);
    let mut notes = Vec::new();
    for (set, why) in loaded.no_effect_of(&args.input.sets) {
        eprintln!("warning: --set {set}: {why}");
        notes.push(format!("--set {set}: {why}"));
    }
    let overload = loaded.summary.overload.clone();
    if let Some(w) = &overload {
        eprintln!("warning: {}: {w}", args.input.scenario.display());
    }
    notes.extend(overload);
    notes.extend(
        loaded
            .summary
            .host_scaling
            .iter()
            .map(|l| format!("stage time scaled from [workload.measured_on] to this host: {l}")),
    );
    let mut loaded = loaded;
    if let Some(seed) = args.seed {
        loaded.model.seed = seed;
    }
    Ok((loaded, notes, inputs))
}

/// The run's replications, combined.
fn replicate<O: crate::engine::Observer + Send>(
    args: &RunArgs,
    model: &crate::model::Model,
    extra: &mut O,
) -> Result<Report, EngineError> {
    let opts = RunOptions {
        ideal: !args.no_ideal,
    };
    let limits = EngineLimits {
        max_events: args.limits.max_events,
    };
    let replicas = Replicas {
        count: args.replications as usize,
    };
    run_replications(model, replicas, opts, limits, extra)
}

/// An engine error with what the user can do about it: an event limit is raised with
/// `--max-events`; an overflowed clock needs shorter durations or arrival times.
fn engine_error(e: EngineError, scenario: &str) -> CommandError {
    let hint = match &e {
        EngineError::EventLimit { .. } => {
            "; if the run is meant to be this long, raise the limit with --max-events"
        }
        EngineError::ClockOverflow { .. } => {
            "; shorten the stage durations, the arrival times or the number of jobs"
        }
        _ => "",
    };
    let context = format!("{scenario}{hint}");
    CommandError::from(e).context(context)
}

/// Where `--plot` draws, if asked: the given folder, or `None` for a default folder
/// chosen when writing. Every export target is checked here, before simulating: each may
/// be written, no two share a path, none is one of the scenario's files.
fn check_exports(
    ex: &RunExportArgs,
    scenario: &str,
    inputs: &[(String, PathBuf)],
) -> Result<Option<PathBuf>> {
    let mut outputs = Vec::new();
    if let Some(f) = &ex.trace {
        outputs.push(Output::new("--trace", f, OutputKind::File));
    }
    if let Some(f) = &ex.timeline_log {
        outputs.push(Output::new("--timeline-log", f, OutputKind::File));
    }
    let dir = ex.plot.clone().flatten();
    if ex.plot.is_some() {
        let folder = dir.clone().unwrap_or_else(|| default_folder(scenario));
        check_dir_target(&folder)?;
    }
    if let Some(d) = &dir {
        outputs.push(Output::new(
            "--plot",
            d,
            OutputKind::Folder(&[
                "timeline.png",
                "timeline.svg",
                "timeline_steady.png",
                "timeline_steady.svg",
            ]),
        ));
    }
    check_outputs(&outputs, inputs)?;
    Ok(dir)
}

fn write_exports(
    rec: &TraceRecorder,
    ex: &RunExportArgs,
    plot_dir: Option<PathBuf>,
    scenario: &str,
) -> Result<()> {
    if let Some(p) = &ex.trace {
        write_chrome_trace(rec, p)?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &ex.timeline_log {
        write_timeline_log(rec, p)?;
        eprintln!("wrote {}", p.display());
    }
    if ex.plot.is_some() {
        let dir = match plot_dir {
            Some(d) => d,
            None => reserve_unique_folder(&default_folder(scenario))?,
        };
        for f in crate::plot::timeline_plot(rec, &dir, "timeline")? {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(())
}
