//! One stage instance: take its holds (all or nothing, backed by real RAM and VRAM),
//! sample its standalone time from the engine's sampler, and do the real work: CPU
//! kernels here, copies and GPU kernels on the backend of the GPU it is bound to.

use std::sync::Mutex;
use std::sync::atomic::Ordering;

use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::engine::Scope;
use crate::engine::holdable::{HoldIndex, HoldSlot};
use crate::model::{CACHE_LINE_BYTES, Edge, HoldResource, StageId};
use crate::replay::error::{ExecutorFault, ReplayError, Result};
use crate::time::SimTime;
use crate::trace::recorder::StageInstance;

use super::{Executor, GpuBackend, KernelSpan};
use crate::replay::kernels::CpuStageShape;

/// Host RAM touched per page, so that a RAM permit is real resident memory.
const PAGE: usize = 4096;

/// A held permit and what backs it.
pub(super) struct Held {
    /// Slot whose end releases it.
    pub(super) until_slot: usize,
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
pub(super) struct Done {
    pub(super) slot: usize,
    pub(super) held: Vec<Held>,
}

impl<'a> Executor<'a> {
    /// The backend that runs work bound to `gpu` (unbound GPU work runs on GPU 0, as the
    /// engine charges it).
    pub(super) fn backend(&self, gpu: Option<u32>) -> Option<&'a dyn GpuBackend> {
        self.gpus.get(gpu.unwrap_or(0) as usize).copied()
    }

    pub(super) fn release(&self, h: Held) {
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

    pub(super) fn run_instance(
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
                        let at = format!("VRAM permit of {} bytes on GPU {g}", h.amount);
                        self.fail(ReplayError::from(e).at(at));
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
            self.fail(e.at(format!("stage {:?} of job {job}", self.stages[stage].name)));
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
    /// Records `bytes` of DRAM traffic as done now.
    fn record_dram_bytes(&self, bytes: f64) {
        let t = self.now().as_secs();
        self.rec
            .lock()
            .expect("poisoned")
            .dram_bytes
            .push((t, bytes));
    }

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
            let work = self
                .cpu
                .work_for_sized(&shape, &self.cpu.sizing_of(&plan.name));
            let bytes = self.cpu.run(&work) as f64
                + work.per_thread.chase_steps as f64 * CACHE_LINE_BYTES * work.threads as f64;
            self.record_dram_bytes(bytes);
            return Ok(());
        }
        if plan.copy.is_none() && plan.kernel.is_none() {
            return Ok(());
        }
        let gpu = self.backend(bound_gpu).ok_or(ExecutorFault::NoGpu)?;
        let gpu_index = bound_gpu.unwrap_or(0);
        let record_kernel = |dev_s: f64| {
            let end = self.now().as_secs();
            self.rec.lock().expect("poisoned").kernels.push(KernelSpan {
                gpu: gpu_index,
                start_s: (end - dev_s).max(0.0),
                end_s: end,
            });
        };
        // An MSM that reads its points from host memory: one request, no copy beside it.
        if let (Some(m), Some(t)) = (plan.msm_from_host(), plan.copy) {
            record_kernel(gpu.msm_reading_host(m, standalone_s)?);
            self.record_dram_bytes(t.bytes as f64);
            return Ok(());
        }
        std::thread::scope(|s| -> Result<()> {
            let copy = plan.copy.map(|t| {
                s.spawn(move || -> Result<f64> {
                    gpu.copy(&t)?;
                    Ok(t.bytes as f64)
                })
            });
            if let Some(k) = plan.kernel {
                record_kernel(gpu.kernel(k, standalone_s)?);
            }
            if let Some(h) = copy {
                let bytes = h.join().map_err(|_| ExecutorFault::CopyThreadPanicked)??;
                self.record_dram_bytes(bytes);
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
