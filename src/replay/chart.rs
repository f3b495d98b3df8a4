//! The replay chart: throughput (jobs per day, the unit every report says) vs the swept parameter, the simulator's
//! predicted curve as a line and the measured points with their spread over runs as
//! whiskers, in the sweep charts' style.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::plot::common::{builder, draw_line, layout, mesh, padded};
use crate::plot::error::Result;
use crate::plot::legend::{Entry, Swatch};
use crate::plot::render::Chart;
use crate::plot::style::{INK, color, fmt_tick, key_label};

use super::compare::PointResult;

/// Predicted vs measured throughput of a replay.
pub struct ReplayChart<'a> {
    /// Scenario name, for the title.
    pub scenario: &'a str,
    /// The swept key, for the x axis.
    pub x_key: &'a str,
    /// The points.
    pub points: &'a [PointResult],
}

impl Chart for ReplayChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 720)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let per_day = |spj: f64| if spj > 0.0 { 86_400.0 / spj } else { f64::NAN };
        let predicted: Vec<(f64, f64)> = self
            .points
            .iter()
            .map(|p| (p.x, per_day(p.predicted.seconds_per_job)))
            .filter(|p| p.1.is_finite())
            .collect();
        // (x, median, low, high) in jobs/day: the slowest run is the lowest throughput.
        let measured: Vec<(f64, f64, f64, f64)> = self
            .points
            .iter()
            .filter_map(|p| {
                let (lo, hi) = p.measured_spread();
                let m = per_day(p.measured_spj());
                m.is_finite().then(|| (p.x, m, per_day(hi), per_day(lo)))
            })
            .collect();
        let legend = vec![
            Entry::new("predicted (simulator)", color(0), Swatch::Line(0)),
            Entry::new("measured (median of runs)", color(1), Swatch::Marker),
            Entry::new("measured spread (min..max)", color(1), Swatch::Line(2)),
        ];
        let title = format!("{}: replay vs prediction", self.scenario);
        let area = layout(root, &title, &legend)?;
        let xs = padded(self.points.iter().map(|p| p.x), 0.05);
        let ys = padded(
            predicted
                .iter()
                .map(|p| p.1)
                .chain(measured.iter().flat_map(|m| [m.2, m.3]))
                .chain(std::iter::once(0.0)),
            0.08,
        );
        let mut chart = builder(&area).build_cartesian_2d(xs.0..xs.1, 0f64.max(ys.0)..ys.1)?;
        mesh(
            &mut chart,
            &key_label(self.x_key),
            "throughput (jobs/day)",
            &|v| fmt_tick(*v),
        )?;
        draw_line(&mut chart, &predicted, color(0), 0, true)?;
        let c = color(1);
        for &(x, _, lo, hi) in &measured {
            if lo.is_finite() && hi.is_finite() {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, lo), (x, hi)],
                    c.stroke_width(2),
                )))?;
            }
        }
        chart.draw_series(
            measured
                .iter()
                .map(|&(x, m, _, _)| Circle::new((x, m), 7, c.filled())),
        )?;
        chart.draw_series(
            measured
                .iter()
                .map(|&(x, m, _, _)| Circle::new((x, m), 7, INK.stroke_width(1))),
        )?;
        Ok(())
    }
}
