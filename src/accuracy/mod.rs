//! How accurate bwsim is, from the committed evidence: every replay measured on a GPU
//! host (runs 8 on, each boot with its own calibration) predicted again by today's
//! model, under its own boot's calibration, with stage times profiled on every other
//! boot and carried to it by host scaling (the transfer a buyer makes), and with typical
//! values. From the points it fits the error model of the
//! prediction intervals, measures their coverage leaving each run out, and writes the
//! tables of `docs/accuracy/` and the data file the intervals read
//! (`data/prediction-intervals.toml`).
//!
//! - [`evidence`]: the manifest and the replays it lists.
//! - [`predict`]: one point predicted again, with its host keys' spread.
//! - [`spreads`]: the host keys' spreads between boots, from the calibrations.
//! - [`moved`]: stage times profiled on one boot carried to another.
//! - [`fit`]: the error model, its conformal quantile, coverage left out by run.
//! - [`study`]: all of it end to end; [`tables`]: Markdown and the data file;
//!   [`points`]: every point as CSV, for the coverage test.

pub mod evidence;
pub mod fit;
pub mod moved;
pub mod points;
pub mod predict;
pub mod spreads;
pub mod study;
pub mod tables;

use std::path::{Path, PathBuf};

/// Why the study could not be made.
#[derive(Debug, thiserror::Error)]
pub enum AccuracyError {
    /// An evidence file is missing or malformed.
    #[error("{file}: {problem}")]
    File { file: PathBuf, problem: String },
    /// A committed point could not be predicted.
    #[error("predicting {what}: {cause}")]
    Predict { what: String, cause: String },
    /// Writing a table or the data file failed.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
}

impl AccuracyError {
    fn file(file: &Path, problem: impl Into<String>) -> Self {
        AccuracyError::File {
            file: file.to_path_buf(),
            problem: problem.into(),
        }
    }

    fn predict(what: String, cause: impl std::fmt::Display) -> Self {
        AccuracyError::Predict {
            what,
            cause: cause.to_string(),
        }
    }

    /// True when the evidence given is at fault, not the model.
    pub fn is_input(&self) -> bool {
        matches!(self, AccuracyError::File { .. })
    }
}
