//! The lane's engine: its event loop and steps (ready, start and finish of its one
//! stage's instances), making the general path's observer calls in its order.

use crate::engine::event_loop::{Event, EventLoop};
use crate::engine::ids::ClassId;
use crate::engine::observer::{Loss, Observer};
use crate::engine::outcome::{EngineError, EngineLimits, Overflowed, RunSummary};
use crate::engine::plan::Plan;
use crate::model::{Edge, Model};
use crate::time::{SimTime, ceil_to_u64};

use super::class::Reschedule;
use super::fit::Lane;
use super::state::{LaneRun, Running, Step};

/// A run of a workload that fits the lane.
pub(in crate::engine) struct LaneEngine<'m> {
    core: EventLoop<'m>,
    plan: Plan,
    lane: Lane,
    /// Its steps, hold line and running instances.
    run: LaneRun,
}

impl<'m> LaneEngine<'m> {
    /// The run of `model` (compiled to `plan`, which fits `lane`) within `limits`.
    pub fn new(model: &'m Model, plan: Plan, lane: Lane, limits: EngineLimits) -> Self {
        let r = &plan.resources;
        let hold_capacities: Vec<u64> = r.holds.iter().map(|h| h.capacity).collect();
        let rates = (r.capacities(), r.dram.index(), plan.pool_rules(model));
        let no_loss = Loss::zero(r.rates.len());
        Self {
            core: EventLoop::new(model, limits),
            run: LaneRun::new(lane, &plan, &hold_capacities, rates, no_loss),
            plan,
            lane,
        }
    }

    /// Runs to the end.
    pub fn run<O: Observer>(mut self, obs: &mut O) -> Result<RunSummary, EngineError> {
        obs.resources(&self.plan.resources.rates, &self.plan.resources.holds);
        self.run_lane(obs, self.lane);
        if self.core.fault.is_none() {
            obs.finished(self.core.now);
        }
        let waiting = self.run.waiting();
        self.core.finish(waiting)
    }

    /// Stops the run with `fault` (the first one wins); the loop returns it after the
    /// current event.
    #[cold]
    fn fail(&mut self, fault: EngineError) {
        self.run.clear();
        self.core.fail(fault);
    }

    /// Counts one zero-time step against the event limit; false (the run failed) when
    /// none is left.
    #[inline]
    fn take_step(&mut self) -> bool {
        let left = self.core.take_step();
        if !left {
            self.run.clear();
        }
        left
    }

    /// A closed loop's first jobs, then the lane's event loop (each kind of lane
    /// compiled on its own: an unshared lane carries no class checks).
    fn run_lane<O: Observer>(&mut self, obs: &mut O, lane: Lane) {
        if let Some(first) = self.core.begin_arrivals() {
            for _ in 0..first {
                self.lane_start_job(obs);
            }
            self.lane_drain(obs, lane);
        }
        if lane.shared {
            self.lane_events::<O, true>(obs, lane);
        } else {
            self.lane_events::<O, false>(obs, lane);
        }
    }

    /// A job arrives: its one instance is ready at once (the job number is its only name).
    fn lane_start_job<O: Observer>(&mut self, obs: &mut O) {
        let number = self.core.started;
        self.core.started += 1;
        self.core.events += 1;
        obs.job_arrived(self.core.now, number);
        self.run.steps.push(Step::Ready { job: number });
    }

    /// The event loop of a lane run (as the general loop, for the lane's events;
    /// `SHARED` is `lane.shared`): each event's steps are drained before the next event,
    /// until the jobs are done, nothing is left or the run fails.
    fn lane_events<O: Observer, const SHARED: bool>(&mut self, obs: &mut O, lane: Lane) {
        let total = self.core.model.arrivals.jobs;
        while let Some((t, event)) = self.core.queue.pop() {
            self.core.advance_to(t);
            match event {
                Event::Arrival => {
                    self.lane_start_job(obs);
                    if !self.core.schedule_next_arrival() {
                        self.run.clear();
                    }
                }
                Event::ClassDue(_) => self.run.class_due(t),
                Event::Done(a) => self.run.push_finish(a),
            }
            self.lane_drain_of::<O, SHARED>(obs, lane);
            if self.core.fault.is_some() || self.core.completed >= total {
                break;
            }
        }
    }

    /// As the general drain, for the lane's steps (readies, grants, finishes) until none
    /// remain, then the hold's report and, on a shared lane, the class's re-solve.
    fn lane_drain<O: Observer>(&mut self, obs: &mut O, lane: Lane) {
        // Each kind of lane compiled on its own: an unshared lane carries no class checks.
        if lane.shared {
            self.lane_drain_of::<O, true>(obs, lane);
        } else {
            self.lane_drain_of::<O, false>(obs, lane);
        }
    }

    /// [`LaneEngine::lane_drain`] for a lane whose instances share as one class (`SHARED`,
    /// which is `lane.shared`) or are never slowed.
    fn lane_drain_of<O: Observer, const SHARED: bool>(&mut self, obs: &mut O, lane: Lane) {
        while let Some(step) = self.run.steps.pop() {
            if !self.take_step() {
                return;
            }
            match step {
                Step::Ready { job } => {
                    if !self.lane_ready::<O, SHARED>(obs, job, lane) {
                        return;
                    }
                }
                Step::Start { job, ready, waited } => {
                    self.lane_start::<O, SHARED>(obs, job, ready, waited, lane)
                }
                Step::Finish(a) => self.lane_finish::<O, SHARED>(obs, a, lane),
            }
        }
        if let Some(hold) = &mut self.run.hold
            && hold.touched
        {
            hold.touched = false;
            obs.hold_changed(self.core.now, hold.index, hold.in_use, hold.line.len());
        }
        if SHARED {
            self.lane_class_settle(obs, lane);
        }
    }

    /// As the general drain's end, for the lane's class: re-solves its speed when its
    /// membership changed and hands its next completion to the event queue.
    fn lane_class_settle<O: Observer>(&mut self, obs: &mut O, lane: Lane) {
        let Some(class) = &mut self.run.class else {
            return;
        };
        let now = self.core.now;
        let resolved = class.needs_resolve();
        if resolved {
            class.resolve(now, &self.core.model.hardware.dram);
        }
        // The queue and the observer see nothing of each other: scheduling before the
        // report lets the class's borrow end once, for the report's.
        match class.reschedule(now) {
            Reschedule::Keep => {}
            Reschedule::At(at) => (self.core.queue).set_slot(
                ClassId::FIRST.index(),
                at,
                Event::ClassDue(ClassId::FIRST),
            ),
            Reschedule::Beyond(starved) => {
                let stage = self.core.model.workload.stages[lane.stage].name.clone();
                let rates = &self.plan.resources.rates;
                self.fail(self.core.beyond_range(rates, stage, starved))
            }
        }
        if resolved && let Some(class) = &self.run.class {
            let (usage, latency_slowdown) = class.reported();
            obs.rates_changed(now, usage, latency_slowdown);
            if self.core.model.hardware.dram.efficiency_loss_per_stream > 0.0 {
                let (streams, usable) = class.dram_usable();
                obs.dram_usable(now, streams, usable);
            }
        }
    }

    /// As the general path's ready step, for the lane's instance (no GPU binding, no markers).
    /// False when the event limit stopped the run at its start step.
    fn lane_ready<O: Observer, const SHARED: bool>(
        &mut self,
        obs: &mut O,
        job: u64,
        lane: Lane,
    ) -> bool {
        let ready = self.core.now;
        obs.stage_edge(ready, lane.instance(job), Edge::Ready, None);
        let run = &mut self.run;
        if let Some(hold) = &mut run.hold {
            if !hold.line.is_empty() || !hold.fits() {
                hold.line.push_back((job, ready));
                return true;
            }
            hold.in_use += hold.amount;
            hold.touched = true;
        }
        if run.steps.is_empty() {
            // Its start would be the next step taken: take it now, counted as a step all
            // the same (an arrival's drain, mostly).
            if !self.take_step() {
                return false;
            }
            self.lane_start::<O, SHARED>(obs, job, ready, false, lane);
            return true;
        }
        run.steps.push(Step::Start {
            job,
            ready,
            waited: false,
        });
        true
    }

    /// As the general path's start step, for the lane's instance: never slowed, so it ends its
    /// standalone time after now (rounded up to the nanosecond, as in the general path).
    fn lane_start<O: Observer, const SHARED: bool>(
        &mut self,
        obs: &mut O,
        job: u64,
        ready: SimTime,
        waited: bool,
        lane: Lane,
    ) {
        let now = self.core.now;
        obs.stage_edge(now, lane.instance(job), Edge::Start, None);
        let standalone_s = self.plan.stages[lane.stage]
            .sampler
            .sample(&mut self.core.rng);
        let in_class = SHARED && standalone_s > 0.0;
        let running = Running {
            job,
            ready,
            start: now,
            standalone_s,
            waited,
            in_class,
        };
        let run = &mut self.run;
        let a = match run.free.pop() {
            Some(a) => {
                run.running[a] = running;
                a
            }
            None => {
                run.running.push(running);
                run.running.len() - 1
            }
        };
        if standalone_s <= 0.0 {
            run.steps.push(Step::Finish(a));
        } else if SHARED {
            let class = run.class.as_mut().expect("a shared lane");
            if run.lost_at_start.len() <= a {
                run.lost_at_start.resize_with(a + 1, Loss::default);
            }
            class.join(now, a, standalone_s, &mut run.lost_at_start[a]);
        } else {
            let end = now + ceil_to_u64(standalone_s * 1e9);
            let model = self.core.model;
            let what = || Overflowed::StageEnd {
                stage: model.workload.stages[lane.stage].name.clone(),
            };
            if !self.core.schedule(end, Event::Done(a), what) {
                self.run.clear();
            }
        }
    }

    /// As the general path's finish step, for the lane's instance: reports it, releases its hold
    /// (granting from the front of the line what now fits) and finishes its job.
    fn lane_finish<O: Observer, const SHARED: bool>(&mut self, obs: &mut O, a: usize, lane: Lane) {
        self.core.events += 1;
        let now = self.core.now;
        let run = &mut self.run;
        let act = run.running[a];
        run.free.push(a);
        let stage_ref = lane.instance(act.job);
        obs.stage_edge(now, stage_ref, Edge::End, None);
        let record = &mut run.record;
        if !SHARED {
            // Never slowed: the record's loss is none for good.
        } else if act.in_class {
            let class = run.class.as_ref().expect("a shared lane");
            class.lost_since(&run.lost_at_start[a], &mut record.lost);
            run.lost_is_none = false;
        } else if !run.lost_is_none {
            // Observers see the record by reference, so a no-loss value written for an
            // earlier record is still there.
            record.lost.reset(record.lost.by_rate.len());
            run.lost_is_none = true;
        }
        record.stage_ref = stage_ref;
        record.ready = act.ready;
        record.start = act.start;
        record.end = now;
        record.standalone_s = act.standalone_s;
        record.blocked_on = lane.hold.filter(|_| act.waited).map(|(i, _)| i);
        obs.stage_finished(record);
        if let Some(hold) = &mut run.hold {
            hold.in_use -= hold.amount;
            hold.touched = true;
            while hold.fits() {
                let Some((job, ready)) = hold.line.pop_front() else {
                    break;
                };
                hold.in_use += hold.amount;
                run.steps.push(Step::Start {
                    job,
                    ready,
                    waited: true,
                });
            }
        }
        self.core.completed += 1;
        obs.job_finished(now, act.job, act.ready);
        if self.core.closed_loop_has_more() {
            self.lane_start_job(obs);
        }
    }
}
