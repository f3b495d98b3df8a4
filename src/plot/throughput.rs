//! Throughput vs the swept parameter: jobs/day (top) and seconds/job (bottom), in the
//! scenario's word for a job, each with its 95% CI band and the ideal no-contention
//! line; the knee is marked.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::common::{
    axis_range, builder, draw_band, draw_line, mesh, padded, sweep_layout, x_range,
};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, color, fmt_tick, key_label, legend_font};
use crate::analysis::keys;
use crate::plot::error::Result;
use crate::sweep::knee::{KNEE_TOLERANCE, find_knees};
use crate::sweep::table::{Stat, SweepTable};

/// The throughput chart of a sweep.
pub struct ThroughputChart<'a>(pub &'a SweepTable);

/// Ideal (no contention) jobs/day and seconds/job at a row, from `ideal.*` metrics.
fn ideal(t: &SweepTable, row: usize) -> Option<(f64, f64)> {
    let spj = t.stat(row, keys::IDEAL_SECONDS_PER_JOB).map(|s| s.mean);
    let jpd = (t.stat(row, keys::IDEAL_JOBS_PER_DAY).map(|s| s.mean))
        .or_else(|| Some(t.stat(row, keys::IDEAL_JOBS_PER_HOUR)?.mean * 24.0));
    match (jpd, spj) {
        (Some(j), Some(s)) => Some((j, s)),
        (Some(j), None) if j > 0.0 => Some((j, 86_400.0 / j)),
        (None, Some(s)) if s > 0.0 => Some((86_400.0 / s, s)),
        _ => None,
    }
}

struct Panel {
    top: bool,
    y_desc: String,
    value: fn(&SweepTable, usize) -> Option<Stat>,
    ideal: fn(f64, f64) -> f64,
}

impl Chart for ThroughputChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 1000)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let series = t.series();
        let grid = series.len() > 1;
        let has_ideal = (0..t.rows.len()).any(|r| ideal(t, r).is_some());
        let knees = find_knees(t, KNEE_TOLERANCE);
        let mut legend = Vec::new();
        for (i, s) in series.iter().enumerate() {
            let label = s.label.clone().unwrap_or_else(|| "mean of seeds".into());
            legend.push(Entry::new(label, color(i), Swatch::LineMarker(0)));
        }
        legend.push(Entry::new("95% confidence band", color(0), Swatch::Band));
        if has_ideal {
            legend.push(Entry::new("ideal (no contention)", INK, Swatch::Line(1)));
        }
        if !knees.is_empty() {
            let rule = if knees.iter().all(|k| k.seeds < 2) {
                format!("within {:.0}% of the best", KNEE_TOLERANCE * 100.0)
            } else {
                "not significantly below the best".to_string()
            };
            legend.push(Entry::new(format!("knee ({rule})"), INK, Swatch::Line(2)));
            if knees.iter().any(|k| k.at_range_top) {
                legend.push(Entry::new(
                    "knee at the largest value swept: widen the range",
                    INK,
                    Swatch::Heading,
                ));
            }
        }
        let title = format!("{}: throughput vs {}", t.scenario, t.x_key());
        let area = sweep_layout(root, t, &title, &legend)?;
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 / 2);
        let job = &t.job_name;
        let panels = [
            (
                &top,
                Panel {
                    top: true,
                    y_desc: format!("throughput ({})", job.per_day()),
                    value: |t, r| t.per_day(r),
                    ideal: |j, _| j,
                },
            ),
            (
                &bottom,
                Panel {
                    top: false,
                    y_desc: format!("time per {} ({})", job.singular(), job.seconds_per()),
                    value: |t, r| t.stat(r, keys::SECONDS_PER_JOB),
                    ideal: |_, s| s,
                },
            ),
        ];
        let (x0, x1) = x_range(t);
        for (panel_area, p) in panels {
            let ideal_of = |r: usize| ideal(t, r).map(|(j, s)| (p.ideal)(j, s));
            let ys = (0..t.rows.len()).flat_map(|r| {
                let s = (p.value)(t, r);
                [
                    s.map(|s| s.mean + s.ci95.unwrap_or(0.0)),
                    ideal_of(r),
                    Some(0.0),
                ]
            });
            let (_, y1) = padded(ys.flatten(), 0.08);
            let (y0, y1) = axis_range(0.0, y1);
            let mut chart = builder(panel_area).build_cartesian_2d(x0..x1, y0..y1)?;
            mesh(&mut chart, &key_label(t.x_key()), &p.y_desc, &|v| {
                fmt_tick(*v)
            })?;
            for (i, s) in series.iter().enumerate() {
                let pts: Vec<(f64, f64, f64)> = (s.rows.iter())
                    .filter_map(|&r| {
                        let st = (p.value)(t, r)?;
                        Some((t.x(r), st.mean, st.ci95.unwrap_or(0.0)))
                    })
                    .collect();
                draw_band(&mut chart, &pts, color(i), (0.0, f64::INFINITY))?;
                let ideal_pts: Vec<(f64, f64)> = s
                    .rows
                    .iter()
                    .filter_map(|&r| Some((t.x(r), ideal_of(r)?)))
                    .collect();
                let ideal_color = if grid { color(i) } else { INK };
                draw_line(&mut chart, &ideal_pts, ideal_color, 1, false)?;
                let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                draw_line(&mut chart, &line, color(i), 0, true)?;
            }
            for k in &knees {
                let x = t.x(k.row);
                // In a grid, each line's knee in that line's colour.
                let c = match series.iter().position(|s| s.label == k.series) {
                    Some(i) if grid => color(i),
                    _ => INK,
                };
                chart.draw_series(DashedLineSeries::new(
                    [(x, 0.0), (x, y1)],
                    4,
                    4,
                    c.stroke_width(2),
                ))?;
                if p.top && knees.len() == 1 {
                    let right_half = x > (x0 + x1) / 2.0;
                    let anchor = if right_half { HPos::Right } else { HPos::Left };
                    let dx = if right_half { -8 } else { 8 };
                    chart.draw_series(std::iter::once(
                        EmptyElement::at((x, y1 * 0.06))
                            + Text::new(
                                format!(
                                    "knee: {} = {}{}",
                                    t.x_key(),
                                    t.rows[k.row].values[0],
                                    if k.at_range_top {
                                        " (largest swept)"
                                    } else {
                                        ""
                                    }
                                ),
                                (dx, 0),
                                legend_font().pos(Pos::new(anchor, VPos::Bottom)),
                            ),
                    ))?;
                }
            }
        }
        Ok(())
    }
}
