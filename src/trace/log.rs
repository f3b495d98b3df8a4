//! Text logs in the real engine's formats, so users can diff a simulated run against a
//! production log. Today: `TIMELINE,<offset_ms>,<event>,<job>,<detail>` lines for each
//! instrumentation marker. Each format is one [`LogRecord`] variant; records of all
//! kinds are merged in time order.

use std::fmt::Write as _;
use std::path::Path;

use super::recorder::TraceRecorder;
use crate::engine::JOB_LEVEL;
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
}

impl LogRecord {
    /// When the record happened.
    pub fn time(&self) -> SimTime {
        match self {
            LogRecord::Timeline { t, .. } => *t,
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
        }
    }
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

/// Writes the TIMELINE log of a run to `path` atomically.
pub fn write_timeline_log(rec: &TraceRecorder, path: &Path) -> anyhow::Result<()> {
    crate::atomic_file::write_atomic(path, render_log(timeline_records(rec)).as_bytes())
}
