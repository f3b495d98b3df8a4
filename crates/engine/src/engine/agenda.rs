//! The run's zero-time work: what happens at the current instant, in the order it was
//! caused, before time moves on (an instance ready, an instance whose holds are granted,
//! an instance that ends).

use std::collections::VecDeque;

use crate::model::StageId;

use super::holdable::{Grant, HoldIndex};
use super::ids::Token;
use super::observer::Scope;

/// One zero-time step.
pub(super) enum Work {
    /// The instance of `stage` in `scope` of the job in slot `job`: its dependencies
    /// are done.
    Ready {
        job: usize,
        stage: StageId,
        scope: Scope,
    },
    /// Holds granted (the stage's own needs, on `gpu`), after waiting on `blocked_on`.
    Start {
        token: Token,
        gpu: Option<u32>,
        blocked_on: Option<HoldIndex>,
    },
    /// The running activity in this slot ends.
    Finish(usize),
}

/// The zero-time steps not yet taken, first in first out.
#[derive(Default)]
pub(super) struct Agenda(VecDeque<Work>);

impl Agenda {
    #[inline]
    pub fn push(&mut self, work: Work) {
        self.0.push_back(work);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Work> {
        self.0.pop_front()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Drops the steps not yet taken (the run stops).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Grants go straight to the back of the agenda, in the order they are made.
impl Extend<Grant<Token>> for Agenda {
    #[inline]
    fn extend<I: IntoIterator<Item = Grant<Token>>>(&mut self, grants: I) {
        for g in grants {
            // The needs are the stage's own (every request is made with them).
            self.push(Work::Start {
                token: g.token,
                gpu: g.gpu,
                blocked_on: g.blocked_on,
            });
        }
    }
}
