//! What can go wrong in calibrate and validate, as one typed error: the user's input
//! (exit 2), a failed probe, fit or prediction (exit 1), the engine, or an output write
//! (whose own kind decides). Helpers give the probes' many messages the same shape.

use crate::engine::EngineError;
use crate::output::OutputError;
use std::fmt::Display;

/// An error of calibrate or validate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// A missing or malformed calibration, measurements or validate file.
    #[error("{0}")]
    Input(String),
    /// A probe, the GPU harness, a fit or a prediction failed.
    #[error("{0}")]
    Failed(String),
    /// The engine refused a validation experiment.
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// Writing an output failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// The result of calibrate's and validate's functions.
pub type Result<T, E = CalibrateError> = std::result::Result<T, E>;

impl From<std::io::Error> for CalibrateError {
    fn from(e: std::io::Error) -> Self {
        CalibrateError::Failed(e.to_string())
    }
}
impl From<std::fmt::Error> for CalibrateError {
    fn from(e: std::fmt::Error) -> Self {
        CalibrateError::Failed(e.to_string())
    }
}
impl From<toml::ser::Error> for CalibrateError {
    fn from(e: toml::ser::Error) -> Self {
        CalibrateError::Failed(e.to_string())
    }
}
impl From<serde_json::Error> for CalibrateError {
    fn from(e: serde_json::Error) -> Self {
        CalibrateError::Failed(e.to_string())
    }
}

impl CalibrateError {
    /// The same error as the user's input (a file they gave), its message prefixed.
    pub fn as_input(self, prefix: impl Display) -> Self {
        match self {
            CalibrateError::Output(e) => CalibrateError::Output(e),
            e => CalibrateError::Input(format!("{prefix}{e}")),
        }
    }
}

/// `what: cause`, as a failure, for results and options of any error type.
pub trait Context<T> {
    /// Fails with `what` (and the cause, if any).
    fn context(self, what: impl Display) -> Result<T>;
    /// As `context`, the message built only on failure.
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|e| CalibrateError::Failed(format!("{what}: {e}")))
    }
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| CalibrateError::Failed(format!("{}: {e}", what())))
    }
}

/// A failure with a formatted message (a value).
macro_rules! failed {
    ($($t:tt)*) => {
        $crate::calibrate::error::CalibrateError::Failed(format!($($t)*))
    };
}
/// Returns a failure with a formatted message.
macro_rules! fail {
    ($($t:tt)*) => {
        return Err($crate::calibrate::error::failed!($($t)*))
    };
}
pub(crate) use {fail, failed};
