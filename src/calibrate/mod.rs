//! `bwsim calibrate` and `bwsim validate`: one model of the host. Measure a real host,
//! fit the model's parameters, write `calibration.toml`, and check the model against
//! mixed experiments predicted by the engine.
//!
//! - [`probe`]: measuring (CPU probes, the GPU probe harness and its runs).
//! - [`measurements`]: the raw measurements, as saved with `--json`.
//! - [`fit`]: turning measurements into parameters (with noise and warnings).
//! - [`file`]: the calibration file, written and read by one type.
//! - [`validate`]: experiments, engine predictions, comparison tables and chart.
//! - [`command`]: `bwsim calibrate` end to end; [`summary`] prints what it found.
//! - [`error`]: [`CalibrateError`], the one error type of both commands.

pub mod command;
pub mod consistency;
pub mod error;
pub mod file;
pub mod fit;
pub mod measurements;
pub mod probe;
pub mod summary;
pub mod validate;

pub use command::{CalibrateArgs, calibrate_command, utc_now};
pub use error::CalibrateError;
pub use validate::{ValidateArgs, validate_command};
