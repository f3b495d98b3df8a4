//! The `bwsim compare` chart: proofs/day per host (top) and $/proof per host (bottom),
//! one bar per host in the table's order and colour, the best setting under each name.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::common::{axis_range, builder, house_mesh, layout};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{color, fmt_tick, tick_font};
use crate::plot::error::Result;

/// Reads one panel's value off a bar.
type Value = fn(&HostBar) -> Option<f64>;

/// One host's bar: name, proofs/day, $/proof (None where it does not run).
#[derive(Debug, Clone, PartialEq)]
pub struct HostBar {
    /// Host name (and its best setting), the x label.
    pub label: String,
    /// Proofs per day.
    pub proofs_per_day: Option<f64>,
    /// US dollars per proof.
    pub usd_per_proof: Option<f64>,
}

/// The comparison chart.
pub struct CompareChart<'a> {
    /// Scenario name (title).
    pub scenario: &'a str,
    /// Hosts, in table order.
    pub hosts: &'a [HostBar],
}

impl Chart for CompareChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 900)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let legend: Vec<Entry> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| Entry::new(h.label.clone(), color(i), Swatch::Band))
            .collect();
        let title = format!("{}: hosts at their best setting", self.scenario);
        let area = layout(root, &title, &legend)?;
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 / 2);
        let n = self.hosts.len().max(1) as f64;
        let panels: [(&DrawingArea<DB, Shift>, &str, Value); 2] = [
            (&top, "proofs/day", |h| h.proofs_per_day),
            (&bottom, "$/proof", |h| h.usd_per_proof),
        ];
        for (panel, desc, value) in panels {
            let hi = self.hosts.iter().filter_map(value).fold(0.0_f64, f64::max);
            let (y0, y1) = axis_range(0.0, hi * 1.15);
            let mut chart = builder(panel).build_cartesian_2d(-0.5..n - 0.5, y0..y1)?;
            let names: Vec<String> = self
                .hosts
                .iter()
                .map(|h| h.label.split(" (").next().unwrap_or("").to_string())
                .collect();
            let host_name = |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            let mut m = chart.configure_mesh();
            m.disable_x_mesh()
                .x_labels(self.hosts.len().max(1))
                .x_label_formatter(&host_name)
                .y_desc(desc)
                .y_label_formatter(&|v| fmt_tick(*v));
            house_mesh(&mut m).draw()?;
            for (i, h) in self.hosts.iter().enumerate() {
                let x = i as f64;
                match value(h) {
                    Some(v) => {
                        chart.draw_series(std::iter::once(Rectangle::new(
                            [(x - 0.3, 0.0), (x + 0.3, v)],
                            color(i).filled(),
                        )))?;
                        chart.draw_series(std::iter::once(Text::new(
                            fmt_tick(v),
                            (x - 0.1, v + (y1 - y0) * 0.04),
                            tick_font(),
                        )))?;
                    }
                    None => {
                        chart.draw_series(std::iter::once(Text::new(
                            "does not run",
                            (x - 0.2, (y1 - y0) * 0.05),
                            tick_font(),
                        )))?;
                    }
                }
            }
        }
        Ok(())
    }
}
