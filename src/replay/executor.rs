//! Runs a scenario's DAG for real: the same arrivals (closed concurrency, Poisson,
//! trace), one OS thread per stage instance, holds as real FIFO semaphores granted
//! all-or-nothing as the engine grants them, RAM and VRAM permits as real allocations,
//! and every stage boundary and marker time-stamped. CPU stages run the synthetic
//! kernels; copies and GPU kernels go to a [`GpuBackend`].

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration as StdDuration, Instant};

use super::error::{ReplayError, Result, chain, failed};
use rand::SeedableRng;
use rand_distr::Exp;
use rand_pcg::Pcg64;

use crate::engine::holdable::{HoldIndex, HoldSlot};
use crate::engine::{Arrivals, CompiledPlan, Scope};
use crate::model::{ArrivalKind, CACHE_LINE_BYTES, Edge, HoldResource, Model, StageId};
use crate::scenario::replay_info::{KernelKind, TransferInfo};
use crate::time::SimTime;
use crate::trace::recorder::{MarkerEvent, StageInstance};

use super::holds::{self, HoldClient, HoldServer};
use super::kernels::{CpuStageShape, KernelHost};
use super::plan::StagePlan;

/// The GPU side of a replay: real copies, kernels and device memory.
pub trait GpuBackend: Sync {
    /// Copies `t.bytes` in `t.dir`; returns the device-side time in seconds.
    fn copy(&self, t: &TransferInfo) -> Result<f64>;
    /// Runs kernel `k` sized to take about `standalone_s` alone; returns the device-side
    /// kernel time in seconds.
    fn kernel(&self, k: KernelKind, standalone_s: f64) -> Result<f64>;
    /// Allocates `bytes` of device memory (a VRAM permit); returns a handle.
    fn alloc(&self, bytes: u64) -> Result<u64>;
    /// Frees a handle from [`GpuBackend::alloc`].
    fn free(&self, handle: u64);
}

/// One job's arrival and completion, seconds from the start of the replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobRecord {
    /// Job number (arrival order).
    pub job: u64,
    /// When it arrived.
    pub arrived_s: f64,
    /// When its last stage finished.
    pub finished_s: f64,
}

/// One kernel's device-busy interval, seconds from the start of the replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelSpan {
    /// The GPU it ran on.
    pub gpu: u32,
    /// When the device started it (its reply time less its device time).
    pub start_s: f64,
    /// When its reply arrived.
    pub end_s: f64,
}

/// Everything a replay recorded.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Finished stage instances.
    pub stages: Vec<StageInstance>,
    /// Markers as they fired.
    pub markers: Vec<MarkerEvent>,
    /// Jobs, in completion order.
    pub jobs: Vec<JobRecord>,
    /// Device-busy intervals of GPU kernels, from the kernel's device time ending when
    /// its reply arrived.
    pub kernels: Vec<KernelSpan>,
    /// DRAM bytes moved by CPU kernels and copies, with the time their stage ended.
    pub dram_bytes: Vec<(f64, f64)>,
    /// Wall-clock length of the replay, seconds.
    pub wall_s: f64,
}

/// Host RAM touched per page, so that a RAM permit is real resident memory.
const PAGE: usize = 4096;

/// A held permit and what backs it.
struct Held {
    /// Slot whose end releases it.
    until_slot: usize,
    /// The instance taken and the amount.
    taken: (HoldIndex, u64),
    backing: Backing,
}

enum Backing {
    None,
    Ram(#[allow(dead_code)] Vec<u8>),
    /// A device allocation: (GPU index, handle).
    Vram(usize, u64),
}

/// A finished stage instance, sent to its job's thread.
struct Done {
    slot: usize,
    held: Vec<Held>,
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
    error: Mutex<Option<String>>,
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
            .ok_or_else(|| failed!("an executor runs once"))?;
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
                        this.fail(format!(
                            "the replay did not finish within {max_wall_s:.0} s (stalled, or far slower than predicted)"
                        ));
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
                            this.fail(e.to_string());
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
            return Err(ReplayError::Failed(e));
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

    fn fail(&self, msg: String) {
        let mut e = self.error.lock().expect("poisoned");
        if e.is_none() {
            *e = Some(msg);
        }
        self.abort.store(true, Ordering::Relaxed);
    }

    /// The slot within a job of `stage`'s instance in `scope`.
    fn slot(&self, stage: StageId, scope: Scope) -> usize {
        self.plan.stages()[stage].slot(scope)
    }

    fn fire(&self, stage: StageId, edge: Edge, job: u64, scope: Scope, gpu: Option<u32>) {
        let markers = self.plan.stages()[stage].markers();
        if !markers.iter().any(|&(e, _)| e == edge) {
            return;
        }
        let t = self.now();
        let mut rec = self.rec.lock().expect("poisoned");
        for &(_, marker) in markers.iter().filter(|&&(e, _)| e == edge) {
            rec.markers.push(MarkerEvent {
                t,
                marker,
                job,
                scope,
                gpu,
            });
        }
    }

    /// Runs one job's DAG to the end; its stage instances run on their own threads.
    fn run_job(&self, job: u64) {
        let arrived = self.now();
        let plan = &self.plan;
        // Instances each slot waits for.
        let mut pending = plan.pending_template().to_vec();
        let bound = Mutex::new(vec![None; plan.partitions() as usize + 1]);
        let (tx, rx) = mpsc::channel::<Done>();
        let mut held: Vec<Held> = Vec::new();
        let mut remaining = plan.slots_per_job();
        std::thread::scope(|s| {
            let bound = &bound;
            let spawn = |stage: StageId, scope: Scope| {
                let tx = tx.clone();
                let ready = self.now();
                let gpu = self.gpu_of(bound, scope);
                self.fire(stage, Edge::Ready, job, scope, gpu);
                s.spawn(move || {
                    let done = self.run_instance(job, stage, scope, ready, bound);
                    let _ = tx.send(done);
                });
            };
            for &root in plan.roots() {
                for scope in plan.scopes(root) {
                    spawn(root, scope);
                }
            }
            while remaining > 0 {
                let Ok(done) = rx.recv() else { break };
                remaining -= 1;
                held.extend(done.held);
                let mut kept = Vec::new();
                for h in held.drain(..) {
                    if h.until_slot == done.slot {
                        self.release(h);
                    } else {
                        kept.push(h);
                    }
                }
                held = kept;
                let (stage, scope) = plan.slot_owner(done.slot);
                for &child in plan.stages()[stage].children() {
                    for woken in plan.woken_scopes(stage, scope, child) {
                        let sl = self.slot(child, woken);
                        pending[sl] -= 1;
                        if pending[sl] == 0 {
                            spawn(child, woken);
                        }
                    }
                }
            }
        });
        for h in held {
            self.release(h);
        }
        let finished = self.now();
        self.rec.lock().expect("poisoned").jobs.push(JobRecord {
            job,
            arrived_s: arrived.as_secs(),
            finished_s: finished.as_secs(),
        });
    }

    /// GPUs as the engine counts them (per-GPU hold families have this many instances).
    fn gpus_in_model(&self) -> u32 {
        self.model.hardware.gpus.len() as u32
    }

    /// Where a partition's GPU binding lives: its own slot, or the job's (last) slot.
    fn binding_index(&self, scope: Scope) -> usize {
        match scope {
            Scope::Partition(p) => p as usize,
            Scope::Job => self.plan.partitions() as usize,
        }
    }

    /// The GPU an instance is bound to: its partition's, else the job's (as the engine).
    fn gpu_of(&self, bound: &Mutex<Vec<Option<u32>>>, scope: Scope) -> Option<u32> {
        let b = bound.lock().expect("poisoned");
        b[self.binding_index(scope)].or(b[b.len() - 1])
    }

    /// The backend that runs work bound to `gpu` (unbound GPU work runs on GPU 0, as the
    /// engine charges it).
    fn backend(&self, gpu: Option<u32>) -> Option<&'a dyn GpuBackend> {
        self.gpus.get(gpu.unwrap_or(0) as usize).copied()
    }

    fn release(&self, h: Held) {
        match h.backing {
            Backing::Vram(g, handle) => {
                if let Some(b) = self.gpus.get(g) {
                    b.free(handle);
                }
            }
            Backing::Ram(_) | Backing::None => {}
        }
        self.holds.release(vec![h.taken]);
    }

    fn run_instance(
        &self,
        job: u64,
        stage: StageId,
        scope: Scope,
        ready: SimTime,
        bound: &Mutex<Vec<Option<u32>>>,
    ) -> Done {
        let slot = self.slot(stage, scope);
        let mut held = Vec::new();
        let needs = self.plan.stages()[stage].holds();
        let request: Vec<(HoldSlot, u64)> = needs.iter().map(|h| (h.slot, h.amount)).collect();
        let aborted = self.abort.load(Ordering::Relaxed);
        let granted = if aborted {
            None
        } else {
            self.holds
                .acquire(&request, self.gpu_of(bound, scope), &self.abort)
                .ok()
        };
        let Some(granted_gpu) = granted else {
            // Aborted: finish the DAG quickly without work so that threads end.
            return Done { slot, held };
        };
        if let Some(g) = granted_gpu {
            // The first per-GPU grant binds the partition (or the job), as in the engine.
            let mut b = bound.lock().expect("poisoned");
            let i = self.binding_index(scope);
            b[i].get_or_insert(g);
        }
        for h in needs {
            let taken = h.slot.instance(granted_gpu);
            let g = granted_gpu.unwrap_or(0) as usize;
            let backing = match self.plan.resources().holds[taken].resource {
                HoldResource::HostRam => Backing::Ram(touched(h.amount)),
                HoldResource::Vram => match self.gpus.get(g).map(|b| b.alloc(h.amount)) {
                    Some(Ok(handle)) => Backing::Vram(g, handle),
                    Some(Err(e)) => {
                        let e = chain(&e);
                        self.fail(format!("VRAM permit of {} bytes on GPU {g}: {e}", h.amount));
                        Backing::None
                    }
                    None => Backing::None,
                },
                HoldResource::Cores | HoldResource::Lock(_) => Backing::None,
            };
            held.push(Held {
                until_slot: self.slot(h.until, scope),
                taken: (taken, h.amount),
                backing,
            });
        }
        let gpu = self.gpu_of(bound, scope);
        let start = self.now();
        self.fire(stage, Edge::Start, job, scope, gpu);
        // A job-level instance seeds its stream as partition u32::MAX.
        let partition = scope.partition().unwrap_or(u32::MAX);
        let seed = self.model.seed
            ^ job.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (stage as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9)
            ^ u64::from(partition).wrapping_mul(0x94d0_49bb_1331_11eb);
        let mut rng = Pcg64::seed_from_u64(seed);
        let standalone_s = self.plan.stages()[stage].sampler().sample(&mut rng);
        if !self.abort.load(Ordering::Relaxed)
            && let Err(e) = self.work(stage, standalone_s, gpu)
        {
            let e = chain(&e);
            self.fail(format!(
                "stage {:?} of job {job}: {e}",
                self.stages[stage].name
            ));
        }
        let end = self.now();
        self.fire(stage, Edge::End, job, scope, gpu);
        self.rec
            .lock()
            .expect("poisoned")
            .stages
            .push(StageInstance {
                job,
                scope,
                stage,
                ready,
                start,
                end,
                gpu,
                standalone_s,
            });
        Done { slot, held }
    }

    /// The stage's real work (GPU work on the backend of the GPU it is bound to).
    fn work(&self, stage: StageId, standalone_s: f64, bound_gpu: Option<u32>) -> Result<()> {
        let plan = &self.stages[stage];
        if let Some(shape) = &plan.cpu {
            let scale = if plan.mean_s > 0.0 {
                standalone_s / plan.mean_s
            } else {
                0.0
            };
            let shape = CpuStageShape {
                standalone_s,
                dram_bytes: shape.dram_bytes * scale,
                ..*shape
            };
            let work = self.cpu.work_for(&shape);
            let bytes = self.cpu.run(&work) as f64
                + work.per_thread.chase_steps as f64 * CACHE_LINE_BYTES * work.threads as f64;
            let t = self.now().as_secs();
            self.rec
                .lock()
                .expect("poisoned")
                .dram_bytes
                .push((t, bytes));
            return Ok(());
        }
        if plan.copy.is_none() && plan.kernel.is_none() {
            return Ok(());
        }
        let gpu = self
            .backend(bound_gpu)
            .ok_or_else(|| failed!("the stage needs a GPU, and this replay has none"))?;
        let gpu_index = bound_gpu.unwrap_or(0);
        std::thread::scope(|s| -> Result<()> {
            let copy = plan.copy.map(|t| {
                s.spawn(move || -> Result<f64> {
                    gpu.copy(&t)?;
                    Ok(t.bytes as f64)
                })
            });
            if let Some(k) = plan.kernel {
                let dev_s = gpu.kernel(k, standalone_s)?;
                let end = self.now().as_secs();
                self.rec.lock().expect("poisoned").kernels.push(KernelSpan {
                    gpu: gpu_index,
                    start_s: (end - dev_s).max(0.0),
                    end_s: end,
                });
            }
            if let Some(h) = copy {
                let bytes = h.join().map_err(|_| failed!("copy thread panicked"))??;
                let t = self.now().as_secs();
                self.rec
                    .lock()
                    .expect("poisoned")
                    .dram_bytes
                    .push((t, bytes));
            }
            Ok(())
        })
    }
}

/// `bytes` of host memory, every page written once so that it is resident.
fn touched(bytes: u64) -> Vec<u8> {
    let mut v = vec![0u8; bytes as usize];
    for i in (0..v.len()).step_by(PAGE) {
        v[i] = 1;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::kernels::BufferSizes;
    use crate::replay::plan::stage_plans;
    use crate::scenario::load_str;
    use std::path::Path;
    use std::sync::atomic::AtomicU32;

    /// A GPU that sleeps for its work and counts what it was given.
    struct FakeGpu {
        kernels: AtomicU32,
        copies: AtomicU32,
        live_allocs: AtomicU32,
    }

    impl FakeGpu {
        fn new() -> FakeGpu {
            FakeGpu {
                kernels: AtomicU32::new(0),
                copies: AtomicU32::new(0),
                live_allocs: AtomicU32::new(0),
            }
        }
    }

    impl GpuBackend for FakeGpu {
        fn copy(&self, _t: &TransferInfo) -> Result<f64> {
            self.copies.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(StdDuration::from_millis(2));
            Ok(0.002)
        }
        fn kernel(&self, _k: KernelKind, standalone_s: f64) -> Result<f64> {
            self.kernels.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(StdDuration::from_secs_f64(standalone_s));
            Ok(standalone_s)
        }
        fn alloc(&self, _bytes: u64) -> Result<u64> {
            self.live_allocs.fetch_add(1, Ordering::Relaxed);
            Ok(1)
        }
        fn free(&self, _handle: u64) {
            self.live_allocs.fetch_sub(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn poisson_arrivals_are_the_ones_the_engine_simulates() {
        // The engine reports each job's arrival; a replay of the same model must see
        // the same times (the engine's stream, seeded as the engine seeds it).
        struct Arrived(Vec<f64>);
        impl crate::engine::Observer for Arrived {
            fn job_arrived(&mut self, t: SimTime, _job: u64) {
                self.0.push(t.as_secs());
            }
        }
        let scenario = r#"
seed = 42
[hardware]
cpu_cores = 4
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[[workload.stages]]
name = "s"
duration_s = 0.001
[arrivals]
kind = "poisson"
rate_per_s = 5
jobs = 50
"#;
        let l = load_str(scenario, Path::new("t.toml"), &[]).unwrap();
        let mut simulated = Arrived(Vec::new());
        crate::engine::simulate(&l.model, &mut simulated).unwrap();
        assert_eq!(simulated.0.len(), 50);
        let replayed = engine_arrivals(&l.model.arrivals.kind, l.model.seed, 50);
        assert_eq!(replayed, simulated.0);
        // Another seed, other arrivals.
        assert_ne!(engine_arrivals(&l.model.arrivals.kind, 43, 50), replayed);
    }

    #[test]
    fn the_engines_fan_out_and_releases_order_the_real_instances() {
        // split (per job, holds the one lock until merge) -> work (per partition) ->
        // merge (per job): two jobs in flight, zero-time stages, so only the plan's
        // dependencies and the lock order them.
        let scenario = r#"
[hardware]
cpu_cores = 4
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[hardware.locks]
line = { capacity = 1 }
[workload]
partitions = 3
[[workload.stages]]
name = "split"
per_partition = false
duration_s = 0
holds = [{ resource = "line", until = "merge" }]
[[workload.stages]]
name = "work"
after = ["split"]
duration_s = 0
[[workload.stages]]
name = "merge"
per_partition = false
after = ["work"]
duration_s = 0
[arrivals]
kind = "closed"
concurrency = 2
jobs = 4
"#;
        let l = load_str(scenario, Path::new("t.toml"), &[]).unwrap();
        let plans = stage_plans(&l.model, &l.replay);
        let cpu = KernelHost::new(BufferSizes::TEST, 2);
        let rec = Executor::new(&l.model, &plans, &cpu, vec![])
            .unwrap()
            .run(60.0)
            .unwrap();
        assert_eq!(rec.jobs.len(), 4);
        let of = |job: u64, stage: usize| -> Vec<&StageInstance> {
            (rec.stages.iter())
                .filter(|s| s.job == job && s.stage == stage)
                .collect()
        };
        let mut holders = Vec::new();
        for job in 0..4 {
            let (split, work, merge) = (of(job, 0), of(job, 1), of(job, 2));
            assert_eq!((split.len(), merge.len()), (1, 1), "job {job}");
            assert_eq!(split[0].scope, Scope::Job);
            let mut scopes: Vec<Scope> = work.iter().map(|w| w.scope).collect();
            scopes.sort();
            assert_eq!(scopes, (0..3).map(Scope::Partition).collect::<Vec<_>>());
            for w in &work {
                assert!(w.start >= split[0].end && merge[0].start >= w.end);
            }
            holders.push((split[0].start, merge[0].end));
        }
        // The lock is held from each split's start to its merge's end: never two at once.
        holders.sort();
        for pair in holders.windows(2) {
            assert!(pair[1].0 >= pair[0].1, "lock held twice: {pair:?}");
        }
    }

    /// Two GPUs, a mutex per GPU, VRAM per partition: partitions spread over both GPUs.
    const TWO_GPUS: &str = r#"
[hardware]
cpu_cores = 4
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[hardware.gpu]
count = 2
vram_gib = 1
pcie_h2d_gbps = 25
pcie_d2h_gbps = 25
[hardware.locks]
gpu_mutex = { capacity = 1, per_gpu = true }
[workload]
partitions = 4
[[workload.stages]]
name = "prep"
duration_s = 0.001
cores = 1
[[workload.stages]]
name = "up"
after = ["prep"]
transfer = { dir = "h2d", gb = 0.001, pinned = true }
holds = [{ resource = "vram", gib = 0.4, until = "kernel" }]
[[workload.stages]]
name = "kernel"
after = ["up"]
duration_s = 0.03
gpu_kernel = true
holds = [{ resource = "gpu_mutex" }]
[arrivals]
kind = "closed"
concurrency = 2
jobs = 3
"#;

    #[test]
    fn partitions_bind_to_gpus_and_their_work_runs_on_that_gpu() {
        let l = load_str(TWO_GPUS, Path::new("t.toml"), &[]).unwrap();
        let plans = stage_plans(&l.model, &l.replay);
        let cpu = KernelHost::new(BufferSizes::TEST, 2);
        let (g0, g1) = (FakeGpu::new(), FakeGpu::new());
        let exec = Executor::new(&l.model, &plans, &cpu, vec![&g0, &g1]).unwrap();
        let rec = exec.run(60.0).unwrap();
        assert_eq!(rec.jobs.len(), 3);
        let (k0, k1) = (
            g0.kernels.load(Ordering::Relaxed),
            g1.kernels.load(Ordering::Relaxed),
        );
        // 3 jobs x 4 partitions; VRAM for two 0.4 GiB partitions per GPU forces both in use.
        assert_eq!(k0 + k1, 12);
        assert!(k0 > 0 && k1 > 0, "both GPUs work: {k0} / {k1}");
        assert_eq!(g0.live_allocs.load(Ordering::Relaxed), 0);
        assert_eq!(g1.live_allocs.load(Ordering::Relaxed), 0);
        // Every kernel ran on the GPU its partition was bound to when it started.
        let kernel = l
            .model
            .workload
            .stages
            .iter()
            .position(|s| s.name == "kernel");
        for s in rec.stages.iter().filter(|s| Some(s.stage) == kernel) {
            assert!(s.gpu.is_some(), "a kernel instance without a GPU: {s:?}");
        }
        let per_gpu = |g: u32| rec.kernels.iter().filter(|k| k.gpu == g).count() as u32;
        assert_eq!((per_gpu(0), per_gpu(1)), (k0, k1));
        // One mutex per GPU: kernels on one GPU never overlap.
        for g in 0..2 {
            let mut iv: Vec<_> = rec.kernels.iter().filter(|k| k.gpu == g).collect();
            iv.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
            for w in iv.windows(2) {
                assert!(
                    w[1].start_s >= w[0].end_s - 0.002,
                    "GPU {g} overlaps: {w:?}"
                );
            }
        }
    }
}
