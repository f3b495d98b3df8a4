//! What a recorded run's history says beyond its stage instances: the GPU brackets its
//! markers open and close, when the warm-up ends, and a window of steady state short
//! enough to show sub-second kernels.

use std::collections::BTreeMap;

use super::recorder::TraceRecorder;
use crate::engine::Scope;
use crate::time::SimTime;

/// One `gpu_busy` bracket as the markers drew it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    /// Index into [`TraceRecorder::bracket_spans`].
    pub span: usize,
    /// Job.
    pub job: u64,
    /// The partition whose markers bracket it, or the job.
    pub scope: Scope,
    /// The GPU of its opening marker.
    pub gpu: u32,
    /// Opened.
    pub start: SimTime,
    /// Closed.
    pub end: SimTime,
}

/// The run's brackets, in closing order. A bracket is keyed by span, job and partition
/// (the job, for a marker on a job-level stage); a job-level closing marker closes every
/// partition's bracket of that span and job. Brackets still open at the end are left out.
pub fn brackets(rec: &TraceRecorder) -> Vec<Bracket> {
    let mut open: BTreeMap<(usize, u64, Scope), (u32, SimTime)> = BTreeMap::new();
    let mut out = Vec::new();
    for m in &rec.markers {
        let per_partition = rec.marker_per_partition.get(m.marker).copied();
        let key = if per_partition.unwrap_or(true) {
            m.scope
        } else {
            Scope::Job
        };
        for (span, s) in rec.bracket_spans.iter().enumerate() {
            if s.from == m.marker {
                open.entry((span, m.job, key))
                    .or_insert((m.gpu.unwrap_or(0), m.t));
            }
            if s.to != m.marker {
                continue;
            }
            let keys: Vec<_> = if open.contains_key(&(span, m.job, key)) {
                vec![(span, m.job, key)]
            } else if key == Scope::Job {
                (open.keys())
                    .filter(|k| k.0 == span && k.1 == m.job)
                    .copied()
                    .collect()
            } else {
                Vec::new()
            };
            for k in keys {
                let (gpu, start) = open.remove(&k).expect("listed above");
                out.push(Bracket {
                    span,
                    job: m.job,
                    scope: k.2,
                    gpu,
                    start,
                    end: m.t,
                });
            }
        }
    }
    out
}

/// Jobs' completion times (their last stage's end), earliest first.
fn completions(rec: &TraceRecorder) -> Vec<SimTime> {
    let mut done: BTreeMap<u64, SimTime> = BTreeMap::new();
    for s in &rec.stages {
        let e = done.entry(s.job).or_insert(s.end);
        *e = (*e).max(s.end);
    }
    let mut t: Vec<SimTime> = done.into_values().collect();
    t.sort_unstable();
    t
}

/// When the warm-up ends: the completion of the last warm-up job (the measurement window
/// opens there). None without warm-up jobs, or when fewer jobs completed.
pub fn warmup_end(rec: &TraceRecorder) -> Option<SimTime> {
    let k = usize::try_from(rec.warmup_jobs).ok()?.checked_sub(1)?;
    completions(rec).get(k).copied()
}

/// A stretch of steady state worth zooming into.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyWindow {
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds.
    pub end_s: f64,
    /// What it spans, e.g. "4 brackets of gpu0".
    pub what: String,
}

/// Brackets a steady-state window spans.
pub const STEADY_WINDOW_BRACKETS: usize = 4;

/// A window of steady state short enough that sub-second kernels are wide enough to see:
/// from the first bracket that opens after the warm-up, until [`STEADY_WINDOW_BRACKETS`]
/// brackets of its GPU have closed. Without brackets, one job's worth of time (the mean
/// interval between completions) from the warm-up's end. None when the run has neither.
pub fn steady_window(rec: &TraceRecorder, brackets: &[Bracket]) -> Option<SteadyWindow> {
    let from = warmup_end(rec).unwrap_or_default();
    let mut after: Vec<&Bracket> = brackets.iter().filter(|b| b.start >= from).collect();
    after.sort_by_key(|b| (b.start, b.end));
    if let Some(first) = after.first() {
        let same_gpu: Vec<&&Bracket> = after.iter().filter(|b| b.gpu == first.gpu).collect();
        let n = same_gpu.len().min(STEADY_WINDOW_BRACKETS);
        let end = (same_gpu[..n].iter()).map(|b| b.end).max()?;
        return Some(SteadyWindow {
            start_s: first.start.as_secs(),
            end_s: end.as_secs(),
            what: format!(
                "{n} bracket{} of {}",
                if n == 1 { "" } else { "s" },
                rec.gpu_name(first.gpu)
            ),
        });
    }
    let done = completions(rec);
    let after = done.get(rec.warmup_jobs.max(1) as usize - 1..)?;
    if after.len() < 2 {
        return None;
    }
    let first = after[0].as_secs();
    let per_job = (after[after.len() - 1].as_secs() - first) / (after.len() - 1) as f64;
    (per_job > 0.0).then(|| SteadyWindow {
        start_s: first,
        end_s: (first + per_job).min(rec.end_s()),
        what: "one job's worth of time".to_string(),
    })
}
