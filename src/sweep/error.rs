//! What can go wrong in a sweep, as one typed error: bad flags or SPECs (exit 2), the
//! scenario refusing a point (its own kind), a failed run or stopped sweep (exit 1), or
//! a journal write (its own kind). Context ("sweep point 4 (x=4), seed 9") wraps the
//! cause as its source, so the message reads as before and the cause decides the exit
//! code.

use std::fmt::Display;

use crate::engine::EngineError;
use crate::input_file::InputError;
use crate::output::OutputError;
use crate::scenario::ScenarioError;

use super::spec_error::SpecError;

/// An error of a sweep's steps.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// A flag out of range (`--seeds 0`) or no `--param`.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A bad `--param` SPEC or grid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The scenario, with a point's overrides, does not load.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The engine refused a run.
    #[error("simulation failed")]
    Engine(#[source] EngineError),
    /// A run, the worker pool or the sink failed, or the sweep was stopped.
    #[error("{0}")]
    Failed(String),
    /// Saving a finished point failed.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// Where the cause happened (a point and seed, a file); the cause follows as source.
    #[error("{what}")]
    At {
        /// Where, in words.
        what: String,
        /// What went wrong there.
        #[source]
        source: Box<SweepError>,
    },
}

impl SweepError {
    /// The same error, said to have happened at `what` (a point, a file).
    pub fn at(self, what: impl Display) -> SweepError {
        SweepError::At {
            what: what.to_string(),
            source: Box::new(self),
        }
    }
}

/// The result of a sweep's steps.
pub type Result<T, E = SweepError> = std::result::Result<T, E>;
