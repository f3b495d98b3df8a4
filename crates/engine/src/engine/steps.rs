//! A stage instance's life, step by step: ready (dependencies done) -> holds granted
//! and started -> finished, and the job's arrival and end around it. Each step takes
//! the components' state in turn (the job table, the holds, the activities, the fluid
//! classes) and makes the observer calls.

use crate::model::{Edge, StageId};
use crate::time::ceil_to_u64;

use super::activities::Run;
use super::agenda::Work;
use super::event_loop::Event;
use super::general::Engine;
use super::holdable::HoldIndex;
use super::ids::Token;
use super::observer::{Observer, Scope, StageRecord, StageRef};
use super::outcome::Overflowed;

impl Engine<'_> {
    /// A job arrives: it takes a slot and its first instances are ready.
    pub(super) fn start_job<O: Observer>(&mut self, obs: &mut O) {
        let number = self.core.started;
        self.core.started += 1;
        self.core.events += 1;
        let now = self.core.now;
        obs.job_arrived(now, number);
        let agenda = &mut self.agenda;
        let ready = |job, stage, scope| agenda.push(Work::Ready { job, stage, scope });
        self.jobs.admit(&self.plan, number, now, ready);
    }

    /// The name of the stage activity slot `a` runs (for error messages).
    pub(super) fn stage_name_of(&self, a: usize) -> String {
        self.core.model.workload.stages[self.activities.stage_of(a)]
            .name
            .clone()
    }

    fn stage_ref(&self, token: &Token) -> StageRef {
        StageRef {
            job: self.jobs.number(token.job),
            scope: token.scope,
            stage: token.stage,
        }
    }

    /// Reports `token`'s instance passing `edge` (bound to `gpu`), then the markers its
    /// stage sets at that edge, in the stage's order.
    #[inline]
    fn fire_edge<O: Observer>(&self, obs: &mut O, token: &Token, edge: Edge, gpu: Option<u32>) {
        let r = self.stage_ref(token);
        let now = self.core.now;
        obs.stage_edge(now, r, edge, gpu);
        for &(e, m) in &self.plan.stages[token.stage].markers {
            if e == edge {
                obs.marker(now, m, r.job, r.scope, gpu);
            }
        }
    }

    /// Dependencies done: fires the ready edge and asks for the stage's holds.
    pub(super) fn on_ready<O: Observer>(
        &mut self,
        obs: &mut O,
        job: usize,
        stage: StageId,
        scope: Scope,
    ) {
        let token = Token {
            job,
            stage,
            scope,
            ready: self.core.now,
        };
        let gpu = self.jobs.gpu(job, scope);
        self.fire_edge(obs, &token, Edge::Ready, gpu);
        self.holds.request(&self.plan, token, gpu, &mut self.agenda);
    }

    /// Holds granted: binds the GPU, keeps the holds, samples the duration and starts
    /// the activity (in a fluid class when it can be slowed).
    pub(super) fn on_start<O: Observer>(
        &mut self,
        obs: &mut O,
        token: Token,
        granted_gpu: Option<u32>,
        blocked_on: Option<HoldIndex>,
    ) {
        self.jobs.bind(token.job, token.scope, granted_gpu);
        self.holds.keep(&self.plan, &token, granted_gpu);
        let gpu = self.jobs.gpu(token.job, token.scope);
        self.fire_edge(obs, &token, Edge::Start, gpu);
        let stage = &self.plan.stages[token.stage];
        let standalone_s = stage.sampler.sample(&mut self.core.rng);
        let key = stage.key_for(gpu);
        let now = self.core.now;
        let a = self.activities.start(Run {
            token,
            start: now,
            standalone_s,
            gpu,
            blocked_on,
        });
        if standalone_s <= 0.0 {
            self.agenda.push(Work::Finish(a));
        } else if !self.fluid.key_shared(key) {
            // Never slowed: it ends exactly its standalone time after now (rounded up to
            // the nanosecond, as a class would schedule it), and loses nothing.
            let end = now + ceil_to_u64(standalone_s * 1e9);
            let (model, stage) = (self.core.model, token.stage);
            self.schedule(end, Event::Done(a), || Overflowed::StageEnd {
                stage: model.workload.stages[stage].name.clone(),
            });
        } else {
            self.activities
                .join(a, &mut self.fluid, now, key, standalone_s);
        }
    }

    /// An activity ended: reports it, releases its holds, wakes its children and, when it
    /// was the job's last, finishes the job.
    pub(super) fn on_finish<O: Observer>(&mut self, obs: &mut O, a: usize) {
        self.core.events += 1;
        let now = self.core.now;
        let (run, lost) = self.activities.end(a, &self.fluid);
        let token = run.token;
        self.fire_edge(obs, &token, Edge::End, run.gpu);
        let record = StageRecord {
            stage_ref: self.stage_ref(&token),
            ready: token.ready,
            start: run.start,
            end: now,
            standalone_s: run.standalone_s,
            gpu: run.gpu,
            lost,
            blocked_on: run.blocked_on,
        };
        obs.stage_finished(&record);
        self.activities.recycle_loss(record.lost);

        let slot = self.plan.slot(token.stage, token.scope);
        self.holds.release_due(token.job, slot, &mut self.agenda);
        let agenda = &mut self.agenda;
        self.jobs.wake_children(&self.plan, &token, |stage, scope| {
            agenda.push(Work::Ready {
                job: token.job,
                stage,
                scope,
            })
        });
        if let Some(job) = self.jobs.instance_done(token.job) {
            debug_assert!(
                self.holds.holds_nothing(token.job),
                "job finished holding resources"
            );
            self.core.completed += 1;
            obs.job_finished(now, job.number, job.arrived);
            if self.core.closed_loop_has_more() {
                self.start_job(obs);
            }
        }
    }
}
