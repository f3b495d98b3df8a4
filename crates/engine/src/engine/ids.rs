//! The engine's ids: what its components name each other's entries by. They sit below
//! every component, so a component can name another's entries without importing it.

use crate::model::StageId;
use crate::time::SimTime;

/// A rate resource: an index into the rate table observers get through
/// [`Observer::resources`](super::observer::Observer::resources) (and into the solver's
/// capacities and usage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RateId(usize);

impl RateId {
    /// The id of the rate resource at `index` in the rate table.
    pub fn from_index(index: usize) -> Self {
        RateId(index)
    }

    /// Position in the rate table.
    pub fn index(self) -> usize {
        self.0
    }
}

/// Why an activity ran slower than standalone at some moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limiter {
    /// A rate resource was saturated.
    Rate(RateId),
    /// Latency-bound work slowed by the loaded-latency curve.
    DramLatency,
}

/// Where a stage instance runs within its job: once per job, or once per partition.
/// Ordered partitions first (by index), then the job level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// A per-partition stage (or marker), with the partition index.
    Partition(u32),
    /// A job-level stage (or marker): one instance per job.
    Job,
}

impl Scope {
    /// The partition index, if any.
    pub fn partition(self) -> Option<u32> {
        match self {
            Scope::Job => None,
            Scope::Partition(p) => Some(p),
        }
    }
}

/// An interned class key: the plan gives equal keys one id, so two running activities
/// share a fluid class when their ids are equal.
pub type KeyId = usize;

/// A fluid class slot (slots are reused, under another key, once a class empties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct ClassId(usize);

impl ClassId {
    /// The first class slot: the one a lane run's only class takes.
    pub const FIRST: ClassId = ClassId(0);

    /// The slot at `index`.
    pub fn from_index(index: usize) -> Self {
        ClassId(index)
    }

    /// The slot's index (classes are few and slots are reused: a dense small index).
    pub fn index(self) -> usize {
        self.0
    }
}

/// A member of a fluid class, as the caller numbers it (the engine's activity slot).
pub(super) type MemberId = usize;

/// A stage instance of a job in flight, from ready to end.
#[derive(Clone, Copy)]
pub(super) struct Token {
    /// The job's slot.
    pub job: usize,
    pub stage: StageId,
    pub scope: Scope,
    pub ready: SimTime,
}
