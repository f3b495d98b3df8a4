//! Chrome / Perfetto trace JSON (the "Trace Event Format"): stage instances as complete
//! ("X") slices, one track per lane (GPU kernels and copies on their GPU's tracks, host
//! stages on tracks named after the stage); each GPU's `gpu_busy` brackets as async
//! ("b"/"e") slices on a track of their own; flow events ("s"/"t"/"f") linking each
//! job's stages, one flow per partition (its job-level stages, then its own); markers as
//! instant ("i") events on their own track, every rate resource (DRAM GB/s first) and every holdable resource (RAM and
//! VRAM in GiB, cores, locks: in use and waiting) as a counter ("C") track. Open it
//! in ui.perfetto.dev or chrome://tracing.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use serde_json::{Value, json};

use super::lanes::{LaneKind, assign_lanes};
use super::recorder::TraceRecorder;
use crate::engine::observer::RateKind;
use crate::model::HoldResource;
use crate::output::{OutputError, write_atomic_with};
use crate::time::SimTime;

const PID: u64 = 1;

fn us(t: SimTime) -> f64 {
    t.nanos() as f64 / 1e3
}

/// Unit of a rate resource's usage.
pub fn rate_unit(kind: RateKind) -> &'static str {
    match kind {
        RateKind::Dram | RateKind::PcieH2d | RateKind::PcieD2h | RateKind::PcieDuplex => "GB/s",
        RateKind::Pool => "threads",
        RateKind::GpuCompute => "GPU share",
    }
}

/// Unit and scale of a holdable resource's counter (memory in GiB).
fn hold_unit(r: HoldResource) -> (&'static str, f64) {
    match r {
        HoldResource::HostRam | HoldResource::Vram => ("GiB", 1.0 / (1u64 << 30) as f64),
        HoldResource::Cores => ("cores", 1.0),
        HoldResource::Lock(_) => ("held", 1.0),
    }
}

/// Writes a trace's JSON as its events are made, so that a run of many jobs never holds
/// them all as JSON values (a burst of 20,000 jobs took 3.6 GB that way). The first
/// write error is kept and returned by [`Emitter::finish`].
struct Emitter<W: Write> {
    out: W,
    first: bool,
    error: Option<io::Error>,
}

impl<W: Write> Emitter<W> {
    fn new(mut out: W) -> Self {
        let error = out.write_all(b"{\"traceEvents\":[").err();
        Self {
            out,
            first: true,
            error,
        }
    }

    fn push(&mut self, event: Value) {
        if self.error.is_some() {
            return;
        }
        let comma: &[u8] = if self.first { b"" } else { b"," };
        self.first = false;
        self.error = (self.out.write_all(comma))
            .and_then(|()| serde_json::to_writer(&mut self.out, &event).map_err(io::Error::from))
            .err();
    }

    /// Closes the document (the keys after the events, as `json!` orders them).
    fn finish(mut self, rec: &TraceRecorder) -> io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let other = json!({"scenario": rec.scenario, "generator": "bwsim"});
        write!(
            self.out,
            "],\"displayTimeUnit\":\"ms\",\"otherData\":{other}}}"
        )?;
        self.out.flush()
    }
}

/// The trace document as one JSON value (tests read it so; the file is written by
/// [`write_chrome_trace`] without holding it).
pub fn chrome_trace(rec: &TraceRecorder) -> Value {
    let mut bytes = Vec::new();
    write_trace(rec, &mut bytes).expect("writing to memory");
    serde_json::from_slice(&bytes).expect("bwsim writes valid JSON")
}

/// Writes the trace document to `out`, event by event.
fn write_trace(rec: &TraceRecorder, out: impl Write) -> io::Result<()> {
    let layout = assign_lanes(rec);
    let mut ev = Emitter::new(out);
    ev.push(json!({"ph": "M", "pid": PID, "name": "process_name",
                   "args": {"name": format!("bwsim: {}", rec.scenario)}}));
    let marker_tid = layout.lanes.len() as u64 + 1;
    for (i, lane) in layout.lanes.iter().enumerate() {
        if lane.kind == LaneKind::Bracket {
            continue; // brackets are async slices, on tracks of their own
        }
        let tid = i as u64 + 1;
        ev.push(
            json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_name",
                       "args": {"name": lane.label()}}),
        );
        ev.push(
            json!({"ph": "M", "pid": PID, "tid": tid, "name": "thread_sort_index",
                       "args": {"sort_index": tid}}),
        );
    }
    if !rec.markers.is_empty() {
        ev.push(
            json!({"ph": "M", "pid": PID, "tid": marker_tid, "name": "thread_name",
                       "args": {"name": "markers"}}),
        );
    }
    for (s, &lane) in rec.stages.iter().zip(&layout.lane_of) {
        let name = rec.stage_names.get(s.stage).map_or("?", String::as_str);
        let dur_s = (s.end - s.start) as f64 * 1e-9;
        let mut args = json!({
            "job": s.job,
            "wait_ms": (s.start - s.ready) as f64 * 1e-6,
            "standalone_ms": s.standalone_s * 1e3,
            "inflation": if s.standalone_s > 0.0 { json!(dur_s / s.standalone_s) } else { Value::Null },
        });
        if let Some(p) = s.scope.partition() {
            args["partition"] = json!(p);
        }
        if let Some(g) = s.gpu {
            args["gpu"] = json!(g);
        }
        ev.push(json!({"ph": "X", "cat": "stage", "name": name, "pid": PID,
                       "tid": lane as u64 + 1, "ts": us(s.start),
                       "dur": (s.end - s.start) as f64 / 1e3, "args": args}));
    }
    for (id, b) in layout.brackets.iter().enumerate() {
        let name = format!(
            "{} {}",
            rec.gpu_name(b.gpu),
            rec.bracket_spans
                .get(b.span)
                .map_or("bracket", |s| s.name.as_str())
        );
        let mut args = json!({"job": b.job});
        if let Some(p) = b.scope.partition() {
            args["partition"] = json!(p);
        }
        ev.push(
            json!({"ph": "b", "cat": "bracket", "name": name, "id": id, "pid": PID,
                       "ts": us(b.start), "args": args}),
        );
        ev.push(
            json!({"ph": "e", "cat": "bracket", "name": name, "id": id, "pid": PID,
                       "ts": us(b.end)}),
        );
    }
    flows(rec, &layout.lane_of, &mut ev);
    for m in &rec.markers {
        let mut args = json!({"job": m.job});
        if let Some(p) = m.scope.partition() {
            args["partition"] = json!(p);
        }
        ev.push(json!({"ph": "i", "s": "t", "cat": "marker",
                       "name": rec.marker_names.get(m.marker).map_or("?", String::as_str),
                       "pid": PID, "tid": marker_tid, "ts": us(m.t), "args": args}));
    }
    // DRAM first so it sits on top of the counter tracks.
    let mut order: Vec<usize> = (0..rec.rates.len()).collect();
    order.sort_by_key(|&i| rec.rates[i].kind != RateKind::Dram);
    for i in order {
        let r = &rec.rates[i];
        let name = format!("{} ({})", r.name, rate_unit(r.kind));
        let mut last = None;
        for s in &rec.samples {
            let v = s.usage.get(i).copied().unwrap_or(0.0);
            // A counter holds its value until the next event: emit changes only.
            if last == Some(v) {
                continue;
            }
            last = Some(v);
            ev.push(json!({"ph": "C", "pid": PID, "name": name, "ts": us(s.t),
                           "args": {rate_unit(r.kind): v}}));
        }
    }
    for s in &rec.hold_samples {
        let Some(h) = rec.holds.get(s.resource) else {
            continue;
        };
        let (unit, scale) = hold_unit(h.resource);
        ev.push(
            json!({"ph": "C", "pid": PID, "name": format!("{} ({unit})", h.name),
                       "ts": us(s.t),
                       "args": {"in use": s.in_use as f64 * scale, "waiting": s.waiting}}),
        );
    }
    if rec.dram_index().is_some() {
        let mut last = None;
        for s in &rec.samples {
            if last == Some(s.latency_slowdown) {
                continue;
            }
            last = Some(s.latency_slowdown);
            ev.push(
                json!({"ph": "C", "pid": PID, "name": "DRAM latency slowdown L(u)/L(0)",
                           "ts": us(s.t), "args": {"x": s.latency_slowdown}}),
            );
        }
    }
    ev.finish(rec)
}

/// Flow events linking a job's stages in start order: per partition, the job-level
/// stages and that partition's own (a job without partitions: one flow of its stages).
/// Each flow step binds to the stage slice it starts in.
fn flows(rec: &TraceRecorder, lane_of: &[usize], ev: &mut Emitter<impl Write>) {
    // job -> (job-level instances, partition -> its instances)
    type Chains = (Vec<usize>, BTreeMap<u32, Vec<usize>>);
    let mut jobs: BTreeMap<u64, Chains> = BTreeMap::new();
    for (i, s) in rec.stages.iter().enumerate() {
        let entry = jobs.entry(s.job).or_default();
        match s.scope.partition() {
            Some(p) => entry.1.entry(p).or_default().push(i),
            None => entry.0.push(i),
        }
    }
    let mut id = 0u64;
    for (job, (shared, parts)) in jobs {
        let chains: Vec<(Option<u32>, Vec<usize>)> = if parts.is_empty() {
            vec![(None, shared.clone())]
        } else {
            (parts.into_iter())
                .map(|(p, own)| (Some(p), shared.iter().copied().chain(own).collect()))
                .collect()
        };
        for (partition, mut chain) in chains {
            if chain.len() < 2 {
                continue;
            }
            chain.sort_by_key(|&i| (rec.stages[i].start, rec.stages[i].end, i));
            id += 1;
            let name = match partition {
                Some(p) => format!("job {job} partition {p}"),
                None => format!("job {job}"),
            };
            let last = chain.len() - 1;
            for (k, &i) in chain.iter().enumerate() {
                let ph = match k {
                    0 => "s",
                    k if k == last => "f",
                    _ => "t",
                };
                let mut e = json!({"ph": ph, "cat": "flow", "name": name, "id": id,
                                   "pid": PID, "tid": lane_of[i] as u64 + 1,
                                   "ts": us(rec.stages[i].start)});
                if ph == "f" {
                    e["bp"] = json!("e");
                }
                ev.push(e);
            }
        }
    }
}

/// Writes the trace to `path` atomically.
pub fn write_chrome_trace(rec: &TraceRecorder, path: &Path) -> Result<(), OutputError> {
    write_atomic_with(path, |tmp| {
        let file = std::fs::File::create(tmp)?;
        write_trace(rec, BufWriter::new(file))
    })
}
