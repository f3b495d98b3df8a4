//! Charts drawn with plotters, each as PNG and SVG: the four sweep charts (throughput,
//! GPU true vs bracketed, stage inflation, DRAM with bottlenecks) and a single run's
//! timeline. Text uses the embedded DejaVu Sans ([`font`]), so charts render the same
//! on machines without fonts.

pub mod common;
pub mod dram;
pub mod font;
pub mod gpu;
pub mod inflation;
pub mod legend;
pub mod render;
pub mod style;
pub mod throughput;
pub mod timeline;

use std::path::{Path, PathBuf};

pub use render::{Chart, render};

use crate::sweep::table::SweepTable;
use crate::trace::TraceRecorder;

/// Draws every sweep chart whose metrics the table has into `dir`; returns the files.
/// Charts: `throughput`, `gpu_utilisation`, `inflation`, `dram` (.png and .svg).
pub fn sweep_plots(table: &SweepTable, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let has = |m: &str| table.metric_index(m).is_some();
    let mut files = Vec::new();
    if has("jobs_per_hour") || has("seconds_per_job") {
        files.extend(render(
            &throughput::ThroughputChart(table),
            dir,
            "throughput",
        )?);
    }
    if has("gpu.true_busy_frac") || has("gpu.bracketed_busy_frac") {
        files.extend(render(&gpu::GpuChart(table), dir, "gpu_utilisation")?);
    }
    if !table.stages_with("inflation").is_empty() {
        files.extend(render(&inflation::InflationChart(table), dir, "inflation")?);
    }
    if has("dram.mean_utilization") {
        files.extend(render(&dram::DramChart(table), dir, "dram")?);
    }
    Ok(files)
}

/// Draws the timeline of one recorded run as `<dir>/<stem>.png` and `.svg`.
pub fn timeline_plot(rec: &TraceRecorder, dir: &Path, stem: &str) -> anyhow::Result<Vec<PathBuf>> {
    render(&timeline::TimelineChart::new(rec), dir, stem)
}

#[cfg(test)]
mod tests;
