//! What the GPU brackets hold, against the swept parameter: the mean bracket's seconds
//! stacked by part (kernels, transfers, setup, GPU-lock wait, barrier wait, other), so
//! the chart shows which part grows as the bracket stretches. A grid draws its first
//! series (the subtitle says which).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::common::{axis_range, builder, mesh, padded, points, sweep_layout, x_range};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{color, fmt_tick, key_label};
use crate::analysis::gap::GapPart;
use crate::analysis::keys;
use crate::plot::error::Result;
use crate::sweep::table::SweepTable;

/// The bracket breakdown chart of a sweep.
pub struct BreakdownChart<'a>(pub &'a SweepTable);

/// One part's band: (x, seconds below it, seconds at its top) per point.
type Layer = Vec<(f64, f64, f64)>;

fn metric(part: GapPart) -> String {
    keys::breakdown_metric(part.key(), keys::BREAKDOWN_PER_BRACKET_S)
}

impl BreakdownChart<'_> {
    /// Per part (in stacking order), the (x, cumulative s/bracket below, above) of the
    /// first series' points.
    fn layers(&self) -> Vec<(GapPart, Layer)> {
        let t = self.0;
        let Some(series) = t.series().into_iter().next() else {
            return Vec::new();
        };
        let mut base: Vec<(f64, f64)> = points(t, &series, &metric(GapPart::Kernels))
            .into_iter()
            .map(|p| (p.0, 0.0))
            .collect();
        GapPart::ALL
            .iter()
            .map(|&part| {
                let pts = points(t, &series, &metric(part));
                let layer: Layer = base
                    .iter_mut()
                    .map(|(x, below)| {
                        let v = (pts.iter())
                            .find(|p| p.0 == *x)
                            .map_or(0.0, |p| p.1.max(0.0));
                        let lo = *below;
                        *below += v;
                        (*x, lo, *below)
                    })
                    .collect();
                (part, layer)
            })
            .collect()
    }
}

impl Chart for BreakdownChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 760)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let layers = self.layers();
        let mut legend: Vec<Entry> = (layers.iter().enumerate().rev())
            .map(|(i, (part, _))| Entry::new(part.label(), color(i), Swatch::Line(0)))
            .collect();
        if let Some(first) = t.series().first().and_then(|s| s.label.clone()) {
            legend.push(Entry::new(
                format!("(series {first})"),
                color(0),
                Swatch::Heading,
            ));
        }
        let title = format!(
            "{}: what the GPU brackets hold vs {}",
            t.scenario,
            t.x_key()
        );
        let area = sweep_layout(root, t, &title, &legend)?;
        let (x0, x1) = x_range(t);
        let top = (layers.last())
            .map(|(_, l)| l.iter().map(|p| p.2).fold(0.0, f64::max))
            .unwrap_or(1.0);
        let (_, y1) = padded([0.0, top], 0.06);
        let (y0, y1) = axis_range(0.0, y1);
        let mut chart = builder(&area).build_cartesian_2d(x0..x1, y0..y1)?;
        mesh(
            &mut chart,
            &key_label(t.x_key()),
            "seconds per bracket (mean), stacked by part",
            &|v| fmt_tick(*v),
        )?;
        for (i, (_, layer)) in layers.iter().enumerate() {
            let mut outline: Vec<(f64, f64)> = layer.iter().map(|p| (p.0, p.2)).collect();
            outline.extend(layer.iter().rev().map(|p| (p.0, p.1)));
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                color(i).mix(0.75).filled(),
            )))?;
        }
        Ok(())
    }
}
