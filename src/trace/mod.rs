//! One run's history and its exports: [`TraceRecorder`] (an engine observer), lane
//! layout for Gantt charts, Chrome/Perfetto trace JSON and TIMELINE-style text logs.

pub mod chrome;
pub mod lanes;
pub mod log;
pub mod phases;
pub mod recorder;

pub use chrome::{chrome_trace, write_chrome_trace};
pub use lanes::{Lane, LaneLayout, assign_lanes};
pub use log::{
    LogRecord, log_text, render_log, timeline_records, timing_records, write_timeline_log,
};
pub use phases::{Bracket, SteadyWindow, brackets, steady_window, warmup_end};
pub use recorder::{
    BracketSpan, HoldSample, MarkerEvent, RateSample, StageInstance, StageKind, TraceRecorder,
};

#[cfg(test)]
pub(crate) mod tests;
