//! True GPU kernel duty cycle vs bracketed (instrumented) utilisation: the shaded gap
//! between them is what the engine's own GPU_START..GPU_END markers overstate.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::common::{builder, draw_band, draw_between, draw_line, layout, mesh, points, x_range};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, color, fmt_tick, key_label};
use crate::keys;
use crate::plot::error::Result;
use crate::sweep::table::SweepTable;

const TRUE: &str = keys::GPU_TRUE_BUSY_FRAC;
const BRACKETED: &str = keys::GPU_BRACKETED_BUSY_FRAC;

/// The GPU utilisation chart of a sweep.
pub struct GpuChart<'a>(pub &'a SweepTable);

impl Chart for GpuChart<'_> {
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
        let c_true = |i| colors(grid, i).0;
        let c_br = |i| colors(grid, i).1;
        let gap = |i| colors(grid, i).2;
        let pct = |pts: Vec<(f64, f64, f64)>| -> Vec<(f64, f64, f64)> {
            pts.into_iter()
                .map(|(x, m, c)| (x, m * 100.0, c * 100.0))
                .collect()
        };
        let curves: Vec<_> = series
            .iter()
            .map(|s| (pct(points(t, s, TRUE)), pct(points(t, s, BRACKETED))))
            .collect();
        let mut legend = Vec::new();
        for (i, (s, (tr, br))) in series.iter().zip(&curves).enumerate() {
            if let Some(l) = &s.label {
                legend.push(Entry::new(l.clone(), INK, Swatch::Heading));
            }
            legend.push(Entry::new(
                "bracketed (GPU_START..GPU_END)",
                c_br(i),
                Swatch::LineMarker(1),
            ));
            legend.push(Entry::new(
                "true kernel duty cycle",
                c_true(i),
                Swatch::LineMarker(0),
            ));
            // The widest gap, named in the legend rather than over the curves.
            let widest = aligned(tr, br).then(|| {
                tr.iter()
                    .zip(br)
                    .map(|(a, b)| (a.0, b.1 - a.1))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
            });
            let label = match widest.flatten() {
                Some((x, g)) if g >= 0.5 => {
                    format!("instrumentation gap (max {g:.0} pts at {})", fmt_tick(x))
                }
                _ => "instrumentation gap".to_string(),
            };
            legend.push(Entry::new(label, gap(i), Swatch::Band));
        }
        let title = format!(
            "{}: GPU busy, true vs bracketed, vs {}",
            t.scenario,
            t.x_key()
        );
        let area = layout(root, &title, &legend)?;
        let (x0, x1) = x_range(t);
        let mut chart = builder(&area).build_cartesian_2d(x0..x1, 0.0..105.0)?;
        mesh(
            &mut chart,
            &key_label(t.x_key()),
            "GPU busy (% of wall time)",
            &|v| format!("{v:.0}%"),
        )?;
        let line = |v: &[(f64, f64, f64)]| v.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
        for (i, (tr, br)) in curves.iter().enumerate() {
            if aligned(tr, br) {
                draw_between(&mut chart, &line(br), &line(tr), gap(i), 0.18)?;
            }
            draw_band(&mut chart, tr, c_true(i))?;
            draw_band(&mut chart, br, c_br(i))?;
            draw_line(&mut chart, &line(br), c_br(i), 1, true)?;
            draw_line(&mut chart, &line(tr), c_true(i), 0, true)?;
        }
        Ok(())
    }
}

/// Both curves have a value at the same x values (so the gap can be shaded).
fn aligned(a: &[(f64, f64, f64)], b: &[(f64, f64, f64)]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.0 == q.0)
}

/// Colours of (true, bracketed, gap) for series `i`. One series: blue, orange and a
/// red gap. A grid: one colour per series, solid = true, dashed = bracketed.
fn colors(grid: bool, i: usize) -> (RGBColor, RGBColor, RGBColor) {
    if grid {
        (color(i), color(i), color(i))
    } else {
        (color(0), color(1), color(3))
    }
}
