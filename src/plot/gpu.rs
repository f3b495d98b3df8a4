//! True GPU kernel duty cycle vs bracketed (instrumented) utilisation: the shaded gap
//! between them is what the engine's own GPU_START..GPU_END markers overstate.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::common::{builder, draw_band, draw_between, draw_line, layout, mesh, points, x_range};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, color, key_label, legend_font};
use crate::sweep::table::SweepTable;

const TRUE: &str = "gpu.true_busy_frac";
const BRACKETED: &str = "gpu.bracketed_busy_frac";

/// The GPU utilisation chart of a sweep.
pub struct GpuChart<'a>(pub &'a SweepTable);

impl Chart for GpuChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 760)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let series = t.series();
        let grid = series.len() > 1;
        let c_true = |i| colors(grid, i).0;
        let c_br = |i| colors(grid, i).1;
        let gap = |i| colors(grid, i).2;
        let mut legend = Vec::new();
        for (i, s) in series.iter().enumerate() {
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
            legend.push(Entry::new("instrumentation gap", gap(i), Swatch::Band));
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
        let pct = |pts: Vec<(f64, f64, f64)>| -> Vec<(f64, f64, f64)> {
            pts.into_iter()
                .map(|(x, m, c)| (x, m * 100.0, c * 100.0))
                .collect()
        };
        let mut widest: Option<(f64, f64, f64)> = None;
        for (i, s) in series.iter().enumerate() {
            let tr = pct(points(t, s, TRUE));
            let br = pct(points(t, s, BRACKETED));
            let line = |v: &[(f64, f64, f64)]| v.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
            if tr.len() == br.len() && tr.iter().zip(&br).all(|(a, b)| a.0 == b.0) {
                draw_between(&mut chart, &line(&br), &line(&tr), gap(i), 0.18)?;
                for (a, b) in tr.iter().zip(&br) {
                    if widest.is_none_or(|w| b.1 - a.1 > w.2) {
                        widest = Some((a.0, (a.1 + b.1) / 2.0, b.1 - a.1));
                    }
                }
            }
            draw_band(&mut chart, &tr, c_true(i))?;
            draw_band(&mut chart, &br, c_br(i))?;
            draw_line(&mut chart, &line(&br), c_br(i), 1, true)?;
            draw_line(&mut chart, &line(&tr), c_true(i), 0, true)?;
        }
        if let Some((x, y, g)) = widest.filter(|w| w.2 > 1.0 && !grid) {
            let right_half = x > (x0 + x1) / 2.0;
            let (anchor, dx) = if right_half {
                (HPos::Right, -10)
            } else {
                (HPos::Left, 10)
            };
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, y))
                    + Text::new(
                        format!("gap {g:.0} points"),
                        (dx, 0),
                        legend_font().pos(Pos::new(anchor, VPos::Center)),
                    ),
            ))?;
        }
        Ok(())
    }
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
