//! The job table: jobs in flight in reusable slots, each with its dependency counts per
//! instance, its instances not yet finished and its GPU bindings; a finished instance
//! counts off its children's dependencies and wakes those with none left.

use crate::model::StageId;
use crate::time::SimTime;

use super::ids::{Scope, Token};
use super::plan::{Plan, woken_scopes};
use super::small_copy::copy_small;

/// A job in flight (slots are reused, buffers and all, once a job finishes).
struct JobState {
    live: bool,
    number: u64,
    arrived: SimTime,
    /// Dependencies outstanding per instance slot.
    pending: Vec<u32>,
    /// Instances not yet finished.
    remaining: usize,
    /// GPU binding per partition, and the job-level binding last.
    gpu: Vec<Option<u32>>,
}

/// A job whose last instance finished.
pub(super) struct FinishedJob {
    pub number: u64,
    pub arrived: SimTime,
}

/// The jobs in flight.
pub(super) struct JobTable {
    slots: Vec<JobState>,
    free: Vec<usize>,
    /// Partitions per job (the job-level GPU binding follows theirs).
    partitions: u32,
}

// The per-instance methods are `#[inline]`: out of line, the general path ran about 10%
// slower in wall time (M/M/16 with a second stage) for the same instructions, from
// mispredicted branches across the calls.
impl JobTable {
    pub fn new(partitions: u32) -> Self {
        JobTable {
            slots: Vec::new(),
            free: Vec::new(),
            partitions,
        }
    }

    /// Admits job `number`, arriving `now`, into a free slot: its stages without
    /// dependencies are `ready` (job slot, stage, scope; per partition for a
    /// per-partition stage), in the plan's order.
    #[inline]
    pub fn admit(
        &mut self,
        plan: &Plan,
        number: u64,
        now: SimTime,
        mut ready: impl FnMut(usize, StageId, Scope),
    ) {
        let partitions = self.partitions;
        let job = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(JobState {
                    live: false,
                    number: 0,
                    arrived: SimTime::ZERO,
                    pending: Vec::with_capacity(plan.slots_per_job),
                    remaining: 0,
                    gpu: Vec::with_capacity(partitions as usize + 1),
                });
                self.slots.len() - 1
            }
        };
        let state = &mut self.slots[job];
        debug_assert!(!state.live);
        state.live = true;
        state.number = number;
        state.arrived = now;
        copy_small(&mut state.pending, &plan.pending_template);
        state.remaining = plan.slots_per_job;
        state.gpu.clear();
        state.gpu.resize(partitions as usize + 1, None);
        for &stage in &plan.roots {
            if plan.stages[stage].per_partition {
                for p in 0..partitions {
                    ready(job, stage, Scope::Partition(p));
                }
            } else {
                ready(job, stage, Scope::Job);
            }
        }
    }

    fn job(&self, job: usize) -> &JobState {
        let j = &self.slots[job];
        debug_assert!(j.live, "live job");
        j
    }

    fn job_mut(&mut self, job: usize) -> &mut JobState {
        let j = &mut self.slots[job];
        debug_assert!(j.live, "live job");
        j
    }

    /// The number (arrival order) of the job in slot `job`.
    #[inline]
    pub fn number(&self, job: usize) -> u64 {
        self.job(job).number
    }

    /// Index into a job's GPU bindings for an instance in `scope`.
    fn binding_index(&self, scope: Scope) -> usize {
        match scope {
            Scope::Job => self.partitions as usize,
            Scope::Partition(p) => p as usize,
        }
    }

    /// The GPU an instance in `scope` of job slot `job` is bound to: its partition's,
    /// else the job's.
    #[inline]
    pub fn gpu(&self, job: usize, scope: Scope) -> Option<u32> {
        let j = self.job(job);
        j.gpu[self.binding_index(scope)].or(j.gpu[self.partitions as usize])
    }

    /// Binds `scope` of job slot `job` to the GPU its holds were granted on, unless it
    /// is bound already.
    #[inline]
    pub fn bind(&mut self, job: usize, scope: Scope, granted: Option<u32>) {
        let bi = self.binding_index(scope);
        if let Some(g) = granted {
            let j = self.job_mut(job);
            if j.gpu[bi].is_none() {
                j.gpu[bi] = Some(g);
            }
        }
    }

    /// Counts `token`'s finished instance off its children's dependencies; those with
    /// none left are `ready` (stage, scope; of the same job).
    #[inline]
    pub fn wake_children(
        &mut self,
        plan: &Plan,
        token: &Token,
        mut ready: impl FnMut(StageId, Scope),
    ) {
        let parent = &plan.stages[token.stage];
        for &child in &parent.children {
            let child_per_partition = plan.stages[child].per_partition;
            for scope in woken_scopes(
                parent.per_partition,
                child_per_partition,
                token.scope,
                self.partitions,
            ) {
                let s = plan.slot(child, scope);
                let job = &mut self.slots[token.job];
                job.pending[s] -= 1;
                if job.pending[s] == 0 {
                    ready(child, scope);
                }
            }
        }
    }

    /// Counts one finished instance off job slot `job`; when it was the last, frees the
    /// slot and returns the job.
    #[inline]
    pub fn instance_done(&mut self, job: usize) -> Option<FinishedJob> {
        let state = self.job_mut(job);
        state.remaining -= 1;
        if state.remaining > 0 {
            return None;
        }
        state.live = false;
        let finished = FinishedJob {
            number: state.number,
            arrived: state.arrived,
        };
        self.free.push(job);
        Some(finished)
    }
}

#[cfg(test)]
mod tests {
    use super::JobTable;
    use crate::engine::Scope;
    use crate::engine::ids::Token;
    use crate::engine::plan::Plan;
    use crate::engine::simulate;
    use crate::engine::test_model::{Finished, host_model, stage};
    use crate::model::{Stage, StageId};
    use crate::time::SimTime;

    fn plan_of(partitions: u32, stages: Vec<Stage>) -> Plan {
        Plan::compile(&host_model(partitions, stages, 1, 1)).unwrap()
    }

    /// The instance of `stage` in `scope` of the job in slot 0.
    fn token(stage: StageId, scope: Scope) -> Token {
        Token {
            job: 0,
            stage,
            scope,
            ready: SimTime::ZERO,
        }
    }

    #[test]
    fn a_child_is_ready_once_every_parent_instance_is_counted_off() {
        // split (job) -> work (per partition) -> merge (job), two partitions.
        let plan = plan_of(
            2,
            vec![
                stage("split", false, vec![], 1.0),
                stage("work", true, vec![0], 1.0),
                stage("merge", false, vec![1], 1.0),
            ],
        );
        let mut jobs = JobTable::new(plan.partitions);
        let mut ready = Vec::new();
        jobs.admit(&plan, 7, SimTime::ZERO, |job, stage, scope| {
            ready.push((job, stage, scope))
        });
        assert_eq!(ready, [(0, 0, Scope::Job)]);
        assert_eq!(jobs.number(0), 7);
        let wake = |jobs: &mut JobTable, stage, scope| {
            let mut woken = Vec::new();
            jobs.wake_children(&plan, &token(stage, scope), |s, sc| woken.push((s, sc)));
            woken
        };
        assert_eq!(
            wake(&mut jobs, 0, Scope::Job),
            [(1, Scope::Partition(0)), (1, Scope::Partition(1))]
        );
        assert_eq!(wake(&mut jobs, 1, Scope::Partition(1)), []);
        assert_eq!(wake(&mut jobs, 1, Scope::Partition(0)), [(2, Scope::Job)]);
    }

    #[test]
    fn the_last_instance_frees_the_slot_and_the_next_job_starts_afresh_there() {
        let plan = plan_of(
            1,
            vec![
                stage("a", false, vec![], 1.0),
                stage("b", false, vec![0], 1.0),
            ],
        );
        let mut jobs = JobTable::new(plan.partitions);
        let mut slots = Vec::new();
        let t = SimTime::from_secs(2.0);
        jobs.admit(&plan, 0, t, |job, _, _| slots.push(job));
        jobs.admit(&plan, 1, t, |job, _, _| slots.push(job));
        assert!(jobs.instance_done(0).is_none(), "b is still to run");
        let done = jobs.instance_done(0).expect("b was the last");
        assert_eq!((done.number, done.arrived), (0, t));
        jobs.admit(&plan, 2, t, |job, _, _| slots.push(job));
        assert_eq!(slots, [0, 1, 0]);
        assert_eq!(jobs.number(0), 2);
        // Fresh dependency counts: b waits for the new job's a again.
        let mut woken = Vec::new();
        jobs.wake_children(&plan, &token(0, Scope::Job), |s, _| woken.push(s));
        assert_eq!(woken, [1]);
    }

    #[test]
    fn a_partition_keeps_its_first_gpu_and_falls_back_to_the_jobs() {
        let plan = plan_of(2, vec![stage("a", true, vec![], 1.0)]);
        let mut jobs = JobTable::new(plan.partitions);
        jobs.admit(&plan, 0, SimTime::ZERO, |_, _, _| {});
        jobs.bind(0, Scope::Partition(1), Some(3));
        assert_eq!(jobs.gpu(0, Scope::Partition(1)), Some(3));
        assert_eq!(jobs.gpu(0, Scope::Partition(0)), None);
        jobs.bind(0, Scope::Job, Some(1));
        assert_eq!(jobs.gpu(0, Scope::Partition(0)), Some(1));
        jobs.bind(0, Scope::Partition(1), Some(0));
        assert_eq!(jobs.gpu(0, Scope::Partition(1)), Some(3));
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
}
