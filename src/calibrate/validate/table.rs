//! The comparison of predicted and measured outcomes: one row per compared quantity,
//! summary statistics, and the table as Markdown and CSV.

use super::experiment::{Outcome, Setup};
use crate::analysis::median::median;
use crate::calibrate::probe::stream::Kernel;
use serde::{Deserialize, Serialize};

/// One compared quantity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Experiment name.
    pub experiment: String,
    /// What was compared (with unit).
    pub metric: String,
    /// Measured value.
    pub measured: f64,
    /// Predicted value.
    pub predicted: f64,
    /// (predicted - measured) / measured, percent.
    pub error_pct: f64,
}

/// All rows plus summary statistics.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Table {
    /// Calibration file used.
    pub calibration: String,
    /// Host keys the calibration file lacks, with the typical value each took.
    #[serde(default)]
    pub calibration_missing: Vec<crate::scenario::MissingKey>,
    /// Rows.
    pub rows: Vec<Row>,
    /// Median of |error %|.
    pub median_abs_error_pct: f64,
    /// Max of |error %|.
    pub max_abs_error_pct: f64,
    /// What was skipped and why.
    pub skipped: Vec<String>,
    /// Each experiment's setup and measured outcome (to re-predict from another
    /// calibration with `--remeasured`).
    #[serde(default)]
    pub experiments: Vec<Measured>,
    /// This run's idle chase before any experiment, ns, against the calibration's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_chase: Option<IdleChase>,
    /// This run's streams of its highest-thread triad experiment, GB/s, against the
    /// calibration's measured rate for that kernel and thread count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bandwidth: Option<HostBandwidth>,
}

/// The idle pointer chase of a validate run beside the calibration's: on a VM the
/// latency one process sees can differ from another's (how the host backs its memory),
/// and then every chase row compares two memory systems.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct IdleChase {
    /// This run's idle chase, ns (the fastest candidate buffer).
    pub run_ns: f64,
    /// The calibration's latency curve at no load, ns.
    pub calibrated_ns: f64,
}

impl IdleChase {
    /// Relative difference beyond which the chase rows are not comparable.
    pub const TOLERANCE: f64 = 0.10;

    /// run / calibrated - 1.
    pub fn offset(&self) -> f64 {
        self.run_ns / self.calibrated_ns - 1.0
    }

    /// One line for the table's footer, a warning when beyond [`Self::TOLERANCE`].
    pub fn line(&self) -> String {
        let head = format!(
            "idle chase: this run {:.0} ns, the calibration {:.0} ns ({:+.0}%)",
            self.run_ns,
            self.calibrated_ns,
            self.offset() * 100.0
        );
        if self.offset().abs() > Self::TOLERANCE {
            format!(
                "WARNING: {head}: this process sees another memory system than the \
                 calibration did (on a VM, how the host backs the memory); the chase rows \
                 compare the two, re-calibrate in the same memory state to validate latency"
            )
        } else {
            head
        }
    }
}

/// The DRAM bandwidth a validate run's streams got beside what the calibration measured
/// for the same kernel and thread count: on a VM the bandwidth the host gives can move
/// from one call to the next (a neighbour on the same sockets) while the idle chase does
/// not, and then the stream and latency rows compare two memory systems.
///
/// The run's side is its highest-thread triad experiment (streams and a chase victim, no
/// GPU; the victim's own traffic, one line per idle latency, is under 1 GB/s). The
/// calibration's side is its raw bandwidth-vs-threads measurement
/// (`[[calibration.measurements.bandwidth]]`, write-allocate counted like the run's),
/// interpolated linearly where that thread count was not measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct HostBandwidth {
    /// The streams' kernel.
    pub kernel: Kernel,
    /// Streaming threads.
    pub threads: usize,
    /// This run's streams, DRAM GB/s.
    pub run_gbps: f64,
    /// The calibration's measured rate of `threads` threads of `kernel`, DRAM GB/s.
    pub calibrated_gbps: f64,
}

impl HostBandwidth {
    /// Relative difference beyond which the run's host is not the calibration's.
    pub const TOLERANCE: f64 = 0.10;

    /// run / calibrated - 1.
    pub fn offset(&self) -> f64 {
        self.run_gbps / self.calibrated_gbps - 1.0
    }

    /// One line for the table's footer, a warning when beyond [`Self::TOLERANCE`].
    pub fn line(&self) -> String {
        let head = format!(
            "host bandwidth: {} x{} streams this run {:.1} GB/s, the calibration {:.1} GB/s \
             ({:+.0}%)",
            self.kernel.name(),
            self.threads,
            self.run_gbps,
            self.calibrated_gbps,
            self.offset() * 100.0
        );
        if self.offset().abs() > Self::TOLERANCE {
            let more = if self.offset() > 0.0 { "more" } else { "less" };
            format!(
                "WARNING: {head}: this run's host had {more} DRAM bandwidth to give than at \
                 calibration (on a VM, how busy its neighbours on the same memory are); the stream and \
                 latency rows compare two memory systems, re-calibrate in the same state to \
                 validate contention"
            )
        } else {
            head
        }
    }
}

/// One experiment as run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    /// Name.
    pub name: String,
    /// What ran.
    pub setup: Setup,
    /// What was measured.
    pub outcome: Outcome,
}

/// The rows comparing `m` (measured) with `p` for every quantity both have.
pub fn rows_for(name: &str, m: &Outcome, p: &Outcome) -> Vec<Row> {
    let mut rows = Vec::new();
    let err = |b: f64, a: f64| (b - a) / a * 100.0;
    let mut push = |metric: &str, f: fn(&Outcome) -> Option<f64>| {
        if let (Some(a), Some(b)) = (f(m), f(p))
            && a > 0.0
        {
            rows.push(Row {
                experiment: name.into(),
                metric: metric.into(),
                measured: a,
                predicted: b,
                error_pct: err(b, a),
            });
        }
    };
    push("streams GB/s", |o| o.stream_gbps);
    push("chase ns", |o| o.chase_ns);
    push("dma GB/s", |o| o.dma_gbps);
    push("pipe iteration ms", |o| o.pipe_iter_ms);
    push("pipe upload ms", |o| o.pipe_h2d_ms);
    rows
}

/// Summarises rows into a table.
pub fn summarise(
    calibration: &str,
    rows: Vec<Row>,
    skipped: Vec<String>,
    experiments: Vec<Measured>,
) -> Table {
    let abs: Vec<f64> = rows.iter().map(|r| r.error_pct.abs()).collect();
    Table {
        calibration: calibration.into(),
        calibration_missing: Vec::new(),
        median_abs_error_pct: median(&abs).unwrap_or(0.0),
        max_abs_error_pct: abs.iter().copied().fold(0.0, f64::max),
        rows,
        skipped,
        experiments,
        idle_chase: None,
        host_bandwidth: None,
    }
}

/// The table as Markdown.
pub fn markdown(t: &Table) -> String {
    let mut s = String::from(
        "| experiment | metric | measured | predicted | error % |\n\
         |---|---|---:|---:|---:|\n",
    );
    for r in &t.rows {
        s.push_str(&format!(
            "| {} | {} | {:.2} | {:.2} | {:+.1} |\n",
            r.experiment, r.metric, r.measured, r.predicted, r.error_pct,
        ));
    }
    s.push_str(&format!(
        "\npredicted by the engine on the calibrated host (as a scenario including the \
         calibration gets it): median |error| {:.1}%, max |error| {:.1}% over {} comparisons\n",
        t.median_abs_error_pct,
        t.max_abs_error_pct,
        t.rows.len(),
    ));
    if let Some(c) = &t.idle_chase {
        s.push_str(&c.line());
        s.push('\n');
    }
    if let Some(b) = &t.host_bandwidth {
        s.push_str(&b.line());
        s.push('\n');
    }
    s
}

/// The table as CSV.
pub fn csv(t: &Table) -> String {
    let mut s = String::from("experiment,metric,measured,predicted,error_pct\n");
    for r in &t.rows {
        s.push_str(&format!(
            "\"{}\",\"{}\",{},{},{:.3}\n",
            r.experiment, r.metric, r.measured, r.predicted, r.error_pct,
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics() {
        let row = |e: f64| Row {
            experiment: "e".into(),
            metric: "m".into(),
            measured: 100.0,
            predicted: 100.0 + e,
            error_pct: e,
        };
        let t = summarise("c", vec![row(-5.0), row(2.0), row(20.0)], vec![], vec![]);
        assert_eq!(t.median_abs_error_pct, 5.0);
        assert_eq!(t.max_abs_error_pct, 20.0);
        assert!(markdown(&t).contains("median |error| 5.0%"));
        assert_eq!(csv(&t).lines().count(), 4);
    }

    #[test]
    fn an_idle_chase_far_from_the_calibration_warns() {
        // Run 7 of 2026-12-01: validate's process chased at 199 ns, the calibration at 144.
        let far = IdleChase {
            run_ns: 199.0,
            calibrated_ns: 144.0,
        };
        assert!((far.offset() - 0.3819).abs() < 1e-3);
        assert!(
            far.line()
                .starts_with("WARNING: idle chase: this run 199 ns")
        );
        let near = IdleChase {
            run_ns: 150.0,
            calibrated_ns: 144.0,
        };
        assert!(
            near.line()
                .starts_with("idle chase: this run 150 ns, the calibration 144 ns (+4%)")
        );
    }

    #[test]
    fn a_run_whose_streams_drew_other_bandwidth_than_the_calibration_warns() {
        let check = |run_gbps: f64| HostBandwidth {
            kernel: Kernel::Triad,
            threads: 14,
            run_gbps,
            calibrated_gbps: 150.0,
        };
        // 120 against 150: -20%, less bandwidth than at calibration.
        let less = check(120.0);
        assert!((less.offset() + 0.2).abs() < 1e-12);
        let line = less.line();
        assert!(
            line.starts_with(
                "WARNING: host bandwidth: triad x14 streams this run 120.0 GB/s, \
                 the calibration 150.0 GB/s (-20%)"
            ),
            "{line}"
        );
        assert!(line.contains("less DRAM bandwidth"), "{line}");
        assert!(check(170.0).line().contains("more DRAM bandwidth"));
        // 160 against 150: +7%, within the tolerance, no warning.
        let near = check(160.0).line();
        assert_eq!(
            near,
            "host bandwidth: triad x14 streams this run 160.0 GB/s, the calibration \
             150.0 GB/s (+7%)"
        );
        let mut t = summarise("c", vec![], vec![], vec![]);
        t.host_bandwidth = Some(check(120.0));
        assert!(markdown(&t).ends_with(&format!("{line}\n")));
        let back: Table = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }
}
