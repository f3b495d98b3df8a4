//! The `bwsim log --plot` chart: jobs in flight and each stage's in-flight count over
//! time (top), and how many GPUs have a GPU_START..GPU_END bracket open (bottom), as step
//! lines over the log's seconds.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::common::{axis_range, builder, layout, mesh};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, color, fmt_tick};
use crate::plot::error::Result;

/// The log chart's data: step series of (time ms, count) at every change.
pub struct LogChart<'a> {
    /// The log file(s), for the title.
    pub source: &'a str,
    /// End of the log, ms (the series hold their last level until then).
    pub end_ms: f64,
    /// Jobs in flight.
    pub jobs: &'a [(f64, usize)],
    /// Each stage's name and in-flight series.
    pub stages: Vec<(&'a str, &'a [(f64, usize)])>,
    /// GPUs with a bracket open.
    pub gpus_busy: &'a [(f64, usize)],
    /// GPUs in the log.
    pub gpus: usize,
}

/// A step line through (time ms, level) changes, in seconds, held until `end_s`.
fn steps(series: &[(f64, usize)], end_s: f64) -> Vec<(f64, f64)> {
    let mut pts = Vec::with_capacity(series.len() * 2 + 1);
    let mut level = 0.0;
    for &(t, n) in series {
        let x = t / 1e3;
        pts.push((x, level));
        level = n as f64;
        pts.push((x, level));
    }
    if let Some(&(x, _)) = pts.last()
        && x < end_s
    {
        pts.push((end_s, level));
    }
    pts
}

impl Chart for LogChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 900)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let end_s = self.end_ms / 1e3;
        let mut lines: Vec<(String, Vec<(f64, f64)>)> =
            vec![("jobs in flight".into(), steps(self.jobs, end_s))];
        for (name, series) in &self.stages {
            lines.push((format!("{name} in flight"), steps(series, end_s)));
        }
        let gpu = steps(self.gpus_busy, end_s);
        let mut legend: Vec<Entry> = lines
            .iter()
            .enumerate()
            .map(|(i, (l, _))| Entry::new(l.clone(), color(i), Swatch::Line(0)))
            .collect();
        legend.push(Entry::new("GPUs with a bracket open", INK, Swatch::Line(0)));
        let title = format!("{}: concurrency and GPU busy", self.source);
        let area = layout(root, &title, &legend)?;
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 * 3 / 5);
        let x = axis_range(0.0, end_s.max(1e-3));
        let top_hi = lines
            .iter()
            .flat_map(|(_, p)| p.iter().map(|q| q.1))
            .fold(1.0_f64, f64::max);
        let mut chart = builder(&top).build_cartesian_2d(x.0..x.1, 0.0..top_hi * 1.1)?;
        mesh(&mut chart, "time (s)", "in flight", &|v| fmt_tick(*v))?;
        // Jobs last and thicker, so stages at the same level do not hide it.
        for (i, (_, pts)) in lines.iter().enumerate().rev() {
            let width = if i == 0 { 3 } else { 2 };
            chart.draw_series(LineSeries::new(
                pts.iter().copied(),
                color(i).stroke_width(width),
            ))?;
        }
        let gpus = self.gpus.max(1) as f64;
        let mut chart = builder(&bottom).build_cartesian_2d(x.0..x.1, 0.0..gpus * 1.15)?;
        mesh(&mut chart, "time (s)", "GPUs busy (bracketed)", &|v| {
            fmt_tick(*v)
        })?;
        chart.draw_series(LineSeries::new(gpu.iter().copied(), INK.stroke_width(2)))?;
        Ok(())
    }
}
