//! Runs a scenario's DAG for real: the same arrivals (closed concurrency, Poisson,
//! trace), one OS thread per stage instance, holds as real FIFO semaphores granted
//! all-or-nothing as the engine grants them, RAM and VRAM permits as real allocations,
//! and every stage boundary and marker time-stamped. CPU stages run the synthetic
//! kernels; copies and GPU kernels go to a [`GpuBackend`].

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};
use std::time::{Duration as StdDuration, Instant};

use anyhow::{Result, anyhow};
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64;

use crate::engine::Scope;

/// The executor's partition index for a job-level instance (turned into [`Scope::Job`]
/// where it meets the trace recorder).
const JOB_LEVEL: u32 = u32::MAX;

fn scope_of(partition: u32) -> Scope {
    if partition == JOB_LEVEL {
        Scope::Job
    } else {
        Scope::Partition(partition)
    }
}
use crate::model::{ArrivalKind, Edge, HoldResource, Model, StageId};
use crate::scenario::replay_info::{KernelKind, TransferInfo};
use crate::time::SimTime;
use crate::trace::recorder::{MarkerEvent, StageInstance};

use super::kernels::{CpuStageShape, KernelHost};
use super::plan::{StagePlan, sample_duration};

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

/// Everything a replay recorded.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Finished stage instances.
    pub stages: Vec<StageInstance>,
    /// Markers as they fired.
    pub markers: Vec<MarkerEvent>,
    /// Jobs, in completion order.
    pub jobs: Vec<JobRecord>,
    /// Device-busy intervals of GPU kernels, seconds `(start, end)`, from the kernel's
    /// device time ending when its reply arrived.
    pub kernels: Vec<(f64, f64)>,
    /// DRAM bytes moved by CPU kernels and copies, with the time their stage ended.
    pub dram_bytes: Vec<(f64, f64)>,
    /// Wall-clock length of the replay, seconds.
    pub wall_s: f64,
}

/// Host RAM touched per page, so that a RAM permit is real resident memory.
const PAGE: usize = 4096;

/// Holdable resources as real FIFO semaphores: index 0 cores, 1 host RAM, 2 VRAM, then
/// the locks. A request is granted all-or-nothing; a waiter blocks later waiters on
/// each resource it is short of (strict FIFO per resource), not on the others.
struct HoldTable {
    state: Mutex<HoldState>,
    cv: Condvar,
}

struct HoldState {
    free: Vec<u64>,
    queue: VecDeque<(u64, Vec<(usize, u64)>)>,
    granted: Vec<u64>,
    next_ticket: u64,
}

impl HoldTable {
    fn new(capacity: Vec<u64>) -> HoldTable {
        HoldTable {
            state: Mutex::new(HoldState {
                free: capacity,
                queue: VecDeque::new(),
                granted: Vec::new(),
                next_ticket: 0,
            }),
            cv: Condvar::new(),
        }
    }

    fn acquire(&self, needs: &[(usize, u64)], abort: &AtomicBool) -> Result<()> {
        if needs.is_empty() {
            return Ok(());
        }
        let mut st = self.state.lock().expect("hold table poisoned");
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.queue.push_back((ticket, needs.to_vec()));
        Self::grant(&mut st);
        self.cv.notify_all();
        loop {
            if let Some(i) = st.granted.iter().position(|&t| t == ticket) {
                st.granted.swap_remove(i);
                return Ok(());
            }
            if abort.load(Ordering::Relaxed) {
                st.queue.retain(|(t, _)| *t != ticket);
                return Err(anyhow!("replay aborted while waiting for holds"));
            }
            st = self
                .cv
                .wait_timeout(st, StdDuration::from_millis(100))
                .expect("hold table poisoned")
                .0;
        }
    }

    fn release(&self, resource: usize, amount: u64) {
        let mut st = self.state.lock().expect("hold table poisoned");
        st.free[resource] += amount;
        Self::grant(&mut st);
        self.cv.notify_all();
    }

    fn grant(st: &mut HoldState) {
        let mut blocked = vec![false; st.free.len()];
        let mut i = 0;
        while i < st.queue.len() {
            let fits = st.queue[i]
                .1
                .iter()
                .all(|&(r, a)| !blocked[r] && st.free[r] >= a);
            if fits {
                let (ticket, needs) = st.queue.remove(i).expect("index in range");
                for (r, a) in needs {
                    st.free[r] -= a;
                }
                st.granted.push(ticket);
            } else {
                for &(r, a) in &st.queue[i].1 {
                    if st.free[r] < a {
                        blocked[r] = true;
                    }
                }
                i += 1;
            }
        }
    }
}

/// A held permit and what backs it.
struct Held {
    /// Slot whose end releases it.
    until_slot: usize,
    resource: usize,
    amount: u64,
    backing: Backing,
}

enum Backing {
    None,
    Ram(#[allow(dead_code)] Vec<u8>),
    Vram(u64),
}

/// A finished stage instance, sent to its job's thread.
struct Done {
    slot: usize,
    held: Vec<Held>,
}

/// Replays one model.
pub struct Executor<'a> {
    model: &'a Model,
    stages: &'a [StagePlan],
    cpu: &'a KernelHost,
    gpu: Option<&'a dyn GpuBackend>,
    holds: HoldTable,
    /// Per stage: its holds as (resource index, amount, until stage).
    needs: Vec<Vec<(usize, u64, StageId)>>,
    children: Vec<Vec<StageId>>,
    slot_offset: Vec<usize>,
    slots: usize,
    markers: HashMap<(StageId, EdgeKey), Vec<usize>>,
    t0: Instant,
    abort: AtomicBool,
    error: Mutex<Option<String>>,
    rec: Mutex<Recording>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum EdgeKey {
    Ready,
    Start,
    End,
}

impl From<Edge> for EdgeKey {
    fn from(e: Edge) -> Self {
        match e {
            Edge::Ready => EdgeKey::Ready,
            Edge::Start => EdgeKey::Start,
            Edge::End => EdgeKey::End,
        }
    }
}

const CORES: usize = 0;
const RAM: usize = 1;
const VRAM: usize = 2;
const LOCKS: usize = 3;

impl<'a> Executor<'a> {
    /// Prepares a replay of `model` with the per-stage `stages` plan. Replay drives one
    /// GPU: a model with more than one is refused by the caller.
    pub fn new(
        model: &'a Model,
        stages: &'a [StagePlan],
        cpu: &'a KernelHost,
        gpu: Option<&'a dyn GpuBackend>,
    ) -> Executor<'a> {
        let hw = &model.hardware;
        let mut capacity = vec![
            u64::from(hw.cpu_cores),
            hw.host_ram_bytes,
            hw.gpus.first().map(|g| g.vram_bytes).unwrap_or(0),
        ];
        capacity.extend(hw.locks.iter().map(|l| l.capacity));
        let w = &model.workload;
        let needs = w
            .stages
            .iter()
            .map(|s| {
                s.holds
                    .iter()
                    .map(|h| {
                        let r = match h.resource {
                            HoldResource::Cores => CORES,
                            HoldResource::HostRam => RAM,
                            HoldResource::Vram => VRAM,
                            HoldResource::Lock(l) => LOCKS + l,
                        };
                        (r, h.amount, h.until)
                    })
                    .collect()
            })
            .collect();
        let mut children = vec![Vec::new(); w.stages.len()];
        for (i, s) in w.stages.iter().enumerate() {
            for &a in &s.after {
                children[a].push(i);
            }
        }
        let mut slot_offset = Vec::with_capacity(w.stages.len());
        let mut slots = 0;
        for s in &w.stages {
            slot_offset.push(slots);
            slots += if s.per_partition {
                w.partitions as usize
            } else {
                1
            };
        }
        let mut markers: HashMap<(StageId, EdgeKey), Vec<usize>> = HashMap::new();
        for (i, m) in model.instrumentation.markers.iter().enumerate() {
            markers.entry((m.stage, m.edge.into())).or_default().push(i);
        }
        Executor {
            model,
            stages,
            cpu,
            gpu,
            holds: HoldTable::new(capacity),
            needs,
            children,
            slot_offset,
            slots,
            markers,
            t0: Instant::now(),
            abort: AtomicBool::new(false),
            error: Mutex::new(None),
            rec: Mutex::new(Recording::default()),
        }
    }

    /// Runs every job of the model's arrivals; gives up (with an error) after
    /// `max_wall_s` seconds.
    pub fn run(mut self, max_wall_s: f64) -> Result<Recording> {
        self.t0 = Instant::now();
        let jobs = self.model.arrivals.jobs;
        let finished = AtomicBool::new(false);
        std::thread::scope(|s| {
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
                    let mut rng = Pcg64::seed_from_u64(self.model.seed);
                    let exp = Exp::new(*rate_per_s).map_err(|e| anyhow!("{e}"));
                    let times: Vec<f64> = match exp {
                        Ok(exp) => {
                            let mut t = 0.0;
                            (0..jobs)
                                .map(|_| {
                                    t += exp.sample(&mut rng);
                                    t
                                })
                                .collect()
                        }
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
        });
        if let Some(e) = self.error.lock().expect("poisoned").take() {
            return Err(anyhow!(e));
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

    fn slot(&self, stage: StageId, partition: u32) -> usize {
        if self.model.workload.stages[stage].per_partition {
            self.slot_offset[stage] + partition as usize
        } else {
            self.slot_offset[stage]
        }
    }

    fn fire(&self, stage: StageId, edge: EdgeKey, job: u64, partition: u32, gpu: Option<u32>) {
        let Some(ms) = self.markers.get(&(stage, edge)) else {
            return;
        };
        let t = self.now();
        let mut rec = self.rec.lock().expect("poisoned");
        for &marker in ms {
            rec.markers.push(MarkerEvent {
                t,
                marker,
                job,
                scope: scope_of(partition),
                gpu,
            });
        }
    }

    /// Runs one job's DAG to the end; its stage instances run on their own threads.
    fn run_job(&self, job: u64) {
        let arrived = self.now();
        let w = &self.model.workload;
        let parts = w.partitions;
        // Instances each slot waits for.
        let mut pending = vec![0u32; self.slots];
        let mut roots = Vec::new();
        for (i, s) in w.stages.iter().enumerate() {
            let count: u32 = s
                .after
                .iter()
                .map(|&a| {
                    if !s.per_partition && w.stages[a].per_partition {
                        parts
                    } else {
                        1
                    }
                })
                .sum();
            let ps = if s.per_partition { 0..parts } else { 0..1 };
            for p in ps {
                pending[self.slot(i, p)] = count;
                if count == 0 {
                    roots.push((i, if s.per_partition { p } else { JOB_LEVEL }));
                }
            }
        }
        let bound = Mutex::new(vec![false; parts as usize + 1]);
        let (tx, rx) = mpsc::channel::<Done>();
        let mut held: Vec<Held> = Vec::new();
        let mut remaining = self.slots;
        std::thread::scope(|s| {
            let bound = &bound;
            let spawn = |stage: StageId, partition: u32| {
                let tx = tx.clone();
                let ready = self.now();
                let gpu = self.gpu_of(bound, partition);
                self.fire(stage, EdgeKey::Ready, job, partition, gpu);
                s.spawn(move || {
                    let done = self.run_instance(job, stage, partition, ready, bound);
                    let _ = tx.send(done);
                });
            };
            for &(i, p) in &roots {
                spawn(i, p);
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
                let (stage, partition) = self.slot_owner(done.slot);
                for &c in &self.children[stage] {
                    let cs = &w.stages[c];
                    let ps: Vec<u32> = if cs.per_partition && !w.stages[stage].per_partition {
                        (0..parts).collect()
                    } else if cs.per_partition {
                        vec![partition]
                    } else {
                        vec![0]
                    };
                    for p in ps {
                        let sl = self.slot(c, p);
                        pending[sl] -= 1;
                        if pending[sl] == 0 {
                            spawn(c, if cs.per_partition { p } else { JOB_LEVEL });
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

    fn slot_owner(&self, slot: usize) -> (StageId, u32) {
        let stage = self
            .slot_offset
            .iter()
            .rposition(|&o| o <= slot)
            .expect("slot 0 belongs to stage 0");
        (stage, (slot - self.slot_offset[stage]) as u32)
    }

    fn gpu_of(&self, bound: &Mutex<Vec<bool>>, partition: u32) -> Option<u32> {
        let b = bound.lock().expect("poisoned");
        let i = (partition as usize).min(b.len() - 1);
        b[i].then_some(0)
    }

    fn release(&self, h: Held) {
        match h.backing {
            Backing::Vram(handle) => {
                if let Some(g) = self.gpu {
                    g.free(handle);
                }
            }
            Backing::Ram(_) | Backing::None => {}
        }
        self.holds.release(h.resource, h.amount);
    }

    fn run_instance(
        &self,
        job: u64,
        stage: StageId,
        partition: u32,
        ready: SimTime,
        bound: &Mutex<Vec<bool>>,
    ) -> Done {
        let slot = self.slot(stage, partition);
        let mut held = Vec::new();
        let needs = &self.needs[stage];
        let request: Vec<(usize, u64)> = needs.iter().map(|&(r, a, _)| (r, a)).collect();
        let aborted = self.abort.load(Ordering::Relaxed);
        if !aborted && self.holds.acquire(&request, &self.abort).is_ok() {
            for &(r, a, until) in needs {
                let p = if self.model.workload.stages[until].per_partition {
                    partition
                } else {
                    0
                };
                let backing = match r {
                    RAM => Backing::Ram(touched(a)),
                    VRAM => match self.gpu.map(|g| g.alloc(a)) {
                        Some(Ok(h)) => Backing::Vram(h),
                        Some(Err(e)) => {
                            self.fail(format!("VRAM permit of {a} bytes: {e:#}"));
                            Backing::None
                        }
                        None => Backing::None,
                    },
                    _ => Backing::None,
                };
                if r == VRAM || (r >= LOCKS && self.model.hardware.locks[r - LOCKS].per_gpu) {
                    let mut b = bound.lock().expect("poisoned");
                    let i = (partition as usize).min(b.len() - 1);
                    b[i] = true;
                }
                held.push(Held {
                    until_slot: self.slot(until, p),
                    resource: r,
                    amount: a,
                    backing,
                });
            }
        } else {
            // Aborted: finish the DAG quickly without work so that threads end.
            return Done { slot, held };
        }
        let gpu = self.gpu_of(bound, partition);
        let start = self.now();
        self.fire(stage, EdgeKey::Start, job, partition, gpu);
        let seed = self.model.seed
            ^ job.wrapping_mul(0x9e37_79b9_7f4a_7c15)
            ^ (stage as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9)
            ^ u64::from(partition).wrapping_mul(0x94d0_49bb_1331_11eb);
        let mut rng = Pcg64::seed_from_u64(seed);
        let standalone_s = sample_duration(&self.model.workload.stages[stage].duration, &mut rng);
        if !self.abort.load(Ordering::Relaxed)
            && let Err(e) = self.work(stage, standalone_s)
        {
            self.fail(format!(
                "stage {:?} of job {job}: {e:#}",
                self.stages[stage].name
            ));
        }
        let end = self.now();
        self.fire(stage, EdgeKey::End, job, partition, gpu);
        self.rec
            .lock()
            .expect("poisoned")
            .stages
            .push(StageInstance {
                job,
                scope: scope_of(partition),
                stage,
                ready,
                start,
                end,
                gpu,
                standalone_s,
            });
        Done { slot, held }
    }

    /// The stage's real work.
    fn work(&self, stage: StageId, standalone_s: f64) -> Result<()> {
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
                + work.per_thread.chase_steps as f64 * 64.0 * work.threads as f64;
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
            .gpu
            .ok_or_else(|| anyhow!("the stage needs a GPU, and this replay has none"))?;
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
                self.rec
                    .lock()
                    .expect("poisoned")
                    .kernels
                    .push(((end - dev_s).max(0.0), end));
            }
            if let Some(h) = copy {
                let bytes = h.join().map_err(|_| anyhow!("copy thread panicked"))??;
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
    use std::sync::Arc;

    #[test]
    fn holds_are_fifo_per_resource_and_all_or_nothing() {
        let t = Arc::new(HoldTable::new(vec![2, 1]));
        let abort = AtomicBool::new(false);
        t.acquire(&[(0, 2)], &abort).unwrap();
        // A waiter short of resource 0 blocks later waiters on 0 but not on 1.
        let t2 = t.clone();
        let h = std::thread::spawn(move || {
            t2.acquire(&[(0, 1), (1, 1)], &AtomicBool::new(false))
                .unwrap();
        });
        std::thread::sleep(StdDuration::from_millis(50));
        {
            let st = t.state.lock().unwrap();
            assert_eq!(st.queue.len(), 1);
            assert_eq!(st.free, vec![0, 1]);
        }
        t.release(0, 1);
        h.join().unwrap();
        let st = t.state.lock().unwrap();
        assert_eq!(st.free, vec![0, 0]);
    }

    #[test]
    fn an_aborted_wait_returns_an_error() {
        let t = HoldTable::new(vec![0]);
        let abort = AtomicBool::new(true);
        assert!(t.acquire(&[(0, 1)], &abort).is_err());
        assert!(t.state.lock().unwrap().queue.is_empty());
    }
}
