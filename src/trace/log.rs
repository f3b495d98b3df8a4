//! Text logs in the real engine's formats, so users can diff a simulated run against a
//! production log: `TIMELINE,<offset_ms>,<event>,<job>,<detail>` lines for each
//! instrumentation marker, and one `<prefix>,<offset_ms>,<job>,partition=<p> name=ms ...`
//! line per partition with the scenario's timers (cuzk's CUZK_TIMING). Each format is one
//! [`LogRecord`] variant; records of all kinds are merged in time order.

use std::collections::BTreeMap;

use std::fmt::Write as _;
use std::path::Path;

use super::recorder::TraceRecorder;
use crate::engine::JOB_LEVEL;
use crate::model::Edge;
use crate::time::SimTime;

/// One line of a log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogRecord {
    /// `TIMELINE,<offset_ms>,<event>,<job>,<detail>`: a marker fired.
    Timeline {
        /// When, from the start of the run.
        t: SimTime,
        /// Marker name, e.g. GPU_START.
        event: String,
        /// Job number.
        job: u64,
        /// `key=value` pairs separated by spaces (partition, gpu), possibly empty.
        detail: String,
    },
    /// `<prefix>,<offset_ms>,<job>,partition=<p> <timer>=<ms> ...`: one partition's timers,
    /// logged when its last timer stops.
    Timing {
        /// When the last timer stopped.
        t: SimTime,
        /// Line prefix, e.g. CUZK_TIMING.
        prefix: String,
        /// Job number.
        job: u64,
        /// Partition index, or [`JOB_LEVEL`].
        partition: u32,
        /// Timer names and milliseconds, in the scenario's order.
        timers: Vec<(String, f64)>,
    },
}

impl LogRecord {
    /// When the record happened.
    pub fn time(&self) -> SimTime {
        match self {
            LogRecord::Timeline { t, .. } | LogRecord::Timing { t, .. } => *t,
        }
    }

    /// Appends the record's line (with newline) to `out`.
    pub fn write_line(&self, out: &mut String) {
        match self {
            LogRecord::Timeline {
                t,
                event,
                job,
                detail,
            } => {
                let _ = writeln!(
                    out,
                    "TIMELINE,{:.3},{event},{job},{detail}",
                    t.nanos() as f64 / 1e6
                );
            }
            LogRecord::Timing {
                t,
                prefix,
                job,
                partition,
                timers,
            } => {
                let _ = write!(out, "{prefix},{:.3},{job},", t.nanos() as f64 / 1e6);
                if *partition != JOB_LEVEL {
                    let _ = write!(out, "partition={partition}");
                }
                for (name, ms) in timers {
                    let _ = write!(out, " {name}={ms:.1}");
                }
                out.push('\n');
            }
        }
    }
}

/// The timing records of a run: per job and partition, every timer whose two stage
/// boundaries were both recorded.
pub fn timing_records(rec: &TraceRecorder) -> Vec<LogRecord> {
    if rec.timers.is_empty() {
        return Vec::new();
    }
    // Boundary times per (job, partition, stage).
    let mut edges: BTreeMap<(u64, u32), BTreeMap<usize, [SimTime; 3]>> = BTreeMap::new();
    for s in &rec.stages {
        edges
            .entry((s.job, s.partition))
            .or_default()
            .insert(s.stage, [s.ready, s.start, s.end]);
    }
    let at = |e: &BTreeMap<usize, [SimTime; 3]>, (stage, edge): (usize, Edge)| {
        e.get(&stage).map(|t| match edge {
            Edge::Ready => t[0],
            Edge::Start => t[1],
            Edge::End => t[2],
        })
    };
    let mut out = Vec::new();
    for (&(job, partition), e) in &edges {
        let mut timers = Vec::new();
        let mut last = SimTime::ZERO;
        for timer in &rec.timers {
            if let (Some(a), Some(b)) = (at(e, timer.from), at(e, timer.to)) {
                let ms = if b > a { (b - a) as f64 / 1e6 } else { 0.0 };
                timers.push((timer.name.clone(), ms));
                last = last.max(b);
            }
        }
        if !timers.is_empty() {
            out.push(LogRecord::Timing {
                t: last,
                prefix: rec.timing_prefix.clone(),
                job,
                partition,
                timers,
            });
        }
    }
    out
}

/// The TIMELINE records of a run: one per marker.
pub fn timeline_records(rec: &TraceRecorder) -> Vec<LogRecord> {
    rec.markers
        .iter()
        .map(|m| {
            let mut detail = Vec::new();
            if m.partition != JOB_LEVEL {
                detail.push(format!("partition={}", m.partition));
            }
            if let Some(g) = m.gpu {
                detail.push(format!("gpu={g}"));
            }
            LogRecord::Timeline {
                t: m.t,
                event: rec
                    .marker_names
                    .get(m.marker)
                    .cloned()
                    .unwrap_or_else(|| format!("MARKER{}", m.marker)),
                job: m.job,
                detail: detail.join(" "),
            }
        })
        .collect()
}

/// Renders records as text, in time order (stable: equal times keep their order).
pub fn render_log(mut records: Vec<LogRecord>) -> String {
    records.sort_by_key(LogRecord::time);
    let mut out = String::new();
    for r in &records {
        r.write_line(&mut out);
    }
    out
}

/// Writes the TIMELINE log of a run (markers and timing lines) to `path` atomically.
pub fn write_timeline_log(rec: &TraceRecorder, path: &Path) -> anyhow::Result<()> {
    let mut records = timeline_records(rec);
    records.extend(timing_records(rec));
    crate::output::write_atomic(path, render_log(records).as_bytes())?;
    Ok(())
}
