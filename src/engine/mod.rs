//! The discrete-event engine: clock, event queue, activities, holdable resources and the
//! fluid bandwidth-sharing solver. It knows nothing of files, TOML or plots.
//!
//! A run turns a [`Model`] into a stream of [`Observer`] callbacks:
//!
//! ```
//! use bwsim::engine::{simulate, NullObserver};
//! use bwsim::model::*;
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
use solver::{ClassDemand, ClassSpeed, Solver};

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
    needs: Vec<(HoldSlot, u64)>,
    until: Vec<usize>,
    demands: Vec<(RateTarget, f64)>,
    latency_frac: f64,
    /// Dependencies an instance waits for.
    deps_per_instance: u32,
    children: Vec<usize>,
    /// First instance slot of this stage within a job.
    slot_offset: usize,
    markers: Vec<(Edge, MarkerId)>,
}

/// A job in flight.
struct JobState {
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

/// A running stage instance.
struct Activity {
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
    key: (Vec<(usize, u64)>, u64),
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

/// A float ordered by `total_cmp`, for heap keys.
#[derive(Clone, Copy, PartialEq)]
struct OrdF64(f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

enum Event {
    Arrival,
    ClassDue { class: usize, generation: u64 },
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
    gpu_rate_base: Vec<usize>,
    duplex: bool,
    hold_info: Vec<HoldResourceInfo>,
    holds: Holdables<Token>,
    queue: EventQueue<Event>,
    rng: Pcg64,
    arrival_rng: Pcg64,
    jobs: Vec<Option<JobState>>,
    free_jobs: Vec<usize>,
    activities: Vec<Option<Activity>>,
    free_activities: Vec<usize>,
    classes: Vec<Class>,
    demands: Vec<ClassDemand>,
    class_index: HashMap<(Vec<(usize, u64)>, u64), usize>,
    free_classes: Vec<usize>,
    solver: Solver,
    speeds: Vec<ClassSpeed>,
    rates_dirty: bool,
    touched_classes: Vec<usize>,
    work: VecDeque<Work>,
    grants: Vec<Grant<Token>>,
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
                needs,
                until,
                demands: s.demands.iter().map(|d| (d.target, d.amount)).collect(),
                latency_frac: s.latency_bound_frac,
                deps_per_instance: deps,
                children: Vec::new(),
                slot_offset: slot,
                markers: Vec::new(),
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
            gpu_rate_base,
            duplex,
            hold_info,
            holds,
            queue: EventQueue::default(),
            rng,
            arrival_rng,
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            activities: Vec::new(),
            free_activities: Vec::new(),
            classes: Vec::new(),
            demands: Vec::new(),
            class_index: HashMap::new(),
            free_classes: Vec::new(),
            solver: Solver::default(),
            speeds: Vec::new(),
            rates_dirty: false,
            touched_classes: Vec::new(),
            work: VecDeque::new(),
            grants: Vec::new(),
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
            ArrivalKind::Poisson { rate_per_s } => {
                let gap = Exp::new(*rate_per_s)
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
        let mut pending = vec![0u32; self.slots_per_job];
        for plan in &self.stages {
            let n = if plan.per_partition {
                self.partitions as usize
            } else {
                1
            };
            for p in 0..n {
                pending[plan.slot_offset + p] = plan.deps_per_instance;
            }
        }
        let state = JobState {
            number,
            arrived: self.now,
            pending,
            remaining: self.slots_per_job,
            gpu: vec![None; self.partitions as usize + 1],
            held: Vec::new(),
        };
        let job = match self.free_jobs.pop() {
            Some(i) => {
                self.jobs[i] = Some(state);
                i
            }
            None => {
                self.jobs.push(Some(state));
                self.jobs.len() - 1
            }
        };
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
        self.jobs[job].as_ref().expect("live job")
    }

    fn job_mut(&mut self, job: usize) -> &mut JobState {
        self.jobs[job].as_mut().expect("live job")
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
                taken: Vec::new(),
                gpu,
                blocked_on: None,
            }));
            return;
        }
        let mut grants = std::mem::take(&mut self.grants);
        self.holds.request(
            Request {
                token,
                needs,
                gpu,
                blocked_on: None,
            },
            &mut grants,
        );
        self.work.extend(grants.drain(..).map(Work::Start));
        self.grants = grants;
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
        let releases: Vec<(usize, HoldIndex, u64)> = grant
            .taken
            .iter()
            .zip(&plan.until)
            .map(|(&(i, a), &u)| {
                let p = if self.stages[u].per_partition {
                    token.partition
                } else {
                    0
                };
                (self.stages[u].slot_offset + p as usize, i, a)
            })
            .collect();
        self.job_mut(token.job).held.extend(releases);
        let gpu = self.current_gpu(token.job, token.partition);
        self.fire_markers(obs, &token, Edge::Start, gpu);
        let standalone_s = self.stages[token.stage].sampler.sample(&mut self.rng);
        let activity = Activity {
            token,
            start: self.now,
            standalone_s,
            gpu,
            blocked_on: grant.blocked_on,
            class: usize::MAX,
            lost_at_start: Vec::new(),
        };
        let a = match self.free_activities.pop() {
            Some(i) => {
                self.activities[i] = Some(activity);
                i
            }
            None => {
                self.activities.push(Some(activity));
                self.activities.len() - 1
            }
        };
        if standalone_s <= 0.0 {
            self.work.push_back(Work::Finish(a));
        } else {
            self.join_class(a, gpu);
        }
    }

    /// The class key for a stage instance: resolved resource weights and latency share.
    fn class_key(&self, stage: usize, gpu: Option<u32>) -> (Vec<(usize, u64)>, u64) {
        let plan = &self.stages[stage];
        let g = gpu.unwrap_or(0) as usize;
        let mut weights: Vec<(usize, u64)> = Vec::with_capacity(plan.demands.len() + 1);
        for &(target, amount) in &plan.demands {
            let base = || self.gpu_rate_base[g];
            let r = match target {
                RateTarget::Dram => 0,
                RateTarget::Pool(p) => 1 + p,
                RateTarget::GpuCompute => base(),
                RateTarget::PcieH2d => base() + 1,
                RateTarget::PcieD2h => base() + 2,
            };
            weights.push((r, amount.to_bits()));
            if self.duplex && matches!(target, RateTarget::PcieH2d | RateTarget::PcieD2h) {
                weights.push((base() + 3, amount.to_bits()));
            }
        }
        weights.sort_unstable();
        // Merge duplicate resources (e.g. two DRAM demands) by summing.
        let mut merged: Vec<(usize, u64)> = Vec::with_capacity(weights.len());
        for (r, w) in weights {
            match merged.last_mut() {
                Some((lr, lw)) if *lr == r => {
                    *lw = (f64::from_bits(*lw) + f64::from_bits(w)).to_bits()
                }
                _ => merged.push((r, w)),
            }
        }
        (merged, plan.latency_frac.to_bits())
    }

    fn join_class(&mut self, a: usize, gpu: Option<u32>) {
        let stage = self.activities[a]
            .as_ref()
            .expect("live activity")
            .token
            .stage;
        let key = self.class_key(stage, gpu);
        let c = match self.class_index.get(&key) {
            Some(&c) => c,
            None => self.new_class(key),
        };
        self.advance_class(c);
        let nlim = self.rate_info.len() + 1;
        let class = &mut self.classes[c];
        let act = self.activities[a].as_mut().expect("live activity");
        let finish = class.virtual_now + act.standalone_s;
        act.class = c;
        act.lost_at_start = class.lost.clone();
        debug_assert_eq!(class.lost.len(), nlim);
        class.members.push(Reverse((OrdF64(finish), a)));
        self.demands[c].count += 1;
        if class.shared {
            self.rates_dirty = true;
        }
        self.touched_classes.push(c);
    }

    fn new_class(&mut self, key: (Vec<(usize, u64)>, u64)) -> usize {
        let latency_frac = f64::from_bits(key.1);
        let weights: Vec<(usize, f64)> =
            key.0.iter().map(|&(r, w)| (r, f64::from_bits(w))).collect();
        let shared = !weights.is_empty() || latency_frac > 0.0;
        let reuse = self.free_classes.pop();
        let class = Class {
            key: key.clone(),
            live: true,
            shared,
            members: BinaryHeap::new(),
            speed: 1.0,
            limiter: None,
            virtual_now: 0.0,
            last: self.now,
            lost: vec![0.0; self.rate_info.len() + 1],
            // A reused slot keeps counting generations, so its old events stay stale.
            generation: reuse.map_or(0, |c| self.classes[c].generation + 1),
            scheduled: SimTime::NEVER,
        };
        let demand = ClassDemand {
            count: 0,
            weights,
            latency_frac,
        };
        let c = match reuse {
            Some(c) => {
                self.classes[c] = class;
                self.demands[c] = demand;
                c
            }
            None => {
                self.classes.push(class);
                self.demands.push(demand);
                self.classes.len() - 1
            }
        };
        self.class_index.insert(key, c);
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
        while let Some(&Reverse((OrdF64(f), a))) = class.members.peek() {
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
        let act = self.activities[a].take().expect("live activity");
        self.free_activities.push(a);
        let token = act.token;
        let lost_s = if act.class == usize::MAX {
            vec![0.0; self.rate_info.len() + 1]
        } else {
            let class = &self.classes[act.class];
            class
                .lost
                .iter()
                .zip(&act.lost_at_start)
                .map(|(n, s)| n - s)
                .collect()
        };
        self.fire_markers(obs, &token, Edge::End, act.gpu);
        let record = StageRecord {
            stage_ref: self.stage_ref(&token),
            ready: token.ready,
            start: act.start,
            end: self.now,
            standalone_s: act.standalone_s,
            gpu: act.gpu,
            lost_s,
            blocked_on: act.blocked_on,
        };
        obs.stage_finished(&record);

        // Release holds due at the end of this slot.
        let slot = self.slot(token.stage, token.partition);
        let job = self.job_mut(token.job);
        let mut released = Vec::new();
        job.held.retain(|&(s, i, amount)| {
            if s == slot {
                released.push((i, amount));
                false
            } else {
                true
            }
        });
        if !released.is_empty() {
            let mut grants = std::mem::take(&mut self.grants);
            self.holds.release(&released, &mut grants);
            self.work.extend(grants.drain(..).map(Work::Start));
            self.grants = grants;
        }

        // Wake children.
        let plan_per_partition = self.stages[token.stage].per_partition;
        let children = self.stages[token.stage].children.clone();
        for child in children {
            let child_pp = self.stages[child].per_partition;
            let targets: Vec<u32> = if child_pp && !plan_per_partition {
                (0..self.partitions).collect()
            } else if child_pp {
                vec![token.partition]
            } else {
                vec![JOB_LEVEL]
            };
            for p in targets {
                let s = self.slot(child, p);
                let job = self.job_mut(token.job);
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
            let state = self.jobs[token.job].take().expect("live job");
            self.free_jobs.push(token.job);
            debug_assert!(state.held.is_empty(), "job finished holding resources");
            self.completed += 1;
            obs.job_finished(self.now, state.number, state.arrived);
            if matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
                && self.started < self.model.arrivals.jobs
            {
                self.start_job(obs);
            }
        }
    }

    fn report_holds<O: Observer>(&mut self, obs: &mut O) {
        let touched = self.holds.take_touched();
        let waiting = self.holds.waiting();
        for i in touched {
            obs.hold_changed(self.now, i, self.holds.in_use(i), waiting);
        }
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
        let mut speeds = std::mem::take(&mut self.speeds);
        self.solver.solve(
            &self.capacities,
            0,
            &self.model.hardware.dram.latency,
            &self.demands,
            &mut speeds,
        );
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
        touched.sort_unstable();
        touched.dedup();
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
                    self.class_index.remove(&class.key);
                    self.free_classes.push(c);
                }
                continue;
            }
            let class = &mut self.classes[c];
            let Some(&Reverse((OrdF64(f), _))) = class.members.peek() else {
                continue;
            };
            // Round up so the event never fires before the work is done.
            let remaining = (f - class.virtual_now).max(0.0);
            let next = self.now + ((remaining / class.speed) * 1e9).ceil() as u64;
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
