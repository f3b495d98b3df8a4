//! Exports of a single run (`bwsim run --trace FILE --timeline-log FILE --plot [DIR]`):
//! the run is simulated once with a [`TraceRecorder`] beside the metrics.

use std::path::PathBuf;

use super::{TraceRecorder, write_chrome_trace, write_timeline_log};
use crate::model::Model;
use crate::report::Report;
use crate::run::{RunOptions, run_model_with};

/// The export flags of `bwsim run`, ready to `#[command(flatten)]` into its arguments.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct RunExportArgs {
    /// Write a Chrome/Perfetto trace of the run (stages as slices, DRAM GB/s as a counter).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write a TIMELINE-style log of the instrumentation markers.
    #[arg(long, value_name = "FILE")]
    pub timeline_log: Option<PathBuf>,
    /// Draw the run's timeline (timeline.png and .svg) into DIR
    /// [default: output/<scenario>/<UTC timestamp>].
    #[arg(long, value_name = "DIR")]
    pub plot: Option<Option<PathBuf>>,
}

impl RunExportArgs {
    /// True when any export was asked for (so a trace must be recorded).
    pub fn any(&self) -> bool {
        self.trace.is_some() || self.timeline_log.is_some() || self.plot.is_some()
    }
}

/// Runs `model` with `opts`, recording a trace only when exports are asked for, and
/// writes them. Returns the report and the files written. Engine errors come back as
/// [`crate::engine::EngineError`] inside the `anyhow::Error`.
pub fn run_with_exports(
    model: &Model,
    opts: RunOptions,
    ex: &RunExportArgs,
) -> anyhow::Result<(Report, Vec<PathBuf>)> {
    if !ex.any() {
        let report = run_model_with(model, opts, &mut crate::engine::NullObserver)?;
        return Ok((report, Vec::new()));
    }
    let mut rec = TraceRecorder::new(model);
    let report = run_model_with(model, opts, &mut rec)?;
    let mut files = Vec::new();
    if let Some(p) = &ex.trace {
        write_chrome_trace(&rec, p)?;
        files.push(p.clone());
    }
    if let Some(p) = &ex.timeline_log {
        write_timeline_log(&rec, p)?;
        files.push(p.clone());
    }
    if let Some(dir) = &ex.plot {
        let dir = crate::sweep::outdir::resolve(dir.as_deref(), &model.name);
        files.extend(crate::plot::timeline_plot(&rec, &dir, "timeline")?);
    }
    Ok((report, files))
}
