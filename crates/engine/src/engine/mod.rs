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
//!         dram: Dram { capacity_gbps: 100.0, latency: LatencyCurve::flat(), efficiency_loss_per_stream: 0.0, sharing: Default::default() },
//!         gpus: vec![],
//!         locks: vec![],
//!         pools: vec![],
//!     },
//!     workload: Workload {
//!         job_name: "job".into(),
//!         partitions: 1,
//!         stages: vec![Stage {
//!             name: "stream".into(),
//!             per_partition: false,
//!             after: vec![],
//!             duration: Duration::Fixed(1.0),
//!             holds: vec![],
//!             demands: vec![Demand { target: RateTarget::Dram, amount: 50.0 }],
//!             latency_bound_frac: 0.0,
//!             compute_bound_frac: 0.0,
//!             dram_write_frac: None,
//!             host_thread: None,
//!             cpu_load: None,
//!             gpu_kernel: false,
//!             staged_copy: None,
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
//! recomputed only when a class with shared demands gains or loses members; a class has
//! one pending completion event, in its own slot of the event queue, which re-rating
//! replaces (no stale entries to hold and skip).
//!
//! The parts, one concern each: [`resources`] (the resource table), `plan` (the model
//! compiled for a run), `sampler` (durations), `arrivals`, and the run's state as
//! components that each own their fields: `jobs` (the job table: slots, dependency
//! counts, GPU bindings, children woken), `holds` (the FIFO line over [`holdable`]
//! resources and what each job holds until when), `activities` (running instances and
//! the time they lost), `fluid` (the classes sharing rate resources, sped by [`solver`]),
//! `agenda` (the zero-time work of the current instant) and [`queue`] (the events to
//! come). `steps` takes an instance from ready to finished through them, making the
//! [`observer`] calls. The `lane` folder is the one fast path of the loop: one-stage
//! workloads (a single-server queue, a processor-sharing pool) run without the general
//! job, hold and class tables, making the same observer calls, and its tests hold it to
//! the general path call by call. Only the queueing oracles and the peer benchmark take
//! it (2.9x faster for an M/M/1 of 200,000 jobs, 1.6x for processor sharing); every
//! product scenario runs the general path. This file keeps only the event loop.

mod activities;
mod agenda;
mod arrivals;
mod fluid;
#[cfg(test)]
mod fluid_tests;
pub mod holdable;
#[cfg(test)]
mod holdable_tests;
mod holds;
mod jobs;
mod lane;
pub mod observer;
mod outcome;
mod plan;
pub mod queue;
pub mod resources;
mod sampler;
mod small_copy;
pub mod solver;
#[cfg(test)]
mod staging_tests;
mod steps;
#[cfg(test)]
mod test_model;
mod virtual_clock;

use rand::SeedableRng;
use rand_pcg::Pcg64;

pub use arrivals::Arrivals;
pub use observer::{
    HoldResourceInfo, Limiter, Loss, NullObserver, Observer, RateId, RateKind, RateResourceInfo,
    Scope, StageRecord, StageRef, Tee,
};
pub use outcome::{
    DEFAULT_MAX_EVENTS, EngineError, EngineLimits, Overflowed, RunSummary, Stall, Starved,
};
pub use plan::{CompiledHold, CompiledPlan, CompiledStage};
pub use resources::{GpuRates, MissingHold, Resources};
pub use sampler::{DistributionError, Sampler};

use crate::model::{ArrivalKind, Model};
use crate::time::SimTime;

use activities::Activities;
use agenda::{Agenda, Work};
use fluid::{ClassId, Due, Fluid};
use holds::Holds;
use jobs::JobTable;
use lane::{Lane, LaneRun};
use plan::Plan;
use queue::EventQueue;
use solver::ClassSpeed;

/// Runs `model` to completion, reporting to `observer`, under the default limits.
pub fn simulate<O: Observer>(model: &Model, observer: &mut O) -> Result<RunSummary, EngineError> {
    simulate_with(model, observer, EngineLimits::default())
}

/// Runs `model` to completion, reporting to `observer`, within `limits`.
pub fn simulate_with<O: Observer>(
    model: &Model,
    observer: &mut O,
    limits: EngineLimits,
) -> Result<RunSummary, EngineError> {
    let mut engine = Engine::new(model, limits)?;
    engine.run(observer)
}

#[derive(Clone, Copy)]
enum Event {
    Arrival,
    /// A fluid class's next member may be done (the class's one pending completion,
    /// in the queue slot of its index; a lane run's one class is [`ClassId::FIRST`]).
    ClassDue(ClassId),
    /// An unshared activity (slot) reaches its end: it runs at speed 1 whatever else
    /// runs, so it is scheduled once, at start + its standalone time, outside any class.
    Done(usize),
}

/// One run: the model's compiled plan, the components that hold the run's state (each
/// owns its fields; `steps` and the loop below take them in turn) and the loop's own
/// clock, counters and limit.
struct Engine<'m> {
    model: &'m Model,
    plan: Plan,
    /// Set when the workload fits the single-hold lane.
    lane: Option<Lane>,
    /// The lane's steps, hold line and running instances (unused off the lane).
    lane_run: LaneRun,
    /// Jobs in flight: dependency counts and GPU bindings.
    jobs: JobTable,
    /// What is held, by whom, until when; who waits.
    holds: Holds,
    /// Running stage instances.
    activities: Activities,
    /// The classes of running instances that share rate resources, and their speeds.
    fluid: Fluid,
    /// Zero-time work of the current instant.
    agenda: Agenda,
    /// Events to come.
    queue: EventQueue<Event>,
    /// Service-time sampling stream.
    rng: Pcg64,
    arrivals: Arrivals,
    now: SimTime,
    events: u64,
    started: u64,
    completed: u64,
    /// Zero-time steps (readies, starts, finishes) left before the event limit.
    steps_left: u64,
    limits: EngineLimits,
    /// Set when the run must stop with an error (checked once per event).
    fault: Option<EngineError>,
}

impl<'m> Engine<'m> {
    fn new(model: &'m Model, limits: EngineLimits) -> Result<Self, EngineError> {
        let plan = Plan::compile(model)?;
        let r = &plan.resources;
        let hold_capacities: Vec<u64> = r.holds.iter().map(|h| h.capacity).collect();
        let holds = Holds::new(hold_capacities.clone(), model.hardware.gpus.len() as u32);
        let fluid = Fluid::new(
            plan.keys.clone(),
            r.capacities(),
            r.dram,
            plan.pool_rules(model),
        );
        let lane = Lane::for_plan(&plan);
        let mut no_loss = Loss::default();
        fluid.no_loss(&mut no_loss);
        let rates = (r.capacities(), r.dram.index(), plan.pool_rules(model));
        Ok(Self {
            model,
            lane,
            lane_run: LaneRun::new(lane, &plan, &hold_capacities, rates, no_loss),
            jobs: JobTable::new(plan.partitions),
            holds,
            activities: Activities::default(),
            fluid,
            agenda: Agenda::default(),
            queue: EventQueue::default(),
            rng: Pcg64::seed_from_u64(model.seed),
            arrivals: Arrivals::new(&model.arrivals.kind, model.seed),
            now: SimTime::ZERO,
            events: 0,
            started: 0,
            completed: 0,
            steps_left: limits.max_events,
            limits,
            fault: None,
            plan,
        })
    }

    fn run<O: Observer>(&mut self, obs: &mut O) -> Result<RunSummary, EngineError> {
        obs.resources(&self.plan.resources.rates, &self.plan.resources.holds);
        let total = self.model.arrivals.jobs;
        // The loop is chosen here, once: the lane for a workload that fits it, else the
        // general loop. Neither calls into the other.
        match self.lane {
            Some(lane) => self.run_lane(obs, lane),
            None => self.run_general(obs),
        }
        if let Some(fault) = self.fault.take() {
            return Err(fault);
        }
        obs.finished(self.now);
        let stalled = (self.completed < total).then(|| Stall {
            jobs_completed: self.completed,
            jobs_total: total,
            waiting_instances: if self.lane.is_some() {
                self.lane_run.waiting()
            } else {
                self.holds.waiting()
            },
        });
        Ok(RunSummary {
            events: self.events,
            end: self.now,
            jobs_completed: self.completed,
            jobs_started: self.started,
            stalled,
        })
    }

    /// A run off the lane: a closed loop's first jobs, then the event loop.
    fn run_general<O: Observer>(&mut self, obs: &mut O) {
        if let Some(first) = self.begin_arrivals() {
            for _ in 0..first {
                self.start_job(obs);
            }
            self.drain(obs);
        }
        self.run_events(obs);
    }

    /// Jobs a closed loop starts at t = 0, or None for open arrivals, whose first
    /// arrival this schedules instead.
    fn begin_arrivals(&mut self) -> Option<u64> {
        match &self.model.arrivals.kind {
            ArrivalKind::Closed { concurrency } => {
                Some((*concurrency as u64).min(self.model.arrivals.jobs))
            }
            ArrivalKind::Poisson { .. } | ArrivalKind::Trace { .. } => {
                self.schedule_next_arrival();
                None
            }
        }
    }

    /// Whether a job that just finished makes room for the next one now: closed arrivals
    /// with jobs left to start.
    #[inline]
    fn closed_loop_has_more(&self) -> bool {
        matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
            && self.started < self.model.arrivals.jobs
    }

    /// The event loop off the lane: each event's zero-time work is drained before the
    /// next event, until the jobs are done, nothing is left or the run fails.
    fn run_events<O: Observer>(&mut self, obs: &mut O) {
        let total = self.model.arrivals.jobs;
        while let Some((t, event)) = self.queue.pop() {
            match event {
                Event::Arrival => {
                    self.advance_to(t);
                    self.start_job(obs);
                    self.schedule_next_arrival();
                }
                Event::ClassDue(class) => {
                    self.advance_to(t);
                    let agenda = &mut self.agenda;
                    self.fluid
                        .complete_due(t, class, |a| agenda.push(Work::Finish(a)));
                }
                Event::Done(a) => {
                    self.advance_to(t);
                    self.agenda.push(Work::Finish(a));
                }
            }
            self.drain(obs);
            if self.fault.is_some() || self.completed >= total {
                break;
            }
        }
    }

    /// Stops the run with `fault` (the first one wins); the loop returns it after the
    /// current event.
    #[cold]
    fn fail(&mut self, fault: EngineError) {
        self.agenda.clear();
        self.lane_run.clear();
        self.fault.get_or_insert(fault);
    }

    /// Schedules `event` at `at`, or fails the run when `at` is beyond the clock's range
    /// (the arithmetic saturates there).
    fn schedule(&mut self, at: SimTime, event: Event, what: impl FnOnce(&Self) -> Overflowed) {
        if at == SimTime::NEVER {
            let what = what(self);
            self.fail(EngineError::ClockOverflow {
                what,
                now_s: self.now.as_secs(),
            });
            return;
        }
        self.queue.push(at, event);
    }

    fn advance_to(&mut self, t: SimTime) {
        debug_assert!(t >= self.now);
        self.now = t;
    }

    fn schedule_next_arrival(&mut self) {
        if self.started >= self.model.arrivals.jobs {
            return;
        }
        let kind = &self.model.arrivals.kind;
        if let Some(at) = self.arrivals.next(kind, self.now, self.started) {
            let job = self.started;
            self.schedule(at, Event::Arrival, |_| Overflowed::Arrival { job });
        }
    }

    /// Counts one zero-time step against the event limit; false (the run failed with
    /// `EventLimit`) when none is left.
    #[inline]
    fn take_step(&mut self) -> bool {
        if self.steps_left == 0 {
            self.fail(EngineError::EventLimit {
                limit: self.limits.max_events,
                now_s: self.now.as_secs(),
                jobs_completed: self.completed,
            });
            return false;
        }
        self.steps_left -= 1;
        true
    }

    /// Processes zero-time consequences (readies, grants, finishes) until none remain,
    /// then reports the holds that changed, re-solves rates once and reschedules the
    /// classes that changed.
    fn drain<O: Observer>(&mut self, obs: &mut O) {
        loop {
            while let Some(w) = self.agenda.pop() {
                if !self.take_step() {
                    return;
                }
                match w {
                    Work::Ready { job, stage, scope } => self.on_ready(obs, job, stage, scope),
                    Work::Start {
                        token,
                        gpu,
                        blocked_on,
                    } => self.on_start(obs, token, gpu, blocked_on),
                    Work::Finish(a) => self.on_finish(obs, a),
                }
            }
            self.holds.report(self.now, obs);
            if !self.settle_classes(obs) {
                return;
            }
            if self.agenda.is_empty() {
                break;
            }
        }
    }

    /// Re-solves the classes' speeds when a shared class gained or lost members, and
    /// hands each re-rated class's next completion to the queue; false (the run failed)
    /// when one would fall beyond the clock's range.
    #[inline]
    fn settle_classes<O: Observer>(&mut self, obs: &mut O) -> bool {
        if self.fluid.needs_resolve() {
            let dram = &self.model.hardware.dram;
            let (usage, latency_slowdown) = self.fluid.resolve(self.now, dram);
            obs.rates_changed(self.now, usage, latency_slowdown);
            if dram.efficiency_loss_per_stream > 0.0 {
                let (streams, usable) = self.fluid.dram_usable();
                obs.dram_usable(self.now, streams, usable);
            }
        }
        let queue = &mut self.queue;
        let mut beyond = None;
        self.fluid.reschedule(self.now, |due: Due| {
            if due.at == SimTime::NEVER {
                beyond = Some(due.class);
                return;
            }
            // One pending completion per class: a re-rated class's earlier one goes.
            queue.set_slot(due.class.index(), due.at, Event::ClassDue(due.class))
        });
        let Some(class) = beyond else {
            return true;
        };
        let stage = self
            .fluid
            .next_member(class)
            .map(|a| self.stage_name_of(a))
            .unwrap_or_default();
        let starved = self.fluid.starved(self.now, class);
        self.fail(self.beyond_range(stage, starved));
        false
    }

    /// The error for a stage whose end falls beyond the clock's range: its sharing's
    /// fault when `starved` names the speed that put it there, else its own length's.
    fn beyond_range(&self, stage: String, starved: Option<ClassSpeed>) -> EngineError {
        let now_s = self.now.as_secs();
        let Some(s) = starved else {
            return EngineError::ClockOverflow {
                what: Overflowed::StageEnd { stage },
                now_s,
            };
        };
        let rate = match s.limiter {
            Some(Limiter::Rate(r)) => self.plan.resources.rates.get(r.index()),
            _ => None,
        };
        EngineError::NoProgress {
            stage,
            now_s,
            why: Starved {
                speed: s.speed,
                resource: rate.map(|r| r.name.clone()),
                capacity: rate.map(|r| r.capacity),
            },
        }
    }
}
