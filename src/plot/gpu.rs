//! GPU busy three ways, against the swept parameter: bracketed (the engine's own
//! GPU_START..GPU_END markers), the nvidia-smi view (share of sample windows in which a
//! kernel ran) and the true kernel duty cycle. The shaded gap between bracketed and true
//! is what the markers overstate. A grid (a second swept parameter) is drawn as small
//! multiples, one panel per value of the other parameters, on shared axes.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::common::{
    builder, draw_band, draw_between, draw_line, mesh, points, sweep_layout, x_range,
};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, fmt_tick, heading_font, key_label};
use crate::analysis::keys;
use crate::plot::error::Result;
use crate::sweep::table::{Series, SweepTable};

const TRUE: &str = keys::GPU_TRUE_BUSY_FRAC;
const BRACKETED: &str = keys::GPU_BRACKETED_BUSY_FRAC;
const SAMPLED: &str = keys::GPU_SAMPLED_BUSY_FRAC;

/// Colours of the three views and of the gap.
const C_TRUE: RGBColor = super::style::PALETTE[0];
const C_BRACKETED: RGBColor = super::style::PALETTE[1];
const C_SAMPLED: RGBColor = super::style::PALETTE[2];
const C_GAP: RGBColor = super::style::PALETTE[3];

/// Most panels side by side in a grid's small multiples.
const MAX_COLUMNS: usize = 3;
/// Height of one row of panels, pixels.
const PANEL_HEIGHT: u32 = 520;

/// The GPU utilisation chart of a sweep.
pub struct GpuChart<'a>(pub &'a SweepTable);

/// (x, mean, ci95) points of one view, in percent.
type Curve = Vec<(f64, f64, f64)>;

/// One panel's curves.
struct Views {
    bracketed: Curve,
    sampled: Curve,
    true_busy: Curve,
}

impl Views {
    fn of(t: &SweepTable, s: &Series) -> Views {
        let pct = |metric| -> Curve {
            (points(t, s, metric).into_iter())
                .map(|(x, m, c)| (x, m * 100.0, c * 100.0))
                .collect()
        };
        Views {
            bracketed: pct(BRACKETED),
            sampled: pct(SAMPLED),
            true_busy: pct(TRUE),
        }
    }

    /// The widest gap between bracketed and true busy, (x, points), when it is worth
    /// naming.
    fn widest_gap(&self) -> Option<(f64, f64)> {
        if !aligned(&self.true_busy, &self.bracketed) {
            return None;
        }
        (self.true_busy.iter().zip(&self.bracketed))
            .map(|(a, b)| (a.0, b.1 - a.1))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|g| g.1 >= 0.5)
    }
}

fn gap_label((x, g): (f64, f64)) -> String {
    format!("up to {g:.0} pts at {}", fmt_tick(x))
}

/// Rows and columns of the panel grid for `n` panels.
fn panel_grid(n: usize) -> (usize, usize) {
    let cols = n.clamp(1, MAX_COLUMNS);
    (n.div_ceil(cols), cols)
}

impl Chart for GpuChart<'_> {
    fn size(&self) -> (u32, u32) {
        let n = self.0.series().len();
        if n <= 1 {
            return (1280, 760);
        }
        let (rows, cols) = panel_grid(n);
        let width = if cols == 1 { 1280 } else { 1800 };
        (width, 130 + rows as u32 * PANEL_HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let series = t.series();
        let views: Vec<Views> = series.iter().map(|s| Views::of(t, s)).collect();
        let has_sampled = views.iter().any(|v| !v.sampled.is_empty());
        let mut legend = vec![Entry::new(
            "bracketed (GPU_START..GPU_END)",
            C_BRACKETED,
            Swatch::LineMarker(1),
        )];
        if has_sampled {
            legend.push(Entry::new(
                "nvidia-smi view (sampled)",
                C_SAMPLED,
                Swatch::LineMarker(2),
            ));
        }
        legend.push(Entry::new(
            "true kernel duty cycle",
            C_TRUE,
            Swatch::LineMarker(0),
        ));
        let gap = match (series.len(), views.first().and_then(Views::widest_gap)) {
            (1, Some(g)) => format!("instrumentation gap ({})", gap_label(g)),
            _ => "instrumentation gap".to_string(),
        };
        legend.push(Entry::new(gap, C_GAP, Swatch::Band));
        legend.push(Entry::new("95% confidence band", INK, Swatch::Band));
        let title = format!("{}: GPU busy, three views, vs {}", t.scenario, t.x_key());
        let area = sweep_layout(root, t, &title, &legend)?;
        if series.len() <= 1 {
            if let Some(v) = views.first() {
                draw_panel(&area, t, v)?;
            }
            return Ok(());
        }
        let (rows, cols) = panel_grid(series.len());
        let panels = area.split_evenly((rows, cols));
        for ((panel, s), v) in panels.iter().zip(&series).zip(&views) {
            let mut heading = s.label.clone().unwrap_or_default();
            if let Some(g) = v.widest_gap() {
                heading = format!("{heading}: gap {}", gap_label(g));
            }
            let body = panel.titled(&heading, heading_font())?;
            draw_panel(&body, t, v)?;
        }
        Ok(())
    }
}

/// Draws one set of views on shared axes (the x range of the whole table, 0-105%).
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    t: &SweepTable,
    v: &Views,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (x0, x1) = x_range(t);
    let mut chart = builder(area).build_cartesian_2d(x0..x1, 0.0..105.0)?;
    mesh(
        &mut chart,
        &key_label(t.x_key()),
        "GPU busy (% of wall time)",
        &|v| format!("{v:.0}%"),
    )?;
    let line = |c: &Curve| c.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>();
    if aligned(&v.true_busy, &v.bracketed) {
        draw_between(
            &mut chart,
            &line(&v.bracketed),
            &line(&v.true_busy),
            C_GAP,
            0.18,
        )?;
    }
    let percent = (0.0, 100.0);
    for (curve, c, dash) in [
        (&v.true_busy, C_TRUE, 0),
        (&v.sampled, C_SAMPLED, 2),
        (&v.bracketed, C_BRACKETED, 1),
    ] {
        draw_band(&mut chart, curve, c, percent)?;
        draw_line(&mut chart, &line(curve), c, dash, true)?;
    }
    Ok(())
}

/// Both curves have a value at the same x values (so the gap can be shaded).
fn aligned(a: &[(f64, f64, f64)], b: &[(f64, f64, f64)]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.0 == q.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_fill_rows_of_at_most_three() {
        assert_eq!(panel_grid(1), (1, 1));
        assert_eq!(panel_grid(2), (1, 2));
        assert_eq!(panel_grid(3), (1, 3));
        assert_eq!(panel_grid(4), (2, 3));
        assert_eq!(panel_grid(7), (3, 3));
    }
}
