//! The discrete-event engine: clock, event queue, activities, holdable resources and the
//! fluid bandwidth-sharing solver. It knows nothing of files, TOML or plots.
//!
//! A run turns a [`Model`] into a stream of [`Observer`] callbacks:
//!
//! ```
//! use bwsim_engine::engine::{simulate, NullObserver};
//! use bwsim_engine::model::*;
//!
//! let model = Model {
//!     name: "one stage".into(),
//!     seed: 7,
//!     hardware: Hardware {
//!         cpu_cores: 4,
//!         host_ram_bytes: 1 << 30,
//!         dram: Dram { capacity_gbps: 100.0, latency: LatencyCurve::flat(), efficiency_loss_per_stream: 0.0 },
//!         gpus: vec![],
//!         locks: vec![],
//!         pools: vec![],
//!     },
//!     workload: Workload {
//!         partitions: 1,
//!         stages: vec![Stage {
//!             name: "stream".into(),
//!             per_partition: false,
//!             after: vec![],
//!             duration: Duration::Fixed(1.0),
//!             holds: vec![],
//!             demands: vec![Demand { target: RateTarget::Dram, amount: 50.0 }],
//!             latency_bound_frac: 0.0,
//!             gpu_kernel: false,
//!         }],
//!     },
//!     // Four streams of 50 GB/s share 100 GB/s: each runs at half speed, 2 s.
//!     arrivals: Arrivals { kind: ArrivalKind::Closed { concurrency: 4 }, jobs: 4, warmup_jobs: 0 },
//!     instrumentation: Instrumentation::default(),
//! };
//! let summary = simulate(&model, &mut NullObserver).unwrap();
//! assert_eq!(summary.jobs_completed, 4);
//! assert_eq!(summary.end.as_secs(), 2.0);
//! ```
//!
//! How it works: running stage instances with identical demands form a *class*; the
//! sharing solver gives each class a speed (fraction of standalone), and each class keeps
//! a virtual clock of standalone progress, so members finish in order of their virtual
//! finish time without touching the others (DSLab's "total work" idea). Rates are
//! recomputed only when a class with shared demands gains or loses members; completion
//! events carry a generation number so stale ones are skipped.

pub mod holdable;
pub mod observer;
pub mod queue;
pub mod solver;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::rc::Rc;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp, Gamma, LogNormal, Normal, Uniform, Weibull};
use rand_pcg::Pcg64;

pub use observer::{
    HoldResourceInfo, JOB_LEVEL, Limiter, NullObserver, Observer, RateKind, RateResourceInfo,
    StageRecord, StageRef, Tee,
};

use crate::model::{ArrivalKind, Duration, Edge, HoldResource, MarkerId, Model, RateTarget};
use crate::time::{SimTime, secs_to_nanos};
use holdable::{Grant, HoldIndex, HoldSlot, Holdables, Request};
use queue::EventQueue;
use solver::{ClassDemand, ClassSpeed, SolveMemo, Solver};

/// What a finished run reports about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Events processed (arrivals and completions; stale entries not counted).
    pub events: u64,
    /// Time of the last event.
    pub end: SimTime,
    /// Jobs that finished.
    pub jobs_completed: u64,
    /// Jobs that arrived.
    pub jobs_started: u64,
    /// Set when the run stopped with jobs unfinished and nothing left to happen.
    pub stalled: Option<String>,
}

/// A model the engine cannot run (the scenario layer normally catches these first).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EngineError {
    /// A duration distribution's parameters are invalid.
    #[error("stage '{stage}': invalid duration distribution: {why}")]
    BadDistribution { stage: String, why: String },
    /// A stage refers to something that does not exist.
    #[error("stage '{stage}': {why}")]
    BadReference { stage: String, why: String },
}

/// Runs `model` to completion, reporting to `observer`.
pub fn simulate<O: Observer>(model: &Model, observer: &mut O) -> Result<RunSummary, EngineError> {
    let mut engine = Engine::new(model)?;
    Ok(engine.run(observer))
}

/// Samples a stage's standalone duration.
enum Sampler {
    Fixed(f64),
    Exp(Exp<f64>),
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
    Uniform(Uniform<f64>),
    Gamma(Gamma<f64>),
    Weibull(Weibull<f64>),
}

impl Sampler {
    fn new(d: &Duration) -> Result<Self, String> {
        let e = |x: &dyn std::fmt::Display| x.to_string();
        Ok(match *d {
            Duration::Fixed(s) => Sampler::Fixed(s),
            Duration::Exponential { mean_s } => {
                Sampler::Exp(Exp::new(1.0 / mean_s).map_err(|x| e(&x))?)
            }
            Duration::Normal { mean_s, std_s } => {
                Sampler::Normal(Normal::new(mean_s, std_s).map_err(|x| e(&x))?)
            }
            Duration::LogNormal { mean_s, std_s } => {
                let sigma2 = (1.0 + (std_s / mean_s).powi(2)).ln();
                let mu = mean_s.ln() - sigma2 / 2.0;
                Sampler::LogNormal(LogNormal::new(mu, sigma2.sqrt()).map_err(|x| e(&x))?)
            }
            Duration::Uniform { min_s, max_s } => {
                if min_s > max_s || min_s.is_nan() || max_s.is_nan() {
                    return Err(format!("min_s {min_s} > max_s {max_s}"));
                }
                if min_s == max_s {
                    Sampler::Fixed(min_s)
                } else {
                    Sampler::Uniform(Uniform::new(min_s, max_s))
                }
            }
            Duration::Gamma { shape, scale_s } => {
                Sampler::Gamma(Gamma::new(shape, scale_s).map_err(|x| e(&x))?)
            }
            Duration::Erlang { k, mean_s } => {
                Sampler::Gamma(Gamma::new(k as f64, mean_s / k as f64).map_err(|x| e(&x))?)
            }
            Duration::Weibull { scale_s, shape } => {
                Sampler::Weibull(Weibull::new(scale_s, shape).map_err(|x| e(&x))?)
            }
        })
    }

    fn sample(&self, rng: &mut Pcg64) -> f64 {
        let x = match self {
            Sampler::Fixed(s) => *s,
            Sampler::Exp(d) => d.sample(rng),
            Sampler::Normal(d) => d.sample(rng),
            Sampler::LogNormal(d) => d.sample(rng),
            Sampler::Uniform(d) => d.sample(rng),
            Sampler::Gamma(d) => d.sample(rng),
            Sampler::Weibull(d) => d.sample(rng),
        };
        x.max(0.0)
    }
}

/// A stage, compiled for the engine.
struct StagePlan {
    per_partition: bool,
    sampler: Sampler,
    /// Holds: where, how much, and the stage whose end releases it.
    needs: Rc<[(HoldSlot, u64)]>,
    until: Vec<usize>,
    /// Dependencies an instance waits for.
    deps_per_instance: u32,
    children: Vec<usize>,
    /// First instance slot of this stage within a job.
    slot_offset: usize,
    markers: Vec<(Edge, MarkerId)>,
    /// Class key of an instance bound to GPU g (index g; one entry when there is no GPU).
    class_key: Vec<usize>,
}

impl StagePlan {
    /// The class key of an instance bound to `gpu`.
    fn key_for(&self, gpu: Option<u32>) -> usize {
        self.class_key[(gpu.unwrap_or(0) as usize).min(self.class_key.len() - 1)]
    }
}

/// What makes running activities interchangeable: resolved resource weights (sorted by
/// resource, duplicates summed) and the latency-bound share. Interned once per run.
struct ClassKey {
    weights: Vec<(usize, f64)>,
    latency_frac: f64,
}

impl ClassKey {
    /// Whether activities of this key can ever run slower than standalone.
    fn shared(&self) -> bool {
        !self.weights.is_empty() || self.latency_frac > 0.0
    }
}

/// A job in flight (slots are reused, buffers and all, once a job finishes).
struct JobState {
    live: bool,
    number: u64,
    arrived: SimTime,
    pending: Vec<u32>,
    remaining: usize,
    /// GPU binding per partition, and the job-level binding last.
    gpu: Vec<Option<u32>>,
    /// Holds not yet released: (release slot, instance, amount).
    held: Vec<(usize, HoldIndex, u64)>,
}

/// The requester's token while waiting for holds.
#[derive(Clone, Copy)]
struct Token {
    job: usize,
    stage: usize,
    partition: u32,
    ready: SimTime,
}

/// A running stage instance (slots are reused once it finishes).
struct Activity {
    live: bool,
    token: Token,
    start: SimTime,
    standalone_s: f64,
    gpu: Option<u32>,
    blocked_on: Option<HoldIndex>,
    class: usize,
    lost_at_start: Vec<f64>,
}

/// A virtual-time class of identical running activities.
struct Class {
    /// Index into the engine's interned class keys.
    key: usize,
    /// False once retired to the free list (its slot may be reused under another key).
    live: bool,
    shared: bool,
    /// Members by virtual finish time.
    members: BinaryHeap<Reverse<(OrdF64, usize)>>,
    speed: f64,
    limiter: Option<Limiter>,
    virtual_now: f64,
    last: SimTime,
    /// Cumulative wall seconds a member has lost, per limiter slot.
    lost: Vec<f64>,
    generation: u64,
    scheduled: SimTime,
}

/// A non-negative float as a heap key: for such floats (virtual finish times are never
/// negative) the bit patterns order exactly as the values, so one integer compare does.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct OrdF64(u64);

impl OrdF64 {
    fn new(x: f64) -> Self {
        debug_assert!(x >= 0.0, "virtual finish time {x} is negative");
        OrdF64(x.to_bits())
    }

    fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

enum Event {
    Arrival,
    ClassDue {
        class: usize,
        generation: u64,
    },
    /// An unshared activity (slot) reaches its end: it runs at speed 1 whatever else
    /// runs, so it is scheduled once, at start + its standalone time, outside any class.
    Done(usize),
}

/// Grants go straight to the back of the work queue, in the order they are made.
struct StartWork<'a>(&'a mut VecDeque<Work>);

impl Extend<Grant<Token>> for StartWork<'_> {
    fn extend<I: IntoIterator<Item = Grant<Token>>>(&mut self, grants: I) {
        for g in grants {
            self.0.push_back(Work::Start(g));
        }
    }
}

enum Work {
    Ready {
        job: usize,
        stage: usize,
        partition: u32,
    },
    Start(Grant<Token>),
    Finish(usize),
}

struct Engine<'m> {
    model: &'m Model,
    stages: Vec<StagePlan>,
    slots_per_job: usize,
    partitions: u32,
    rate_info: Vec<RateResourceInfo>,
    capacities: Vec<f64>,
    hold_info: Vec<HoldResourceInfo>,
    holds: Holdables<Token>,
    queue: EventQueue<Event>,
    rng: Pcg64,
    arrival_rng: Pcg64,
    /// Poisson inter-arrival gaps (None: no Poisson arrivals, or an invalid rate).
    arrival_gap: Option<Exp<f64>>,
    jobs: Vec<JobState>,
    /// Dependencies outstanding per instance slot of a fresh job.
    pending_template: Vec<u32>,
    free_jobs: Vec<usize>,
    activities: Vec<Activity>,
    free_activities: Vec<usize>,
    classes: Vec<Class>,
    demands: Vec<ClassDemand>,
    keys: Vec<ClassKey>,
    /// Per key: whether its activities can be slowed (they draw on a rate resource or
    /// are partly latency bound); unshared ones bypass the classes.
    key_shared: Vec<bool>,
    /// The live class of each key, or `usize::MAX`.
    class_of_key: Vec<usize>,
    free_classes: Vec<usize>,
    solver: Solver,
    memo: SolveMemo,
    memo_key: Vec<u64>,
    speeds: Vec<ClassSpeed>,
    rates_dirty: bool,
    touched_classes: Vec<usize>,
    work: VecDeque<Work>,
    /// Scratch buffers reused across events.
    released: Vec<(HoldIndex, u64)>,
    hold_touched: Vec<HoldIndex>,
    lost_scratch: Vec<f64>,
    now: SimTime,
    events: u64,
    started: u64,
    completed: u64,
}

impl<'m> Engine<'m> {
    fn new(model: &'m Model) -> Result<Self, EngineError> {
        let hw = &model.hardware;
        let ngpu = hw.gpus.len();
        // Rate resources: DRAM, pools, then per GPU: compute, H2D, D2H (+ duplex).
        let mut rate_info = vec![RateResourceInfo {
            name: "dram".into(),
            kind: RateKind::Dram,
            capacity: hw.dram.capacity_gbps,
            gpu: None,
        }];
        for p in &hw.pools {
            rate_info.push(RateResourceInfo {
                name: format!("pool:{}", p.name),
                kind: RateKind::Pool,
                capacity: p.threads,
                gpu: None,
            });
        }
        let duplex = hw.gpus.iter().any(|g| g.link.duplex_gbps.is_some());
        let mut gpu_rate_base = Vec::with_capacity(ngpu);
        for (g, gpu) in hw.gpus.iter().enumerate() {
            gpu_rate_base.push(rate_info.len());
            let gi = Some(g as u32);
            let mut push = |suffix: &str, kind, capacity| {
                rate_info.push(RateResourceInfo {
                    name: format!("{}.{suffix}", gpu.name),
                    kind,
                    capacity,
                    gpu: gi,
                })
            };
            push("compute", RateKind::GpuCompute, 1.0);
            push("pcie_h2d", RateKind::PcieH2d, gpu.link.h2d_gbps);
            push("pcie_d2h", RateKind::PcieD2h, gpu.link.d2h_gbps);
            if duplex {
                push(
                    "pcie_duplex",
                    RateKind::PcieDuplex,
                    gpu.link
                        .duplex_gbps
                        .unwrap_or(gpu.link.h2d_gbps + gpu.link.d2h_gbps),
                );
            }
        }
        let capacities = rate_info.iter().map(|r| r.capacity).collect();

        // Holdables: cores, host RAM, VRAM per GPU, then locks (per GPU or global).
        let mut hold_info = vec![
            HoldResourceInfo {
                name: "cores".into(),
                capacity: hw.cpu_cores as u64,
                resource: HoldResource::Cores,
                gpu: None,
            },
            HoldResourceInfo {
                name: "host_ram".into(),
                capacity: hw.host_ram_bytes,
                resource: HoldResource::HostRam,
                gpu: None,
            },
        ];
        let vram_base = hold_info.len();
        for (g, gpu) in hw.gpus.iter().enumerate() {
            hold_info.push(HoldResourceInfo {
                name: format!("{}.vram", gpu.name),
                capacity: gpu.vram_bytes,
                resource: HoldResource::Vram,
                gpu: Some(g as u32),
            });
        }
        let mut lock_slot = Vec::with_capacity(hw.locks.len());
        for (l, lock) in hw.locks.iter().enumerate() {
            if lock.per_gpu {
                lock_slot.push(HoldSlot::PerGpu(hold_info.len()));
                for (g, gpu) in hw.gpus.iter().enumerate() {
                    hold_info.push(HoldResourceInfo {
                        name: format!("{}@{}", lock.name, gpu.name),
                        capacity: lock.capacity,
                        resource: HoldResource::Lock(l),
                        gpu: Some(g as u32),
                    });
                }
            } else {
                lock_slot.push(HoldSlot::Global(hold_info.len()));
                hold_info.push(HoldResourceInfo {
                    name: lock.name.clone(),
                    capacity: lock.capacity,
                    resource: HoldResource::Lock(l),
                    gpu: None,
                });
            }
        }
        let holds = Holdables::new(hold_info.iter().map(|h| h.capacity).collect(), ngpu as u32);

        // Stages.
        let w = &model.workload;
        let partitions = w.partitions.max(1);
        let mut stages = Vec::with_capacity(w.stages.len());
        let mut slot = 0usize;
        for s in &w.stages {
            let bad = |why: String| EngineError::BadReference {
                stage: s.name.clone(),
                why,
            };
            let sampler =
                Sampler::new(&s.duration).map_err(|why| EngineError::BadDistribution {
                    stage: s.name.clone(),
                    why,
                })?;
            let mut needs = Vec::new();
            let mut until = Vec::new();
            for h in &s.holds {
                let slot = match h.resource {
                    HoldResource::Cores => HoldSlot::Global(0),
                    HoldResource::HostRam => HoldSlot::Global(1),
                    HoldResource::Vram => {
                        if ngpu == 0 {
                            return Err(bad("holds VRAM but the host has no GPU".into()));
                        }
                        HoldSlot::PerGpu(vram_base)
                    }
                    HoldResource::Lock(l) => {
                        let slot = *lock_slot
                            .get(l)
                            .ok_or_else(|| bad(format!("lock {l} does not exist")))?;
                        if matches!(slot, HoldSlot::PerGpu(_)) && ngpu == 0 {
                            return Err(bad("holds a per-GPU lock but the host has no GPU".into()));
                        }
                        slot
                    }
                };
                if h.until >= w.stages.len() {
                    return Err(bad(format!("hold until stage {} does not exist", h.until)));
                }
                needs.push((slot, h.amount));
                until.push(h.until);
            }
            for d in &s.demands {
                let ok = match d.target {
                    RateTarget::Dram => true,
                    RateTarget::Pool(p) => p < hw.pools.len(),
                    _ => ngpu > 0,
                };
                if !ok {
                    return Err(bad(format!(
                        "draws on {:?}, which does not exist",
                        d.target
                    )));
                }
            }
            let deps = s
                .after
                .iter()
                .map(|&d| {
                    if w.stages[d].per_partition && !s.per_partition {
                        partitions
                    } else {
                        1
                    }
                })
                .sum();
            stages.push(StagePlan {
                per_partition: s.per_partition,
                sampler,
                needs: needs.into(),
                until,
                deps_per_instance: deps,
                children: Vec::new(),
                slot_offset: slot,
                markers: Vec::new(),
                class_key: Vec::new(),
            });
            slot += if s.per_partition {
                partitions as usize
            } else {
                1
            };
        }
        for (i, s) in w.stages.iter().enumerate() {
            for &d in &s.after {
                stages[d].children.push(i);
            }
        }
        for (m, marker) in model.instrumentation.markers.iter().enumerate() {
            stages[marker.stage].markers.push((marker.edge, m));
        }
        // Intern every (stage, GPU) class key up front: joining a class is then an index.
        let mut keys = Vec::new();
        let mut key_index: HashMap<(Vec<(usize, u64)>, u64), usize> = HashMap::new();
        for (i, s) in w.stages.iter().enumerate() {
            for g in 0..ngpu.max(1) {
                let key = class_key(s, &gpu_rate_base, g, duplex);
                let id = *key_index.entry(key).or_insert_with_key(|k| {
                    keys.push(ClassKey {
                        weights: k.0.iter().map(|&(r, w)| (r, f64::from_bits(w))).collect(),
                        latency_frac: f64::from_bits(k.1),
                    });
                    keys.len() - 1
                });
                stages[i].class_key.push(id);
            }
        }
        let mut pending_template = vec![0u32; slot];
        for plan in &stages {
            let n = if plan.per_partition {
                partitions as usize
            } else {
                1
            };
            for p in 0..n {
                pending_template[plan.slot_offset + p] = plan.deps_per_instance;
            }
        }

        let rng = Pcg64::seed_from_u64(model.seed);
        // Arrivals draw from their own stream so service sampling does not shift them.
        let arrival_rng = Pcg64::seed_from_u64(model.seed ^ 0x9E37_79B9_7F4A_7C15);
        Ok(Self {
            model,
            stages,
            slots_per_job: slot,
            partitions,
            rate_info,
            capacities,
            hold_info,
            holds,
            queue: EventQueue::default(),
            rng,
            arrival_rng,
            arrival_gap: match &model.arrivals.kind {
                ArrivalKind::Poisson { rate_per_s } => Exp::new(*rate_per_s).ok(),
                _ => None,
            },
            jobs: Vec::new(),
            pending_template,
            free_jobs: Vec::new(),
            activities: Vec::new(),
            free_activities: Vec::new(),
            classes: Vec::new(),
            demands: Vec::new(),
            class_of_key: vec![usize::MAX; keys.len()],
            key_shared: keys.iter().map(ClassKey::shared).collect(),
            keys,
            free_classes: Vec::new(),
            solver: Solver::default(),
            memo: SolveMemo::default(),
            memo_key: Vec::new(),
            speeds: Vec::new(),
            rates_dirty: false,
            touched_classes: Vec::new(),
            work: VecDeque::new(),
            released: Vec::new(),
            hold_touched: Vec::new(),
            lost_scratch: Vec::new(),
            now: SimTime::ZERO,
            events: 0,
            started: 0,
            completed: 0,
        })
    }

    fn run<O: Observer>(&mut self, obs: &mut O) -> RunSummary {
        obs.resources(&self.rate_info, &self.hold_info);
        let total = self.model.arrivals.jobs;
        match &self.model.arrivals.kind {
            ArrivalKind::Closed { concurrency } => {
                for _ in 0..(*concurrency as u64).min(total) {
                    self.start_job(obs);
                }
                self.drain(obs);
            }
            ArrivalKind::Poisson { .. } | ArrivalKind::Trace { .. } => {
                self.schedule_next_arrival();
            }
        }
        while let Some((t, event)) = self.queue.pop() {
            match event {
                Event::Arrival => {
                    self.advance_to(t);
                    self.events += 1;
                    self.start_job(obs);
                    self.schedule_next_arrival();
                }
                Event::ClassDue { class, generation } => {
                    if self.classes[class].generation != generation {
                        continue;
                    }
                    self.advance_to(t);
                    self.events += 1;
                    self.complete_due(class);
                }
                Event::Done(a) => {
                    self.advance_to(t);
                    self.events += 1;
                    self.work.push_back(Work::Finish(a));
                }
            }
            self.drain(obs);
            if self.completed >= total {
                break;
            }
        }
        obs.finished(self.now);
        let stalled = (self.completed < total).then(|| {
            format!(
                "{} of {} jobs finished; {} stage instances wait for holdable resources that are never released",
                self.completed,
                total,
                self.holds.waiting()
            )
        });
        RunSummary {
            events: self.events,
            end: self.now,
            jobs_completed: self.completed,
            jobs_started: self.started,
            stalled,
        }
    }

    fn advance_to(&mut self, t: SimTime) {
        debug_assert!(t >= self.now);
        self.now = t;
    }

    fn schedule_next_arrival(&mut self) {
        if self.started >= self.model.arrivals.jobs {
            return;
        }
        let at = match &self.model.arrivals.kind {
            ArrivalKind::Poisson { .. } => {
                let gap = self
                    .arrival_gap
                    .map(|d| d.sample(&mut self.arrival_rng))
                    .unwrap_or(f64::INFINITY);
                self.now + secs_to_nanos(gap)
            }
            ArrivalKind::Trace { times_s } => match times_s.get(self.started as usize) {
                Some(&s) => SimTime::from_secs(s).max(self.now),
                None => return,
            },
            ArrivalKind::Closed { .. } => return,
        };
        self.queue.push(at, Event::Arrival);
    }

    fn start_job<O: Observer>(&mut self, obs: &mut O) {
        let number = self.started;
        self.started += 1;
        obs.job_arrived(self.now, number);
        let job = match self.free_jobs.pop() {
            Some(i) => i,
            None => {
                self.jobs.push(JobState {
                    live: false,
                    number: 0,
                    arrived: SimTime::ZERO,
                    pending: Vec::with_capacity(self.slots_per_job),
                    remaining: 0,
                    gpu: Vec::with_capacity(self.partitions as usize + 1),
                    held: Vec::new(),
                });
                self.jobs.len() - 1
            }
        };
        let state = &mut self.jobs[job];
        debug_assert!(!state.live && state.held.is_empty());
        state.live = true;
        state.number = number;
        state.arrived = self.now;
        state.pending.clear();
        state.pending.extend_from_slice(&self.pending_template);
        state.remaining = self.slots_per_job;
        state.gpu.clear();
        state.gpu.resize(self.partitions as usize + 1, None);
        for (s, plan) in self.stages.iter().enumerate() {
            if plan.deps_per_instance == 0 {
                if plan.per_partition {
                    for p in 0..self.partitions {
                        self.work.push_back(Work::Ready {
                            job,
                            stage: s,
                            partition: p,
                        });
                    }
                } else {
                    self.work.push_back(Work::Ready {
                        job,
                        stage: s,
                        partition: JOB_LEVEL,
                    });
                }
            }
        }
    }

    fn job(&self, job: usize) -> &JobState {
        let j = &self.jobs[job];
        debug_assert!(j.live, "live job");
        j
    }

    fn job_mut(&mut self, job: usize) -> &mut JobState {
        let j = &mut self.jobs[job];
        debug_assert!(j.live, "live job");
        j
    }

    fn slot(&self, stage: usize, partition: u32) -> usize {
        let plan = &self.stages[stage];
        plan.slot_offset
            + if plan.per_partition {
                partition as usize
            } else {
                0
            }
    }

    /// Index into a job's GPU bindings for a stage instance.
    fn binding_index(&self, partition: u32) -> usize {
        if partition == JOB_LEVEL {
            self.partitions as usize
        } else {
            partition as usize
        }
    }

    fn stage_ref(&self, token: &Token) -> StageRef {
        StageRef {
            job: self.job(token.job).number,
            partition: token.partition,
            stage: token.stage,
        }
    }

    fn fire_markers<O: Observer>(&self, obs: &mut O, token: &Token, edge: Edge, gpu: Option<u32>) {
        let r = self.stage_ref(token);
        obs.stage_edge(self.now, r, edge, gpu);
        for &(e, m) in &self.stages[token.stage].markers {
            if e == edge {
                obs.marker(self.now, m, r.job, r.partition, gpu);
            }
        }
    }

    fn current_gpu(&self, job: usize, partition: u32) -> Option<u32> {
        let j = self.job(job);
        j.gpu[self.binding_index(partition)].or(j.gpu[self.partitions as usize])
    }

    /// Processes zero-time consequences (readies, grants, finishes) until none remain,
    /// then re-solves rates once and reschedules the classes that changed.
    fn drain<O: Observer>(&mut self, obs: &mut O) {
        loop {
            while let Some(w) = self.work.pop_front() {
                match w {
                    Work::Ready {
                        job,
                        stage,
                        partition,
                    } => self.on_ready(obs, job, stage, partition),
                    Work::Start(grant) => self.on_start(obs, grant),
                    Work::Finish(a) => self.on_finish(obs, a),
                }
            }
            self.report_holds(obs);
            if self.rates_dirty {
                self.resolve_rates(obs);
            }
            self.reschedule_touched();
            if self.work.is_empty() {
                break;
            }
        }
    }

    fn on_ready<O: Observer>(&mut self, obs: &mut O, job: usize, stage: usize, partition: u32) {
        let token = Token {
            job,
            stage,
            partition,
            ready: self.now,
        };
        let gpu = self.current_gpu(job, partition);
        self.fire_markers(obs, &token, Edge::Ready, gpu);
        let needs = self.stages[stage].needs.clone();
        if needs.is_empty() {
            self.work.push_back(Work::Start(Grant {
                token,
                needs,
                gpu,
                blocked_on: None,
            }));
            return;
        }
        self.holds.request(
            Request {
                token,
                needs,
                gpu,
                blocked_on: None,
            },
            &mut StartWork(&mut self.work),
        );
    }

    fn on_start<O: Observer>(&mut self, obs: &mut O, grant: Grant<Token>) {
        let token = grant.token;
        let bi = self.binding_index(token.partition);
        if let Some(g) = grant.gpu {
            let j = self.job_mut(token.job);
            if j.gpu[bi].is_none() {
                j.gpu[bi] = Some(g);
            }
        }
        // Record holds with the slot whose end releases them.
        let plan = &self.stages[token.stage];
        let held = &mut self.jobs[token.job].held;
        for ((i, a), &u) in grant.taken().zip(&plan.until) {
            let p = if self.stages[u].per_partition {
                token.partition
            } else {
                0
            };
            held.push((self.stages[u].slot_offset + p as usize, i, a));
        }
        let gpu = self.current_gpu(token.job, token.partition);
        self.fire_markers(obs, &token, Edge::Start, gpu);
        let standalone_s = self.stages[token.stage].sampler.sample(&mut self.rng);
        let a = match self.free_activities.pop() {
            Some(i) => i,
            None => {
                self.activities.push(Activity {
                    live: false,
                    token,
                    start: SimTime::ZERO,
                    standalone_s: 0.0,
                    gpu: None,
                    blocked_on: None,
                    class: usize::MAX,
                    lost_at_start: Vec::new(),
                });
                self.activities.len() - 1
            }
        };
        let act = &mut self.activities[a];
        debug_assert!(!act.live);
        act.live = true;
        act.token = token;
        act.start = self.now;
        act.standalone_s = standalone_s;
        act.gpu = gpu;
        act.blocked_on = grant.blocked_on;
        act.class = usize::MAX;
        if standalone_s <= 0.0 {
            self.work.push_back(Work::Finish(a));
        } else if !self.key_shared[self.stages[token.stage].key_for(gpu)] {
            // Never slowed: it ends exactly its standalone time after now (rounded up to
            // the nanosecond, as a class would schedule it), and loses nothing.
            let end = self.now + ceil_to_u64(standalone_s * 1e9);
            self.queue.push(end, Event::Done(a));
        } else {
            self.join_class(a, gpu);
        }
    }

    fn join_class(&mut self, a: usize, gpu: Option<u32>) {
        let stage = self.activities[a].token.stage;
        let key = self.stages[stage].key_for(gpu);
        let c = match self.class_of_key[key] {
            usize::MAX => self.new_class(key),
            c => c,
        };
        self.advance_class(c);
        let nlim = self.rate_info.len() + 1;
        let class = &mut self.classes[c];
        let act = &mut self.activities[a];
        let finish = class.virtual_now + act.standalone_s;
        act.class = c;
        act.lost_at_start.clear();
        act.lost_at_start.extend_from_slice(&class.lost);
        debug_assert_eq!(class.lost.len(), nlim);
        class.members.push(Reverse((OrdF64::new(finish), a)));
        self.demands[c].count += 1;
        if class.shared {
            self.rates_dirty = true;
        }
        self.touched_classes.push(c);
    }

    fn new_class(&mut self, key: usize) -> usize {
        let k = &self.keys[key];
        let latency_frac = k.latency_frac;
        let shared = k.shared();
        let nlim = self.rate_info.len() + 1;
        let now = self.now;
        let c = match self.free_classes.pop() {
            Some(c) => {
                let class = &mut self.classes[c];
                debug_assert!(!class.live && class.members.is_empty());
                class.key = key;
                class.live = true;
                class.shared = shared;
                class.speed = 1.0;
                class.limiter = None;
                class.virtual_now = 0.0;
                class.last = now;
                class.lost.clear();
                class.lost.resize(nlim, 0.0);
                // A reused slot keeps counting generations, so its old events stay stale.
                class.generation += 1;
                class.scheduled = SimTime::NEVER;
                let d = &mut self.demands[c];
                d.count = 0;
                d.weights.clear();
                d.weights.extend_from_slice(&k.weights);
                d.latency_frac = latency_frac;
                c
            }
            None => {
                self.classes.push(Class {
                    key,
                    live: true,
                    shared,
                    members: BinaryHeap::new(),
                    speed: 1.0,
                    limiter: None,
                    virtual_now: 0.0,
                    last: now,
                    lost: vec![0.0; nlim],
                    generation: 0,
                    scheduled: SimTime::NEVER,
                });
                self.demands.push(ClassDemand {
                    count: 0,
                    weights: k.weights.clone(),
                    latency_frac,
                });
                self.classes.len() - 1
            }
        };
        self.class_of_key[key] = c;
        c
    }

    /// Brings a class's virtual clock and lost-time counters up to now.
    fn advance_class(&mut self, c: usize) {
        let now = self.now;
        let nrate = self.rate_info.len();
        let class = &mut self.classes[c];
        let dt = (now - class.last) as f64 * 1e-9;
        if dt > 0.0 {
            class.virtual_now += class.speed * dt;
            if class.speed < 1.0 {
                let slot = match class.limiter {
                    Some(Limiter::Rate(r)) => r,
                    Some(Limiter::DramLatency) | None => nrate,
                };
                class.lost[slot] += (1.0 - class.speed) * dt;
            }
        }
        class.last = now;
    }

    /// Pops every member of `c` whose virtual finish time has been reached.
    fn complete_due(&mut self, c: usize) {
        self.advance_class(c);
        let class = &mut self.classes[c];
        class.scheduled = SimTime::NEVER;
        let tolerance = 1e-9 + class.virtual_now.abs() * 1e-13;
        while let Some(&Reverse((f, a))) = class.members.peek() {
            let f = f.get();
            if f > class.virtual_now + tolerance {
                break;
            }
            class.members.pop();
            self.demands[c].count -= 1;
            self.work.push_back(Work::Finish(a));
            if class.shared {
                self.rates_dirty = true;
            }
        }
        self.touched_classes.push(c);
    }

    fn on_finish<O: Observer>(&mut self, obs: &mut O, a: usize) {
        let act = &mut self.activities[a];
        debug_assert!(act.live, "live activity");
        act.live = false;
        self.free_activities.push(a);
        let act = &self.activities[a];
        let token = act.token;
        let mut lost_s = std::mem::take(&mut self.lost_scratch);
        lost_s.clear();
        if act.class == usize::MAX {
            lost_s.resize(self.rate_info.len() + 1, 0.0);
        } else {
            let class = &self.classes[act.class];
            lost_s.extend(
                class
                    .lost
                    .iter()
                    .zip(&act.lost_at_start)
                    .map(|(n, s)| n - s),
            );
        }
        let (start, standalone_s, gpu, blocked_on) =
            (act.start, act.standalone_s, act.gpu, act.blocked_on);
        self.fire_markers(obs, &token, Edge::End, gpu);
        let record = StageRecord {
            stage_ref: self.stage_ref(&token),
            ready: token.ready,
            start,
            end: self.now,
            standalone_s,
            gpu,
            lost_s,
            blocked_on,
        };
        obs.stage_finished(&record);
        self.lost_scratch = record.lost_s;

        // Release holds due at the end of this slot.
        let slot = self.slot(token.stage, token.partition);
        let mut released = std::mem::take(&mut self.released);
        released.clear();
        let held = &mut self.jobs[token.job].held;
        let mut kept = 0;
        for j in 0..held.len() {
            let (s, i, amount) = held[j];
            if s == slot {
                released.push((i, amount));
            } else {
                held[kept] = held[j];
                kept += 1;
            }
        }
        held.truncate(kept);
        if !released.is_empty() {
            self.holds
                .release(&released, &mut StartWork(&mut self.work));
        }
        self.released = released;

        // Wake children.
        let plan_per_partition = self.stages[token.stage].per_partition;
        for ci in 0..self.stages[token.stage].children.len() {
            let child = self.stages[token.stage].children[ci];
            let child_pp = self.stages[child].per_partition;
            // Inclusive: JOB_LEVEL is u32::MAX.
            let (first, last) = if child_pp && !plan_per_partition {
                (0, self.partitions - 1)
            } else if child_pp {
                (token.partition, token.partition)
            } else {
                (JOB_LEVEL, JOB_LEVEL)
            };
            for p in first..=last {
                let s = self.slot(child, p);
                let job = &mut self.jobs[token.job];
                job.pending[s] -= 1;
                if job.pending[s] == 0 {
                    self.work.push_back(Work::Ready {
                        job: token.job,
                        stage: child,
                        partition: p,
                    });
                }
            }
        }

        let job = self.job_mut(token.job);
        job.remaining -= 1;
        if job.remaining == 0 {
            job.live = false;
            debug_assert!(job.held.is_empty(), "job finished holding resources");
            let (number, arrived) = (job.number, job.arrived);
            self.free_jobs.push(token.job);
            self.completed += 1;
            obs.job_finished(self.now, number, arrived);
            if matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
                && self.started < self.model.arrivals.jobs
            {
                self.start_job(obs);
            }
        }
    }

    fn report_holds<O: Observer>(&mut self, obs: &mut O) {
        let mut touched = std::mem::take(&mut self.hold_touched);
        self.holds.take_touched_into(&mut touched);
        if touched.is_empty() {
            self.hold_touched = touched;
            return;
        }
        let waiting = self.holds.waiting();
        for &i in &touched {
            obs.hold_changed(self.now, i, self.holds.in_use(i), waiting);
        }
        self.hold_touched = touched;
    }

    fn resolve_rates<O: Observer>(&mut self, obs: &mut O) {
        self.rates_dirty = false;
        for c in 0..self.classes.len() {
            if self.classes[c].shared && self.demands[c].count > 0 {
                self.advance_class(c);
            }
        }
        // DRAM loses efficiency as more streams interleave (0 loss: no change).
        let dram = &self.model.hardware.dram;
        if dram.efficiency_loss_per_stream > 0.0 {
            let streams: u32 = self
                .demands
                .iter()
                .filter(|d| d.weights.first().is_some_and(|&(r, _)| r == 0))
                .map(|d| d.count)
                .sum();
            self.capacities[0] = dram.effective_capacity_gbps(streams);
        }
        // The solution depends only on the DRAM capacity (the others never change during
        // a run) and on each sharing class's demand identity and count: classes that are
        // empty or draw on nothing take no part.
        let mut key = std::mem::take(&mut self.memo_key);
        key.clear();
        key.push(self.capacities[0].to_bits());
        for (class, d) in self.classes.iter().zip(&self.demands) {
            key.push(if class.shared && d.count > 0 {
                ((class.key as u64) << 32) | d.count as u64
            } else {
                u64::MAX
            });
        }
        let mut speeds = std::mem::take(&mut self.speeds);
        if !self.memo.recall(&key, &mut self.solver, &mut speeds) {
            self.solver.solve(
                &self.capacities,
                0,
                &self.model.hardware.dram.latency,
                &self.demands,
                &mut speeds,
            );
            self.memo.remember(&key, &self.solver, &speeds);
        }
        self.memo_key = key;
        for (c, s) in speeds.iter().enumerate() {
            let class = &mut self.classes[c];
            if !class.shared || self.demands[c].count == 0 {
                continue;
            }
            if class.speed != s.speed || class.limiter != s.limiter {
                class.speed = s.speed;
                class.limiter = s.limiter;
                self.touched_classes.push(c);
            }
        }
        self.speeds = speeds;
        obs.rates_changed(self.now, &self.solver.usage, self.solver.latency_slowdown);
    }

    /// Puts each touched class's next completion on the queue (or retires the class).
    fn reschedule_touched(&mut self) {
        let mut touched = std::mem::take(&mut self.touched_classes);
        if touched.len() > 1 {
            touched.sort_unstable();
            touched.dedup();
        }
        for &c in &touched {
            self.advance_class(c);
            if self.demands[c].count == 0 {
                // Retire the empty class so one-off demand vectors do not pile up; bumping
                // the generation makes any queued completion of it stale.
                let class = &mut self.classes[c];
                if class.live {
                    class.live = false;
                    class.generation += 1;
                    class.scheduled = SimTime::NEVER;
                    self.class_of_key[class.key] = usize::MAX;
                    self.free_classes.push(c);
                }
                continue;
            }
            let class = &mut self.classes[c];
            let Some(&Reverse((f, _))) = class.members.peek() else {
                continue;
            };
            let f = f.get();
            // Round up so the event never fires before the work is done.
            let remaining = (f - class.virtual_now).max(0.0);
            let next = self.now + ceil_to_u64((remaining / class.speed) * 1e9);
            if next == class.scheduled {
                continue;
            }
            class.generation += 1;
            class.scheduled = next;
            self.queue.push(
                next,
                Event::ClassDue {
                    class: c,
                    generation: class.generation,
                },
            );
        }
        touched.clear();
        self.touched_classes = touched;
    }
}

/// The class key of `stage` bound to GPU `g`: resolved resource weights (sorted, duplicate
/// resources summed) and latency share, as bits so keys can be compared and hashed.
fn class_key(
    stage: &crate::model::Stage,
    gpu_rate_base: &[usize],
    g: usize,
    duplex: bool,
) -> (Vec<(usize, u64)>, u64) {
    let mut weights: Vec<(usize, u64)> = Vec::with_capacity(stage.demands.len() + 1);
    for d in &stage.demands {
        let (target, amount) = (d.target, d.amount);
        let base = || gpu_rate_base[g];
        let r = match target {
            RateTarget::Dram => 0,
            RateTarget::Pool(p) => 1 + p,
            RateTarget::GpuCompute => base(),
            RateTarget::PcieH2d => base() + 1,
            RateTarget::PcieD2h => base() + 2,
        };
        weights.push((r, amount.to_bits()));
        if duplex && matches!(target, RateTarget::PcieH2d | RateTarget::PcieD2h) {
            weights.push((base() + 3, amount.to_bits()));
        }
    }
    weights.sort_unstable();
    // Merge duplicate resources (e.g. two DRAM demands) by summing.
    let mut merged: Vec<(usize, u64)> = Vec::with_capacity(weights.len());
    for (r, w) in weights {
        match merged.last_mut() {
            Some((lr, lw)) if *lr == r => *lw = (f64::from_bits(*lw) + f64::from_bits(w)).to_bits(),
            _ => merged.push((r, w)),
        }
    }
    (merged, stage.latency_bound_frac.to_bits())
}

/// `x.ceil() as u64` for x >= 0 (and the same saturation for huge, infinite or NaN x),
/// without a libm call: below 2^53 the truncation is exact, and above it every float is
/// already an integer.
fn ceil_to_u64(x: f64) -> u64 {
    let t = x as u64;
    if (t as f64) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::ceil_to_u64;

    #[test]
    fn ceil_to_u64_matches_f64_ceil() {
        let mut samples = vec![0.0, 0.3, 1.0, 1.000_000_000_000_000_2, 2f64.powi(53) - 0.5];
        samples.extend([2f64.powi(53), 2f64.powi(64), 1e300, f64::INFINITY, f64::NAN]);
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mantissa = (x >> 11) as f64 / (1u64 << 53) as f64;
            samples.push(mantissa * 10f64.powi((x % 25) as i32 - 5));
        }
        for v in samples {
            assert_eq!(ceil_to_u64(v), v.ceil() as u64, "v = {v:e}");
        }
    }
}
