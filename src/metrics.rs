//! Streaming statistics from engine events: constant memory in the number of jobs.
//!
//! The measurement window opens when the warm-up jobs have completed (at time zero when
//! there is no warm-up); time-weighted quantities (utilisations, busy fractions) are
//! integrated over the window, per-stage and per-job statistics skip warm-up jobs.

use std::collections::HashMap;

use crate::engine::{
    HoldResourceInfo, JOB_LEVEL, Observer, RateKind, RateResourceInfo, StageRecord, StageRef,
};
use crate::model::{Edge, MarkerId, Model};
use crate::time::SimTime;

/// Running sums for one stage.
#[derive(Debug, Clone, Default)]
pub struct StageAcc {
    /// Instances measured.
    pub count: u64,
    /// Sum of actual running times (start to end), seconds.
    pub actual_s: f64,
    /// Sum of standalone durations, seconds.
    pub standalone_s: f64,
    /// Sum of waits for holds (ready to start), seconds.
    pub wait_s: f64,
    /// Sum of seconds lost per limiter slot (rate resources, then DRAM latency).
    pub lost_s: Vec<f64>,
    /// Sum of hold-wait seconds per holdable that caused them.
    pub wait_by_hold: Vec<f64>,
    /// Sum of (end - ready), seconds.
    pub ready_to_end_s: f64,
}

/// A streaming metrics collector; feed it to the engine, then call [`Metrics::finish`].
pub struct Metrics<'m> {
    pub(crate) model: &'m Model,
    pub(crate) rates: Vec<RateResourceInfo>,
    pub(crate) holds: Vec<HoldResourceInfo>,
    warmup: u64,
    completions: u64,
    pub(crate) window_start: Option<SimTime>,
    pub(crate) end: SimTime,
    last: SimTime,
    pub(crate) measured_jobs: u64,
    /// Jobs completed after the window opened (throughput's numerator).
    pub(crate) window_completions: u64,
    pub(crate) response_sum: f64,
    pub(crate) response_sq: f64,
    pub(crate) response_max: f64,
    pub(crate) stages: Vec<StageAcc>,
    usage: Vec<f64>,
    pub(crate) usage_integral: Vec<f64>,
    pub(crate) usage_peak: Vec<f64>,
    slowdown: f64,
    pub(crate) slowdown_integral: f64,
    pub(crate) slowdown_max: f64,
    in_use: Vec<u64>,
    waiting: usize,
    pub(crate) in_use_integral: Vec<f64>,
    pub(crate) in_use_peak: Vec<u64>,
    pub(crate) waiting_integral: f64,
    kernels_running: Vec<u32>,
    pub(crate) kernel_busy: Vec<f64>,
    brackets_open: Vec<u32>,
    pub(crate) bracket_busy: Vec<f64>,
    open_spans: HashMap<(usize, u64, u32), (u32, SimTime)>,
    pub(crate) span_sum: Vec<f64>,
    pub(crate) span_count: Vec<u64>,
    /// Seconds of gpu_busy spans closed by measured jobs (summed over all spans).
    pub(crate) gpu_span_total_s: f64,
    spans_from: Vec<Vec<usize>>,
    spans_to: Vec<Vec<usize>>,
    in_system: u64,
    pub(crate) in_system_integral: f64,
    gpu_kernel_stage: Vec<bool>,
}

impl<'m> Metrics<'m> {
    /// A collector for one run of `model`.
    pub fn new(model: &'m Model) -> Self {
        let ngpu = model.hardware.gpus.len().max(1);
        let nm = model.instrumentation.markers.len();
        let mut spans_from = vec![Vec::new(); nm];
        let mut spans_to = vec![Vec::new(); nm];
        for (i, s) in model.instrumentation.spans.iter().enumerate() {
            spans_from[s.from].push(i);
            spans_to[s.to].push(i);
        }
        let warmup = model.arrivals.warmup_jobs;
        Self {
            model,
            rates: Vec::new(),
            holds: Vec::new(),
            warmup,
            completions: 0,
            window_start: (warmup == 0).then_some(SimTime::ZERO),
            end: SimTime::ZERO,
            last: SimTime::ZERO,
            measured_jobs: 0,
            window_completions: 0,
            response_sum: 0.0,
            response_sq: 0.0,
            response_max: 0.0,
            stages: vec![StageAcc::default(); model.workload.stages.len()],
            usage: Vec::new(),
            usage_integral: Vec::new(),
            usage_peak: Vec::new(),
            slowdown: 1.0,
            slowdown_integral: 0.0,
            slowdown_max: 1.0,
            in_use: Vec::new(),
            waiting: 0,
            in_use_integral: Vec::new(),
            in_use_peak: Vec::new(),
            waiting_integral: 0.0,
            kernels_running: vec![0; ngpu],
            kernel_busy: vec![0.0; ngpu],
            brackets_open: vec![0; ngpu],
            bracket_busy: vec![0.0; ngpu],
            open_spans: HashMap::new(),
            span_sum: vec![0.0; model.instrumentation.spans.len()],
            span_count: vec![0; model.instrumentation.spans.len()],
            gpu_span_total_s: 0.0,
            spans_from,
            spans_to,
            in_system: 0,
            in_system_integral: 0.0,
            gpu_kernel_stage: model.workload.stages.iter().map(|s| s.gpu_kernel).collect(),
        }
    }

    /// Integrates the current state over [last, t] when inside the window.
    fn advance(&mut self, t: SimTime) {
        if let Some(w) = self.window_start {
            let from = self.last.max(w);
            if t > from {
                let dt = (t - from) as f64 * 1e-9;
                for (i, u) in self.usage.iter().enumerate() {
                    self.usage_integral[i] += u * dt;
                }
                self.slowdown_integral += self.slowdown * dt;
                for (i, &n) in self.in_use.iter().enumerate() {
                    self.in_use_integral[i] += n as f64 * dt;
                }
                self.waiting_integral += self.waiting as f64 * dt;
                for g in 0..self.kernels_running.len() {
                    if self.kernels_running[g] > 0 {
                        self.kernel_busy[g] += dt;
                    }
                    if self.brackets_open[g] > 0 {
                        self.bracket_busy[g] += dt;
                    }
                }
                self.in_system_integral += self.in_system as f64 * dt;
            }
        }
        self.last = self.last.max(t);
    }

    fn in_window(&self) -> bool {
        self.window_start.is_some()
    }

    fn measured(&self, job: u64) -> bool {
        job >= self.warmup
    }

    /// Length of the measurement window, seconds.
    pub fn window_s(&self) -> f64 {
        match self.window_start {
            Some(w) if self.end > w => (self.end - w) as f64 * 1e-9,
            _ => 0.0,
        }
    }

    fn gpu_index(&self, gpu: Option<u32>) -> usize {
        (gpu.unwrap_or(0) as usize).min(self.kernels_running.len() - 1)
    }

    fn partition_key(&self, marker: MarkerId, partition: u32) -> u32 {
        let stage = self.model.instrumentation.markers[marker].stage;
        if self.model.workload.stages[stage].per_partition {
            partition
        } else {
            JOB_LEVEL
        }
    }
}

impl Observer for Metrics<'_> {
    fn resources(&mut self, rates: &[RateResourceInfo], holds: &[HoldResourceInfo]) {
        self.rates = rates.to_vec();
        self.holds = holds.to_vec();
        let nr = rates.len();
        self.usage = vec![0.0; nr];
        self.usage_integral = vec![0.0; nr];
        self.usage_peak = vec![0.0; nr];
        for s in &mut self.stages {
            s.lost_s = vec![0.0; nr + 1];
            s.wait_by_hold = vec![0.0; holds.len()];
        }
        let nh = holds.len();
        self.in_use = vec![0; nh];
        self.in_use_integral = vec![0.0; nh];
        self.in_use_peak = vec![0; nh];
    }

    fn job_arrived(&mut self, t: SimTime, _job: u64) {
        self.advance(t);
        self.in_system += 1;
    }

    fn stage_edge(&mut self, t: SimTime, stage: StageRef, edge: Edge, gpu: Option<u32>) {
        if !self.gpu_kernel_stage[stage.stage] || edge == Edge::Ready {
            return;
        }
        self.advance(t);
        let g = self.gpu_index(gpu);
        match edge {
            Edge::Start => self.kernels_running[g] += 1,
            Edge::End => self.kernels_running[g] -= 1,
            Edge::Ready => {}
        }
    }

    fn stage_finished(&mut self, r: &StageRecord) {
        if !self.measured(r.stage_ref.job) {
            return;
        }
        let acc = &mut self.stages[r.stage_ref.stage];
        acc.count += 1;
        acc.actual_s += (r.end - r.start) as f64 * 1e-9;
        acc.standalone_s += r.standalone_s;
        let wait = (r.start - r.ready) as f64 * 1e-9;
        acc.wait_s += wait;
        acc.ready_to_end_s += (r.end - r.ready) as f64 * 1e-9;
        for (a, l) in acc.lost_s.iter_mut().zip(&r.lost_s) {
            *a += l;
        }
        if let Some(h) = r.blocked_on {
            acc.wait_by_hold[h] += wait;
        }
    }

    fn marker(&mut self, t: SimTime, marker: MarkerId, job: u64, partition: u32, gpu: Option<u32>) {
        self.advance(t);
        let key = self.partition_key(marker, partition);
        let g = self.gpu_index(gpu) as u32;
        for i in 0..self.spans_from[marker].len() {
            let span = self.spans_from[marker][i];
            if self.open_spans.insert((span, job, key), (g, t)).is_none()
                && self.model.instrumentation.spans[span].gpu_busy
            {
                self.brackets_open[g as usize] += 1;
            }
        }
        for i in 0..self.spans_to[marker].len() {
            let span = self.spans_to[marker][i];
            let mut closed: Vec<(u32, SimTime)> = Vec::new();
            if let Some(v) = self.open_spans.remove(&(span, job, key)) {
                closed.push(v);
            } else if key == JOB_LEVEL {
                // A per-partition span closed by a job-level marker closes them all.
                let keys: Vec<_> = self
                    .open_spans
                    .keys()
                    .filter(|k| k.0 == span && k.1 == job)
                    .copied()
                    .collect();
                for k in keys {
                    closed.extend(self.open_spans.remove(&k));
                }
            }
            for (g, opened) in closed {
                if self.model.instrumentation.spans[span].gpu_busy {
                    self.brackets_open[g as usize] -= 1;
                }
                if self.measured(job) {
                    let len = (t - opened) as f64 * 1e-9;
                    self.span_sum[span] += len;
                    self.span_count[span] += 1;
                    if self.model.instrumentation.spans[span].gpu_busy {
                        self.gpu_span_total_s += len;
                    }
                }
            }
        }
    }

    fn job_finished(&mut self, t: SimTime, job: u64, arrived: SimTime) {
        self.advance(t);
        self.in_system -= 1;
        self.completions += 1;
        // Throughput counts completions inside the time window; response statistics count
        // the same jobs as stage statistics do (every job after the warm-up ones).
        if self.in_window() {
            self.window_completions += 1;
        }
        if self.measured(job) {
            self.measured_jobs += 1;
            let r = (t - arrived) as f64 * 1e-9;
            self.response_sum += r;
            self.response_sq += r * r;
            self.response_max = self.response_max.max(r);
        }
        if self.window_start.is_none() && self.completions >= self.warmup {
            self.window_start = Some(t);
        }
        self.end = t;
    }

    fn rates_changed(&mut self, t: SimTime, usage: &[f64], latency_slowdown: f64) {
        self.advance(t);
        self.usage.copy_from_slice(usage);
        self.slowdown = latency_slowdown;
        if self.in_window() {
            for (p, &u) in self.usage_peak.iter_mut().zip(usage) {
                *p = p.max(u);
            }
            self.slowdown_max = self.slowdown_max.max(latency_slowdown);
        }
    }

    fn hold_changed(&mut self, t: SimTime, resource: usize, in_use: u64, waiting: usize) {
        self.advance(t);
        self.in_use[resource] = in_use;
        self.waiting = waiting;
        self.in_use_peak[resource] = self.in_use_peak[resource].max(in_use);
    }

    fn finished(&mut self, t: SimTime) {
        self.advance(t);
        self.end = self.end.max(t);
    }
}

impl Metrics<'_> {
    /// Mean utilisation of each rate resource over the window (0..1).
    pub fn rate_utilisation(&self) -> Vec<f64> {
        let w = self.window_s();
        self.rates
            .iter()
            .zip(&self.usage_integral)
            .map(|(r, i)| {
                if w > 0.0 && r.capacity > 0.0 {
                    i / w / r.capacity
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Mean occupancy of each holdable (in use / capacity) over the window (0..1).
    pub fn hold_occupancy(&self) -> Vec<f64> {
        let w = self.window_s();
        self.holds
            .iter()
            .zip(&self.in_use_integral)
            .map(|(h, i)| {
                if w > 0.0 && h.capacity > 0 {
                    i / w / h.capacity as f64
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Seconds measured stages waited because of each holdable instance, over all stages.
    pub fn hold_wait_s(&self) -> Vec<f64> {
        let mut total = vec![0.0; self.holds.len()];
        for acc in &self.stages {
            for (t, w) in total.iter_mut().zip(&acc.wait_by_hold) {
                *t += w;
            }
        }
        total
    }

    /// Index of the DRAM rate resource.
    pub fn dram_index(&self) -> usize {
        self.rates
            .iter()
            .position(|r| r.kind == RateKind::Dram)
            .unwrap_or(0)
    }
}
