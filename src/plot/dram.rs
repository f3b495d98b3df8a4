//! DRAM bandwidth utilisation vs the swept parameter, each point's marker coloured by
//! the busiest resource the report named there (a sweep runs no what-if steps, so its
//! `bottleneck` column is the occupancy analysis, `run`'s "busiest"). Utilisation is of the usable capacity
//! at each point's stream count (the nominal one less what interleaving streams lose),
//! so a DRAM that is full at 60% of its nominal bandwidth reads full; a table written
//! before that key existed is drawn against the nominal capacity, and the axis says which.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::common::{
    axis_range, builder, draw_band, draw_line, mesh, points, sweep_layout, x_range,
};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, color, key_label};
use crate::analysis::keys;
use crate::plot::error::Result;
use crate::sweep::table::SweepTable;

/// Share of the usable capacity drawn, or of the nominal one for an older table.
fn util_key(t: &SweepTable) -> &'static str {
    if t.metric_index(keys::DRAM_USABLE_UTILIZATION).is_some() {
        keys::DRAM_USABLE_UTILIZATION
    } else {
        keys::DRAM_MEAN_UTILIZATION
    }
}

/// The DRAM chart of a sweep.
pub struct DramChart<'a>(pub &'a SweepTable);

impl Chart for DramChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 760)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let t = self.0;
        let util = util_key(t);
        let series = t.series();
        let mut resources: Vec<&str> = Vec::new();
        for r in &t.rows {
            if !r.bottleneck.is_empty() && !resources.contains(&r.bottleneck.as_str()) {
                resources.push(&r.bottleneck);
            }
        }
        let res_color = |name: &str| color(resources.iter().position(|r| *r == name).unwrap_or(0));
        let mut legend = Vec::new();
        for (k, s) in series.iter().enumerate() {
            let label = s
                .label
                .clone()
                .unwrap_or_else(|| "mean DRAM utilisation".into());
            legend.push(Entry::new(label, INK, Swatch::Line(k)));
        }
        legend.push(Entry::new("95% confidence band", INK, Swatch::Band));
        if !resources.is_empty() {
            legend.push(Entry::new("busiest resource", INK, Swatch::Heading));
            for r in &resources {
                legend.push(Entry::new(*r, res_color(r), Swatch::Marker));
            }
        }
        let title = format!(
            "{}: DRAM bandwidth utilisation vs {}",
            t.scenario,
            t.x_key()
        );
        let area = sweep_layout(root, t, &title, &legend)?;
        let (x0, x1) = x_range(t);
        let top = (0..t.rows.len())
            .filter_map(|r| t.stat(r, util))
            .map(|s| ((s.mean + s.ci95.unwrap_or(0.0)) * 100.0).min(100.0))
            .fold(100.0f64, f64::max);
        let (y0, y1) = axis_range(0.0, top * 1.05);
        let mut chart = builder(&area).build_cartesian_2d(x0..x1, y0..y1)?;
        mesh(
            &mut chart,
            &key_label(t.x_key()),
            if util == keys::DRAM_USABLE_UTILIZATION {
                "DRAM utilisation (% of usable bandwidth at the point's streams)"
            } else {
                "DRAM utilisation (% of nominal bandwidth)"
            },
            &|v| format!("{v:.0}%"),
        )?;
        for (k, s) in series.iter().enumerate() {
            let pts: Vec<(f64, f64, f64)> = points(t, s, util)
                .into_iter()
                .map(|(x, m, c)| (x, m * 100.0, c * 100.0))
                .collect();
            draw_band(&mut chart, &pts, INK, (0.0, 100.0))?;
            let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
            draw_line(&mut chart, &line, INK, k, false)?;
            for &r in &s.rows {
                let Some(st) = t.stat(r, util) else { continue };
                let p = (t.x(r), st.mean * 100.0);
                let c = if t.rows[r].bottleneck.is_empty() {
                    INK
                } else {
                    res_color(&t.rows[r].bottleneck)
                };
                chart.draw_series([
                    Circle::new(p, 7, c.filled()),
                    Circle::new(p, 7, WHITE.stroke_width(1)),
                ])?;
            }
        }
        Ok(())
    }
}
