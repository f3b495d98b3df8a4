//! Text logs in the real engine's formats, so one reader (`bwsim log`) reads a simulated
//! run and a production log alike:
//!
//! - `TIMELINE,<offset_ms>,<EVENT>,<job_id>,<detail>` per instrumentation marker, as
//!   cuzk-core's `timeline_event` prints it: whole milliseconds (`as_millis`), the detail
//!   comma-separated (`worker=W,partition=P` on GPU_PICKUP/GPU_START/GPU_END, `gpu_ms=`
//!   on GPU_END, `synth_ms=` on SYNTH_END);
//! - `<PREFIX>: name=ms ...` (SupraSeal's `CUZK_TIMING:`), one line per partition and
//!   instant at which timers stop, in whole milliseconds, with no job or offset: the
//!   reader places it by its position in the file;
//! - cuzk's `pipeline GPU worker started worker_id=W gpu=G sub_id=S` lines first, for
//!   every GPU of the host as cuzk prints them at start-up (an idle GPU included), so the
//!   log says how its workers map to GPUs and how many GPUs share the work;
//! - one event cuzk does not print, `TIMELINE,<offset_ms>,JOB_DONE,<job>,` when the job's
//!   last stage ends, so that the log's window (which opens when the warm-up jobs have
//!   completed, a job completing at its last record) is the run's. cuzk's own last
//!   record of a job is its last GPU_END, printed after the partition's finalize.
//!
//! Workers are numbered as cuzk does (GPU 0's first), each bracket taking the lowest free
//! worker of its GPU from GPU_PICKUP (or GPU_START) to GPU_END.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use super::recorder::{MarkerEvent, TraceRecorder};
use crate::engine::Scope;
use crate::model::Edge;
use crate::output::{OutputError, write_atomic};
use crate::time::SimTime;

/// One line of a log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogRecord {
    /// cuzk's `pipeline GPU worker started` line (printed at start-up).
    WorkerStarted {
        /// Global worker number.
        worker: u32,
        /// Its GPU.
        gpu: u32,
        /// Its number on that GPU.
        sub_id: u32,
    },
    /// `TIMELINE,<offset_ms>,<event>,<job>,<detail>`: a marker fired.
    Timeline {
        /// When, from the start of the run.
        t: SimTime,
        /// Marker name, e.g. GPU_START.
        event: String,
        /// Job number.
        job: u64,
        /// Comma-separated `key=value` pairs, possibly empty.
        detail: String,
    },
    /// `<prefix>: <timer>=<ms> ...`: timers of one partition that stopped at `t`.
    Timing {
        /// When they stopped.
        t: SimTime,
        /// Line tag, e.g. CUZK_TIMING.
        prefix: String,
        /// Timer names and milliseconds, in the scenario's order.
        timers: Vec<(String, f64)>,
    },
}

/// Whole milliseconds, truncated as Rust's `as_millis` and C's integer division do.
fn whole_ms(nanos: u64) -> u64 {
    nanos / 1_000_000
}

impl LogRecord {
    /// Sort key: time, then what the engines print first at one instant (worker lines
    /// before everything, SupraSeal's timers before the GPU_END that follows them).
    fn order(&self) -> (SimTime, u8) {
        match self {
            LogRecord::WorkerStarted { .. } => (SimTime::ZERO, 0),
            LogRecord::Timeline { t, event, .. } if event == "GPU_END" || event == JOB_DONE => {
                (*t, 3)
            }
            LogRecord::Timeline { t, .. } => (*t, 1),
            LogRecord::Timing { t, .. } => (*t, 2),
        }
    }

    /// Appends the record's line (with newline) to `out`.
    pub fn write_line(&self, out: &mut String) {
        let _ = match self {
            LogRecord::WorkerStarted {
                worker,
                gpu,
                sub_id,
            } => writeln!(
                out,
                "INFO cuzk_core::engine: pipeline GPU worker started worker_id={worker} gpu={gpu} sub_id={sub_id}"
            ),
            LogRecord::Timeline {
                t,
                event,
                job,
                detail,
            } => writeln!(
                out,
                "TIMELINE,{},{event},{job},{detail}",
                whole_ms(t.nanos())
            ),
            LogRecord::Timing { prefix, timers, .. } => {
                let pairs: Vec<String> = timers
                    .iter()
                    .map(|(n, ms)| format!("{n}={}", ms.max(0.0).floor() as u64))
                    .collect();
                writeln!(out, "{prefix}: {}", pairs.join(" "))
            }
        };
    }
}

/// The timing records of a run: per job and partition, the timers whose two stage
/// boundaries were both recorded, one line per instant at which some of them stop.
pub fn timing_records(rec: &TraceRecorder) -> Vec<LogRecord> {
    if rec.timers.is_empty() {
        return Vec::new();
    }
    let mut edges: BTreeMap<(u64, Scope), BTreeMap<usize, [SimTime; 3]>> = BTreeMap::new();
    for s in &rec.stages {
        edges
            .entry((s.job, s.scope))
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
    for e in edges.values() {
        let mut by_stop: BTreeMap<SimTime, Vec<(String, f64)>> = BTreeMap::new();
        for timer in &rec.timers {
            if let (Some(a), Some(b)) = (at(e, timer.from), at(e, timer.to)) {
                let ms = if b > a { (b - a) as f64 / 1e6 } else { 0.0 };
                by_stop.entry(b).or_default().push((timer.name.clone(), ms));
            }
        }
        out.extend(by_stop.into_iter().map(|(t, timers)| LogRecord::Timing {
            t,
            prefix: rec.timing_prefix.clone(),
            timers,
        }));
    }
    out
}

/// Markers that carry cuzk's `worker=`.
fn names_a_worker(event: &str) -> bool {
    matches!(event, "GPU_PICKUP" | "GPU_START" | "GPU_END")
}

/// Each GPU bracket's worker slot on its GPU, and the most slots any GPU used.
struct Workers {
    gpu: HashMap<(u64, Scope), u32>,
    slot: HashMap<(u64, Scope), u32>,
    per_gpu: u32,
}

fn assign_workers(rec: &TraceRecorder, name: &dyn Fn(&MarkerEvent) -> String) -> Workers {
    let mut gpu: HashMap<(u64, Scope), u32> = HashMap::new();
    let mut events: Vec<(&MarkerEvent, bool)> = Vec::new();
    for m in &rec.markers {
        let event = name(m);
        if !names_a_worker(&event) {
            continue;
        }
        if let Some(g) = m.gpu {
            gpu.entry((m.job, m.scope)).or_insert(g);
        }
        events.push((m, event == "GPU_END"));
    }
    // Ends before starts at one instant: a worker handing over is free for the next.
    events.sort_by_key(|(m, is_end)| (m.t, !is_end));
    let mut slot: HashMap<(u64, Scope), u32> = HashMap::new();
    let mut busy: HashMap<u32, Vec<bool>> = HashMap::new();
    let mut per_gpu = 1;
    for (m, is_end) in events {
        let key = (m.job, m.scope);
        let g = *gpu.entry(key).or_insert(0);
        let slots = busy.entry(g).or_default();
        if is_end {
            if let Some(s) = slot.get(&key) {
                slots[*s as usize] = false;
            }
        } else if let std::collections::hash_map::Entry::Vacant(e) = slot.entry(key) {
            let s = slots.iter().position(|b| !b).unwrap_or(slots.len());
            if s == slots.len() {
                slots.push(false);
            }
            slots[s] = true;
            e.insert(s as u32);
            per_gpu = per_gpu.max(s as u32 + 1);
        }
    }
    Workers { gpu, slot, per_gpu }
}

/// The TIMELINE records of a run (one per marker), led by the worker lines when the
/// run has GPU brackets.
pub fn timeline_records(rec: &TraceRecorder) -> Vec<LogRecord> {
    let name = |m: &MarkerEvent| {
        rec.marker_names
            .get(m.marker)
            .cloned()
            .unwrap_or_else(|| format!("MARKER{}", m.marker))
    };
    let workers = assign_workers(rec, &name);
    let mut out = Vec::new();
    if !workers.slot.is_empty() {
        let used = workers.gpu.values().copied().max().unwrap_or(0) + 1;
        let gpus = used.max(rec.gpu_names.len() as u32);
        for g in 0..gpus {
            for s in 0..workers.per_gpu {
                out.push(LogRecord::WorkerStarted {
                    worker: g * workers.per_gpu + s,
                    gpu: g,
                    sub_id: s,
                });
            }
        }
    }
    let mut started: HashMap<(String, u64, Scope), SimTime> = HashMap::new();
    for m in &rec.markers {
        let event = name(m);
        let key = (m.job, m.scope);
        let mut detail = Vec::new();
        if names_a_worker(&event) {
            let g = workers.gpu.get(&key).copied().unwrap_or(0);
            let s = workers.slot.get(&key).copied().unwrap_or(0);
            detail.push(format!("worker={}", g * workers.per_gpu + s));
        }
        if let Some(p) = m.scope.partition() {
            detail.push(format!("partition={p}"));
        }
        if let Some(stage) = event.strip_suffix("_START") {
            started.insert((stage.to_string(), m.job, m.scope), m.t);
        }
        let lasted = |stage: &str| {
            let t0 = started.get(&(stage.to_string(), m.job, m.scope))?;
            Some(whole_ms(m.t.nanos().saturating_sub(t0.nanos())))
        };
        match event.as_str() {
            "GPU_END" => detail.extend(lasted("GPU").map(|ms| format!("gpu_ms={ms}"))),
            "SYNTH_END" => detail.extend(lasted("SYNTH").map(|ms| format!("synth_ms={ms}"))),
            _ => {}
        }
        out.push(LogRecord::Timeline {
            t: m.t,
            event,
            job: m.job,
            detail: detail.join(","),
        });
    }
    if !rec.markers.is_empty() {
        let mut done: BTreeMap<u64, SimTime> = BTreeMap::new();
        for s in &rec.stages {
            let t = done.entry(s.job).or_insert(s.end);
            *t = (*t).max(s.end);
        }
        out.extend(done.into_iter().map(|(job, t)| LogRecord::Timeline {
            t,
            event: JOB_DONE.into(),
            job,
            detail: String::new(),
        }));
    }
    out
}

/// The event bwsim adds at each job's completion.
pub const JOB_DONE: &str = "JOB_DONE";

/// Renders records as text, in time order (equal times: see [`LogRecord::order`], then
/// the order given).
pub fn render_log(mut records: Vec<LogRecord>) -> String {
    records.sort_by_key(LogRecord::order);
    let mut out = String::new();
    for r in &records {
        r.write_line(&mut out);
    }
    out
}

/// The whole log of a run: worker lines, markers and timing lines.
pub fn log_text(rec: &TraceRecorder) -> String {
    let mut records = timeline_records(rec);
    records.extend(timing_records(rec));
    render_log(records)
}

/// Writes the log of a run to `path` atomically.
pub fn write_timeline_log(rec: &TraceRecorder, path: &Path) -> Result<(), OutputError> {
    write_atomic(path, log_text(rec).as_bytes())
}
