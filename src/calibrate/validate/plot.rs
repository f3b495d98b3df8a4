//! Predicted-vs-measured chart of a validation table, drawn by the chart layer like every
//! other chart (PNG and SVG, embedded font, house style): one point per comparison, as
//! predicted / measured on a log axis per row, with ±10% lines. A table of thousands of
//! rows (a large `--remeasured` file) draws its [`MAX_ROWS`] largest errors, so the
//! chart's size is bounded whatever the input.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::table::{Row, Table};
use crate::calibrate::error::{CalibrateError, ExperimentError, Result};
use crate::plot::common::{builder, house_mesh, layout_with_note, log_axis_range};
use crate::plot::error::Result as PlotResult;
use crate::plot::legend::{Entry, Swatch};
use crate::plot::style::{DASHES, INK, color, fmt_tick};
use crate::plot::{Chart, PlotError, render};

/// Draws the table as `<dir>/validate.png` and `.svg` (each written atomically); returns
/// both paths.
pub fn predicted_vs_measured(t: &Table, dir: &Path) -> Result<Vec<PathBuf>> {
    render(&ValidateChart(t), dir, "validate").map_err(|e| match e {
        PlotError::Output(e) => CalibrateError::Output(e),
        e => ExperimentError::Chart(e).into(),
    })
}

/// The most rows the chart draws (one line each): the largest errors, in table order.
pub const MAX_ROWS: usize = 80;

/// Height of one row, pixels.
const ROW_PX: u32 = 26;

/// Width of the plot itself, pixels (row labels and legend come on top).
const PLOT_PX: u32 = 720;

/// The ratio axis never draws beyond these (a wild prediction sits at the edge).
const RATIO_LIMITS: (f64, f64) = (0.05, 20.0);

/// Ratios the axis labels, where in range (a log axis of its own ticks only 1 and 2).
const TICKS: [f64; 15] = [
    0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 5.0, 10.0,
];

/// The rows drawn: all of them, or the [`MAX_ROWS`] farthest from predicted = measured.
fn drawn_rows(t: &Table) -> Vec<&Row> {
    if t.rows.len() <= MAX_ROWS {
        return t.rows.iter().collect();
    }
    let off = |r: &Row| {
        let v = ratio(r).ln().abs();
        if v.is_nan() { f64::INFINITY } else { v }
    };
    let mut order: Vec<usize> = (0..t.rows.len()).collect();
    order.sort_by(|&a, &b| off(&t.rows[b]).total_cmp(&off(&t.rows[a])).then(a.cmp(&b)));
    order.truncate(MAX_ROWS);
    order.sort_unstable();
    order.into_iter().map(|i| &t.rows[i]).collect()
}

fn ratio(r: &Row) -> f64 {
    r.predicted / r.measured
}

/// The predicted-vs-measured chart of a validation table.
struct ValidateChart<'a>(&'a Table);

impl ValidateChart<'_> {
    /// The rows' labels ("experiment | metric"), top to bottom.
    fn labels(rows: &[&Row]) -> Vec<String> {
        (rows.iter())
            .map(|r| format!("{} | {}", r.experiment, r.metric))
            .collect()
    }

    /// Room for the longest row label, pixels (about 8 px a character at the tick font).
    fn label_px(labels: &[String]) -> u32 {
        let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        (longest as u32 * 8 + 24).clamp(120, 900)
    }

    /// The ratio axis: at least 0.5..2, wide enough for every drawn row, within
    /// [`RATIO_LIMITS`].
    fn x_range(rows: &[&Row]) -> (f64, f64) {
        let ratios = rows.iter().map(|r| ratio(r)).filter(|v| !v.is_nan());
        let lo = ratios.clone().fold(0.5f64, f64::min).max(RATIO_LIMITS.0);
        let hi = ratios.fold(2.0f64, f64::max).min(RATIO_LIMITS.1);
        log_axis_range(lo, hi)
    }
}

impl Chart for ValidateChart<'_> {
    fn size(&self) -> (u32, u32) {
        let rows = drawn_rows(self.0);
        let label_px = Self::label_px(&Self::labels(&rows));
        (
            label_px + PLOT_PX + 300,
            190 + ROW_PX * rows.len().max(1) as u32,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> PlotResult<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let rows = drawn_rows(t);
        let n = rows.len().max(1);
        let title = format!(
            "bwsim validate: predicted / measured (median |err| {:.1}%, max {:.1}%)",
            t.median_abs_error_pct, t.max_abs_error_pct
        );
        let note = (rows.len() < t.rows.len())
            .then(|| format!("the {} largest errors of {} rows", rows.len(), t.rows.len()));
        let (point, band) = (color(0), color(3));
        let legend = [
            Entry::new("predicted / measured", point, Swatch::Marker),
            Entry::new("predicted = measured", INK, Swatch::Line(0)),
            Entry::new("±10%", band, Swatch::Line(2)),
        ];
        let area = layout_with_note(root, &title, note.as_deref(), &legend)?;
        let (lo, hi) = Self::x_range(&rows);
        let labels = Self::labels(&rows);
        let mut b = builder(&area);
        b.y_label_area_size(Self::label_px(&labels));
        // Rows in table order from the top, each in its own band.
        let ticks = TICKS.iter().copied().filter(|x| (lo..=hi).contains(x));
        let x = (lo..hi).log_scale().with_key_points(ticks.collect());
        let mut chart = b.build_cartesian_2d(x, (0..n - 1).into_segmented())?;
        let at = |i: usize| SegmentValue::CenterOf(n - 1 - i);
        let span = |x: f64| [(x, SegmentValue::Exact(0)), (x, SegmentValue::Last)];
        let row_label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) => (n.checked_sub(i + 1).and_then(|row| labels.get(row)))
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        };
        let mut m = chart.configure_mesh();
        m.x_desc("predicted / measured (log scale)")
            .x_label_formatter(&|v| fmt_tick(*v))
            .y_labels(n)
            .y_label_formatter(&row_label);
        house_mesh(&mut m).draw()?;
        let (dash, gap) = DASHES[2];
        for x in [0.9, 1.1] {
            chart.draw_series(DashedLineSeries::new(
                span(x),
                dash,
                gap,
                band.stroke_width(2),
            ))?;
        }
        chart.draw_series(LineSeries::new(span(1.0), INK.stroke_width(2)))?;
        chart.draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
            // A ratio that is no number has no place on the axis.
            let v = ratio(r);
            (!v.is_nan()).then(|| Circle::new((v.clamp(lo, hi), at(i)), 6, point.filled()))
        }))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::summarise;
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
        let files = predicted_vs_measured(&t, dir.path()).unwrap();
        assert_eq!(
            files,
            [
                dir.path().join("validate.png"),
                dir.path().join("validate.svg")
            ]
        );
        assert!(std::fs::metadata(&files[0]).unwrap().len() < 2_000_000);
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.contains("the 80 largest errors of 7200 rows"), "note");
    }

    #[test]
    fn the_chart_carries_its_title_axes_rows_and_reference_lines() {
        let rows = vec![row(0, 11.0), row(1, 9.5)];
        let t = summarise("c.toml", rows, vec![], vec![]);
        let dir = tempfile::tempdir().unwrap();
        let files = predicted_vs_measured(&t, dir.path()).unwrap();
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        for text in [
            "bwsim validate: predicted / measured (median |err| 7.5%, max 10.0%)",
            "predicted / measured (log scale)",
            "e0 | streams GB/s",
            "e1 | streams GB/s",
            "predicted = measured",
            "±10%",
        ] {
            assert!(svg.contains(text), "{text:?} missing from the SVG");
        }
        assert!(!svg.contains("largest errors"), "every row is drawn");
        // One point per row.
        assert_eq!(
            svg.matches("<circle").count(),
            2 + 1,
            "two rows + the legend's"
        );
    }
}
