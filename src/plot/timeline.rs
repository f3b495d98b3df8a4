//! One run's timeline: a Gantt chart (per GPU a bracket track, a kernel track and a copy
//! track; then one group of lanes per host stage), the warm-up shaded, and host DRAM
//! GB/s over time beneath it on the same time axis. Drawn for the whole run, and again
//! zoomed on a few brackets of steady state, where sub-second kernels are visible.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::common::axis_range;
use super::legend::{Entry, Swatch, draw_legend, legend_width};
use super::render::Chart;
use super::style::{GREY, INK, color, desc_font, fmt_tick, legend_font, tick_font, title_font};
use crate::plot::error::Result;
use crate::trace::{
    LaneLayout, RateSample, SteadyWindow, TraceRecorder, assign_lanes, steady_window, warmup_end,
};

/// Most points drawn for the DRAM curve; longer runs are averaged into this many bins.
const MAX_RATE_POINTS: usize = 3000;

/// The timeline chart of one recorded run, whole or zoomed on a window.
pub struct TimelineChart<'a> {
    rec: &'a TraceRecorder,
    layout: LaneLayout,
    /// The zoomed window; None: the whole run.
    window: Option<SteadyWindow>,
}

impl<'a> TimelineChart<'a> {
    /// The whole run.
    pub fn new(rec: &'a TraceRecorder) -> TimelineChart<'a> {
        TimelineChart {
            rec,
            layout: assign_lanes(rec),
            window: None,
        }
    }

    /// A few brackets of steady state ([`steady_window`]); None when the run has none.
    pub fn steady(rec: &'a TraceRecorder) -> Option<TimelineChart<'a>> {
        let layout = assign_lanes(rec);
        let window = steady_window(rec, &layout.brackets)?;
        Some(TimelineChart {
            rec,
            layout,
            window: Some(window),
        })
    }

    /// The time axis, seconds.
    fn span(&self) -> (f64, f64) {
        match &self.window {
            Some(w) => (w.start_s, w.end_s),
            None => (0.0, self.rec.end_s().max(1e-9)),
        }
    }

    fn gantt_height(&self) -> u32 {
        (self.layout.lanes.len() as u32 * 18 + 90).clamp(320, 1600)
    }

    /// DRAM GB/s over the time axis as a step curve (time-averaged into bins when long).
    fn dram_curve(&self) -> Vec<(f64, f64)> {
        let Some(d) = self.rec.dram_index() else {
            return Vec::new();
        };
        self.step_curve(|smp| smp.usage.get(d).copied().unwrap_or(0.0))
    }

    /// DRAM's usable capacity over the time axis (the nominal less what interleaving
    /// streams lose), when the run tracked it.
    fn usable_curve(&self) -> Vec<(f64, f64)> {
        if self
            .rec
            .samples
            .iter()
            .all(|s| s.dram_usable_gbps.is_none())
        {
            return Vec::new();
        }
        let nominal = (self.rec.dram_index())
            .map(|d| self.rec.rates[d].capacity)
            .unwrap_or(0.0);
        self.step_curve(|smp| smp.dram_usable_gbps.unwrap_or(nominal))
    }

    /// `value` of each rate sample over the time axis as a step curve (time-averaged into
    /// bins when long).
    fn step_curve(&self, value: impl Fn(&RateSample) -> f64) -> Vec<(f64, f64)> {
        let (a, b) = self.span();
        let s = &self.rec.samples;
        let end = self.rec.end_s();
        // Steps (from, to, GB/s) cut to the axis.
        let steps: Vec<(f64, f64, f64)> = (s.iter().enumerate())
            .map(|(i, smp)| {
                let t1 = s.get(i + 1).map_or(end, |n| n.t.as_secs());
                (smp.t.as_secs().max(a), t1.min(b), value(smp))
            })
            .filter(|st| st.0 < st.1)
            .collect();
        if steps.len() <= MAX_RATE_POINTS {
            return steps
                .iter()
                .flat_map(|&(t0, t1, v)| [(t0, v), (t1, v)])
                .collect();
        }
        let bins = MAX_RATE_POINTS / 2;
        let w = (b - a) / bins as f64;
        let mut acc = vec![0.0; bins];
        for &(t0, t1, v) in &steps {
            let mut x = t0;
            while x < t1 {
                let k = (((x - a) / w) as usize).min(bins - 1);
                let mut edge = (a + (k + 1) as f64 * w).min(t1).max(x + 1e-12);
                if edge <= x {
                    // At huge times x + 1e-12 == x: finish the interval in this bin.
                    edge = t1;
                }
                acc[k] += v * (edge - x);
                x = edge;
            }
        }
        (acc.iter().enumerate())
            .flat_map(|(k, sum)| {
                let x = a + k as f64 * w;
                [(x, sum / w), (x + w, sum / w)]
            })
            .collect()
    }
}

/// Fill of a bracket bar: translucent, with an outline, so it reads as "claimed", not
/// as work.
const BRACKET: RGBColor = GREY;

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
        if !self.layout.brackets.is_empty() {
            let names: Vec<&str> = (rec.bracket_spans.iter())
                .map(|s| s.name.as_str())
                .collect();
            legend.push(Entry::new(
                format!("bracket ({})", names.join(", ")),
                BRACKET,
                Swatch::Band,
            ));
        }
        let (a, b) = self.span();
        let warm = warmup_end(rec).map(|t| t.as_secs()).filter(|&t| t > a);
        if warm.is_some() {
            legend.push(Entry::new("warm-up (not measured)", INK, Swatch::Band));
        }
        legend.push(Entry::new("DRAM GB/s", color(0), Swatch::Line(0)));
        legend.push(Entry::new("DRAM capacity (nominal)", INK, Swatch::Line(1)));
        let usable = self.usable_curve();
        if !usable.is_empty() {
            legend.push(Entry::new(
                "DRAM usable at the streams drawing",
                color(1),
                Swatch::Line(1),
            ));
        }

        let title = match &self.window {
            None => format!("{}: timeline of one run", rec.scenario),
            Some(w) => format!(
                "{}: steady state, {} (t = {}..{} s)",
                rec.scenario,
                w.what,
                fmt_tick(w.start_s),
                fmt_tick(w.end_s)
            ),
        };
        let body = root.margin(12, 6, 6, 6).titled(&title, title_font())?;
        let (w, _) = body.dim_in_pixel();
        let (plots, side) = body.split_horizontally(w.saturating_sub(legend_width(&legend)));
        draw_legend(&side, &legend)?;
        let (top, bottom) = plots.split_vertically(self.gantt_height());

        let pad = (b - a) * 0.01;
        let (x0, x1) = axis_range(a, b + pad);
        let x = x0..x1;
        let label_w = lanes
            .iter()
            .map(|l| l.label().chars().count())
            .max()
            .unwrap_or(4) as u32
            * 9
            + 24;
        let label_area = label_w.max(92);

        // Gantt: lane i is drawn at y = n - i, so lane 0 (a GPU's brackets) is on top.
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
        if let Some(t) = warm {
            let t = t.min(b);
            gantt.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.5), (t, n + 0.5)],
                INK.mix(0.08).filled(),
            )))?;
            gantt.draw_series(std::iter::once(
                EmptyElement::at((t, 0.5))
                    + Text::new(
                        "warm-up",
                        (-6, -4),
                        legend_font().pos(Pos::new(HPos::Right, VPos::Bottom)),
                    ),
            ))?;
        }
        let y_of = |lane: usize| n - lane as f64;
        // A bar cut to the time axis; None when it lies outside.
        let clip = |start: f64, end: f64, lane: usize| {
            let (s, e) = (start.max(a), end.min(b));
            let y = y_of(lane);
            (s < e || (start == end && start >= a && start <= b))
                .then_some([(s, y - 0.38), (e, y + 0.38)])
        };
        let brackets: Vec<_> = (self.layout.brackets.iter())
            .zip(&self.layout.bracket_lane_of)
            .filter_map(|(br, &lane)| clip(br.start.as_secs(), br.end.as_secs(), lane))
            .collect();
        gantt.draw_series(
            brackets
                .iter()
                .map(|c| Rectangle::new(*c, BRACKET.mix(0.35).filled())),
        )?;
        gantt.draw_series(
            brackets
                .iter()
                .map(|c| Rectangle::new(*c, INK.mix(0.6).stroke_width(1))),
        )?;
        let bars: Vec<_> = rec
            .stages
            .iter()
            .zip(&self.layout.lane_of)
            .filter_map(|(s, &lane)| {
                let c = clip(s.start.as_secs(), s.end.as_secs(), lane)?;
                Some((c, stage_color(s.stage)))
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
                let style = if lanes[i - 1].gpu() != lane.gpu() {
                    INK.stroke_width(2)
                } else {
                    INK.mix(0.35).stroke_width(1)
                };
                gantt.draw_series(LineSeries::new([(a, y), (b + pad, y)], style))?;
            }
            if lane.slot % every == 0 {
                let (px, py) = gantt.backend_coord(&(a, y_of(i)));
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
                [(a, cap), (b, cap)],
                12,
                6,
                INK.stroke_width(2),
            ))?;
        }
        dram.draw_series(
            AreaSeries::new(curve.iter().copied(), 0.0, color(0).mix(0.25))
                .border_style(color(0).stroke_width(2)),
        )?;
        if !usable.is_empty() {
            dram.draw_series(DashedLineSeries::new(
                usable.iter().copied(),
                12,
                6,
                color(1).stroke_width(2),
            ))?;
        }
        Ok(())
    }
}
