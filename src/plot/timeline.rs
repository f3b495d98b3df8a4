//! One run's timeline: a Gantt chart of stage instances per lane (GPU lanes on top,
//! then one group of lanes per CPU stage), and host DRAM GB/s over time beneath it on
//! the same time axis.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::common::axis_range;
use super::legend::{Entry, Swatch, draw_legend, legend_width};
use super::render::Chart;
use super::style::{INK, color, desc_font, fmt_tick, tick_font, title_font};
use crate::plot::error::Result;
use crate::trace::{LaneLayout, TraceRecorder, assign_lanes};

/// Most points drawn for the DRAM curve; longer runs are averaged into this many bins.
const MAX_RATE_POINTS: usize = 3000;

/// The timeline chart of one recorded run.
pub struct TimelineChart<'a> {
    rec: &'a TraceRecorder,
    layout: LaneLayout,
}

impl<'a> TimelineChart<'a> {
    /// Lays out the lanes of a recorded run.
    pub fn new(rec: &'a TraceRecorder) -> TimelineChart<'a> {
        TimelineChart {
            rec,
            layout: assign_lanes(rec),
        }
    }

    fn gantt_height(&self) -> u32 {
        (self.layout.lanes.len() as u32 * 18 + 90).clamp(320, 1600)
    }

    /// DRAM GB/s as a step curve (time-averaged into bins when long).
    fn dram_curve(&self) -> Vec<(f64, f64)> {
        let Some(d) = self.rec.dram_index() else {
            return Vec::new();
        };
        let end = self.rec.end_s();
        let s = &self.rec.samples;
        if s.len() <= MAX_RATE_POINTS {
            let mut pts = Vec::with_capacity(2 * s.len() + 1);
            for (i, smp) in s.iter().enumerate() {
                let v = smp.usage.get(d).copied().unwrap_or(0.0);
                let t1 = s.get(i + 1).map_or(end, |n| n.t.as_secs());
                pts.push((smp.t.as_secs(), v));
                pts.push((t1, v));
            }
            return pts;
        }
        let bins = MAX_RATE_POINTS / 2;
        let w = end / bins as f64;
        let mut acc = vec![0.0; bins];
        for (i, smp) in s.iter().enumerate() {
            let v = smp.usage.get(d).copied().unwrap_or(0.0);
            let (mut a, b) = (smp.t.as_secs(), s.get(i + 1).map_or(end, |n| n.t.as_secs()));
            while a < b {
                let k = ((a / w) as usize).min(bins - 1);
                let mut edge = ((k + 1) as f64 * w).min(b).max(a + 1e-12);
                if edge <= a {
                    // At huge times a + 1e-12 == a: finish the interval in this bin.
                    edge = b;
                }
                acc[k] += v * (edge - a);
                a = edge;
            }
        }
        acc.iter()
            .enumerate()
            .flat_map(|(k, sum)| [(k as f64 * w, sum / w), ((k + 1) as f64 * w, sum / w)])
            .collect()
    }
}

impl Chart for TimelineChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1400, 60 + self.gantt_height() + 300)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let rec = self.rec;
        let lanes = &self.layout.lanes;
        let n = lanes.len().max(1) as f64;
        let mut present: Vec<usize> = rec.stages.iter().map(|s| s.stage).collect();
        present.sort_unstable();
        present.dedup();
        // Colours by rank among the stages that ran, so 20 colours go a long way.
        let stage_color = |stage: usize| color(present.binary_search(&stage).unwrap_or(stage));
        let mut legend: Vec<Entry> = present
            .iter()
            .map(|&s| {
                Entry::new(
                    rec.stage_names.get(s).cloned().unwrap_or_default(),
                    stage_color(s),
                    Swatch::Solid,
                )
            })
            .collect();
        legend.push(Entry::new("DRAM GB/s", color(0), Swatch::Line(0)));
        legend.push(Entry::new("DRAM capacity", INK, Swatch::Line(1)));

        let title = format!("{}: timeline of one run", rec.scenario);
        let body = root.margin(12, 6, 6, 6).titled(&title, title_font())?;
        let (w, _) = body.dim_in_pixel();
        let (plots, side) = body.split_horizontally(w.saturating_sub(legend_width(&legend)));
        draw_legend(&side, &legend)?;
        let (top, bottom) = plots.split_vertically(self.gantt_height());

        let end = rec.end_s().max(1e-9);
        let (x0, x1) = axis_range(0.0, end * 1.01);
        let x = x0..x1;
        let label_w = lanes
            .iter()
            .map(|l| l.label().chars().count())
            .max()
            .unwrap_or(4) as u32
            * 9
            + 24;
        let label_area = label_w.max(92);

        // Gantt: lane i is drawn at y = n - i, so lane 0 (a GPU) is on top.
        let mut gantt = ChartBuilder::on(&top)
            .margin_top(12)
            .margin_right(20)
            .x_label_area_size(40)
            .y_label_area_size(label_area)
            .build_cartesian_2d(x.clone(), 0.5..n + 0.5)?;
        gantt
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .axis_desc_style(desc_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| fmt_tick(*v))
            .bold_line_style(INK.mix(0.10))
            .light_line_style(INK.mix(0.03))
            .draw()?;
        let y_of = |lane: usize| n - lane as f64;
        let bars: Vec<_> = rec
            .stages
            .iter()
            .zip(&self.layout.lane_of)
            .map(|(s, &lane)| {
                let y = y_of(lane);
                let corners = [(s.start.as_secs(), y - 0.38), (s.end.as_secs(), y + 0.38)];
                (corners, stage_color(s.stage))
            })
            .collect();
        gantt.draw_series(bars.iter().map(|(c, col)| Rectangle::new(*c, col.filled())))?;
        // A hairline edge so back-to-back instances on one lane stay distinguishable.
        gantt.draw_series(
            bars.iter()
                .map(|(c, _)| Rectangle::new(*c, WHITE.mix(0.9).stroke_width(1))),
        )?;
        // Group separators and lane labels (every k-th lane when crowded).
        let lane_px = self.gantt_height() as f64 / n;
        let every = (16.0 / lane_px).ceil().max(1.0) as usize;
        for (i, lane) in lanes.iter().enumerate() {
            if i > 0 && lanes[i - 1].group != lane.group {
                let y = y_of(i) + 0.5;
                gantt.draw_series(LineSeries::new([(0.0, y), (end * 1.01, y)], INK.mix(0.35)))?;
            }
            if lane.slot % every == 0 {
                let (px, py) = gantt.backend_coord(&(0.0, y_of(i)));
                root.draw(&Text::new(
                    lane.label(),
                    (px - 8, py),
                    tick_font().pos(Pos::new(HPos::Right, VPos::Center)),
                ))?;
            }
        }

        // DRAM GB/s beneath, same time axis.
        let curve = self.dram_curve();
        // Without [hardware.dram] the capacity is infinite: there is no line to draw.
        let cap = rec
            .dram_index()
            .map(|d| rec.rates[d].capacity)
            .filter(|c| c.is_finite())
            .unwrap_or(0.0);
        let y_max = curve.iter().map(|p| p.1).fold(cap, f64::max).max(1e-9) * 1.1;
        let (y_lo, y_hi) = axis_range(0.0, y_max);
        let mut dram = ChartBuilder::on(&bottom)
            .margin_top(10)
            .margin_right(20)
            .margin_bottom(8)
            .x_label_area_size(58)
            .y_label_area_size(label_area)
            .build_cartesian_2d(x, y_lo..y_hi)?;
        dram.configure_mesh()
            .x_desc("simulated time (s)")
            .y_desc("DRAM (GB/s)")
            .axis_desc_style(desc_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| fmt_tick(*v))
            .y_label_formatter(&|v| fmt_tick(*v))
            .bold_line_style(INK.mix(0.10))
            .light_line_style(INK.mix(0.03))
            .draw()?;
        if cap > 0.0 {
            dram.draw_series(DashedLineSeries::new(
                [(0.0, cap), (end, cap)],
                12,
                6,
                INK.stroke_width(2),
            ))?;
        }
        dram.draw_series(
            AreaSeries::new(curve.iter().copied(), 0.0, color(0).mix(0.25))
                .border_style(color(0).stroke_width(2)),
        )?;
        Ok(())
    }
}
