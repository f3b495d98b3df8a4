//! The GPU bracket breakdown of a simulated run. Inside a `gpu_busy` span the GPU's
//! thread walks a chain of stages, from the stage of the opening marker to that of the
//! closing one (cuzk: gpu_pickup, gpu_setup, upload_abc, ntt, h_msm, barrier, batch_add,
//! tail_msm). Where the chain joins another branch (the barrier waits for prep_msm too)
//! it follows the branch with GPU work; the time between one chain stage's end and the
//! next one's readiness is then barrier wait. Each chain stage's hold wait is lock wait
//! when a lock held it back, and its run is kernels, transfers or setup by what it does.

use std::collections::BTreeMap;

use super::gap::{GapPart, GapTotals, Piece};
use crate::engine::{HoldResourceInfo, Scope, StageRecord};
use crate::model::{HoldResource, Model, RateTarget, Span, Stage, StageId};
use crate::time::SimTime;

/// When one chain stage instance was ready, started and ended, and whether a lock held
/// it back.
#[derive(Debug, Clone, Copy)]
struct Times {
    scope: Scope,
    ready: SimTime,
    start: SimTime,
    end: SimTime,
    lock_wait: bool,
}

/// A bracket whose chain has not fully finished yet (or that has not closed yet).
struct Pending {
    /// (opened, closed), once the closing marker fired.
    bracket: Option<(SimTime, SimTime)>,
    /// Per chain stage, the instances that finished.
    times: Vec<Vec<Times>>,
    /// Instances still to finish, over the whole chain.
    missing: usize,
}

/// The chain of one gpu_busy span.
struct Chain {
    /// Stages in order, each with what its run counts as.
    stages: Vec<(StageId, GapPart)>,
    /// Instances of each stage inside one bracket: every partition's, for a per-partition
    /// stage inside a job-level bracket; else one.
    instances: Vec<usize>,
    /// The bracket is one per partition (its opening marker is on a per-partition stage).
    per_partition: bool,
}

/// Streaming collector: chains of stage records per bracket, cut into parts as each
/// bracket completes. Holds only brackets in flight.
pub struct BracketChains {
    /// Per span; no stages unless gpu_busy.
    chains: Vec<Chain>,
    /// Per stage: the (span, position) chains it is on.
    on_chain: Vec<Vec<(usize, usize)>>,
    /// Per holdable instance: whether it is a lock.
    is_lock: Vec<bool>,
    pending: BTreeMap<(usize, u64, Scope), Pending>,
    totals: GapTotals,
}

impl BracketChains {
    /// The chains of every `gpu_busy` span of `model`.
    pub fn new(model: &Model) -> Self {
        let stages = &model.workload.stages;
        let markers = &model.instrumentation.markers;
        let chains: Vec<Chain> = (model.instrumentation.spans.iter())
            .map(|span| {
                let per_partition = stages[markers[span.from].stage].per_partition;
                let chain = if span.gpu_busy {
                    gpu_thread_chain(model, span)
                } else {
                    Vec::new()
                };
                let instances = (chain.iter())
                    .map(|&(s, _)| {
                        if stages[s].per_partition && !per_partition {
                            model.workload.partitions as usize
                        } else {
                            1
                        }
                    })
                    .collect();
                Chain {
                    stages: chain,
                    instances,
                    per_partition,
                }
            })
            .collect();
        let mut on_chain = vec![Vec::new(); stages.len()];
        for (span, chain) in chains.iter().enumerate() {
            for (pos, &(stage, _)) in chain.stages.iter().enumerate() {
                on_chain[stage].push((span, pos));
            }
        }
        Self {
            chains,
            on_chain,
            is_lock: Vec::new(),
            pending: BTreeMap::new(),
            totals: GapTotals::default(),
        }
    }

    /// The engine's holdable instances (to tell lock waits from memory waits).
    pub fn resources(&mut self, holds: &[HoldResourceInfo]) {
        self.is_lock = (holds.iter())
            .map(|h| matches!(h.resource, HoldResource::Lock(_)))
            .collect();
    }

    fn entry(&mut self, key: (usize, u64, Scope)) -> &mut Pending {
        let chain = &self.chains[key.0];
        self.pending.entry(key).or_insert_with(|| Pending {
            bracket: None,
            times: vec![Vec::new(); chain.stages.len()],
            missing: chain.instances.iter().sum(),
        })
    }

    /// A measured job's `gpu_busy` span closed.
    pub fn closed(&mut self, span: usize, job: u64, key: Scope, opened: SimTime, t: SimTime) {
        self.entry((span, job, key)).bracket = Some((opened, t));
        self.try_finish((span, job, key));
    }

    /// A measured job's stage instance finished.
    pub fn stage_finished(&mut self, r: &StageRecord) {
        for i in 0..self.on_chain[r.stage_ref.stage].len() {
            let (span, pos) = self.on_chain[r.stage_ref.stage][i];
            let key_scope = if self.chains[span].per_partition {
                r.stage_ref.scope
            } else {
                Scope::Job
            };
            let times = Times {
                scope: r.stage_ref.scope,
                ready: r.ready,
                start: r.start,
                end: r.end,
                lock_wait: r.blocked_on.is_some_and(|h| self.is_lock[h]),
            };
            let key = (span, r.stage_ref.job, key_scope);
            let p = self.entry(key);
            p.times[pos].push(times);
            p.missing = p.missing.saturating_sub(1);
            self.try_finish(key);
        }
    }

    fn try_finish(&mut self, key: (usize, u64, Scope)) {
        let done = (self.pending.get(&key)).is_some_and(|p| p.bracket.is_some() && p.missing == 0);
        if done {
            let p = self.pending.remove(&key).expect("pending bracket");
            self.add(key.0, &p);
        }
    }

    fn add(&mut self, span: usize, p: &Pending) {
        let Some((opened, closed)) = p.bracket else {
            return;
        };
        let since = |t: SimTime| (t.0 as i64 - opened.0 as i64) as f64 * 1e-9;
        let mut pieces = Vec::new();
        let chain = &self.chains[span];
        for (pos, &(_, run)) in chain.stages.iter().enumerate() {
            for t in &p.times[pos] {
                let prev = pos.checked_sub(1).map(|q| &p.times[q][..]).unwrap_or(&[]);
                if let Some(e) = previous_end(prev, t.scope).filter(|&e| t.ready > e) {
                    pieces.push(piece(GapPart::BarrierWait, since(e), since(t.ready)));
                }
                if t.lock_wait {
                    pieces.push(piece(GapPart::LockWait, since(t.ready), since(t.start)));
                }
                pieces.push(piece(run, since(t.start), since(t.end)));
            }
        }
        let len = (closed - opened) as f64 * 1e-9;
        self.totals.add_bracket(0.0, len, &pieces);
    }

    /// The summed breakdown. Brackets that closed while a chain stage had not finished
    /// (a run that stopped early) count with the stages that did.
    pub fn finish(mut self) -> GapTotals {
        for (key, p) in std::mem::take(&mut self.pending) {
            self.add(key.0, &p);
        }
        self.totals
    }
}

/// When the previous chain stage was done for an instance of `scope`: its own
/// partition's instance if there is one, else the last instance to end.
fn previous_end(prev: &[Times], scope: Scope) -> Option<SimTime> {
    (prev.iter().find(|t| t.scope == scope).map(|t| t.end))
        .or_else(|| prev.iter().map(|t| t.end).max())
}

fn piece(part: GapPart, start_s: f64, end_s: f64) -> Piece {
    Piece {
        part,
        start_s,
        end_s,
    }
}

/// What a chain stage's run counts as.
fn run_part(stage: &Stage) -> GapPart {
    let copies = (stage.demands.iter())
        .any(|d| matches!(d.target, RateTarget::PcieH2d | RateTarget::PcieD2h));
    if stage.gpu_kernel {
        GapPart::Kernels
    } else if copies || stage.staged_copy.is_some() {
        GapPart::Transfers
    } else {
        GapPart::Setup
    }
}

/// The stages the GPU's thread walks through inside `span`, in order, each with what its
/// run counts as. Empty when the closing marker's stage does not follow the opening one.
pub fn gpu_thread_chain(model: &Model, span: &Span) -> Vec<(StageId, GapPart)> {
    let stages = &model.workload.stages;
    let markers = &model.instrumentation.markers;
    let (from, to) = (markers[span.from].stage, markers[span.to].stage);
    // Stages are in topological order: one pass finds what follows `from`, and which of
    // those have GPU work on them or on their way from `from`.
    let mut follows = vec![false; stages.len()];
    let mut gpu_work = vec![false; stages.len()];
    follows[from] = true;
    for (s, stage) in stages.iter().enumerate().skip(from) {
        let preds: Vec<StageId> = (stage.after.iter().copied())
            .filter(|&p| follows[p])
            .collect();
        if s != from {
            follows[s] = !preds.is_empty();
        }
        let own = run_part(stage) != GapPart::Setup;
        gpu_work[s] = follows[s] && (own || preds.iter().any(|&p| gpu_work[p]));
    }
    if !follows[to] {
        return Vec::new();
    }
    // A per-partition bracket follows only its own partition's stages.
    let allowed = |s: StageId| !stages[from].per_partition || stages[s].per_partition;
    let mut chain = vec![to];
    let mut s = to;
    while s != from {
        let mut preds = (stages[s].after.iter().copied()).filter(|&p| follows[p]);
        let Some(p) = preds
            .clone()
            .find(|&p| gpu_work[p])
            .or_else(|| preds.next())
        else {
            break;
        };
        chain.push(p);
        s = p;
    }
    chain.retain(|&s| allowed(s));
    chain.reverse();
    chain
        .into_iter()
        .map(|s| (s, run_part(&stages[s])))
        .collect()
}
