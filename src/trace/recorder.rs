//! [`TraceRecorder`]: an [`Observer`] that keeps one run's history (stage instances,
//! instrumentation markers, rate samples) for the timeline plot and the exporters.

use crate::engine::observer::{HoldResourceInfo, RateKind, RateResourceInfo};
use crate::engine::{Observer, Scope, StageRecord};
use crate::model::{MarkerId, Model, StageId, Timer};
use crate::time::SimTime;

/// One finished stage instance.
#[derive(Debug, Clone, PartialEq)]
pub struct StageInstance {
    /// Job number.
    pub job: u64,
    /// Once per job, or which partition.
    pub scope: Scope,
    /// Stage index in the model.
    pub stage: StageId,
    /// Dependencies done.
    pub ready: SimTime,
    /// Holds acquired, work began.
    pub start: SimTime,
    /// Finished.
    pub end: SimTime,
    /// GPU it was bound to.
    pub gpu: Option<u32>,
    /// Sampled standalone duration, seconds.
    pub standalone_s: f64,
}

/// An instrumentation marker as it fired.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerEvent {
    /// When.
    pub t: SimTime,
    /// Which marker (index into [`TraceRecorder::marker_names`]).
    pub marker: MarkerId,
    /// Job.
    pub job: u64,
    /// Once per job, or which partition.
    pub scope: Scope,
    /// GPU, if the stage was bound to one.
    pub gpu: Option<u32>,
}

/// Draw on every rate resource from `t` until the next sample.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSample {
    /// When the rates took these values.
    pub t: SimTime,
    /// Per rate resource, in [`TraceRecorder::rates`] order (GB/s, threads, GPU share).
    pub usage: Vec<f64>,
    /// DRAM latency slowdown L(u)/L(0).
    pub latency_slowdown: f64,
    /// DRAM's usable capacity, GB/s, when it loses efficiency per stream (None: the
    /// nominal capacity is usable).
    pub dram_usable_gbps: Option<f64>,
}

/// Use and queue of a holdable resource from `t` until its next sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HoldSample {
    /// When.
    pub t: SimTime,
    /// Which resource (index into [`TraceRecorder::holds`]).
    pub resource: usize,
    /// Units held (cores, bytes, lock units).
    pub in_use: u64,
    /// Stage instances queued for it.
    pub waiting: usize,
}

/// What a stage does, for drawing it: GPU work goes on its GPU's lanes, the rest on
/// CPU lanes named after the stage (even when a GPU worker runs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StageKind {
    /// GPU kernels (counts toward the true duty cycle).
    Kernel,
    /// A copy over the GPU's PCIe link.
    Copy,
    /// Host work.
    #[default]
    Host,
}

impl StageKind {
    /// The kind of a model stage.
    pub fn of(stage: &crate::model::Stage) -> StageKind {
        use crate::model::RateTarget;
        let copies = (stage.demands.iter())
            .any(|d| matches!(d.target, RateTarget::PcieH2d | RateTarget::PcieD2h));
        if stage.gpu_kernel {
            StageKind::Kernel
        } else if copies || stage.staged_copy.is_some() {
            StageKind::Copy
        } else {
            StageKind::Host
        }
    }

    /// Kernels and copies run on the GPU (or its link).
    pub fn on_gpu(self) -> bool {
        self != StageKind::Host
    }
}

/// A `gpu_busy` span of the model: the markers that open and close a GPU bracket.
#[derive(Debug, Clone, PartialEq)]
pub struct BracketSpan {
    /// Span name, e.g. "GPU".
    pub name: String,
    /// Opening marker.
    pub from: MarkerId,
    /// Closing marker.
    pub to: MarkerId,
}

/// The history of one run.
#[derive(Debug, Clone, Default)]
pub struct TraceRecorder {
    /// Scenario name.
    pub scenario: String,
    /// Stage names by [`StageId`].
    pub stage_names: Vec<String>,
    /// GPU names by index.
    pub gpu_names: Vec<String>,
    /// Marker names by [`MarkerId`] (the model's `instrumentation.markers`).
    pub marker_names: Vec<String>,
    /// Rate resources as the engine numbers them.
    pub rates: Vec<RateResourceInfo>,
    /// Holdable resources as the engine numbers them.
    pub holds: Vec<HoldResourceInfo>,
    /// Finished stage instances, in finishing order.
    pub stages: Vec<StageInstance>,
    /// Markers in firing order.
    pub markers: Vec<MarkerEvent>,
    /// Rate samples, one per distinct time.
    pub samples: Vec<RateSample>,
    /// Holdable resource samples, one per resource and distinct time.
    pub hold_samples: Vec<HoldSample>,
    /// When the run ended.
    pub end: SimTime,
    /// The model's timers (printed per partition in the timing log).
    pub timers: Vec<Timer>,
    /// First field of timing lines, e.g. "CUZK_TIMING".
    pub timing_prefix: String,
    /// What each stage does, by [`StageId`] (a stage not listed: host work).
    pub stage_kinds: Vec<StageKind>,
    /// Per marker: its stage runs once per partition.
    pub marker_per_partition: Vec<bool>,
    /// The model's `gpu_busy` spans.
    pub bracket_spans: Vec<BracketSpan>,
    /// The first jobs to complete, excluded from statistics (the warm-up).
    pub warmup_jobs: u64,
}

impl TraceRecorder {
    /// An empty recorder that names things after `model`.
    pub fn new(model: &Model) -> TraceRecorder {
        TraceRecorder {
            scenario: model.name.clone(),
            stage_names: model
                .workload
                .stages
                .iter()
                .map(|s| s.name.clone())
                .collect(),
            gpu_names: model.hardware.gpus.iter().map(|g| g.name.clone()).collect(),
            marker_names: model
                .instrumentation
                .markers
                .iter()
                .map(|m| m.name.clone())
                .collect(),
            stage_kinds: model.workload.stages.iter().map(StageKind::of).collect(),
            marker_per_partition: (model.instrumentation.markers.iter())
                .map(|m| model.workload.stages[m.stage].per_partition)
                .collect(),
            bracket_spans: (model.instrumentation.spans.iter())
                .filter(|s| s.gpu_busy)
                .map(|s| BracketSpan {
                    name: s.name.clone(),
                    from: s.from,
                    to: s.to,
                })
                .collect(),
            warmup_jobs: model.arrivals.warmup_jobs,
            timers: model.instrumentation.timers.clone(),
            timing_prefix: model.instrumentation.timing_prefix.clone(),
            ..TraceRecorder::default()
        }
    }

    /// Name of a GPU ("gpu<i>" when the model did not name it).
    pub fn gpu_name(&self, g: u32) -> String {
        self.gpu_names
            .get(g as usize)
            .cloned()
            .unwrap_or_else(|| format!("gpu{g}"))
    }

    /// What stage `stage` does.
    pub fn stage_kind(&self, stage: StageId) -> StageKind {
        self.stage_kinds.get(stage).copied().unwrap_or_default()
    }

    /// Index of the host DRAM rate resource.
    pub fn dram_index(&self) -> Option<usize> {
        self.rates.iter().position(|r| r.kind == RateKind::Dram)
    }

    /// The run's length in seconds (last event, or the last thing recorded).
    pub fn end_s(&self) -> f64 {
        let last_stage = self.stages.iter().map(|s| s.end).max().unwrap_or_default();
        self.end.max(last_stage).as_secs()
    }
}

impl Observer for TraceRecorder {
    fn resources(&mut self, rates: &[RateResourceInfo], holds: &[HoldResourceInfo]) {
        self.rates = rates.to_vec();
        self.holds = holds.to_vec();
    }

    fn stage_finished(&mut self, r: &StageRecord) {
        self.stages.push(StageInstance {
            job: r.stage_ref.job,
            scope: r.stage_ref.scope,
            stage: r.stage_ref.stage,
            ready: r.ready,
            start: r.start,
            end: r.end,
            gpu: r.gpu,
            standalone_s: r.standalone_s,
        });
    }

    fn marker(&mut self, t: SimTime, marker: MarkerId, job: u64, scope: Scope, gpu: Option<u32>) {
        self.markers.push(MarkerEvent {
            t,
            marker,
            job,
            scope,
            gpu,
        });
    }

    fn rates_changed(&mut self, t: SimTime, usage: &[f64], latency_slowdown: f64) {
        // Several recomputations at one instant: only the last one lasted.
        if let Some(last) = self.samples.last_mut().filter(|s| s.t == t) {
            last.usage.clear();
            last.usage.extend_from_slice(usage);
            last.latency_slowdown = latency_slowdown;
            return;
        }
        if let Some(last) = self.samples.last()
            && last.usage == usage
            && last.latency_slowdown == latency_slowdown
        {
            return;
        }
        let dram_usable_gbps = self.samples.last().and_then(|s| s.dram_usable_gbps);
        self.samples.push(RateSample {
            t,
            usage: usage.to_vec(),
            latency_slowdown,
            dram_usable_gbps,
        });
    }

    fn dram_usable(&mut self, t: SimTime, _streams: u32, usable_gbps: f64) {
        let Some(last) = self.samples.last_mut() else {
            return;
        };
        if last.t == t {
            last.dram_usable_gbps = Some(usable_gbps);
        } else if last.dram_usable_gbps != Some(usable_gbps) {
            // The draw stayed the same but the stream count moved.
            let mut next = last.clone();
            next.t = t;
            next.dram_usable_gbps = Some(usable_gbps);
            self.samples.push(next);
        }
    }

    fn hold_changed(&mut self, t: SimTime, resource: usize, in_use: u64, waiting: usize) {
        let sample = HoldSample {
            t,
            resource,
            in_use,
            waiting,
        };
        // Several changes of one resource at one instant: only the last one lasted.
        let same_instant = self
            .hold_samples
            .iter()
            .rev()
            .take_while(|s| s.t == t)
            .position(|s| s.resource == resource);
        match same_instant {
            Some(back) => {
                let i = self.hold_samples.len() - 1 - back;
                self.hold_samples[i] = sample;
            }
            None => self.hold_samples.push(sample),
        }
    }

    fn finished(&mut self, t: SimTime) {
        self.end = t;
    }
}
