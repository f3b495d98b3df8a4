//! Predicted-vs-measured chart of a validation table: one point per comparison, as
//! predicted / measured on a log axis per row, with ±10% bands.

use super::table::Table;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;

static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

fn ensure_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Draws the table as a PNG at `path` (written through a temp file, then renamed).
pub fn predicted_vs_measured(t: &Table, path: &Path) -> anyhow::Result<()> {
    ensure_font();
    crate::output::write_atomic_with(path, |tmp| draw(t, tmp))?;
    Ok(())
}

fn draw(t: &Table, tmp: &Path) -> anyhow::Result<()> {
    let n = t.rows.len().max(1);
    let height = (140 + 26 * n) as u32;
    {
        let root = BitMapBackend::new(tmp, (1100, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
        let lo = t
            .rows
            .iter()
            .map(|r| r.predicted / r.measured)
            .fold(0.5f64, f64::min)
            .max(0.05);
        let hi = t
            .rows
            .iter()
            .map(|r| r.predicted / r.measured)
            .fold(2.0f64, f64::max)
            .min(20.0);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "bwsim validate: predicted / measured (median |err| {:.1}%, max {:.1}%)",
                    t.median_abs_error_pct, t.max_abs_error_pct
                ),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(470)
            .build_cartesian_2d((lo..hi).log_scale(), 0..n)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let labels: Vec<String> = t
            .rows
            .iter()
            .map(|r| format!("{} | {}", r.experiment, r.metric))
            .collect();
        chart
            .configure_mesh()
            .x_desc("predicted / measured (log scale)")
            .y_labels(n)
            .y_label_formatter(&|i| labels.get(*i).cloned().unwrap_or_default())
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (x, c) in [(0.9, &RED), (1.0, &BLACK), (1.1, &RED)] {
            chart
                .draw_series(LineSeries::new(vec![(x, 0), (x, n)], c.stroke_width(1)))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        chart
            .draw_series(t.rows.iter().enumerate().map(|(i, r)| {
                let ratio = (r.predicted / r.measured).clamp(lo, hi);
                Circle::new((ratio, i), 5, BLUE.filled())
            }))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}
