//! What can go wrong in calibrate and validate, as one typed error: the user's input
//! (exit 2), a probe, a fit, a calibration file or a validate experiment that failed
//! (exit 1), the engine, or an output write (whose own kind decides). Each failure is a
//! variant of its own; none carries a cause as a source, so every message reads in one
//! line, the cause's words inside it.

use std::path::PathBuf;

use crate::engine::{EngineError, Stall};
use crate::output::OutputError;
use serde_json::Value;

/// An error of calibrate or validate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// A missing or malformed calibration, measurements or validate file.
    #[error("{0}")]
    Input(String),
    /// A probe or the GPU probe harness failed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// The measurements give no fit, or a calibration bwsim would refuse.
    #[error(transparent)]
    Fit(#[from] FitError),
    /// A calibration file is not one bwsim reads, or would be written as one it cannot.
    #[error(transparent)]
    File(#[from] FileError),
    /// A validate experiment could not be run or predicted.
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    /// The measurements or a validate table could not be written as JSON.
    #[error("{0}")]
    Json(serde_json::Error),
    /// A calibration file's text could not be written (into a `String`: never, in practice).
    #[error("{0}")]
    Format(std::fmt::Error),
    /// The engine refused a validation experiment.
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    /// Writing an output failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<std::fmt::Error> for CalibrateError {
    fn from(e: std::fmt::Error) -> Self {
        CalibrateError::Format(e)
    }
}

/// A probe of the host, or the GPU probe harness, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// An anonymous buffer could not be mapped.
    #[error("could not map {mib} MiB: {error}")]
    Map {
        /// Its size, MiB.
        mib: usize,
        /// What mmap said.
        error: std::io::Error,
    },
    /// Some streaming threads could not map their three arrays.
    #[error("{failed} of {threads} streaming threads could not map 3 x {mib} MiB")]
    StreamArrays {
        /// The threads that failed.
        failed: u64,
        /// All threads.
        threads: usize,
        /// One array's size, MiB.
        mib: usize,
    },
    /// The pointer chase's buffer could not be set up.
    #[error("pointer-chase buffer: {0}")]
    ChaseBuffer(Box<CalibrateError>),
    /// The pointer-chase thread ended before it was ready.
    #[error("pointer-chase thread died while starting")]
    ChaseThreadDied,
    /// The pointer-chase thread is no longer there.
    #[error("pointer-chase thread is gone")]
    ChaseThreadGone,
    /// The harness's threads could not be listed (to pin them).
    #[error("listing {dir}: {error}")]
    HarnessThreads {
        /// The /proc folder of its threads.
        dir: String,
        /// What listing it said.
        error: std::io::Error,
    },
    /// The harness no longer reads commands.
    #[error("GPU probe stopped reading commands: {0}")]
    HarnessStoppedReading(std::io::Error),
    /// The harness's output could not be read.
    #[error("reading the GPU probe's output: {0}")]
    HarnessOutput(std::io::Error),
    /// The harness exited.
    #[error("GPU probe exited unexpectedly")]
    HarnessExited,
    /// The harness wrote a line that is not its JSON.
    #[error("bad GPU probe line: {line}: {error}")]
    HarnessLine {
        /// The line.
        line: String,
        /// Why it is not JSON.
        error: serde_json::Error,
    },
    /// The harness answered a command with a failure.
    #[error("GPU probe `{command}` failed: {error}")]
    HarnessRefused {
        /// The command.
        command: String,
        /// The harness's `error`, or its whole reply.
        error: String,
    },
    /// A reply lacks a number it must hold.
    #[error("GPU probe reply lacks `{key}`: {reply}")]
    ReplyLacks {
        /// The missing key.
        key: String,
        /// The reply.
        reply: Value,
    },
    /// A kernel reply holds no times.
    #[error("the harness's {kind} reply has no times: {reply}")]
    NoKernelTimes {
        /// The kernel kind (msm, ntt).
        kind: String,
        /// The reply.
        reply: Value,
    },
    /// The GPU kernels computed wrong results.
    #[error("GPU kernels failed verification (NTT round trip or MSM vs blst): {0}")]
    KernelsWrong(Value),
}

/// The measurements give no fit, or one bwsim would refuse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FitError {
    /// No bandwidth was measured.
    #[error("no bandwidth measurements to fit a DRAM capacity from")]
    NoBandwidth,
    /// A measured bandwidth is not a number.
    #[error("the measured bandwidths include a non-finite value")]
    NonFiniteBandwidth,
    /// The DRAM capacity fitted is not a rate.
    #[error("the fitted DRAM capacity {0} GB/s is not a finite number > 0")]
    Capacity(f64),
    /// No latency was measured.
    #[error("no latency measurements to fit a latency curve from")]
    NoLatency,
    /// The latency curve fitted is not one the model takes.
    #[error("fitted latency curve: {0}")]
    LatencyCurve(crate::model::CurveError),
    /// The fitted file does not read back as a host.
    #[error(
        "the measurements give a calibration bwsim would refuse ({why}); nothing was written \
         to {}{}",
        out.display(),
        measurements.as_ref().map_or(String::new(), |j| format!(" (the measurements are in {})", j.display()))
    )]
    Refused {
        /// Why reading it back refused it.
        why: Box<NotLoadable>,
        /// The calibration file that was not written.
        out: PathBuf,
        /// Where the measurements were written, if they were.
        measurements: Option<PathBuf>,
    },
}

/// A calibration file is not one bwsim reads, or would be written as one it cannot read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The path names a folder, not a file.
    #[error("{} names no file", .0.display())]
    NoFileName(PathBuf),
    /// The text is not TOML.
    #[error("calibration file is not valid TOML: {0}")]
    NotToml(toml::de::Error),
    /// A table or value is not of the calibration file's shape (`at`: where, as a path).
    #[error("{}", shape(at, error))]
    Shape {
        /// Where, `hardware.dram` or `.` for the top.
        at: String,
        /// What is wrong there.
        error: toml::de::Error,
    },
    /// The DRAM capacity is not a rate.
    #[error("[hardware.dram] capacity_gbps = {0}: must be a finite number of GB/s greater than 0")]
    Capacity(f64),
    /// The file, as the host of a scenario run with `--calibration`, does not give one.
    #[error("as a scenario's host: {0}")]
    NotAHost(crate::scenario::ScenarioError),
    /// The provenance could not be written as TOML.
    #[error("{0}")]
    Serialize(toml::ser::Error),
    /// The file about to be written is not TOML.
    #[error("refusing to write a calibration file that is not valid TOML: {0}")]
    WouldNotParse(toml::de::Error),
    /// The file about to be written holds `inf` or `nan`.
    #[error(
        "refusing to write a calibration file with {key} = {value}: every number must be \
         finite (the measurements behind it are degenerate)"
    )]
    NonFinite {
        /// The key, dotted, with array indices.
        key: String,
        /// The number.
        value: f64,
    },
}

/// `[at]: error`, or the error alone at the top of the file.
fn shape(at: &str, error: &toml::de::Error) -> String {
    if at == "." {
        error.to_string()
    } else {
        format!("[{at}]: {error}")
    }
}

/// A validate experiment could not be run or predicted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExperimentError {
    /// More GPUs asked for than probes run.
    #[error("the experiment needs {needed} GPUs, and {running} GPU probe(s) are running")]
    TooFewGpus {
        /// GPUs the experiment uses.
        needed: usize,
        /// GPU probes running.
        running: usize,
    },
    /// The engine's run of an experiment stalled.
    #[error("engine run stalled: {0}")]
    Stalled(Stall),
    /// A stage of an experiment never finished in the engine's run.
    #[error("engine: a stage did not finish")]
    StageUnfinished,
    /// The calibration lacks a kernel's stream bandwidth.
    #[error("calibration has no {0} bandwidth")]
    NoBandwidth(&'static str),
    /// The calibration lacks an NTT variant's model.
    #[error("calibration has no {0} NTT model")]
    NoNttModel(String),
    /// The calibration has no PCIe link.
    #[error("calibration has no PCIe link")]
    NoPcieLink,
    /// The chart could not be drawn.
    #[error("drawing the validate chart: {0}")]
    Chart(crate::plot::PlotError),
}

/// Why a rendered calibration is not one bwsim reads back (said inside the caller's
/// message, so neither is a further cause).
#[derive(Debug, thiserror::Error)]
pub enum NotLoadable {
    /// The scratch file to read it back from could not be written.
    #[error("cannot check it: {0}")]
    CannotCheck(std::io::Error),
    /// Reading it back refused it.
    #[error("{0:#}")]
    Refused(CalibrateError),
}

/// The result of calibrate's and validate's functions.
pub type Result<T, E = CalibrateError> = std::result::Result<T, E>;

impl CalibrateError {
    /// The same error as the user's input (a file they gave), its message prefixed.
    pub fn as_input(self, prefix: impl std::fmt::Display) -> Self {
        match self {
            CalibrateError::Output(e) => CalibrateError::Output(e),
            e => CalibrateError::Input(format!("{prefix}{e}")),
        }
    }
}
