//! The general event loop: each event's zero-time consequences (readies, grants,
//! finishes, in `steps.rs`) are drained through the run's components, then the fluid
//! classes are re-solved once and rescheduled.

use crate::model::Model;

use super::activities::Activities;
use super::agenda::{Agenda, Work};
use super::event_loop::{Event, EventLoop};
use super::fluid::{Due, Fluid};
use super::holds::Holds;
use super::jobs::JobTable;
use super::observer::Observer;
use super::outcome::{EngineError, EngineLimits, Overflowed, RunSummary};
use super::plan::Plan;
use crate::time::SimTime;

/// One run off the lane: the model's compiled plan, the components that hold the run's
/// state (each owns its fields; `steps` and the loop below take them in turn) and the
/// loop's own state.
pub(super) struct Engine<'m> {
    pub(super) core: EventLoop<'m>,
    pub(super) plan: Plan,
    /// Jobs in flight: dependency counts and GPU bindings.
    pub(super) jobs: JobTable,
    /// What is held, by whom, until when; who waits.
    pub(super) holds: Holds,
    /// Running stage instances.
    pub(super) activities: Activities,
    /// The classes of running instances that share rate resources, and their speeds.
    pub(super) fluid: Fluid,
    /// Zero-time work of the current instant.
    pub(super) agenda: Agenda,
}

impl<'m> Engine<'m> {
    pub fn new(model: &'m Model, plan: Plan, limits: EngineLimits) -> Self {
        let r = &plan.resources;
        let hold_capacities: Vec<u64> = r.holds.iter().map(|h| h.capacity).collect();
        let holds = Holds::new(hold_capacities, model.hardware.gpus.len() as u32);
        let fluid = Fluid::new(
            plan.keys.clone(),
            r.capacities(),
            r.dram,
            plan.pool_rules(model),
        );
        Self {
            core: EventLoop::new(model, limits),
            jobs: JobTable::new(plan.partitions),
            holds,
            activities: Activities::default(),
            fluid,
            agenda: Agenda::default(),
            plan,
        }
    }

    /// Runs to the end: a closed loop's first jobs, then the event loop.
    pub fn run<O: Observer>(mut self, obs: &mut O) -> Result<RunSummary, EngineError> {
        obs.resources(&self.plan.resources.rates, &self.plan.resources.holds);
        if let Some(first) = self.core.begin_arrivals() {
            for _ in 0..first {
                self.start_job(obs);
            }
            self.drain(obs);
        }
        self.run_events(obs);
        if self.core.fault.is_none() {
            obs.finished(self.core.now);
        }
        let waiting = self.holds.waiting();
        self.core.finish(waiting)
    }

    /// Each event's zero-time work is drained before the next event, until the jobs are
    /// done, nothing is left or the run fails.
    fn run_events<O: Observer>(&mut self, obs: &mut O) {
        let total = self.core.model.arrivals.jobs;
        while let Some((t, event)) = self.core.queue.pop() {
            match event {
                Event::Arrival => {
                    self.core.advance_to(t);
                    self.start_job(obs);
                    if !self.core.schedule_next_arrival() {
                        self.agenda.clear();
                    }
                }
                Event::ClassDue(class) => {
                    self.core.advance_to(t);
                    let agenda = &mut self.agenda;
                    self.fluid
                        .complete_due(t, class, |a| agenda.push(Work::Finish(a)));
                }
                Event::Done(a) => {
                    self.core.advance_to(t);
                    self.agenda.push(Work::Finish(a));
                }
            }
            self.drain(obs);
            if self.core.fault.is_some() || self.core.completed >= total {
                break;
            }
        }
    }

    /// Stops the run with `fault` (the first one wins); the loop returns it after the
    /// current event.
    #[cold]
    pub(super) fn fail(&mut self, fault: EngineError) {
        self.agenda.clear();
        self.core.fail(fault);
    }

    /// Schedules `event` at `at`, or fails the run when `at` is beyond the clock's range.
    pub(super) fn schedule(
        &mut self,
        at: SimTime,
        event: Event,
        what: impl FnOnce() -> Overflowed,
    ) {
        if !self.core.schedule(at, event, what) {
            self.agenda.clear();
        }
    }

    /// Processes zero-time consequences (readies, grants, finishes) until none remain,
    /// then reports the holds that changed, re-solves rates once and reschedules the
    /// classes that changed.
    fn drain<O: Observer>(&mut self, obs: &mut O) {
        loop {
            while let Some(w) = self.agenda.pop() {
                if !self.core.take_step() {
                    self.agenda.clear();
                    return;
                }
                match w {
                    Work::Ready { job, stage, scope } => self.on_ready(obs, job, stage, scope),
                    Work::Start {
                        token,
                        gpu,
                        blocked_on,
                    } => self.on_start(obs, token, gpu, blocked_on),
                    Work::Finish(a) => self.on_finish(obs, a),
                }
            }
            self.holds.report(self.core.now, obs);
            if !self.settle_classes(obs) {
                return;
            }
            if self.agenda.is_empty() {
                break;
            }
        }
    }

    /// Re-solves the classes' speeds when a shared class gained or lost members, and
    /// hands each re-rated class's next completion to the queue; false (the run failed)
    /// when one would fall beyond the clock's range.
    #[inline]
    fn settle_classes<O: Observer>(&mut self, obs: &mut O) -> bool {
        let now = self.core.now;
        if self.fluid.needs_resolve() {
            let dram = &self.core.model.hardware.dram;
            let (usage, latency_slowdown) = self.fluid.resolve(now, dram);
            obs.rates_changed(now, usage, latency_slowdown);
            if dram.efficiency_loss_per_stream > 0.0 {
                let (streams, usable) = self.fluid.dram_usable();
                obs.dram_usable(now, streams, usable);
            }
        }
        let queue = &mut self.core.queue;
        let mut beyond = None;
        self.fluid.reschedule(now, |due: Due| {
            if due.at == SimTime::NEVER {
                beyond = Some(due.class);
                return;
            }
            // One pending completion per class: a re-rated class's earlier one goes.
            queue.set_slot(due.class.index(), due.at, Event::ClassDue(due.class))
        });
        let Some(class) = beyond else {
            return true;
        };
        let stage = self
            .fluid
            .next_member(class)
            .map(|a| self.stage_name_of(a))
            .unwrap_or_default();
        let starved = self.fluid.starved(now, class);
        let fault = (self.core).beyond_range(&self.plan.resources.rates, stage, starved);
        self.fail(fault);
        false
    }
}
