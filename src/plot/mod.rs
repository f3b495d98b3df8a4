//! Charts drawn with plotters, each as PNG and SVG: the four sweep charts (throughput,
//! GPU true vs bracketed, stage inflation, DRAM with bottlenecks) and a single run's
//! timeline. Text uses the embedded DejaVu Sans ([`font`]), so charts render the same
//! on machines without fonts.

pub mod breakdown;
pub mod common;
pub mod compare;
pub mod dram;
pub mod error;
pub mod font;
pub mod gpu;
pub mod inflation;
pub mod legend;
pub mod log;
pub mod render;
pub mod style;
pub mod throughput;
pub mod timeline;

use std::path::{Path, PathBuf};

pub use error::PlotError;
pub use render::{Chart, render};

use crate::analysis::keys;
use crate::plot::error::Result;
use crate::sweep::table::SweepTable;
use crate::trace::TraceRecorder;

/// Every report key a sweep chart reads (stage charts read
/// `stages.<name>.`[`keys::STAGE_INFLATION`]).
pub const KEYS_READ: [&str; 10] = [
    keys::JOBS_PER_DAY,
    keys::JOBS_PER_HOUR,
    keys::SECONDS_PER_JOB,
    keys::IDEAL_SECONDS_PER_JOB,
    keys::IDEAL_JOBS_PER_DAY,
    keys::IDEAL_JOBS_PER_HOUR,
    keys::GPU_TRUE_BUSY_FRAC,
    keys::GPU_BRACKETED_BUSY_FRAC,
    keys::DRAM_MEAN_UTILIZATION,
    keys::DRAM_USABLE_UTILIZATION,
];

/// The most series a sweep chart draws. Each is a line and a legend entry, and on the
/// GPU chart a panel, so a chart's bitmap grows with its series (2,000 took 2.2 GB)
/// and past a few dozen no line can be told from another.
pub const MAX_SERIES: usize = 64;

/// Why the sweep charts of `table` are not drawn: more series than [`MAX_SERIES`].
pub fn too_many_series(table: &SweepTable) -> Option<String> {
    let n = table.series().len();
    (n > MAX_SERIES).then(|| {
        format!(
            "{n} series (one per combination of the values of {}), more than the \
             {MAX_SERIES} a chart draws: give those parameters fewer values, or plot a \
             slice of the sweep's rows",
            table.params[1..].join(", ")
        )
    })
}

/// Draws every sweep chart whose metrics the table has into `dir`; returns the files.
/// Charts: `throughput`, `gpu_utilisation`, `gpu_breakdown`, `inflation`, `dram` (.png
/// and .svg). None when the table has more than [`MAX_SERIES`] series (callers say
/// why, with [`too_many_series`]).
pub fn sweep_plots(table: &SweepTable, dir: &Path) -> Result<Vec<PathBuf>> {
    if too_many_series(table).is_some() {
        return Ok(Vec::new());
    }
    let has = |m: &str| table.metric_index(m).is_some();
    let mut files = Vec::new();
    if has(keys::JOBS_PER_DAY) || has(keys::JOBS_PER_HOUR) || has(keys::SECONDS_PER_JOB) {
        files.extend(render(
            &throughput::ThroughputChart(table),
            dir,
            "throughput",
        )?);
    }
    if has(keys::GPU_TRUE_BUSY_FRAC) || has(keys::GPU_BRACKETED_BUSY_FRAC) {
        files.extend(render(&gpu::GpuChart(table), dir, "gpu_utilisation")?);
    }
    let bracket_parts = keys::breakdown_metric("kernels", keys::BREAKDOWN_PER_BRACKET_S);
    if has(&bracket_parts) {
        files.extend(render(
            &breakdown::BreakdownChart(table),
            dir,
            "gpu_breakdown",
        )?);
    }
    if !table.stages_with(keys::STAGE_INFLATION).is_empty() {
        files.extend(render(&inflation::InflationChart(table), dir, "inflation")?);
    }
    if has(keys::DRAM_MEAN_UTILIZATION) {
        files.extend(render(&dram::DramChart(table), dir, "dram")?);
    }
    Ok(files)
}

/// Draws the timeline of one recorded run as `<dir>/<stem>.png` and `.svg`, and beside
/// it `<stem>_steady.png` and `.svg`, zoomed on a few brackets of steady state (when the
/// run has any).
pub fn timeline_plot(rec: &TraceRecorder, dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    let mut files = render(&timeline::TimelineChart::new(rec), dir, stem)?;
    if let Some(steady) = timeline::TimelineChart::steady(rec) {
        files.extend(render(&steady, dir, &format!("{stem}_steady"))?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests;
