//! `bwsim run`: simulate one scenario, print the report, then write the exports asked
//! for (trace, TIMELINE log, timeline plot). Export locations are checked before the
//! simulation; the report is printed even if an export fails later.

use std::path::PathBuf;

use crate::cli::{Format, RunArgs, RunExportArgs};
use crate::engine::{EngineError, EngineLimits};
use crate::output::{
    Output, OutputKind, check_dir_target, check_outputs, default_folder, print_stdout,
    reserve_unique_folder,
};
use crate::run::{RunOptions, run_model_within};
use crate::trace::{TraceRecorder, write_chrome_trace, write_timeline_log};

/// Runs the scenario and prints its report; exit 1 (after the report) when it stalled.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let scenario = args.input.scenario.display().to_string();
    let loaded = crate::scenario::load_with(
        &args.input.scenario,
        &args.input.sets,
        &args.limits.limits(),
    )?;
    let overload = loaded.summary.overload.clone();
    let inputs = super::scenario_inputs(&loaded.summary);
    if let Some(w) = &overload {
        eprintln!("warning: {scenario}: {w}");
    }
    let mut model = loaded.model;
    if let Some(seed) = args.seed {
        model.seed = seed;
    }
    let plot_dir = check_exports(&args.exports, &model.name, &inputs)?;
    let opts = RunOptions {
        ideal: !args.no_ideal,
    };
    let limits = EngineLimits {
        max_events: args.limits.max_events,
    };
    let mut recorder = args.exports.any().then(|| TraceRecorder::new(&model));
    let report = match recorder.as_mut() {
        Some(rec) => run_model_within(&model, opts, limits, rec),
        None => run_model_within(&model, opts, limits, &mut crate::engine::NullObserver),
    }
    .map_err(|e| engine_error(e, &scenario))?;
    let mut report = report;
    report.notes.extend(overload);
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
        anyhow::bail!("{scenario}: run stalled: {why}");
    }
    Ok(())
}

/// An engine error with what the user can do about it: an event limit is raised with
/// `--max-events`; an overflowed clock needs shorter durations or arrival times.
fn engine_error(e: EngineError, scenario: &str) -> anyhow::Error {
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
    anyhow::Error::new(e).context(context)
}

/// Where `--plot` draws, if asked: the given folder, or `None` for a default folder
/// chosen when writing. Every export target is checked here, before simulating: each may
/// be written, no two share a path, none is one of the scenario's files.
fn check_exports(
    ex: &RunExportArgs,
    scenario: &str,
    inputs: &[(String, PathBuf)],
) -> anyhow::Result<Option<PathBuf>> {
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
            OutputKind::Folder(&["timeline.png", "timeline.svg"]),
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
) -> anyhow::Result<()> {
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
