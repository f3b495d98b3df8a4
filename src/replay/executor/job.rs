//! One job's DAG, walked as the engine's compiled plan says: an instance starts when
//! every instance it waits for has finished, and a hold is released when the instance
//! its `until` names ends. Also where a partition's GPU binding is kept.

use std::sync::Mutex;
use std::sync::mpsc;

use crate::engine::Scope;
use crate::model::{Edge, StageId};
use crate::trace::recorder::MarkerEvent;

use super::instance::{Done, Held};
use super::recording::JobRecord;

use super::Executor;

impl Executor<'_> {
    /// The slot within a job of `stage`'s instance in `scope`.
    pub(super) fn slot(&self, stage: StageId, scope: Scope) -> usize {
        self.plan.stages()[stage].slot(scope)
    }

    pub(super) fn fire(
        &self,
        stage: StageId,
        edge: Edge,
        job: u64,
        scope: Scope,
        gpu: Option<u32>,
    ) {
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
    pub(super) fn run_job(&self, job: u64) {
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

    /// Where a partition's GPU binding lives: its own slot, or the job's (last) slot.
    pub(super) fn binding_index(&self, scope: Scope) -> usize {
        match scope {
            Scope::Partition(p) => p as usize,
            Scope::Job => self.plan.partitions() as usize,
        }
    }

    /// The GPU an instance is bound to: its partition's, else the job's (as the engine).
    pub(super) fn gpu_of(&self, bound: &Mutex<Vec<Option<u32>>>, scope: Scope) -> Option<u32> {
        let b = bound.lock().expect("poisoned");
        b[self.binding_index(scope)].or(b[b.len() - 1])
    }
}
