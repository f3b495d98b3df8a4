//! The result of one run: typed, then rendered by one exporter per format
//! ([`json`], [`text`]).

pub mod json;
pub mod text;

use std::collections::BTreeMap;

use crate::bottleneck::{self, Bottleneck};
use crate::engine::RunSummary;
use crate::metrics::Metrics;
use crate::model::{HoldResource, Model};

const GIB: f64 = (1u64 << 30) as f64;

/// Statistics of one stage over measured jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct StageStats {
    /// Stage name.
    pub name: String,
    /// Instances measured.
    pub count: u64,
    /// Mean actual running time (start to end), seconds.
    pub mean_s: f64,
    /// Mean standalone duration, seconds.
    pub standalone_mean_s: f64,
    /// mean_s / standalone_mean_s (1.0 = no contention).
    pub inflation: f64,
    /// Mean wait for holds (ready to start), seconds.
    pub mean_wait_s: f64,
    /// Mean seconds lost per instance, by cause.
    pub lost_s: BTreeMap<String, f64>,
}

/// Use of one rate resource.
#[derive(Debug, Clone, PartialEq)]
pub struct RateStats {
    /// Resource name.
    pub name: String,
    /// Capacity in its own unit.
    pub capacity: f64,
    /// Mean utilisation (0..1).
    pub mean_utilization: f64,
    /// Peak draw in its own unit.
    pub peak: f64,
}

/// Use of one holdable resource instance.
#[derive(Debug, Clone, PartialEq)]
pub struct HoldStats {
    /// Resource name.
    pub name: String,
    /// Capacity in its own unit.
    pub capacity: u64,
    /// Mean occupancy (0..1).
    pub mean_occupancy: f64,
    /// Peak in use.
    pub peak: u64,
    /// Total seconds measured stages waited because of it.
    pub wait_s: f64,
}

/// Everything a run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Scenario name.
    pub scenario: String,
    /// Seed used.
    pub seed: u64,
    /// Jobs that finished (warm-up included).
    pub jobs_completed: u64,
    /// Jobs counted in statistics.
    pub jobs_measured: u64,
    /// Warm-up jobs excluded.
    pub warmup_jobs: u64,
    /// Simulated time at the end, seconds.
    pub sim_time_s: f64,
    /// Length of the measurement window, seconds.
    pub window_s: f64,
    /// Window / jobs completed in the window.
    pub seconds_per_job: f64,
    /// 3600 / seconds_per_job.
    pub jobs_per_hour: f64,
    /// Mean job response time (arrival to finish), seconds.
    pub response_mean_s: f64,
    /// Maximum job response time, seconds.
    pub response_max_s: f64,
    /// Time any kernel runs / window, averaged over GPUs.
    pub gpu_true_busy_frac: f64,
    /// Union of instrumentation spans marked gpu_busy / window, averaged over GPUs.
    pub gpu_bracketed_busy_frac: f64,
    /// What the markers alone imply: summed gpu_busy span time per measured job, per GPU
    /// (the seconds per job a TIMELINE reader would estimate if the brackets were GPU work).
    pub gpu_bracketed_seconds_per_job: f64,
    /// Mean length of each instrumentation span, seconds.
    pub spans_mean_s: BTreeMap<String, f64>,
    /// DRAM capacity, GB/s.
    pub dram_capacity_gbps: f64,
    /// Mean DRAM utilisation (0..1).
    pub dram_mean_utilization: f64,
    /// Peak DRAM draw, GB/s.
    pub dram_peak_gbps: f64,
    /// Time-averaged L(u)/L(0).
    pub dram_mean_latency_slowdown: f64,
    /// Peak L(u)/L(0).
    pub dram_max_latency_slowdown: f64,
    /// Per stage, in model order.
    pub stages: Vec<StageStats>,
    /// Per rate resource.
    pub rates: Vec<RateStats>,
    /// Per holdable instance.
    pub holds: Vec<HoldStats>,
    /// Peak host RAM held, GiB.
    pub ram_peak_gib: f64,
    /// Host RAM capacity, GiB.
    pub ram_capacity_gib: f64,
    /// Peak VRAM held on any GPU, GiB.
    pub vram_peak_gib: f64,
    /// The limiting resource.
    pub bottleneck: Bottleneck,
    /// Little's law: time-average jobs in system (L).
    pub little_l: f64,
    /// Little's law: throughput x mean response (lambda W).
    pub little_lambda_w: f64,
    /// Throughput of the same scenario without rate contention, if computed.
    pub ideal_seconds_per_job: Option<f64>,
    /// Warnings a user should see (capacity limits, stalls).
    pub notes: Vec<String>,
    /// Events the engine processed.
    pub engine_events: u64,
    /// Wall-clock seconds the simulation took.
    pub engine_wall_s: f64,
}

impl Report {
    /// Builds the report from a finished run.
    pub fn build(model: &Model, m: &Metrics, summary: &RunSummary, wall_s: f64) -> Report {
        let window = m.window_s();
        let per = |x: f64| if window > 0.0 { x / window } else { 0.0 };
        let ngpu = m.kernel_busy.len() as f64;
        let stages: Vec<StageStats> = model
            .workload
            .stages
            .iter()
            .zip(&m.stages)
            .map(|(s, a)| {
                let n = a.count.max(1) as f64;
                let mut lost_s = BTreeMap::new();
                for (slot, &l) in a.lost_s.iter().enumerate() {
                    if l > 0.0 {
                        let key = if slot < m.rates.len() {
                            m.rates[slot].name.clone()
                        } else {
                            "dram_latency".into()
                        };
                        *lost_s.entry(key).or_insert(0.0) += l / n;
                    }
                }
                let mean_s = a.actual_s / n;
                let standalone_mean_s = a.standalone_s / n;
                StageStats {
                    name: s.name.clone(),
                    count: a.count,
                    mean_s,
                    standalone_mean_s,
                    inflation: if standalone_mean_s > 0.0 {
                        mean_s / standalone_mean_s
                    } else {
                        1.0
                    },
                    mean_wait_s: a.wait_s / n,
                    lost_s,
                }
            })
            .collect();
        let util = m.rate_utilisation();
        let rates: Vec<RateStats> = m
            .rates
            .iter()
            .enumerate()
            .map(|(i, r)| RateStats {
                name: r.name.clone(),
                capacity: r.capacity,
                mean_utilization: util[i],
                peak: m.usage_peak[i],
            })
            .collect();
        let occ = m.hold_occupancy();
        let hold_wait = m.hold_wait_s();
        let holds: Vec<HoldStats> = m
            .holds
            .iter()
            .enumerate()
            .map(|(i, h)| HoldStats {
                name: h.name.clone(),
                capacity: h.capacity,
                mean_occupancy: occ[i],
                peak: m.in_use_peak[i],
                wait_s: hold_wait[i],
            })
            .collect();
        let peak_of = |want: HoldResource| {
            m.holds
                .iter()
                .enumerate()
                .filter(|(_, h)| h.resource == want)
                .map(|(i, _)| m.in_use_peak[i])
                .max()
                .unwrap_or(0) as f64
                / GIB
        };
        let dram = m.dram_index();
        let measured = m.measured_jobs;
        let completed_in_window = m.window_completions;
        let seconds_per_job = if completed_in_window > 0 {
            window / completed_in_window as f64
        } else {
            f64::NAN
        };
        let response_mean_s = if measured > 0 {
            m.response_sum / measured as f64
        } else {
            f64::NAN
        };
        let mut notes = Vec::new();
        if let Some(s) = &summary.stalled {
            notes.push(format!("stalled: {s}"));
        }
        // Memory and cores that made stages wait: the requested concurrency is not reached.
        for (h, info) in holds.iter().zip(&m.holds) {
            let what = match info.resource {
                HoldResource::HostRam | HoldResource::Vram => "GiB",
                HoldResource::Cores => "cores",
                HoldResource::Lock(_) => continue,
            };
            if h.wait_s > 0.0 {
                let unit = if what == "cores" { 1.0 } else { GIB };
                notes.push(format!(
                    "{} is full at times (peak {:.1} of {:.1} {what}): stages waited {:.1} s in total for it, so the requested concurrency is not reached",
                    h.name,
                    h.peak as f64 / unit,
                    h.capacity as f64 / unit,
                    h.wait_s
                ));
            }
        }
        if measured == 0 {
            notes.push(
                "no measured job finished: raise arrivals.jobs or lower arrivals.warmup_jobs"
                    .into(),
            );
        }
        Report {
            scenario: model.name.clone(),
            seed: model.seed,
            jobs_completed: summary.jobs_completed,
            jobs_measured: measured,
            warmup_jobs: model.arrivals.warmup_jobs,
            sim_time_s: summary.end.as_secs(),
            window_s: window,
            seconds_per_job,
            jobs_per_hour: 3600.0 / seconds_per_job,
            response_mean_s,
            response_max_s: m.response_max,
            gpu_true_busy_frac: per(m.kernel_busy.iter().sum::<f64>() / ngpu),
            gpu_bracketed_busy_frac: per(m.bracket_busy.iter().sum::<f64>() / ngpu),
            gpu_bracketed_seconds_per_job: if measured > 0 {
                m.gpu_span_total_s / measured as f64 / ngpu
            } else {
                f64::NAN
            },
            spans_mean_s: model
                .instrumentation
                .spans
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    (
                        s.name.clone(),
                        m.span_sum[i] / m.span_count[i].max(1) as f64,
                    )
                })
                .collect(),
            dram_capacity_gbps: model.hardware.dram.capacity_gbps,
            dram_mean_utilization: util.get(dram).copied().unwrap_or(0.0),
            dram_peak_gbps: m.usage_peak.get(dram).copied().unwrap_or(0.0),
            dram_mean_latency_slowdown: if window > 0.0 {
                m.slowdown_integral / window
            } else {
                1.0
            },
            dram_max_latency_slowdown: m.slowdown_max,
            stages,
            rates,
            holds,
            ram_peak_gib: peak_of(HoldResource::HostRam),
            ram_capacity_gib: model.hardware.host_ram_bytes as f64 / GIB,
            vram_peak_gib: peak_of(HoldResource::Vram),
            bottleneck: bottleneck::analyse(model, m),
            little_l: per(m.in_system_integral),
            little_lambda_w: if window > 0.0 {
                completed_in_window as f64 / window * response_mean_s
            } else {
                0.0
            },
            ideal_seconds_per_job: None,
            notes,
            engine_events: summary.events,
            engine_wall_s: wall_s,
        }
    }

    /// GPU link utilisations (for the text view): (name, mean utilisation).
    pub fn pcie(&self) -> impl Iterator<Item = &RateStats> {
        self.rates.iter().filter(|r| r.name.contains(".pcie_"))
    }
}
