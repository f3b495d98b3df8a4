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
    /// A flag out of range (`--replications 0`) or no `--param`.
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
    /// The worker threads could not be started.
    #[error("cannot start the sweep's worker threads: {0}")]
    WorkerThreads(rayon::ThreadPoolBuildError),
    /// A run failed, and the sweep stopped before the rest.
    #[error("sweep stopped after a failed run")]
    StoppedAfterFailedRun,
    /// `--stop-after` stopped the sweep after that many new points.
    #[error(
        "sweep stopped after {points} new points (--stop-after); finish it with bwsim sweep \
         --resume {}",
        resume.display()
    )]
    StoppedAfter {
        /// Points saved in this invocation.
        points: usize,
        /// The sweep's output folder, to resume.
        resume: std::path::PathBuf,
    },
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
