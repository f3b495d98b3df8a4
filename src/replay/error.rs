//! What can go wrong in `bwsim replay`, as one typed error: the user's input (a point
//! that does not fit, a bad SPEC or scenario: exit 2), the engine, a chart or an output
//! write (their own kinds), or the replay itself failing (the GPU harness, a thread:
//! exit 1). Context ("simulating x.toml at ...") wraps the cause as its source, so
//! messages read `context: cause` and the cause decides the exit code.

use std::fmt::Display;

use crate::engine::EngineError;
use crate::output::OutputError;
use crate::plot::PlotError;
use crate::scenario::ScenarioError;
use crate::sweep::SpecError;

use super::ReplayInputError;

/// An error of `bwsim replay`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A point that does not fit this host, a scenario replay cannot drive.
    #[error(transparent)]
    Input(#[from] ReplayInputError),
    /// A bad `--param` SPEC.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The scenario (or the calibration merged over it) does not load.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The engine refused the prediction.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Writing an output failed or its location was refused.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The comparison chart could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A system call failed (starting the harness, creating a folder).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The replay failed: the GPU harness, a worker thread, the hold table.
    #[error("{0}")]
    Failed(String),
    /// Where the cause happened, in words; the cause follows as source.
    #[error("{what}")]
    At {
        /// Where, in words.
        what: String,
        /// What went wrong there.
        #[source]
        source: Box<ReplayError>,
    },
}

impl From<String> for ReplayError {
    fn from(why: String) -> Self {
        ReplayError::Failed(why)
    }
}

impl ReplayError {
    /// The same error, said to have happened at `what`.
    pub fn at(self, what: impl Display) -> ReplayError {
        ReplayError::At {
            what: what.to_string(),
            source: Box::new(self),
        }
    }
}

/// An error and its causes, `a: b: c`, as the top level prints them: for a failure
/// whose message carries another error (a failed stage, a warning).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// The result of replay's functions.
pub type Result<T, E = ReplayError> = std::result::Result<T, E>;

/// `what: cause`, the cause kept as the source (results), or `what` alone (options).
pub trait Context<T> {
    /// Fails with `what` over the cause.
    fn context(self, what: impl Display) -> Result<T>;
    /// As `context`, the message built only on failure.
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Into<ReplayError>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|e| e.into().at(what))
    }
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.into().at(what()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl Display) -> Result<T> {
        self.ok_or_else(|| ReplayError::Failed(what.to_string()))
    }
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.ok_or_else(|| ReplayError::Failed(what().to_string()))
    }
}

/// A replay failure with a formatted message (a value).
macro_rules! failed {
    ($($t:tt)*) => {
        $crate::replay::error::ReplayError::Failed(format!($($t)*))
    };
}
/// Returns a replay failure with a formatted message.
macro_rules! fail {
    ($($t:tt)*) => {
        return Err($crate::replay::error::failed!($($t)*))
    };
}
pub(crate) use {fail, failed};
