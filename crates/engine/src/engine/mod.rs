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
//! [`observer`] calls, and `general` is the event loop that drives them; `event_loop`
//! is what every loop keeps (clock, queue, random streams, counters, limit, fault).
//! The `lane` folder is an engine of its own for one-stage workloads (a single-server
//! queue, a processor-sharing pool): it runs without the general job, hold and class
//! tables, makes the same observer calls, and its tests hold it to the general engine
//! call by call. Only the queueing oracles and the peer benchmark take it; every
//! product scenario runs the general engine. This file compiles the plan and chooses
//! the engine.

mod activities;
mod agenda;
mod arrivals;
mod event_loop;
mod fluid;
#[cfg(test)]
mod fluid_tests;
mod general;
pub mod holdable;
#[cfg(test)]
mod holdable_tests;
mod holds;
mod ids;
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

use crate::model::Model;

use general::Engine;
use lane::{Lane, LaneEngine};
use plan::Plan;

/// Runs `model` to completion, reporting to `observer`, under the default limits.
pub fn simulate<O: Observer>(model: &Model, observer: &mut O) -> Result<RunSummary, EngineError> {
    simulate_with(model, observer, EngineLimits::default())
}

/// Runs `model` to completion, reporting to `observer`, within `limits`: through the lane
/// when its workload fits one, else through the general loop.
pub fn simulate_with<O: Observer>(
    model: &Model,
    observer: &mut O,
    limits: EngineLimits,
) -> Result<RunSummary, EngineError> {
    let plan = Plan::compile(model)?;
    match Lane::for_plan(&plan) {
        Some(lane) => LaneEngine::new(model, plan, lane, limits).run(observer),
        None => Engine::new(model, plan, limits).run(observer),
    }
}
