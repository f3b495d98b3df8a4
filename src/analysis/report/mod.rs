//! The result of one run: typed, then rendered by one exporter per format
//! ([`json`], [`text`]); [`replicated`] combines the runs of several seeds into one and
//! [`what_if`] sets a changed run against its baseline; [`verdict`] holds the stall and
//! the steady state, the two verdicts programs read before trusting the numbers.

pub mod json;
pub mod replicated;
pub mod text;
pub mod verdict;
pub mod what_if;

pub use replicated::Replications;
pub use verdict::{SteadyState, UnreadStall, Verdicts, stall_note, stall_why};
pub use what_if::WhatIf;

use crate::analysis::prediction::PredictionInterval;
use std::collections::BTreeMap;

use super::bottleneck::{self, Bottleneck};
use super::bracket_measures::BracketSummary;
use super::gap::{GapPart, GapTotals};
use super::knob::Knobs;
use super::run_stats::{HoldTotals, RunStats, StageTotals};
use super::throughput::{JobName, Throughput};
use crate::engine::{RateKind, Stall};
use crate::model::{ArrivalKind, Arrivals, HoldResource, Model, Stage};

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
    /// What it is.
    pub kind: RateKind,
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
    /// What one job is called (`workload.job_name`).
    pub job_name: JobName,
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
    /// The same for each GPU, in GPU order.
    pub gpu_kernel_duty: Vec<f64>,
    /// Union of instrumentation spans marked gpu_busy / window, averaged over GPUs.
    pub gpu_bracketed_busy_frac: f64,
    /// The same brackets added up (the seed's formula), over the window and over the
    /// GPU's span, with the mean gap between GPU operations.
    pub gpu_brackets: BracketSummary,
    /// What the markers alone imply: summed gpu_busy span time per measured job, per GPU
    /// (the seconds per job a TIMELINE reader would estimate if the brackets were GPU work).
    pub gpu_bracketed_seconds_per_job: f64,
    /// The nvidia-smi view: share of sample windows in which any kernel ran, averaged
    /// over GPUs.
    pub gpu_sampled_busy_frac: f64,
    /// Its sample period, seconds.
    pub smi_sample_period_s: f64,
    /// What the gpu_busy brackets of measured jobs were spent on, summed over GPUs.
    pub gpu_breakdown: GapTotals,
    /// Mean length of each instrumentation span, seconds.
    pub spans_mean_s: BTreeMap<String, f64>,
    /// DRAM capacity, GB/s: nominal, what one stream alone could draw.
    pub dram_capacity_gbps: f64,
    /// Mean DRAM utilisation (0..1) of the nominal capacity.
    pub dram_mean_utilization: f64,
    /// DRAM's usable capacity, GB/s, time-averaged over the window: the nominal one less
    /// what interleaving streams lose (`efficiency_loss_per_stream`).
    pub dram_usable_gbps: f64,
    /// Mean share of the usable capacity drawn (0..1).
    pub dram_usable_utilization: f64,
    /// Time-averaged streams drawing on DRAM, when it loses efficiency per stream.
    pub dram_mean_streams: Option<f64>,
    /// Capacity lost per stream beyond the first (0: none).
    pub dram_efficiency_loss_per_stream: f64,
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
    /// What one step more of each resource buys, if computed (`bwsim run` does).
    pub knobs: Option<Knobs>,
    /// What the host will do: the prediction interval, if computed (`bwsim run` does).
    pub prediction: Option<PredictionInterval>,
    /// Warnings a user should see (capacity limits, and the notes of the two verdicts
    /// below).
    pub notes: Vec<String>,
    /// Why the run stopped with jobs unfinished, if it did (also the first note).
    pub stalled: Option<Stall>,
    /// Whether the window times the loop's steady state (when not, also a note).
    pub steady_state: SteadyState,
    /// Events the engine processed.
    pub engine_events: u64,
    /// Wall-clock seconds the simulation took.
    pub engine_wall_s: f64,
    /// The replications combined into this report, when more than one: the fields above
    /// are the first one's, these the mean and interval over all.
    pub replications: Option<Replications>,
}

impl Report {
    /// Builds the report from a finished run's statistics.
    pub fn build(model: &Model, m: &RunStats, wall_s: f64) -> Report {
        let w = &m.window;
        let util = m.rate_utilisation();
        let holds = hold_stats(m);
        let dram = m.dram.rate_index;
        let gpus = m.gpu.count();
        let response_mean_s = w.response_mean_s();
        let seconds_per_job = w.seconds_per_job();
        Report {
            scenario: model.name.clone(),
            seed: model.seed,
            job_name: JobName::new(model.workload.job_name.clone()),
            jobs_completed: m.run.jobs_completed,
            jobs_measured: w.measured_jobs,
            warmup_jobs: model.arrivals.warmup_jobs,
            sim_time_s: m.run.end_s,
            window_s: w.window_s,
            seconds_per_job,
            jobs_per_hour: 3600.0 / seconds_per_job,
            response_mean_s,
            response_max_s: w.response_max_s,
            gpu_true_busy_frac: w.per_window(m.gpu.kernel_busy_s.iter().sum::<f64>() / gpus),
            gpu_kernel_duty: (m.gpu.kernel_busy_s.iter())
                .map(|b| w.per_window(*b))
                .collect(),
            gpu_bracketed_busy_frac: m.gpu.brackets.union_frac,
            gpu_brackets: m.gpu.brackets.summary(),
            gpu_sampled_busy_frac: w.per_window(m.gpu.sampled_busy_s.iter().sum::<f64>() / gpus),
            smi_sample_period_s: model.instrumentation.smi_period_s(),
            gpu_breakdown: m.gpu.gap.clone(),
            gpu_bracketed_seconds_per_job: if w.measured_jobs > 0 {
                m.gpu.bracketed_span_total_s / w.measured_jobs as f64 / gpus
            } else {
                f64::NAN
            },
            spans_mean_s: model
                .instrumentation
                .spans
                .iter()
                .zip(&m.gpu.spans)
                .map(|(s, t)| (s.name.clone(), t.sum_s / t.count.max(1) as f64))
                .collect(),
            dram_capacity_gbps: model.hardware.dram.capacity_gbps,
            dram_mean_utilization: dram.map_or(0.0, |i| util[i]),
            dram_usable_gbps: match m.dram.usable {
                Some(u) if w.window_s > 0.0 => w.per_window(u.gbps_integral),
                _ => model.hardware.dram.capacity_gbps,
            },
            dram_usable_utilization: match m.dram.usable {
                Some(u) => w.per_window(u.share_integral),
                None => dram.map_or(0.0, |i| util[i]),
            },
            dram_mean_streams: m.dram.usable.map(|u| w.per_window(u.streams_integral)),
            dram_efficiency_loss_per_stream: model.hardware.dram.efficiency_loss_per_stream,
            dram_peak_gbps: m.dram_rate().map_or(0.0, |r| r.peak),
            dram_mean_latency_slowdown: if w.window_s > 0.0 {
                m.dram.slowdown_integral / w.window_s
            } else {
                1.0
            },
            dram_max_latency_slowdown: m.dram.slowdown_max,
            stages: (model.workload.stages.iter())
                .zip(&m.stages)
                .map(|(s, t)| stage_stats(m, s, t))
                .collect(),
            rates: rate_stats(m, &util),
            ram_peak_gib: peak_gib(m, HoldResource::HostRam),
            // Not modelled (no host_ram_gib): no capacity, not 2^64 bytes.
            ram_capacity_gib: if model.hardware.host_ram_bytes == u64::MAX {
                f64::NAN
            } else {
                model.hardware.host_ram_bytes as f64 / GIB
            },
            vram_peak_gib: peak_gib(m, HoldResource::Vram),
            bottleneck: bottleneck::analyse(model, m),
            little_l: w.per_window(m.in_system_integral),
            little_lambda_w: if w.window_s > 0.0 {
                w.completions as f64 / w.window_s * response_mean_s
            } else {
                0.0
            },
            ideal_seconds_per_job: None,
            knobs: None,
            prediction: None,
            notes: notes(model, m, &holds),
            stalled: m.stalled,
            steady_state: steady_state(&model.arrivals),
            holds,
            engine_events: m.run.events,
            engine_wall_s: wall_s,
            replications: None,
        }
    }

    /// The answer: seconds per job and jobs per day over the replications, with their
    /// intervals (one run: without).
    pub fn throughput(&self) -> Throughput {
        match &self.replications {
            Some(r) => Throughput::new(r.seconds_per_job, r.jobs_per_hour, self.job_name.clone()),
            None => Throughput::single(self.seconds_per_job, self.job_name.clone()),
        }
    }

    /// The contention-free counterpart, when computed: over the replications when there
    /// are several.
    pub fn ideal_throughput(&self) -> Option<Throughput> {
        let job = self.job_name.clone();
        match self
            .replications
            .as_ref()
            .and_then(|r| r.ideal_seconds_per_job)
        {
            Some(s) => Some(Throughput::from_seconds_per_job(s, job)),
            None => (self.ideal_seconds_per_job).map(|s| Throughput::single(s, job)),
        }
    }

    /// Why the run stopped with jobs unfinished, if it did: its numbers then describe
    /// only the part that ran.
    pub fn stall(&self) -> Option<String> {
        (self.stalled.as_ref()).map(|s| stall_why(s, self.seed))
    }

    /// Both verdicts: the stall and the steady state.
    pub fn verdicts(&self) -> Verdicts {
        Verdicts {
            stalled: self.stalled,
            steady_state: self.steady_state.clone(),
        }
    }

    /// Mean seconds of `part` in one bracket (0 without brackets).
    pub fn per_bracket_s(&self, part: GapPart) -> f64 {
        self.gpu_breakdown.per_bracket_s(part)
    }

    /// Seconds of `part` per measured job and GPU, the unit of
    /// [`Report::gpu_bracketed_seconds_per_job`], so the parts add up to it.
    pub fn per_job_s(&self, part: GapPart) -> f64 {
        let total = self.gpu_breakdown.bracket_s;
        if total > 0.0 {
            self.gpu_bracketed_seconds_per_job * self.gpu_breakdown.share(part)
        } else {
            0.0
        }
    }

    /// Mean length of one gpu_busy bracket, seconds (0 without brackets).
    pub fn mean_bracket_s(&self) -> f64 {
        self.gpu_breakdown.mean_bracket_s()
    }

    /// One line that explains the gap between the markers and the kernels, when there are
    /// brackets: "the markers claim X%, kernels run Y%; the difference is mostly Z".
    pub fn gap_verdict(&self) -> Option<String> {
        let b = &self.gpu_breakdown;
        if b.brackets == 0 || b.bracket_s <= 0.0 {
            return None;
        }
        let claim = format!(
            "the markers claim {:.1}% GPU busy, kernels run {:.1}%",
            self.gpu_bracketed_busy_frac * 100.0,
            self.gpu_true_busy_frac * 100.0
        );
        Some(match b.main_gap() {
            Some(part) => format!(
                "{claim}; the difference is mostly {} ({:.0}% of the bracketed time, {:.3} s of a {:.3} s bracket)",
                part.label(),
                b.share(part) * 100.0,
                self.per_bracket_s(part),
                self.mean_bracket_s()
            ),
            None => format!("{claim}; the brackets hold nothing but kernels"),
        })
    }

    /// GPU link utilisations (for the text view): (name, mean utilisation).
    pub fn pcie(&self) -> impl Iterator<Item = &RateStats> {
        self.rates.iter().filter(|r| r.kind.is_pcie())
    }
}

#[cfg(test)]
impl Report {
    /// A report of a run that measured nothing, for tests that set the fields they need.
    pub(crate) fn empty(scenario: &str, seed: u64) -> Report {
        Report {
            scenario: scenario.into(),
            seed,
            job_name: JobName::default(),
            jobs_completed: 0,
            jobs_measured: 0,
            warmup_jobs: 0,
            sim_time_s: 0.0,
            window_s: 0.0,
            seconds_per_job: f64::NAN,
            jobs_per_hour: f64::NAN,
            response_mean_s: f64::NAN,
            response_max_s: 0.0,
            gpu_true_busy_frac: 0.0,
            gpu_kernel_duty: Vec::new(),
            gpu_bracketed_busy_frac: 0.0,
            gpu_brackets: BracketSummary::default(),
            gpu_bracketed_seconds_per_job: f64::NAN,
            gpu_sampled_busy_frac: 0.0,
            smi_sample_period_s: 1.0,
            gpu_breakdown: GapTotals::default(),
            spans_mean_s: BTreeMap::new(),
            dram_capacity_gbps: 0.0,
            dram_mean_utilization: 0.0,
            dram_usable_gbps: 0.0,
            dram_usable_utilization: 0.0,
            dram_mean_streams: None,
            dram_efficiency_loss_per_stream: 0.0,
            dram_peak_gbps: 0.0,
            dram_mean_latency_slowdown: 1.0,
            dram_max_latency_slowdown: 1.0,
            stages: Vec::new(),
            rates: Vec::new(),
            holds: Vec::new(),
            ram_peak_gib: 0.0,
            ram_capacity_gib: f64::NAN,
            vram_peak_gib: 0.0,
            bottleneck: Bottleneck {
                resource: "none".into(),
                reason: String::new(),
                blame_s: BTreeMap::new(),
                step: None,
            },
            little_l: 0.0,
            little_lambda_w: 0.0,
            ideal_seconds_per_job: None,
            knobs: None,
            prediction: None,
            notes: Vec::new(),
            stalled: None,
            steady_state: SteadyState::Reached,
            engine_events: 0,
            engine_wall_s: 0.0,
            replications: None,
        }
    }
}

/// Means per measured instance of one stage, losses named by cause.
fn stage_stats(m: &RunStats, stage: &Stage, t: &StageTotals) -> StageStats {
    let n = t.count.max(1) as f64;
    let mut lost_s = BTreeMap::new();
    for (rate, l) in t.losses() {
        if l > 0.0 {
            *lost_s.entry(m.loss_name(rate).to_string()).or_insert(0.0) += l / n;
        }
    }
    let mean_s = t.actual_s / n;
    let standalone_mean_s = t.standalone_s / n;
    StageStats {
        name: stage.name.clone(),
        count: t.count,
        mean_s,
        standalone_mean_s,
        inflation: if standalone_mean_s > 0.0 {
            mean_s / standalone_mean_s
        } else {
            1.0
        },
        mean_wait_s: t.wait_s / n,
        lost_s,
    }
}

fn rate_stats(m: &RunStats, util: &[f64]) -> Vec<RateStats> {
    (m.rates.iter())
        .zip(util)
        .map(|(r, &u)| RateStats {
            name: r.info.name.clone(),
            kind: r.info.kind,
            capacity: r.info.capacity,
            mean_utilization: u,
            peak: r.peak,
        })
        .collect()
}

fn hold_stats(m: &RunStats) -> Vec<HoldStats> {
    (m.holds.iter())
        .zip(m.hold_occupancy())
        .map(|(h, occupancy)| HoldStats {
            name: h.info.name.clone(),
            capacity: h.info.capacity,
            mean_occupancy: occupancy,
            peak: h.peak,
            wait_s: h.wait_s,
        })
        .collect()
}

/// A closed loop starts its first `concurrency` jobs together at t = 0. When most of the
/// measured jobs (those after the warm-up) are among them, the window times one batch
/// draining, not the loop's steady state: its throughput can be any number (200 jobs
/// at 10^5 in flight read as 3 million jobs an hour on the demo scenario).
pub fn steady_state(arrivals: &Arrivals) -> SteadyState {
    let ArrivalKind::Closed { concurrency } = arrivals.kind else {
        return SteadyState::Reached;
    };
    let (jobs, warmup) = (arrivals.jobs, arrivals.warmup_jobs);
    let measured = jobs.saturating_sub(warmup);
    let first_wave = u64::from(concurrency).min(jobs).saturating_sub(warmup);
    if measured > 0 && 2 * first_wave > measured {
        SteadyState::FirstWave {
            why: format!(
                "{first_wave} of the {measured} measured jobs start together at t = 0 \
                 ({concurrency} in flight, {jobs} jobs, {warmup} of them warm-up), so the \
                 throughput is that of one batch draining; simulate several times the \
                 concurrency in arrivals.jobs, with arrivals.warmup_jobs at least the \
                 concurrency"
            ),
        }
    } else {
        SteadyState::Reached
    }
}

/// The note of [`steady_state`] when the loop has none (a scenario check shows it too).
pub fn first_wave_note(arrivals: &Arrivals) -> Option<String> {
    steady_state(arrivals).note()
}

/// Peak bytes held on any one instance of a memory resource, GiB.
fn peak_gib(m: &RunStats, want: HoldResource) -> f64 {
    (m.holds.iter())
        .filter(|h| h.info.resource == want)
        .map(|h| h.peak)
        .max()
        .unwrap_or(0) as f64
        / GIB
}

/// Warnings: the stall, memory or cores that made stages wait, a closed loop whose
/// measured jobs mostly started at once, no measured job.
fn notes(model: &Model, m: &RunStats, holds: &[HoldStats]) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(s) = &m.stalled {
        notes.push(stall_note(s, model.seed));
    }
    if let Some(note) = first_wave_note(&model.arrivals) {
        notes.push(note);
    }
    // Memory and cores that made stages wait: the requested concurrency is not reached.
    for (h, totals) in holds.iter().zip(&m.holds) {
        let (what, unit) = match totals.info.resource {
            HoldResource::HostRam | HoldResource::Vram => ("GiB", GIB),
            HoldResource::Cores => ("cores", 1.0),
            HoldResource::Lock(_) => continue,
        };
        if h.wait_s > 0.0 {
            let (peak, capacity) = (h.peak as f64 / unit, h.capacity as f64 / unit);
            // Below its capacity at its peak, it never filled: a request did not fit in
            // what the others left free.
            let short = if h.peak >= h.capacity {
                format!(
                    "{} is full at times (peak {peak:.1} of {capacity:.1} {what})",
                    h.name
                )
            } else {
                format!(
                    "{} has too little free for the next request at times (peak use {peak:.1} of {capacity:.1} {what}: requests did not fit in what was left)",
                    h.name
                )
            };
            // The waits of stages that wait at once add up past the wall time, so their
            // sum is said as what it is: stage-seconds, i.e. stages waiting on average.
            let waiting = h.wait_s / m.window.window_s.max(f64::MIN_POSITIVE);
            notes.push(format!(
                "{short}: {} stages waited for it on average over the window ({} stage-seconds of waiting in {} s), so the requested concurrency is not reached",
                crate::analysis::throughput::significant(waiting),
                crate::analysis::throughput::significant(h.wait_s),
                crate::analysis::throughput::significant(m.window.window_s)
            ));
        }
    }
    notes.extend(ram_headroom_note(holds, &m.holds));
    if m.window.measured_jobs == 0 {
        notes.push(
            "no measured job finished: raise arrivals.jobs or lower arrivals.warmup_jobs".into(),
        );
    }
    notes
}

/// Host RAM used past this share of its capacity at the peak leaves a real host too
/// little: an estimate of what the OS, page cache and a prover's own buffers need beside
/// what stages hold (the model counts only the latter).
const RAM_HEADROOM: f64 = 0.10;

/// A note when host RAM peaks within [`RAM_HEADROOM`] of its capacity.
fn ram_headroom_note(holds: &[HoldStats], totals: &[HoldTotals]) -> Option<String> {
    let (h, _) =
        (holds.iter().zip(totals)).find(|(_, t)| t.info.resource == HoldResource::HostRam)?;
    let (peak, capacity) = (h.peak as f64 / GIB, h.capacity as f64 / GIB);
    let used = peak / capacity;
    (capacity > 0.0 && used > 1.0 - RAM_HEADROOM).then(|| {
        format!(
            "host RAM peaks at {peak:.1} of {capacity:.1} GiB ({:.0}%, {:.1} GiB free): RAM the scenario does not declare (the OS, page cache, the prover's own buffers) needs room too, so a real host run this way risks swapping or the OOM killer; keep about {:.0}% free (an estimate): lower the concurrency or add RAM",
            used * 100.0,
            capacity - peak,
            RAM_HEADROOM * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(concurrency: u32, jobs: u64, warmup_jobs: u64) -> Arrivals {
        Arrivals {
            kind: ArrivalKind::Closed { concurrency },
            jobs,
            warmup_jobs,
        }
    }

    #[test]
    fn a_closed_loop_is_flagged_when_most_measured_jobs_start_at_once() {
        // 30 jobs, 6 warm-up: 24 measured.
        assert_eq!(first_wave_note(&closed(4, 30, 6)), None); // none in the first wave
        assert_eq!(first_wave_note(&closed(18, 30, 6)), None); // 12 of 24: half
        let note = first_wave_note(&closed(19, 30, 6)).expect("13 of 24"); // most
        assert!(note.starts_with("no steady state: "), "{note}");
        assert!(!steady_state(&closed(19, 30, 6)).is_reached());
        assert!(note.contains("13 of the 24 measured jobs"), "{note}");
        let all = first_wave_note(&closed(100_000, 200, 20)).expect("a single batch");
        assert!(all.contains("180 of the 180 measured jobs"), "{all}");
        // No measured job (a note of its own says so), or no closed loop: nothing.
        assert_eq!(first_wave_note(&closed(50, 10, 10)), None);
        let open = Arrivals {
            kind: ArrivalKind::Poisson { rate_per_s: 1.0 },
            jobs: 10,
            warmup_jobs: 0,
        };
        assert_eq!(first_wave_note(&open), None);
    }
}
