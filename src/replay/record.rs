//! A replay's logs in the real engine's formats (cuzk's `TIMELINE` lines for the markers,
//! SupraSeal's `CUZK_TIMING:` lines for the timers), written by the same code that
//! writes a simulated run's log, so measured and simulated logs diff line by line and
//! `bwsim log` reads both.

use std::path::Path;

use crate::model::Model;
use crate::trace::log::log_text;
use crate::trace::recorder::TraceRecorder;

use super::executor::Recording;

/// The replay as a trace recorder (stage instances and markers; no rate samples).
pub fn recorder(model: &Model, rec: &Recording) -> TraceRecorder {
    let mut t = TraceRecorder::new(model);
    t.stages = rec.stages.clone();
    t.stages.sort_by_key(|s| s.end);
    t.markers = rec.markers.clone();
    t.markers.sort_by_key(|m| m.t);
    t
}

/// The TIMELINE log text of a replay.
pub fn timeline_log(model: &Model, rec: &Recording) -> String {
    log_text(&recorder(model, rec))
}

/// Writes the TIMELINE log of a replay to `path` atomically.
pub fn write_timeline_log(
    model: &Model,
    rec: &Recording,
    path: &Path,
) -> Result<(), crate::output::OutputError> {
    crate::output::write_atomic(path, timeline_log(model, rec).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_str;
    use crate::time::SimTime;
    use crate::trace::recorder::{MarkerEvent, StageInstance};

    #[test]
    fn markers_and_timers_print_in_the_engine_format() {
        let text = r#"
[hardware]
cpu_cores = 2
[[workload.stages]]
name = "a"
duration_s = 0.1
[arrivals]
kind = "closed"
concurrency = 1
jobs = 1
[instrumentation]
timing_prefix = "CUZK_TIMING"
[[instrumentation.markers]]
name = "A_START"
at = "a:start"
[[instrumentation.timers]]
name = "a_ms"
from = "a:start"
to = "a:end"
"#;
        let l = load_str(text, Path::new("t.toml"), &[]).unwrap();
        let rec = Recording {
            stages: vec![StageInstance {
                job: 0,
                scope: crate::engine::Scope::Partition(0),
                stage: 0,
                ready: SimTime(1_000_000),
                start: SimTime(2_000_000),
                end: SimTime(102_500_000),
                gpu: None,
                standalone_s: 0.1,
            }],
            markers: vec![MarkerEvent {
                t: SimTime(2_000_000),
                marker: 0,
                job: 0,
                scope: crate::engine::Scope::Partition(0),
                gpu: None,
            }],
            ..Recording::default()
        };
        let log = timeline_log(&l.model, &rec);
        assert_eq!(
            log,
            "TIMELINE,2,A_START,0,partition=0\nCUZK_TIMING: a_ms=100\nTIMELINE,102,JOB_DONE,0,\n"
        );
    }
}
