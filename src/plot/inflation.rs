//! Stage inflation factors (mean actual / mean standalone duration) vs the swept
//! parameter, one line per stage; log y when the factors span more than 10x.

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::common::{
    axis_range, builder, draw_line, log_axis_range, mesh, padded, points, sweep_layout, x_range,
};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{GREY, INK, PALETTE, color, fmt_tick, key_label};
use crate::analysis::keys;
use crate::plot::error::Result;
use crate::sweep::table::SweepTable;

/// The stage inflation chart of a sweep.
pub struct InflationChart<'a>(pub &'a SweepTable);

fn metric(stage: &str) -> String {
    keys::stage_metric(stage, keys::STAGE_INFLATION)
}

/// Stages whose inflation never leaves 1x by more than this are not drawn (they would
/// only stack up on the 1x line); the legend counts them.
const FLAT: f64 = 0.02;

impl InflationChart<'_> {
    /// Stages worth a line, most inflated first, and how many stay flat at 1x.
    fn stages(&self) -> (Vec<String>, usize) {
        let t = self.0;
        let all = t.stages_with(keys::STAGE_INFLATION);
        let mut drawn: Vec<(String, f64)> = all
            .iter()
            .map(|st| {
                let worst = (0..t.rows.len())
                    .filter_map(|r| t.stat(r, &metric(st)).map(|s| (s.mean - 1.0).abs()))
                    .fold(0.0, f64::max);
                (st.clone(), worst)
            })
            .filter(|(_, worst)| *worst > FLAT)
            .collect();
        drawn.sort_by(|a, b| b.1.total_cmp(&a.1)); // stable: model order among equals
        let flat = all.len() - drawn.len();
        (drawn.into_iter().map(|(s, _)| s).collect(), flat)
    }

    /// Colour and dash of the i-th drawn stage: the palette, then dashed variants (a
    /// grid uses dashes for its series, so there colours just cycle).
    fn style(&self, i: usize, series: usize, grid: bool) -> (RGBColor, usize) {
        if grid {
            (color(i), series)
        } else {
            (color(i), i / PALETTE.len())
        }
    }

    /// The smallest and largest plotted inflation (including 1x).
    fn extent(&self) -> (f64, f64) {
        let t = self.0;
        let vals = self.stages().0.into_iter().flat_map(|st| {
            (0..t.rows.len())
                .filter_map(move |r| t.stat(r, &metric(&st)).map(|s| s.mean))
                .collect::<Vec<_>>()
        });
        let (mut lo, mut hi) = (1.0f64, 1.0f64);
        for v in vals.filter(|v| *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        (lo, hi)
    }

    fn body<DB: DrawingBackend, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
        y_desc: &str,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let t = self.0;
        mesh(chart, &key_label(t.x_key()), y_desc, &|v| {
            format!("{}x", fmt_tick(*v))
        })?;
        let (x0, x1) = x_range(t);
        chart.draw_series(LineSeries::new(
            [(x0, 1.0), (x1, 1.0)],
            GREY.stroke_width(2),
        ))?;
        let series = t.series();
        let grid = series.len() > 1;
        for (si, stage) in self.stages().0.iter().enumerate() {
            for (k, s) in series.iter().enumerate() {
                let pts: Vec<(f64, f64)> = points(t, s, &metric(stage))
                    .into_iter()
                    .map(|p| (p.0, p.1))
                    .collect();
                let (c, dash) = self.style(si, k, grid);
                draw_line(chart, &pts, c, dash, true)?;
            }
        }
        Ok(())
    }
}

impl Chart for InflationChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 760)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let series = t.series();
        let grid = series.len() > 1;
        let (stages, flat) = self.stages();
        let mut legend: Vec<Entry> = stages
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (c, dash) = self.style(i, 0, grid);
                Entry::new(
                    s.clone(),
                    c,
                    Swatch::LineMarker(if grid { 0 } else { dash }),
                )
            })
            .collect();
        legend.push(Entry::new("standalone (1x)", GREY, Swatch::Line(0)));
        if flat > 0 {
            let what = if flat == 1 {
                "stage stays"
            } else {
                "stages stay"
            };
            legend.push(Entry::new(
                format!("({flat} more {what} at 1x)"),
                INK,
                Swatch::Heading,
            ));
        }
        if series.len() > 1 {
            legend.push(Entry::new("series", INK, Swatch::Heading));
            for (k, s) in series.iter().enumerate() {
                legend.push(Entry::new(
                    s.label.clone().unwrap_or_default(),
                    INK,
                    Swatch::Line(k),
                ));
            }
        }
        let title = format!("{}: stage inflation vs {}", t.scenario, t.x_key());
        let area = sweep_layout(root, t, &title, &legend)?;
        let (x0, x1) = x_range(t);
        let (lo, hi) = self.extent();
        if hi / lo > 10.0 {
            let (y0, y1) = log_axis_range(lo * 0.85, hi * 1.2);
            let mut chart = builder(&area).build_cartesian_2d(x0..x1, (y0..y1).log_scale())?;
            self.body(&mut chart, "inflation (actual / standalone, log scale)")
        } else {
            let (y0, y1) = padded([lo, hi], 0.08);
            let (y0, y1) = axis_range(y0.max(0.0), y1);
            let mut chart = builder(&area).build_cartesian_2d(x0..x1, y0..y1)?;
            self.body(&mut chart, "inflation (actual / standalone)")
        }
    }
}
