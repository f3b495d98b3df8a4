//! Streaming statistics from engine events: constant memory in the number of jobs.
//!
//! The measurement window opens when the warm-up jobs have completed (at time zero when
//! there is no warm-up); time-weighted quantities (utilisations, busy fractions) are
//! integrated over the window, per-stage and per-job statistics skip warm-up jobs.
//! [`Metrics::finish`] hands the totals over as an immutable [`RunStats`].

use std::collections::BTreeMap;

use super::bracket_chain::BracketChains;
use super::bracket_measures::{self, Bracket, BracketMeasures};
use super::few;
use super::nonzero::NonZero;
use super::run_stats::{
    DramTotals, GpuTotals, HoldTotals, RateTotals, RunStats, RunTotals, SpanTotals, StageTotals,
    UsableTotals, WindowTotals,
};
use super::sampled::SampleWindows;
use crate::engine::{
    HoldResourceInfo, Loss, Observer, RateKind, RateResourceInfo, RunSummary, Scope, StageRecord,
    StageRef,
};
use crate::model::{Edge, MarkerId, Model};
use crate::time::SimTime;

/// Where the clock stands and which jobs count.
struct Clock {
    warmup: u64,
    completions: u64,
    window_start: Option<SimTime>,
    end: SimTime,
    last: SimTime,
}

/// Jobs counted over the window and their response times.
#[derive(Default)]
struct Jobs {
    measured: u64,
    window_completions: u64,
    response_sum: f64,
    response_max: f64,
    in_system: u64,
    in_system_integral: f64,
}

/// Rate resources: current draw, its integral and peak; DRAM latency slowdown.
struct Rates {
    info: Vec<RateResourceInfo>,
    usage: Vec<f64>,
    /// Entries of `usage` that are not zero.
    drawn: NonZero,
    usage_integral: Vec<f64>,
    usage_peak: Vec<f64>,
    slowdown: f64,
    slowdown_integral: f64,
    slowdown_max: f64,
    /// `usage` and `slowdown` were reported inside the window, so the peaks hold them.
    in_peaks: bool,
}

/// DRAM's usable capacity as it moves with the streams drawing on it (tracked only when
/// DRAM loses efficiency per stream; otherwise it is the nominal capacity throughout).
#[derive(Default)]
struct Usable {
    /// DRAM loses efficiency per stream: the engine reports the usable capacity.
    tracked: bool,
    /// Index of DRAM among the rate resources.
    dram: Option<usize>,
    streams: u32,
    gbps: f64,
    streams_integral: f64,
    gbps_integral: f64,
    /// Integral of DRAM draw / usable capacity.
    share_integral: f64,
}

/// Holdable instances: units in use, their integral and peak.
#[derive(Default)]
struct Holds {
    info: Vec<HoldResourceInfo>,
    in_use: Vec<u64>,
    /// Entries of `in_use` that are not zero.
    used: NonZero,
    in_use_integral: Vec<f64>,
    in_use_peak: Vec<u64>,
}

/// Per GPU: kernels running, with their busy integral, and the gpu_busy brackets.
struct Gpus {
    kernels_running: Vec<u32>,
    kernel_busy: Vec<f64>,
    /// Every closed gpu_busy bracket of any job, for [`bracket_measures::measure`].
    brackets: Vec<Bracket>,
    kernel_stage: Vec<bool>,
    /// Some stage runs a GPU kernel (else stage edges change nothing here).
    any_kernel_stage: bool,
    /// Kernels running, over all GPUs (zero: nothing to integrate).
    activity: u64,
    /// The nvidia-smi view: sample windows in which any kernel ran.
    sampled: Vec<SampleWindows>,
}

impl Gpus {
    /// Adds `dt` (the seconds of [from, t]) to the busy time of each GPU running a kernel
    /// (`w`: the window start). Kept out of line: runs with no GPU activity (queueing
    /// models) then integrate with a smaller function.
    #[inline(never)]
    fn integrate(&mut self, from: SimTime, t: SimTime, w: SimTime, dt: f64) {
        for i in 0..self.kernels_running.len() {
            if self.kernels_running[i] > 0 {
                self.kernel_busy[i] += dt;
                let since = |x: SimTime| (x - w) as f64 * 1e-9;
                self.sampled[i].busy(since(from), since(t));
            }
        }
    }
}

/// Instrumentation spans: which markers open and close them, which are open, their sums.
struct Spans {
    from: Vec<Vec<usize>>,
    to: Vec<Vec<usize>>,
    /// (span, job, scope key) -> (GPU, opened at). Ordered, so spans closed together are
    /// summed in the same order in every process (a HashMap's order is random). The GPU
    /// is None while not known: a marker fired before its partition is bound to a GPU
    /// names none, and the bracket is on the GPU the partition then runs on.
    open: BTreeMap<(usize, u64, Scope), (Option<u32>, SimTime)>,
    /// Open gpu_busy brackets whose GPU is not known yet (none: binding is skipped).
    unbound: usize,
    totals: Vec<SpanTotals>,
    gpu_busy_total_s: f64,
}

/// A streaming metrics collector; feed it to the engine, then call [`Metrics::finish`].
pub struct Metrics<'m> {
    model: &'m Model,
    clock: Clock,
    jobs: Jobs,
    stages: Vec<StageTotals>,
    rates: Rates,
    usable: Usable,
    holds: Holds,
    gpus: Gpus,
    spans: Spans,
    brackets: BracketChains,
}

impl<'m> Metrics<'m> {
    /// A collector for one run of `model`.
    pub fn new(model: &'m Model) -> Self {
        let ngpu = model.hardware.gpus.len().max(1);
        let nm = model.instrumentation.markers.len();
        let mut from = vec![Vec::new(); nm];
        let mut to = vec![Vec::new(); nm];
        for (i, s) in model.instrumentation.spans.iter().enumerate() {
            from[s.from].push(i);
            to[s.to].push(i);
        }
        let warmup = model.arrivals.warmup_jobs;
        Self {
            model,
            clock: Clock {
                warmup,
                completions: 0,
                window_start: (warmup == 0).then_some(SimTime::ZERO),
                end: SimTime::ZERO,
                last: SimTime::ZERO,
            },
            jobs: Jobs::default(),
            stages: vec![StageTotals::default(); model.workload.stages.len()],
            rates: Rates {
                info: Vec::new(),
                usage: Vec::new(),
                drawn: NonZero::default(),
                usage_integral: Vec::new(),
                usage_peak: Vec::new(),
                slowdown: 1.0,
                slowdown_integral: 0.0,
                slowdown_max: 1.0,
                in_peaks: false,
            },
            usable: Usable {
                tracked: model.hardware.dram.efficiency_loss_per_stream > 0.0,
                gbps: model.hardware.dram.capacity_gbps,
                ..Usable::default()
            },
            holds: Holds::default(),
            gpus: Gpus {
                kernels_running: vec![0; ngpu],
                kernel_busy: vec![0.0; ngpu],
                brackets: Vec::new(),
                kernel_stage: model.workload.stages.iter().map(|s| s.gpu_kernel).collect(),
                any_kernel_stage: model.workload.stages.iter().any(|s| s.gpu_kernel),
                activity: 0,
                sampled: vec![SampleWindows::new(model.instrumentation.smi_period_s()); ngpu],
            },
            spans: Spans {
                from,
                to,
                open: BTreeMap::new(),
                unbound: 0,
                totals: vec![SpanTotals::default(); model.instrumentation.spans.len()],
                gpu_busy_total_s: 0.0,
            },
            brackets: BracketChains::new(model),
        }
    }

    /// Integrates the current state over [last, t] when inside the window. Entries that
    /// are zero add nothing and are skipped (the sums come out bit for bit the same).
    #[inline]
    fn advance(&mut self, t: SimTime) {
        // Most calls come at the time of the last one: nothing to integrate, and the
        // clock stays.
        if t > self.clock.last {
            self.advance_past(t);
        }
    }

    /// [`Metrics::advance`] to a time past the last one.
    #[inline(never)]
    fn advance_past(&mut self, t: SimTime) {
        if let Some(w) = self.clock.window_start {
            let from = self.clock.last.max(w);
            if t > from {
                self.integrate(from, t, w);
            }
        }
        self.clock.last = t;
    }

    /// Adds the current state times (t - from) to the integrals (`w`: the window start).
    #[inline]
    fn integrate(&mut self, from: SimTime, t: SimTime, w: SimTime) {
        let dt = (t - from) as f64 * 1e-9;
        let r = &mut self.rates;
        r.drawn.for_each(|i| r.usage_integral[i] += r.usage[i] * dt);
        r.slowdown_integral += r.slowdown * dt;
        let u = &mut self.usable;
        if u.tracked && u.gbps > 0.0 {
            let drawn = u.dram.map_or(0.0, |d| r.usage[d]);
            u.streams_integral += f64::from(u.streams) * dt;
            u.gbps_integral += u.gbps * dt;
            u.share_integral += drawn / u.gbps * dt;
        }
        let h = &mut self.holds;
        h.used
            .for_each(|i| h.in_use_integral[i] += h.in_use[i] as f64 * dt);
        if self.gpus.activity > 0 {
            self.gpus.integrate(from, t, w, dt);
        }
        self.jobs.in_system_integral += self.jobs.in_system as f64 * dt;
    }

    /// Holds a newly reported draw and latency slowdown (and their peaks, inside the
    /// window). Out of line: most reports repeat the draw held, and return before this.
    #[inline(never)]
    fn store_rates(&mut self, usage: &[f64], latency_slowdown: f64) {
        self.rates.usage.copy_from_slice(usage);
        for (i, &u) in usage.iter().enumerate() {
            self.rates.drawn.set(i, u != 0.0);
        }
        self.rates.slowdown = latency_slowdown;
        if self.in_window() {
            for (p, &u) in self.rates.usage_peak.iter_mut().zip(usage) {
                *p = p.max(u);
            }
            self.rates.slowdown_max = self.rates.slowdown_max.max(latency_slowdown);
        }
        self.rates.in_peaks = self.in_window();
    }

    fn in_window(&self) -> bool {
        self.clock.window_start.is_some()
    }

    fn measured(&self, job: u64) -> bool {
        job >= self.clock.warmup
    }

    /// Length of the measurement window, seconds.
    fn window_s(&self) -> f64 {
        match self.clock.window_start {
            Some(w) if self.clock.end > w => (self.clock.end - w) as f64 * 1e-9,
            _ => 0.0,
        }
    }

    /// Both readings of the gpu_busy brackets over the window; a bracket still open at
    /// the end counts until the end.
    fn bracket_measures(&self) -> BracketMeasures {
        let end = self.clock.end;
        let still_open = (self.spans.open.iter())
            .filter(|((span, ..), _)| self.model.instrumentation.spans[*span].gpu_busy)
            .map(|(_, &(gpu, opened))| Bracket {
                // Never bound: on GPU 0, as the TIMELINE log names it.
                gpu: self.gpu_index(gpu) as u32,
                start: opened.as_secs(),
                end: end.max(opened).as_secs(),
            });
        let all: Vec<Bracket> = self
            .gpus
            .brackets
            .iter()
            .copied()
            .chain(still_open)
            .collect();
        let start = self.clock.window_start.map_or(end, |w| w.min(end));
        bracket_measures::measure(
            &all,
            (start.as_secs(), end.as_secs()),
            self.gpus.kernels_running.len(),
        )
    }

    fn gpu_index(&self, gpu: Option<u32>) -> usize {
        (gpu.unwrap_or(0) as usize).min(self.gpus.kernels_running.len() - 1)
    }

    /// Partition `scope` of `job` is bound to GPU `g`: its brackets opened before are
    /// that GPU's.
    #[inline(never)]
    fn bind(&mut self, job: u64, scope: Scope, g: u32) {
        let g = self.gpu_index(Some(g)) as u32;
        for span in 0..self.model.instrumentation.spans.len() {
            if !self.model.instrumentation.spans[span].gpu_busy {
                continue;
            }
            if let Some((gpu @ None, _)) = self.spans.open.get_mut(&(span, job, scope)) {
                *gpu = Some(g);
                self.spans.unbound -= 1;
            }
        }
    }

    fn scope_key(&self, marker: MarkerId, scope: Scope) -> Scope {
        let stage = self.model.instrumentation.markers[marker].stage;
        if self.model.workload.stages[stage].per_partition {
            scope
        } else {
            Scope::Job
        }
    }

    /// Closes the spans `marker` (fired on `gpu`) ends for this job and partition key.
    fn close_spans(
        &mut self,
        t: SimTime,
        marker: MarkerId,
        job: u64,
        key: Scope,
        gpu: Option<u32>,
    ) {
        for i in 0..self.spans.to[marker].len() {
            let span = self.spans.to[marker][i];
            let mut closed: Vec<(Scope, (Option<u32>, SimTime))> = Vec::new();
            if let Some(v) = self.spans.open.remove(&(span, job, key)) {
                closed.push((key, v));
            } else if key == Scope::Job {
                // A per-partition span closed by a job-level marker closes them all.
                let keys: Vec<_> = self
                    .spans
                    .open
                    .keys()
                    .filter(|k| k.0 == span && k.1 == job)
                    .copied()
                    .collect();
                for k in keys {
                    closed.extend(self.spans.open.remove(&k).map(|v| (k.2, v)));
                }
            }
            let gpu_busy = self.model.instrumentation.spans[span].gpu_busy;
            for (scope, (g, opened)) in closed {
                if gpu_busy {
                    self.spans.unbound -= usize::from(g.is_none());
                    // Still unbound: it ran on the GPU its closing marker fired on.
                    self.gpus.brackets.push(Bracket {
                        gpu: self.gpu_index(g.or(gpu)) as u32,
                        start: opened.as_secs(),
                        end: t.as_secs(),
                    });
                }
                if self.measured(job) {
                    let len = (t - opened) as f64 * 1e-9;
                    self.spans.totals[span].sum_s += len;
                    self.spans.totals[span].count += 1;
                    if gpu_busy {
                        self.spans.gpu_busy_total_s += len;
                        self.brackets.closed(span, job, scope, opened, t);
                    }
                }
            }
        }
    }

    /// Hands the totals over; `summary` is what the engine returned for the same run.
    pub fn finish(self, summary: &RunSummary) -> RunStats {
        let window = WindowTotals {
            window_s: self.window_s(),
            completions: self.jobs.window_completions,
            measured_jobs: self.jobs.measured,
            response_sum_s: self.jobs.response_sum,
            response_max_s: self.jobs.response_max,
        };
        let sampled_busy_s = (self.gpus.sampled.iter())
            .map(|s| s.busy_s(window.window_s))
            .collect();
        let brackets = self.bracket_measures();
        let mut holds: Vec<HoldTotals> = (self.holds.info.into_iter())
            .zip(self.holds.in_use_integral)
            .zip(self.holds.in_use_peak)
            .map(|((info, in_use_integral), peak)| HoldTotals {
                info,
                in_use_integral,
                peak,
                wait_s: 0.0,
            })
            .collect();
        for acc in &self.stages {
            for (h, w) in holds.iter_mut().zip(&acc.wait_by_hold_s) {
                h.wait_s += w;
            }
        }
        let dram_index = self
            .rates
            .info
            .iter()
            .position(|r| r.kind == RateKind::Dram);
        let rates = (self.rates.info.into_iter())
            .zip(self.rates.usage_integral)
            .zip(self.rates.usage_peak)
            .map(|((info, usage_integral), peak)| RateTotals {
                info,
                usage_integral,
                peak,
            })
            .collect();
        RunStats {
            run: RunTotals {
                jobs_completed: summary.jobs_completed,
                end_s: summary.end.as_secs(),
                events: summary.events,
            },
            window,
            stages: self.stages,
            gpu: GpuTotals {
                kernel_busy_s: self.gpus.kernel_busy,
                brackets,
                bracketed_span_total_s: self.spans.gpu_busy_total_s,
                sampled_busy_s,
                spans: self.spans.totals,
                gap: self.brackets.finish(),
            },
            dram: DramTotals {
                rate_index: dram_index,
                slowdown_integral: self.rates.slowdown_integral,
                slowdown_max: self.rates.slowdown_max,
                usable: self.usable.tracked.then_some(UsableTotals {
                    gbps_integral: self.usable.gbps_integral,
                    streams_integral: self.usable.streams_integral,
                    share_integral: self.usable.share_integral,
                }),
            },
            rates,
            holds,
            in_system_integral: self.jobs.in_system_integral,
            stalled: summary.stalled,
        }
    }
}

impl Observer for Metrics<'_> {
    fn resources(&mut self, rates: &[RateResourceInfo], holds: &[HoldResourceInfo]) {
        let nr = rates.len();
        self.rates.info = rates.to_vec();
        self.rates.usage = vec![0.0; nr];
        self.rates.drawn = NonZero::new(nr);
        self.rates.usage_integral = vec![0.0; nr];
        self.rates.usage_peak = vec![0.0; nr];
        self.rates.in_peaks = false;
        self.usable.dram = rates.iter().position(|r| r.kind == RateKind::Dram);
        for s in &mut self.stages {
            s.lost = Loss::zero(nr);
            s.wait_by_hold_s = vec![0.0; holds.len()];
        }
        self.brackets.resources(holds);
        let nh = holds.len();
        self.holds = Holds {
            info: holds.to_vec(),
            in_use: vec![0; nh],
            used: NonZero::new(nh),
            in_use_integral: vec![0.0; nh],
            in_use_peak: vec![0; nh],
        };
    }

    fn job_arrived(&mut self, t: SimTime, _job: u64) {
        self.advance(t);
        self.jobs.in_system += 1;
    }

    fn stage_edge(&mut self, t: SimTime, stage: StageRef, edge: Edge, gpu: Option<u32>) {
        if edge == Edge::Start
            && let Some(g) = gpu
            && self.spans.unbound > 0
        {
            self.bind(stage.job, stage.scope, g);
        }
        if edge == Edge::Ready
            || !self.gpus.any_kernel_stage
            || !self.gpus.kernel_stage[stage.stage]
        {
            return;
        }
        self.advance(t);
        let g = self.gpu_index(gpu);
        match edge {
            Edge::Start => {
                self.gpus.kernels_running[g] += 1;
                self.gpus.activity += 1;
            }
            Edge::End => {
                self.gpus.kernels_running[g] -= 1;
                self.gpus.activity -= 1;
            }
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
        few::add_each(&mut acc.lost.by_rate, &r.lost.by_rate);
        acc.lost.dram_latency += r.lost.dram_latency;
        if let Some(h) = r.blocked_on {
            acc.wait_by_hold_s[h] += wait;
        }
        self.brackets.stage_finished(r);
    }

    fn marker(&mut self, t: SimTime, marker: MarkerId, job: u64, scope: Scope, gpu: Option<u32>) {
        self.advance(t);
        let key = self.scope_key(marker, scope);
        // On one GPU every bracket is that GPU's, bound or not.
        let g = match gpu {
            None if self.gpus.kernels_running.len() > 1 => None,
            _ => Some(self.gpu_index(gpu) as u32),
        };
        for i in 0..self.spans.from[marker].len() {
            let span = self.spans.from[marker][i];
            // Opened again before it closed: it counts from now, once.
            let was = self.spans.open.insert((span, job, key), (g, t));
            if self.model.instrumentation.spans[span].gpu_busy {
                self.spans.unbound += usize::from(g.is_none());
                self.spans.unbound -= usize::from(was.is_some_and(|(w, _)| w.is_none()));
            }
        }
        self.close_spans(t, marker, job, key, gpu);
    }

    fn job_finished(&mut self, t: SimTime, job: u64, arrived: SimTime) {
        self.advance(t);
        self.jobs.in_system -= 1;
        self.clock.completions += 1;
        // Throughput counts completions inside the time window; response statistics count
        // the same jobs as stage statistics do (every job after the warm-up ones).
        if self.in_window() {
            self.jobs.window_completions += 1;
        }
        if self.measured(job) {
            self.jobs.measured += 1;
            let r = (t - arrived) as f64 * 1e-9;
            self.jobs.response_sum += r;
            self.jobs.response_max = self.jobs.response_max.max(r);
        }
        if self.clock.window_start.is_none() && self.clock.completions >= self.clock.warmup {
            self.clock.window_start = Some(t);
        }
        self.clock.end = t;
    }

    #[inline(always)]
    fn rates_changed(&mut self, t: SimTime, usage: &[f64], latency_slowdown: f64) {
        self.advance(t);
        // Most re-solves report the draw already held (a PS link is busy at the same
        // rate for any number of transfers). Once the peaks hold it too, or before the
        // window opens, the steps below would store the same bits and leave every max
        // as it is.
        let r = &self.rates;
        if (r.in_peaks || !self.in_window())
            && r.slowdown.to_bits() == latency_slowdown.to_bits()
            && few::same_bits(&r.usage, usage)
        {
            return;
        }
        self.store_rates(usage, latency_slowdown);
    }

    fn dram_usable(&mut self, t: SimTime, streams: u32, usable_gbps: f64) {
        self.advance(t);
        self.usable.streams = streams;
        self.usable.gbps = usable_gbps;
    }

    fn hold_changed(&mut self, t: SimTime, resource: usize, in_use: u64, _waiting: usize) {
        self.advance(t);
        self.holds.in_use[resource] = in_use;
        self.holds.used.set(resource, in_use != 0);
        self.holds.in_use_peak[resource] = self.holds.in_use_peak[resource].max(in_use);
    }

    fn finished(&mut self, t: SimTime) {
        self.advance(t);
        self.clock.end = self.clock.end.max(t);
    }
}
