//! The job slab and DAG progress: jobs and running activities in reusable slots, a stage
//! instance going ready -> holds granted -> started -> finished, holds released at the
//! end of the stage that frees them, children woken when their dependencies are done,
//! and closed arrivals starting a job when one finishes.

use crate::model::{ArrivalKind, Edge, StageId};
use crate::time::{SimTime, ceil_to_u64};

use super::agenda::Work;
use super::fluid::ClassId;
use super::holdable::{HoldIndex, Request};
use super::observer::{Loss, Observer, Scope, StageRecord, StageRef};
use super::plan::{instance_slot, woken_scopes};
use super::small_copy::copy_small;
use super::{Engine, Event, Overflowed};

/// A job in flight (slots are reused, buffers and all, once a job finishes).
pub(super) struct JobState {
    live: bool,
    number: u64,
    arrived: SimTime,
    /// Dependencies outstanding per instance slot.
    pending: Vec<u32>,
    /// Instances not yet finished.
    remaining: usize,
    /// GPU binding per partition, and the job-level binding last.
    gpu: Vec<Option<u32>>,
    /// Holds not yet released: (release slot, instance, amount).
    held: Vec<(usize, HoldIndex, u64)>,
}

/// The requester's token while waiting for holds.
#[derive(Clone, Copy)]
pub(super) struct Token {
    /// The job's slot.
    pub job: usize,
    pub stage: StageId,
    pub scope: Scope,
    pub ready: SimTime,
}

/// A running stage instance (slots are reused once it finishes).
pub(super) struct Activity {
    live: bool,
    token: Token,
    start: SimTime,
    standalone_s: f64,
    gpu: Option<u32>,
    blocked_on: Option<HoldIndex>,
    /// Its fluid class; None when it is never slowed (or takes no time).
    class: Option<ClassId>,
    lost_at_start: Loss,
}

impl Activity {
    /// A free slot.
    pub fn vacant(token: Token) -> Self {
        Activity {
            live: false,
            token,
            start: SimTime::ZERO,
            standalone_s: 0.0,
            gpu: None,
            blocked_on: None,
            class: None,
            lost_at_start: Loss::default(),
        }
    }

    /// Fills a free slot with an instance that starts now, outside any fluid class.
    #[inline]
    pub fn begin(
        &mut self,
        token: Token,
        now: SimTime,
        standalone_s: f64,
        gpu: Option<u32>,
        blocked_on: Option<HoldIndex>,
    ) {
        debug_assert!(!self.live);
        self.live = true;
        self.token = token;
        self.start = now;
        self.standalone_s = standalone_s;
        self.gpu = gpu;
        self.blocked_on = blocked_on;
        self.class = None;
    }
}

impl Engine<'_> {
    pub(super) fn start_job<O: Observer>(&mut self, obs: &mut O) {
        let number = self.started;
        self.started += 1;
        self.events += 1;
        obs.job_arrived(self.now, number);
        let partitions = self.plan.partitions;
        let job = match self.free_jobs.pop() {
            Some(i) => i,
            None => {
                self.jobs.push(JobState {
                    live: false,
                    number: 0,
                    arrived: SimTime::ZERO,
                    pending: Vec::with_capacity(self.plan.slots_per_job),
                    remaining: 0,
                    gpu: Vec::with_capacity(partitions as usize + 1),
                    held: Vec::new(),
                });
                self.jobs.len() - 1
            }
        };
        let state = &mut self.jobs[job];
        debug_assert!(!state.live && state.held.is_empty());
        state.live = true;
        state.number = number;
        state.arrived = self.now;
        copy_small(&mut state.pending, &self.plan.pending_template);
        state.remaining = self.plan.slots_per_job;
        state.gpu.clear();
        state.gpu.resize(partitions as usize + 1, None);
        for &stage in &self.plan.roots {
            if self.plan.stages[stage].per_partition {
                for p in 0..partitions {
                    self.agenda.push(Work::Ready {
                        job,
                        stage,
                        scope: Scope::Partition(p),
                    });
                }
            } else {
                self.agenda.push(Work::Ready {
                    job,
                    stage,
                    scope: Scope::Job,
                });
            }
        }
    }

    /// The name of the stage activity slot `a` runs (for error messages).
    pub(super) fn stage_name_of(&self, a: usize) -> String {
        self.model.workload.stages[self.activities[a].token.stage]
            .name
            .clone()
    }

    fn job(&self, job: usize) -> &JobState {
        let j = &self.jobs[job];
        debug_assert!(j.live, "live job");
        j
    }

    fn job_mut(&mut self, job: usize) -> &mut JobState {
        let j = &mut self.jobs[job];
        debug_assert!(j.live, "live job");
        j
    }

    /// The instance slot of `stage` in `scope` within a job.
    fn slot(&self, stage: StageId, scope: Scope) -> usize {
        let plan = &self.plan.stages[stage];
        instance_slot(plan.slot_offset, plan.per_partition, scope)
    }

    /// Index into a job's GPU bindings for a stage instance.
    fn binding_index(&self, scope: Scope) -> usize {
        match scope {
            Scope::Job => self.plan.partitions as usize,
            Scope::Partition(p) => p as usize,
        }
    }

    fn stage_ref(&self, token: &Token) -> StageRef {
        StageRef {
            job: self.job(token.job).number,
            scope: token.scope,
            stage: token.stage,
        }
    }

    #[inline]
    fn fire_markers<O: Observer>(&self, obs: &mut O, token: &Token, edge: Edge, gpu: Option<u32>) {
        let r = self.stage_ref(token);
        obs.stage_edge(self.now, r, edge, gpu);
        for &(e, m) in &self.plan.stages[token.stage].markers {
            if e == edge {
                obs.marker(self.now, m, r.job, r.scope, gpu);
            }
        }
    }

    /// The GPU an instance is bound to: its partition's, else the job's.
    fn current_gpu(&self, job: usize, scope: Scope) -> Option<u32> {
        let j = self.job(job);
        j.gpu[self.binding_index(scope)].or(j.gpu[self.plan.partitions as usize])
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
            ready: self.now,
        };
        let gpu = self.current_gpu(job, scope);
        self.fire_markers(obs, &token, Edge::Ready, gpu);
        let needs = &self.plan.stages[stage].needs;
        if needs.is_empty() {
            self.agenda.push(Work::Start {
                token,
                gpu,
                blocked_on: None,
            });
            return;
        }
        let needs = needs.clone();
        self.holds.request(
            Request {
                token,
                needs,
                gpu,
                blocked_on: None,
            },
            &mut self.agenda,
        );
    }

    /// Holds granted: binds the GPU, records the holds, samples the duration and starts
    /// the activity (in a fluid class when it can be slowed).
    pub(super) fn on_start<O: Observer>(
        &mut self,
        obs: &mut O,
        token: Token,
        granted_gpu: Option<u32>,
        blocked_on: Option<HoldIndex>,
    ) {
        let bi = self.binding_index(token.scope);
        if let Some(g) = granted_gpu {
            let j = self.job_mut(token.job);
            if j.gpu[bi].is_none() {
                j.gpu[bi] = Some(g);
            }
        }
        // Record holds (the stage's needs, on the granted GPU) with the slot whose end
        // releases them.
        let plan = &self.plan.stages[token.stage];
        for (&(hold, amount), &until) in plan.needs.iter().zip(&plan.until) {
            let i = hold.instance(granted_gpu);
            let release = self.slot(until, token.scope);
            self.jobs[token.job].held.push((release, i, amount));
        }
        let gpu = self.current_gpu(token.job, token.scope);
        self.fire_markers(obs, &token, Edge::Start, gpu);
        let standalone_s = self.plan.stages[token.stage].sampler.sample(&mut self.rng);
        let a = self.activity_slot(token);
        let act = &mut self.activities[a];
        act.begin(token, self.now, standalone_s, gpu, blocked_on);
        let key = self.plan.stages[token.stage].key_for(gpu);
        if standalone_s <= 0.0 {
            self.agenda.push(Work::Finish(a));
        } else if !self.fluid.key_shared(key) {
            // Never slowed: it ends exactly its standalone time after now (rounded up to
            // the nanosecond, as a class would schedule it), and loses nothing.
            let end = self.now + ceil_to_u64(standalone_s * 1e9);
            let stage = token.stage;
            self.schedule(end, Event::Done(a), |e| Overflowed::StageEnd {
                stage: e.model.workload.stages[stage].name.clone(),
            });
        } else {
            let c = self
                .fluid
                .join(self.now, key, a, standalone_s, &mut act.lost_at_start);
            act.class = Some(c);
        }
    }

    /// An activity ended: reports it, releases its holds, wakes its children and, when it
    /// was the job's last, finishes the job.
    pub(super) fn on_finish<O: Observer>(&mut self, obs: &mut O, a: usize) {
        self.events += 1;
        let act = &mut self.activities[a];
        debug_assert!(act.live, "live activity");
        act.live = false;
        self.free_activities.push(a);
        let lost = self.take_lost(a);
        let act = &self.activities[a];
        let token = act.token;
        let (start, standalone_s, gpu, blocked_on) =
            (act.start, act.standalone_s, act.gpu, act.blocked_on);
        self.fire_markers(obs, &token, Edge::End, gpu);
        let record = StageRecord {
            stage_ref: self.stage_ref(&token),
            ready: token.ready,
            start,
            end: self.now,
            standalone_s,
            gpu,
            lost,
            blocked_on,
        };
        obs.stage_finished(&record);
        self.lost_scratch = record.lost;

        self.release_holds(&token);
        if !self.plan.stages[token.stage].children.is_empty() {
            self.wake_children(&token);
        }
        let job = self.job_mut(token.job);
        job.remaining -= 1;
        if job.remaining == 0 {
            self.finish_job(obs, token.job);
        }
    }

    /// The time activity `a` lost to sharing, in the reused scratch record (hand it back
    /// to `lost_scratch` once reported).
    #[inline]
    pub(super) fn take_lost(&mut self, a: usize) -> Loss {
        let mut lost = std::mem::take(&mut self.lost_scratch);
        let act = &self.activities[a];
        match act.class {
            // Observers see the record by reference, so a no-loss value written for an
            // earlier record is still there.
            None if self.lost_scratch_is_none => {}
            None => self.fluid.no_loss(&mut lost),
            Some(c) => self.fluid.lost_since(c, &act.lost_at_start, &mut lost),
        }
        self.lost_scratch_is_none = act.class.is_none();
        lost
    }

    /// Releases the holds due at the end of this instance's slot.
    fn release_holds(&mut self, token: &Token) {
        let slot = self.slot(token.stage, token.scope);
        let held = &mut self.jobs[token.job].held;
        if held.is_empty() {
            return;
        }
        if let [(s, i, amount)] = held[..] {
            // One hold (a lock, a core): released here or not at all, without the
            // scratch list.
            if s == slot {
                held.clear();
                self.holds.release(&[(i, amount)], &mut self.agenda);
            }
            return;
        }
        let mut released = std::mem::take(&mut self.released);
        released.clear();
        held.retain(|&(s, i, amount)| {
            let due = s == slot;
            if due {
                released.push((i, amount));
            }
            !due
        });
        if !released.is_empty() {
            self.holds.release(&released, &mut self.agenda);
        }
        self.released = released;
    }

    /// Counts this instance off its children's dependencies; those with none left are ready.
    fn wake_children(&mut self, token: &Token) {
        let parent_per_partition = self.plan.stages[token.stage].per_partition;
        for ci in 0..self.plan.stages[token.stage].children.len() {
            let child = self.plan.stages[token.stage].children[ci];
            let child_per_partition = self.plan.stages[child].per_partition;
            let ready = |engine: &mut Self, scope: Scope| {
                let s = engine.slot(child, scope);
                let job = &mut engine.jobs[token.job];
                job.pending[s] -= 1;
                if job.pending[s] == 0 {
                    engine.agenda.push(Work::Ready {
                        job: token.job,
                        stage: child,
                        scope,
                    });
                }
            };
            let partitions = self.plan.partitions;
            for scope in woken_scopes(
                parent_per_partition,
                child_per_partition,
                token.scope,
                partitions,
            ) {
                ready(self, scope);
            }
        }
    }

    /// The job's last instance finished: frees its slot, and under closed arrivals starts
    /// the next job.
    fn finish_job<O: Observer>(&mut self, obs: &mut O, job: usize) {
        let state = self.job_mut(job);
        state.live = false;
        debug_assert!(state.held.is_empty(), "job finished holding resources");
        let (number, arrived) = (state.number, state.arrived);
        self.free_jobs.push(job);
        self.completed += 1;
        obs.job_finished(self.now, number, arrived);
        if matches!(self.model.arrivals.kind, ArrivalKind::Closed { .. })
            && self.started < self.model.arrivals.jobs
        {
            self.start_job(obs);
        }
    }

    /// Tells observers about holdable instances whose use or queue changed.
    pub(super) fn report_holds<O: Observer>(&mut self, obs: &mut O) {
        let mut touched = std::mem::take(&mut self.hold_touched);
        self.holds.take_touched_into(&mut touched);
        if !touched.is_empty() {
            let waiting = self.holds.waiting();
            for &i in &touched {
                obs.hold_changed(self.now, i, self.holds.in_use(i), waiting);
            }
        }
        self.hold_touched = touched;
    }
}

impl Engine<'_> {
    /// A free activity slot (reused with its buffers), or a new one for `token`.
    pub(super) fn activity_slot(&mut self, token: Token) -> usize {
        match self.free_activities.pop() {
            Some(i) => i,
            None => {
                self.activities.push(Activity::vacant(token));
                self.activities.len() - 1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::test_model::{host_model, stage};
    use crate::engine::{Observer, Scope, StageRecord, simulate};
    use crate::model::{Hold, HoldResource};

    /// (job, scope, stage, start s, end s) of every finished instance, in order.
    #[derive(Default)]
    struct Finished(Vec<(u64, Scope, usize, f64, f64)>);

    impl Observer for Finished {
        fn stage_finished(&mut self, r: &StageRecord) {
            let s = r.stage_ref;
            self.0
                .push((s.job, s.scope, s.stage, r.start.as_secs(), r.end.as_secs()));
        }
    }

    #[test]
    fn partitions_fan_out_and_join() {
        let stages = vec![
            stage("split", false, vec![], 1.0),
            stage("work", true, vec![0], 2.0),
            stage("merge", false, vec![1], 1.0),
        ];
        let mut obs = Finished::default();
        let summary = simulate(&host_model(2, stages, 1, 1), &mut obs).unwrap();
        assert_eq!(summary.jobs_completed, 1);
        assert_eq!(
            obs.0,
            [
                (0, Scope::Job, 0, 0.0, 1.0),
                (0, Scope::Partition(0), 1, 1.0, 3.0),
                (0, Scope::Partition(1), 1, 1.0, 3.0),
                (0, Scope::Job, 2, 3.0, 4.0),
            ]
        );
    }

    #[test]
    fn a_hold_is_released_at_the_end_of_its_until_stage_and_wakes_the_next_job() {
        // "a" takes the one-unit lock and keeps it until "b" ends: the second job's "a"
        // starts only when the first job's "b" finishes.
        let mut a = stage("a", false, vec![], 1.0);
        a.holds = vec![Hold {
            resource: HoldResource::Lock(0),
            amount: 1,
            until: 1,
        }];
        let b = stage("b", false, vec![0], 2.0);
        let mut obs = Finished::default();
        let summary = simulate(&host_model(1, vec![a, b], 2, 2), &mut obs).unwrap();
        assert_eq!(summary.stalled, None);
        assert_eq!(
            obs.0,
            [
                (0, Scope::Job, 0, 0.0, 1.0),
                (0, Scope::Job, 1, 1.0, 3.0),
                (1, Scope::Job, 0, 3.0, 4.0),
                (1, Scope::Job, 1, 4.0, 6.0),
            ]
        );
    }

    #[test]
    fn a_hold_that_is_never_granted_stalls_with_a_typed_summary() {
        let mut a = stage("a", false, vec![], 1.0);
        a.holds = vec![Hold {
            resource: HoldResource::Cores,
            amount: 5,
            until: 0,
        }];
        let summary = simulate(&host_model(1, vec![a], 3, 1), &mut Finished::default()).unwrap();
        let stall = summary.stalled.expect("stalled");
        assert_eq!(
            (
                stall.jobs_completed,
                stall.jobs_total,
                stall.waiting_instances
            ),
            (0, 3, 1)
        );
        assert_eq!(
            stall.to_string(),
            "0 of 3 jobs finished; 1 stage instances wait for holdable resources that are never released"
        );
    }
}
