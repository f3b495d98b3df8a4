//! Predicted-vs-measured chart of a validation table: one point per comparison, as
//! predicted / measured on a log axis per row, with ±10% bands. A table of thousands of
//! rows (a large `--remeasured` file) draws its [`MAX_ROWS`] largest errors, so the
//! chart's size is bounded whatever the input.

use super::table::Table;
use crate::calibrate::error::{Result, failed};
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
pub fn predicted_vs_measured(t: &Table, path: &Path) -> Result<()> {
    ensure_font();
    crate::output::write_atomic_with(path, |tmp| draw(t, tmp))?;
    Ok(())
}

/// The most rows the chart draws (one line each): the largest errors, in table order.
pub const MAX_ROWS: usize = 80;

/// The rows drawn: all of them, or the [`MAX_ROWS`] farthest from predicted = measured.
fn drawn_rows(t: &Table) -> Vec<&super::table::Row> {
    if t.rows.len() <= MAX_ROWS {
        return t.rows.iter().collect();
    }
    let off = |r: &super::table::Row| {
        let v = (r.predicted / r.measured).ln().abs();
        if v.is_nan() { f64::INFINITY } else { v }
    };
    let mut order: Vec<usize> = (0..t.rows.len()).collect();
    order.sort_by(|&a, &b| off(&t.rows[b]).total_cmp(&off(&t.rows[a])).then(a.cmp(&b)));
    order.truncate(MAX_ROWS);
    order.sort_unstable();
    order.into_iter().map(|i| &t.rows[i]).collect()
}

fn draw(t: &Table, tmp: &Path) -> Result<()> {
    let rows = drawn_rows(t);
    let n = rows.len().max(1);
    let height = (140 + 26 * n) as u32;
    {
        let root = BitMapBackend::new(tmp, (1100, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| failed!("{e}"))?;
        let lo = rows
            .iter()
            .map(|r| r.predicted / r.measured)
            .fold(0.5f64, f64::min)
            .max(0.05);
        let hi = rows
            .iter()
            .map(|r| r.predicted / r.measured)
            .fold(2.0f64, f64::max)
            .min(20.0);
        let shown = if rows.len() < t.rows.len() {
            format!(
                "; the {} largest errors of {} rows",
                rows.len(),
                t.rows.len()
            )
        } else {
            String::new()
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "bwsim validate: predicted / measured (median |err| {:.1}%, max {:.1}%{shown})",
                    t.median_abs_error_pct, t.max_abs_error_pct
                ),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(470)
            .build_cartesian_2d((lo..hi).log_scale(), 0..n)
            .map_err(|e| failed!("{e}"))?;
        let labels: Vec<String> = rows
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
            .map_err(|e| failed!("{e}"))?;
        for (x, c) in [(0.9, &RED), (1.0, &BLACK), (1.1, &RED)] {
            chart
                .draw_series(LineSeries::new(vec![(x, 0), (x, n)], c.stroke_width(1)))
                .map_err(|e| failed!("{e}"))?;
        }
        chart
            .draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
                let ratio = r.predicted / r.measured;
                // A ratio that is no number has no place on the axis.
                (!ratio.is_nan()).then(|| Circle::new((ratio.clamp(lo, hi), i), 5, BLUE.filled()))
            }))
            .map_err(|e| failed!("{e}"))?;
        root.present().map_err(|e| failed!("{e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::table::{Row, summarise};
    use super::*;

    fn row(i: usize, predicted: f64) -> Row {
        Row {
            experiment: format!("e{i}"),
            metric: "streams GB/s".into(),
            measured: 10.0,
            predicted,
            error_pct: (predicted - 10.0) * 10.0,
        }
    }

    #[test]
    fn thousands_of_rows_draw_a_bounded_chart_of_the_largest_errors() {
        // 7,200 rows, 3 of them far off: the chart keeps its size and shows those.
        let rows: Vec<Row> = (0..7200)
            .map(|i| match i {
                10 => row(i, 40.0),
                5000 => row(i, 1.0),
                7199 => row(i, f64::NAN),
                _ => row(i, 10.0 + (i % 7) as f64 * 0.01),
            })
            .collect();
        let t = summarise("c.toml", rows, vec![], vec![]);
        let drawn = drawn_rows(&t);
        assert_eq!(drawn.len(), MAX_ROWS);
        let names: Vec<&str> = drawn.iter().map(|r| r.experiment.as_str()).collect();
        for far in ["e10", "e5000", "e7199"] {
            assert!(names.contains(&far), "{far} not drawn");
        }
        // In table order.
        let pos = |n: &str| names.iter().position(|x| *x == n).unwrap();
        assert!(pos("e10") < pos("e5000") && pos("e5000") < pos("e7199"));
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("validate.png");
        predicted_vs_measured(&t, &png).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() < 2_000_000);
    }
}
