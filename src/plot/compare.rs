//! The `bwsim compare` chart: jobs per day per host (top) and dollars per job per host
//! (bottom), one bar per host in the table's order and colour with its seeds' 95%
//! interval as a whisker and its value at the precision that interval allows; the jobs
//! per day carry the 95% prediction interval as a grey band across the bar's top. A $/job panel whose bars
//! differ by more than [`LOG_RATIO`] (a rented GPU beside bought ones) is drawn on a log
//! scale, so the cheap hosts are not flattened to nothing, and says so.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::common::{axis_range, builder, house_mesh, layout};
use super::legend::{Entry, Swatch};
use super::render::Chart;
use super::style::{INK, color, fmt_tick, tick_font};
use crate::analysis::interval::Summary;
use crate::analysis::throughput::{JobName, cell};
use crate::plot::error::Result;

/// The prediction interval's band: grey, drawn see-through so the bar shows beneath.
const BAND: RGBColor = RGBColor(90, 90, 90);

/// Above this ratio of the largest to the smallest $/job, that panel is drawn on a log
/// scale.
pub const LOG_RATIO: f64 = 10.0;

/// One host's bar: name, jobs/day and $/job with their intervals (None where it does
/// not run).
#[derive(Debug, Clone, PartialEq)]
pub struct HostBar {
    /// Host name (and its named setting), the legend label.
    pub label: String,
    /// Host name alone, the x label.
    pub name: String,
    /// Jobs per day.
    pub per_day: Option<Summary>,
    /// Jobs per day's 95% prediction interval (low, high), where there is one.
    pub per_day_prediction: Option<(f64, f64)>,
    /// US dollars per job.
    pub usd_per_job: Option<Summary>,
}

/// The comparison chart.
pub struct CompareChart<'a> {
    /// Scenario name (title).
    pub scenario: &'a str,
    /// What a job is called.
    pub job: &'a JobName,
    /// Hosts, in table order.
    pub hosts: &'a [HostBar],
}

/// One panel: its axis title, the value it reads off a bar and the prediction
/// interval, where the panel has one.
struct Panel {
    desc: String,
    value: fn(&HostBar) -> Option<Summary>,
    range: fn(&HostBar) -> Option<(f64, f64)>,
}

/// Whether a panel's values spread over more than [`LOG_RATIO`].
fn wants_log(values: &[Summary]) -> bool {
    let lo = values.iter().map(|s| s.mean).fold(f64::INFINITY, f64::min);
    let hi = values.iter().map(|s| s.mean).fold(0.0, f64::max);
    lo > 0.0 && hi / lo > LOG_RATIO
}

impl Chart for CompareChart<'_> {
    fn size(&self) -> (u32, u32) {
        (1280, 900)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let mut legend: Vec<Entry> = (self.hosts.iter().enumerate())
            .map(|(i, h)| Entry::new(h.label.clone(), color(i), Swatch::Solid))
            .collect();
        legend.push(Entry::new("95% interval (seeds)", INK, Swatch::Line(0)));
        if self.hosts.iter().any(|h| h.per_day_prediction.is_some()) {
            legend.push(Entry::new("95% prediction interval", BAND, Swatch::Band));
        }
        let title = format!("{}: hosts at their best setting", self.scenario);
        let area = layout(root, &title, &legend)?;
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 / 2);
        let panels = [
            Panel {
                desc: self.job.per_day(),
                value: |h| h.per_day,
                range: |h| h.per_day_prediction,
            },
            Panel {
                desc: format!("$/{}", self.job.singular()),
                value: |h| h.usd_per_job,
                range: |_| None,
            },
        ];
        for (panel, p) in [&top, &bottom].into_iter().zip(panels) {
            let values: Vec<Summary> = self.hosts.iter().filter_map(p.value).collect();
            let hi = (values.iter())
                .map(|s| s.mean + s.ci95.unwrap_or(0.0))
                .chain(self.hosts.iter().filter_map(p.range).map(|r| r.1))
                .fold(0.0_f64, f64::max);
            let n = self.hosts.len().max(1) as f64;
            let x = -0.5..n - 0.5;
            if wants_log(&values) {
                let lo = (values.iter())
                    .map(|s| (s.mean - s.ci95.unwrap_or(0.0)).max(s.mean * 0.5))
                    .fold(f64::INFINITY, f64::min);
                let (lo, hi) = (lo / 2.0, hi * 3.0);
                let mut chart = builder(panel).build_cartesian_2d(x, (lo..hi).log_scale())?;
                let desc = format!("{} (log scale: they differ more than {LOG_RATIO}x)", p.desc);
                self.bars(&mut chart, &desc, &p, lo, hi)?;
            } else {
                let (y0, y1) = axis_range(0.0, hi * 1.15);
                let mut chart = builder(panel).build_cartesian_2d(x, y0..y1)?;
                self.bars(&mut chart, &p.desc, &p, y0, y1)?;
            }
        }
        Ok(())
    }
}

impl CompareChart<'_> {
    /// One panel's bars from `floor`, whiskers and labels, on a linear or log axis.
    fn bars<DB: DrawingBackend, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
        desc: &str,
        panel: &Panel,
        floor: f64,
        top: f64,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let names: Vec<String> = self.hosts.iter().map(|h| h.name.clone()).collect();
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
            let Some(v) = (panel.value)(h) else {
                chart.draw_series(std::iter::once(Text::new(
                    "does not run",
                    (x - 0.2, floor),
                    tick_font(),
                )))?;
                continue;
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.3, floor), (x + 0.3, v.mean)],
                color(i).filled(),
            )))?;
            if let Some((lo, hi)) = (panel.range)(h) {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.4, lo.max(floor)), (x + 0.4, hi.min(top))],
                    BAND.mix(0.3).filled(),
                )))?;
            }
            let upper = match v.ci95 {
                Some(ci) if ci > 0.0 => {
                    let (lo, up) = ((v.mean - ci).max(floor), v.mean + ci);
                    let whisker = INK.stroke_width(2);
                    chart.draw_series([
                        PathElement::new(vec![(x, lo), (x, up)], whisker),
                        PathElement::new(vec![(x - 0.08, lo), (x + 0.08, lo)], whisker),
                        PathElement::new(vec![(x - 0.08, up), (x + 0.08, up)], whisker),
                    ])?;
                    up
                }
                _ => v.mean,
            };
            // The label sits centred just above the whisker, inside the axis.
            let centred = tick_font().pos(Pos::new(HPos::Center, VPos::Bottom));
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, upper.min(top))) + Text::new(cell(&v), (0, -6), centred),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mean: f64) -> Summary {
        Summary {
            n: 3,
            mean,
            ci95: Some(mean * 0.02),
        }
    }

    #[test]
    fn a_rented_host_ten_times_dearer_puts_dollars_on_a_log_scale() {
        assert!(wants_log(&[s(0.009), s(0.008), s(0.235)]));
        assert!(!wants_log(&[s(0.009), s(0.008), s(0.012)]));
        assert!(!wants_log(&[]));
    }

    #[test]
    fn the_chart_draws_whiskers_and_values_at_their_precision() {
        let job = JobName::new("proof");
        let bar = |name: &str, per_day: f64, usd: f64| HostBar {
            label: format!("{name} (c=13)"),
            name: name.into(),
            per_day: Some(s(per_day)),
            per_day_prediction: Some((per_day * 0.8, per_day * 1.25)),
            usd_per_job: Some(s(usd)),
        };
        let hosts = [
            bar("a", 2127.0, 0.00927),
            bar("b", 358.0, 0.235),
            HostBar {
                label: "c (does not run)".into(),
                name: "c".into(),
                per_day: None,
                per_day_prediction: None,
                usd_per_job: None,
            },
        ];
        let chart = CompareChart {
            scenario: "s",
            job: &job,
            hosts: &hosts,
        };
        let dir = tempfile::tempdir().unwrap();
        let files = crate::plot::render(&chart, dir.path(), "hosts").unwrap();
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        for text in [
            "2127 ± 43",
            "0.00927 ± 0.00019",
            "proofs/day",
            "$/proof (log scale",
            "does not run",
            "95% prediction interval",
        ] {
            assert!(svg.contains(text), "no {text:?} in the chart");
        }
    }
}
