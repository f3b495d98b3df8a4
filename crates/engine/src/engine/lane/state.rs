//! What a lane run keeps while it runs: its steps, its one hold and line, its running
//! instances and the record it rewrites for each.

use std::collections::VecDeque;

use crate::engine::holdable::HoldIndex;
use crate::engine::observer::{Loss, Scope, StageRecord, StageRef};
use crate::engine::plan::Plan;
use crate::engine::solver::PoolRule;
use crate::time::SimTime;

use super::class::LaneClass;
use super::fit::Lane;

/// A zero-time step of a lane run (the general path's `Work`, for a job that is its one
/// instance).
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    /// Job `job` arrived: its instance is ready.
    Ready { job: u64 },
    /// Its hold granted (`waited`: after waiting in line for it).
    Start {
        job: u64,
        ready: SimTime,
        waited: bool,
    },
    /// The running instance in this slot ends.
    Finish(usize),
}

/// The lane's FIFO of steps: a buffer read from the front, emptied whenever the last
/// step is taken. A lane drain mostly holds one step at a time (an arrival's ready, a
/// departure's finish), so a push and a pop are a write and a read, with no ring
/// arithmetic and no moving of the next step into place.
#[derive(Debug, Default)]
pub(super) struct Steps {
    pub(super) buf: Vec<Step>,
    /// The next step to take, within `buf` (`buf.len()` when none is left).
    pub(super) head: usize,
}

impl Steps {
    #[inline]
    pub(super) fn push(&mut self, step: Step) {
        self.buf.push(step);
    }

    #[inline]
    pub(super) fn pop(&mut self) -> Option<Step> {
        let step = *self.buf.get(self.head)?;
        self.head += 1;
        if self.head == self.buf.len() {
            self.clear();
        }
        Some(step)
    }

    /// No step is queued.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.head == self.buf.len()
    }

    #[inline]
    pub(super) fn clear(&mut self) {
        self.buf.clear();
        self.head = 0;
    }
}

/// The lane's one hold: a counter and a FIFO line of (job, ready time). With one resource
/// and one amount, the general line's strict FIFO comes down to this: a request is
/// granted at once when nobody waits and the amount fits, and a release grants from the
/// front while the amount fits.
#[derive(Debug)]
pub(super) struct LaneHold {
    pub(super) index: HoldIndex,
    pub(super) amount: u64,
    pub(super) capacity: u64,
    pub(super) in_use: u64,
    pub(super) line: VecDeque<(u64, SimTime)>,
    /// Granted or released since the last report.
    pub(super) touched: bool,
}

impl LaneHold {
    /// Whether one more instance's amount fits beside what is in use.
    #[inline]
    pub(super) fn fits(&self) -> bool {
        self.in_use + self.amount <= self.capacity
    }
}

/// A running lane instance (slots are reused once it ends).
#[derive(Debug, Clone, Copy)]
pub(super) struct Running {
    pub(super) job: u64,
    pub(super) ready: SimTime,
    pub(super) start: SimTime,
    pub(super) standalone_s: f64,
    pub(super) waited: bool,
    /// It runs in the lane's class (else it is never slowed, or took no time).
    pub(super) in_class: bool,
}

/// What a lane run keeps while it runs.
#[derive(Debug)]
pub(super) struct LaneRun {
    pub(super) steps: Steps,
    pub(super) hold: Option<LaneHold>,
    pub(super) running: Vec<Running>,
    pub(super) free: Vec<usize>,
    /// The class of a shared lane's running instances.
    pub(super) class: Option<LaneClass>,
    /// Per running slot, the class's lost-time counters when it joined (shared lane).
    pub(super) lost_at_start: Vec<Loss>,
    /// The record of the last finished instance, rewritten in place for the next one
    /// (observers see it by reference, so its buffers are kept).
    pub(super) record: StageRecord,
    /// `record.lost` holds no loss, over every rate resource (what an instance that
    /// never ran in the class reports).
    pub(super) lost_is_none: bool,
}

impl LaneRun {
    /// The state of a run of `lane` of `plan`, with the hold capacities given, the rate
    /// capacities `rates` (DRAM at `dram`) and the pool rules `pools`; `no_loss` is what
    /// an instance outside the class reports.
    pub fn new(
        lane: Lane,
        plan: &Plan,
        capacities: &[u64],
        (rates, dram, pools): (Vec<f64>, usize, Vec<PoolRule>),
        no_loss: Loss,
    ) -> Self {
        let class = lane.shared.then(|| {
            let key = &plan.keys[plan.stages[lane.stage].key_for(None)];
            LaneClass::new(key, rates, dram, pools)
        });
        let hold = lane.hold.map(|(index, amount)| LaneHold {
            index,
            amount,
            capacity: capacities[index],
            in_use: 0,
            line: VecDeque::new(),
            touched: false,
        });
        LaneRun {
            steps: Steps::default(),
            hold,
            running: Vec::new(),
            free: Vec::new(),
            class,
            lost_at_start: Vec::new(),
            record: StageRecord {
                stage_ref: StageRef {
                    job: 0,
                    scope: Scope::Job,
                    stage: 0,
                },
                ready: SimTime::ZERO,
                start: SimTime::ZERO,
                end: SimTime::ZERO,
                standalone_s: 0.0,
                gpu: None,
                lost: no_loss,
                blocked_on: None,
            },
            lost_is_none: true,
        }
    }

    /// Instances waiting for the hold.
    pub fn waiting(&self) -> usize {
        self.hold.as_ref().map_or(0, |h| h.line.len())
    }

    /// Drops the steps not yet run (the run stops).
    pub fn clear(&mut self) {
        self.steps.clear();
    }

    /// An instance of `job` that ended now: the slot `a` is queued to finish.
    pub fn push_finish(&mut self, a: usize) {
        self.steps.push(Step::Finish(a));
    }

    /// The class's pending completion came due at `now`: its members done by then are
    /// queued to finish.
    #[inline]
    pub fn class_due(&mut self, now: SimTime) {
        let steps = &mut self.steps;
        (self.class.as_mut().expect("a shared lane"))
            .complete_due(now, |a| steps.push(Step::Finish(a)));
    }
}
