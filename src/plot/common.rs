//! Pieces every sweep chart uses: the canvas layout (title, plot, legend panel),
//! axis ranges, CI bands and dashed lines.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::legend::{Entry, draw_legend, legend_width};
use super::style::{DASHES, INK, title_font, warning_font};
use crate::plot::error::Result;
use crate::sweep::knee::few_seeds_warning;
use crate::sweep::table::{Series, SweepTable};

/// The 2D chart type of every sweep chart with a linear y axis.
pub type Lin2d = Cartesian2d<RangedCoordf64, RangedCoordf64>;

/// Splits the canvas: title on top, plot on the left, legend panel on the right.
/// Returns the plot area; the legend is drawn now.
pub fn layout<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    legend: &[Entry],
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    layout_with_note(root, title, None, legend)
}

/// A sweep chart's layout: [`layout`], with the few-seeds warning (if the sweep earns
/// it) as a subtitle, so a chart shared without its terminal output still carries it.
pub fn sweep_layout<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    table: &SweepTable,
    title: &str,
    legend: &[Entry],
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    let note = few_seeds_warning(table).map(|w| format!("warning: {w}"));
    layout_with_note(root, title, note.as_deref(), legend)
}

/// [`layout`] with an optional subtitle line (a warning) under the title.
pub fn layout_with_note<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    note: Option<&str>,
    legend: &[Entry],
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    // ab_glyph draws glyphs a little above their nominal box: keep a top margin.
    let mut body = root.margin(12, 6, 6, 6).titled(title, title_font())?;
    if let Some(note) = note {
        body.draw(&Text::new(note.to_string(), (12, 0), warning_font()))?;
        body = body.margin(28, 0, 0, 0);
    }
    let (w, _) = body.dim_in_pixel();
    let lw = legend_width(legend);
    let (plot, side) = body.split_horizontally(w.saturating_sub(lw));
    draw_legend(&side, legend)?;
    Ok(plot)
}

/// The largest magnitude an axis reaches. plotters' tick loop never ends on an infinite
/// or overflowing range (a 1.7e308 cell hung `bwsim plot`), so every range is brought
/// within this before it is drawn; values beyond it are drawn at the edge.
pub const AXIS_LIMIT: f64 = 1e300;

/// A linear axis range plotters can always tick: finite, within [`AXIS_LIMIT`], and
/// wide enough that ticks are distinct floats (degenerate ranges are widened around
/// their value; NaN counts as 0).
pub fn axis_range(lo: f64, hi: f64) -> (f64, f64) {
    let clamp = |v: f64| {
        if v.is_nan() {
            0.0
        } else {
            v.clamp(-AXIS_LIMIT, AXIS_LIMIT)
        }
    };
    let (a, b) = (clamp(lo), clamp(hi));
    let (lo, hi) = (a.min(b), a.max(b));
    let min_span = (lo.abs().max(hi.abs()) * 1e-9).max(1e-12);
    if hi - lo < min_span {
        return (lo - min_span, hi + min_span);
    }
    (lo, hi)
}

/// A logarithmic axis range plotters can always tick: both ends positive and finite,
/// within [1/[`AXIS_LIMIT`], [`AXIS_LIMIT`]], the upper above the lower.
pub fn log_axis_range(lo: f64, hi: f64) -> (f64, f64) {
    let clamp = |v: f64| {
        if v.is_nan() {
            1.0
        } else {
            v.clamp(1.0 / AXIS_LIMIT, AXIS_LIMIT)
        }
    };
    let (a, b) = (clamp(lo), clamp(hi));
    let (lo, hi) = (a.min(b), a.max(b));
    if hi <= lo * (1.0 + 1e-9) {
        return (lo / 2.0, (hi * 2.0).min(AXIS_LIMIT * 2.0));
    }
    (lo, hi)
}

/// A padded range covering `values` (never empty), safe to draw (see [`axis_range`]).
pub fn padded(values: impl IntoIterator<Item = f64>, pad_frac: f64) -> (f64, f64) {
    let (lo, hi) = padded_raw(values, pad_frac);
    axis_range(lo, hi)
}

fn padded_raw(values: impl IntoIterator<Item = f64>, pad_frac: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        let d = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        return (lo - d, hi + d);
    }
    let p = (hi - lo) * pad_frac;
    (lo - p, hi + p)
}

/// (x, mean, ci95) of `metric` along a series, skipping rows without it.
pub fn points(t: &SweepTable, s: &Series, metric: &str) -> Vec<(f64, f64, f64)> {
    s.rows
        .iter()
        .filter_map(|&r| {
            let st = t.stat(r, metric)?;
            Some((t.x(r), st.mean, st.ci95.unwrap_or(0.0)))
        })
        .collect()
}

/// The x range of a table with a little padding.
pub fn x_range(t: &SweepTable) -> (f64, f64) {
    padded((0..t.rows.len()).map(|r| t.x(r)), 0.03)
}

/// Draws a translucent 95% CI band around a curve, clamped to the values the metric can
/// take (`within`: a fraction's band stops at 0 and 100%, a throughput's at 0).
pub fn draw_band<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Lin2d>,
    pts: &[(f64, f64, f64)],
    color: RGBColor,
    within: (f64, f64),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if pts.len() < 2 || pts.iter().all(|p| p.2 == 0.0) {
        return Ok(());
    }
    let (upper, lower) = band_edges(pts, within);
    let mut poly = upper;
    poly.extend(lower.into_iter().rev());
    chart.draw_series(std::iter::once(Polygon::new(poly, color.mix(0.2).filled())))?;
    Ok(())
}

/// A polyline of (x, y) points.
pub type Polyline = Vec<(f64, f64)>;

/// The upper and lower edges of a band of `(x, mean, half-width)` points, clamped to
/// `within`.
pub fn band_edges(pts: &[(f64, f64, f64)], within: (f64, f64)) -> (Polyline, Polyline) {
    let clamp = |y: f64| y.clamp(within.0, within.1);
    (
        pts.iter().map(|p| (p.0, clamp(p.1 + p.2))).collect(),
        pts.iter().map(|p| (p.0, clamp(p.1 - p.2))).collect(),
    )
}

/// Shades the area between two curves sampled at the same x values.
pub fn draw_between<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Lin2d>,
    upper: &[(f64, f64)],
    lower: &[(f64, f64)],
    color: RGBColor,
    alpha: f64,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    if upper.len() < 2 {
        return Ok(());
    }
    let mut poly = upper.to_vec();
    poly.extend(lower.iter().rev().copied());
    chart.draw_series(std::iter::once(Polygon::new(
        poly,
        color.mix(alpha).filled(),
    )))?;
    Ok(())
}

/// Draws a line in dash pattern `dash` (0: solid) and, with `markers`, a dot per point.
pub fn draw_line<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    pts: &[(f64, f64)],
    color: RGBColor,
    dash: usize,
    markers: bool,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let style = color.stroke_width(3);
    let (d, gap) = DASHES[dash % DASHES.len()];
    if d == 0 {
        chart.draw_series(LineSeries::new(pts.iter().copied(), style))?;
    } else {
        chart.draw_series(DashedLineSeries::new(pts.iter().copied(), d, gap, style))?;
    }
    if markers {
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    }
    Ok(())
}

/// The house look of a chart's mesh: axis descriptions and tick labels in the house
/// fonts, a light grid, a soft axis line. Charts with other axes (bars, log scales,
/// segmented rows) set their labels and then take this.
pub fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    m: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    m.axis_desc_style(super::style::desc_font())
        .label_style(super::style::tick_font())
        .bold_line_style(INK.mix(0.12))
        .light_line_style(INK.mix(0.04))
        .axis_style(INK.mix(0.8))
}

/// Configures the usual mesh: light grid, labelled axes, compact tick labels.
pub fn mesh<DB: DrawingBackend, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    x_desc: &str,
    y_desc: &str,
    y_fmt: &dyn Fn(&f64) -> String,
) -> Result<()>
where
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut m = chart.configure_mesh();
    m.x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| super::style::fmt_tick(*v))
        .y_label_formatter(y_fmt);
    house_mesh(&mut m).draw()?;
    Ok(())
}

/// A chart builder with room for tick labels and axis descriptions.
pub fn builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.margin_top(12)
        .margin_right(20)
        .margin_left(8)
        .margin_bottom(8)
        .x_label_area_size(58)
        .y_label_area_size(92);
    b
}
