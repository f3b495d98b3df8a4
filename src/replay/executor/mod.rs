//! Runs a scenario's DAG for real: the same arrivals (closed concurrency, Poisson,
//! trace), one OS thread per stage instance, holds as real FIFO semaphores granted
//! all-or-nothing as the engine grants them, RAM and VRAM permits as real allocations,
//! and every stage boundary and marker time-stamped. CPU stages run the synthetic
//! kernels; copies and GPU kernels go to a [`GpuBackend`].
//!
//! This file starts the jobs as the arrivals say and watches the clock; `job.rs` walks
//! one job's DAG (spawning instances as their parents finish, releasing holds at their
//! `until`); `instance.rs` runs one stage instance (takes its holds, does its work);
//! `recording.rs` is what comes out ([`Recording`]).

mod instance;
mod job;
mod recording;
#[cfg(test)]
mod tests;

pub use recording::{JobRecord, KernelSpan, Recording};

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration as StdDuration, Instant};

use rand_distr::Exp;

use crate::engine::{Arrivals, CompiledPlan};
use crate::model::{ArrivalKind, Model};
use crate::scenario::replay_info::{KernelKind, TransferInfo};
use crate::time::SimTime;

use super::error::{ExecutorFault, GpuError, ReplayError, Result};
use super::holds::{self, HoldClient, HoldServer};
use super::kernels::KernelHost;
use super::plan::MsmFromHost;
use super::plan::StagePlan;

/// The GPU side of a replay: real copies, kernels and device memory.
pub trait GpuBackend: Sync {
    /// Copies `t.bytes` in `t.dir`; returns the device-side time in seconds.
    fn copy(&self, t: &TransferInfo) -> Result<f64, GpuError>;
    /// Runs kernel `k` sized to take about `standalone_s` alone; returns the device-side
    /// kernel time in seconds.
    fn kernel(&self, k: KernelKind, standalone_s: f64) -> Result<f64, GpuError>;
    /// Runs MSM `m` sized to take about `standalone_s` alone, reading its points from
    /// host memory as it runs; returns the device-side time in seconds.
    fn msm_reading_host(&self, m: MsmFromHost, standalone_s: f64) -> Result<f64, GpuError>;
    /// Allocates `bytes` of device memory (a VRAM permit); returns a handle.
    fn alloc(&self, bytes: u64) -> Result<u64, GpuError>;
    /// Frees a handle from [`GpuBackend::alloc`].
    fn free(&self, handle: u64);
}

/// The first `jobs` arrival times, seconds, that the engine draws for a run of `kind`
/// seeded with `seed`: its own arrival stream, so a replay meets the simulated arrivals.
fn engine_arrivals(kind: &ArrivalKind, seed: u64, jobs: u64) -> Vec<f64> {
    let mut arrivals = Arrivals::new(kind, seed);
    let mut now = SimTime::ZERO;
    (0..jobs)
        .map_while(|job| {
            now = arrivals.next(kind, now, job)?;
            Some(now.as_secs())
        })
        .collect()
}

/// Replays one model.
pub struct Executor<'a> {
    model: &'a Model,
    stages: &'a [StagePlan],
    cpu: &'a KernelHost,
    /// One backend per GPU, by GPU index (empty: no GPU).
    gpus: Vec<&'a dyn GpuBackend>,
    /// What the engine compiles from the model: holds, samplers, children, slots.
    plan: CompiledPlan,
    holds: HoldClient,
    /// The table's side until `run` starts it.
    hold_server: Mutex<Option<HoldServer>>,
    t0: Instant,
    abort: AtomicBool,
    /// The first failure; it aborts the replay.
    error: Mutex<Option<ReplayError>>,
    rec: Mutex<Recording>,
}

impl<'a> Executor<'a> {
    /// Prepares a replay of `model` with the per-stage `stages` plan, one GPU backend per
    /// GPU of the model (GPU stages of a partition bound to GPU `g` run on `gpus[g]`).
    pub fn new(
        model: &'a Model,
        stages: &'a [StagePlan],
        cpu: &'a KernelHost,
        gpus: Vec<&'a dyn GpuBackend>,
    ) -> Result<Executor<'a>> {
        let plan = CompiledPlan::compile(model)?;
        let (holds, hold_server) = holds::channel();
        Ok(Executor {
            model,
            stages,
            cpu,
            gpus,
            plan,
            holds,
            hold_server: Mutex::new(Some(hold_server)),
            t0: Instant::now(),
            abort: AtomicBool::new(false),
            error: Mutex::new(None),
            rec: Mutex::new(Recording::default()),
        })
    }

    /// Runs every job of the model's arrivals; gives up (with an error) after
    /// `max_wall_s` seconds.
    pub fn run(mut self, max_wall_s: f64) -> Result<Recording> {
        self.t0 = Instant::now();
        let jobs = self.model.arrivals.jobs;
        let finished = AtomicBool::new(false);
        let server = self
            .hold_server
            .lock()
            .expect("poisoned")
            .take()
            .ok_or(ExecutorFault::RanTwice)?;
        let capacity = (self.plan.resources().holds.iter())
            .map(|h| h.capacity)
            .collect();
        let gpus = self.gpus_in_model();
        std::thread::scope(|s| {
            s.spawn(move || holds::serve(capacity, gpus, server));
            let this = &self;
            let finished = &finished;
            s.spawn(move || {
                let deadline = Instant::now() + StdDuration::from_secs_f64(max_wall_s);
                while !finished.load(Ordering::Relaxed) {
                    if Instant::now() >= deadline {
                        this.fail(ReplayError::TimedOut {
                            limit_s: max_wall_s,
                        });
                        return;
                    }
                    std::thread::sleep(StdDuration::from_millis(50));
                }
            });
            match &self.model.arrivals.kind {
                ArrivalKind::Closed { concurrency } => {
                    let next = AtomicU64::new(0);
                    std::thread::scope(|d| {
                        for _ in 0..(*concurrency).max(1) {
                            let next = &next;
                            d.spawn(move || {
                                loop {
                                    let j = next.fetch_add(1, Ordering::Relaxed);
                                    if j >= jobs || this.abort.load(Ordering::Relaxed) {
                                        break;
                                    }
                                    this.run_job(j);
                                }
                            });
                        }
                    });
                }
                ArrivalKind::Poisson { rate_per_s } => {
                    let times: Vec<f64> = match Exp::new(*rate_per_s) {
                        Ok(_) => engine_arrivals(&self.model.arrivals.kind, self.model.seed, jobs),
                        Err(e) => {
                            this.fail(ExecutorFault::PoissonArrivals(e).into());
                            Vec::new()
                        }
                    };
                    self.open_loop(&times);
                }
                ArrivalKind::Trace { times_s } => {
                    let times: Vec<f64> = times_s.iter().copied().take(jobs as usize).collect();
                    self.open_loop(&times);
                }
            }
            finished.store(true, Ordering::Relaxed);
            self.holds.close();
        });
        if let Some(e) = self.error.lock().expect("poisoned").take() {
            return Err(e);
        }
        let mut rec = std::mem::take(&mut *self.rec.lock().expect("poisoned"));
        rec.wall_s = self.t0.elapsed().as_secs_f64();
        Ok(rec)
    }

    fn open_loop(&self, times: &[f64]) {
        std::thread::scope(|s| {
            for (j, &t) in times.iter().enumerate() {
                let at = self.t0 + StdDuration::from_secs_f64(t.max(0.0));
                let now = Instant::now();
                if at > now {
                    std::thread::sleep(at - now);
                }
                if self.abort.load(Ordering::Relaxed) {
                    break;
                }
                s.spawn(move || self.run_job(j as u64));
            }
        });
    }

    fn now(&self) -> SimTime {
        SimTime(self.t0.elapsed().as_nanos() as u64)
    }

    /// Keeps `error` if it is the first, and aborts the replay.
    fn fail(&self, error: ReplayError) {
        let mut e = self.error.lock().expect("poisoned");
        if e.is_none() {
            *e = Some(error);
        }
        self.abort.store(true, Ordering::Relaxed);
    }

    /// GPUs as the engine counts them (per-GPU hold families have this many instances).
    fn gpus_in_model(&self) -> u32 {
        self.model.hardware.gpus.len() as u32
    }
}
