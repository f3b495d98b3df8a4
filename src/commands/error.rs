//! The one error of the commands layer. A library error enters it through `?` and is
//! classified there, once, by its type ([`Classify`]): the user's input was wrong, or the
//! run (a simulation, a measurement, a write) failed. Context added on the way up says
//! where; the message reads as the chain of causes, outermost first. The exit code
//! follows from the kind alone ([`super::exit`]).
//!
//! A type without a [`Classify`] impl cannot be `?`-ed in a command (it does not
//! compile), and tests/exit_codes.rs checks that every error type in the sources has one.

use std::fmt;

pub use crate::input_file::InputError;

/// What kind of failure an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The user's input is wrong (scenario, flags, files, output locations).
    Input,
    /// The simulation, a measurement or a write failed, or the run stalled.
    Run,
}

/// A library error type that knows its [`Kind`].
pub trait Classify {
    /// Input or run failure.
    fn kind(&self) -> Kind;
}

/// A command's failure: its kind and its chain of causes.
pub struct CommandError {
    kind: Kind,
    cause: anyhow::Error,
}

impl CommandError {
    /// A run failure said in words (a stall: the report is printed, the exit is 1).
    pub fn run(message: impl fmt::Display + fmt::Debug + Send + Sync + 'static) -> CommandError {
        CommandError {
            kind: Kind::Run,
            cause: anyhow::Error::msg(message),
        }
    }

    /// Input or run failure.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The same failure, said to have happened at `what` (a file, a point).
    pub fn context(self, what: impl fmt::Display + Send + Sync + 'static) -> CommandError {
        CommandError {
            kind: self.kind,
            cause: self.cause.context(what),
        }
    }
}

impl<E> From<E> for CommandError
where
    E: Classify + std::error::Error + Send + Sync + 'static,
{
    fn from(e: E) -> CommandError {
        CommandError {
            kind: e.kind(),
            cause: anyhow::Error::new(e),
        }
    }
}

/// `{}` the outermost cause; `{:#}` the whole chain, "outer: inner: ...".
impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            write!(f, "{:#}", self.cause)
        } else {
            write!(f, "{}", self.cause)
        }
    }
}

impl fmt::Debug for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} failure: {:?}", self.kind, self.cause)
    }
}

/// The result of a command.
pub type Result<T = (), E = CommandError> = std::result::Result<T, E>;

// Each library error's kind. Wrappers are as their cause; a bare message is a run failure.

impl Classify for InputError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

impl Classify for crate::scenario::ScenarioError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::sweep::SpecError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A point's scenario or SPEC is input, a failed run is not.
impl Classify for crate::sweep::SweepError {
    fn kind(&self) -> Kind {
        use crate::sweep::SweepError as E;
        match self {
            E::Spec(e) => e.kind(),
            E::Scenario(e) => e.kind(),
            E::Engine(e) => e.kind(),
            E::Output(e) => e.kind(),
            E::At { source, .. } => source.kind(),
            E::Input(_) => Kind::Input,
            _ => Kind::Run,
        }
    }
}
/// A chart that cannot be drawn is a failure; a refused file keeps its own kind.
impl Classify for crate::plot::PlotError {
    fn kind(&self) -> Kind {
        match self {
            crate::plot::PlotError::Output(e) => e.kind(),
            _ => Kind::Run,
        }
    }
}
impl Classify for crate::calibrate::CalibrateError {
    fn kind(&self) -> Kind {
        use crate::calibrate::CalibrateError as E;
        match self {
            E::Input(_) => Kind::Input,
            E::Output(e) => e.kind(),
            _ => Kind::Run,
        }
    }
}
/// A probe, a fit, a calibration file or an experiment that failed is the run's failure;
/// the commands say a file the user gave is input with `CalibrateError::as_input`.
impl Classify for crate::calibrate::error::ProbeError {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
impl Classify for crate::calibrate::error::FitError {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
impl Classify for crate::calibrate::error::FileError {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
impl Classify for crate::calibrate::error::ExperimentError {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
/// Out-of-range times and runs past their event limit are the input's fault; the
/// other engine errors (a model the scenario layer should have refused) are not.
impl Classify for crate::engine::EngineError {
    fn kind(&self) -> Kind {
        if self.is_input() {
            Kind::Input
        } else {
            Kind::Run
        }
    }
}
/// Only reached wrapped in an `EngineError` (the scenario layer checks distributions first).
impl Classify for crate::engine::DistributionError {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
/// A stepped scenario that does not load or run is classified by its cause. `run` only
/// warns on one (the simulation's answer stands); `accuracy` fails with it.
impl Classify for crate::prediction::SensitivityError {
    fn kind(&self) -> Kind {
        match self {
            crate::prediction::SensitivityError::Load { source, .. } => source.kind(),
            crate::prediction::SensitivityError::Run { source, .. } => source.kind(),
        }
    }
}
impl Classify for crate::accuracy::AccuracyError {
    fn kind(&self) -> Kind {
        if self.is_input() {
            Kind::Input
        } else {
            Kind::Run
        }
    }
}
impl Classify for crate::output::OutputError {
    fn kind(&self) -> Kind {
        if self.is_input() {
            Kind::Input
        } else {
            Kind::Run
        }
    }
}
impl Classify for crate::cuzk_log::LogInputError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A scenario or log that rules the run out is input; a failed or stalled run is not.
impl Classify for crate::cuzk_log::model::ModelError {
    fn kind(&self) -> Kind {
        use crate::cuzk_log::model::ModelError as E;
        match self {
            E::Scenario(e) => e.kind(),
            E::Engine(e) => e.kind(),
            E::Input(e) => e.kind(),
            E::Stalled { .. } => Kind::Run,
        }
    }
}
impl Classify for crate::replay::ReplayInputError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// The harness failing is the run's failure, never the input's.
impl Classify for crate::replay::GpuError {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
/// The replay's own machinery failing is never the input's fault.
impl Classify for crate::replay::ExecutorFault {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
/// Only reached wrapped (a replay.json read back by `--repredict`).
impl Classify for crate::replay::measure::InvalidMeasurement {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A point that does not fit or a bad scenario is input; the harness or a thread failing
/// is not.
impl Classify for crate::replay::ReplayError {
    fn kind(&self) -> Kind {
        use crate::replay::ReplayError as E;
        match self {
            E::Input(e) => e.kind(),
            E::Spec(e) => e.kind(),
            E::Scenario(e) => e.kind(),
            E::Engine(e) => e.kind(),
            E::Output(e) => e.kind(),
            E::Plot(e) => e.kind(),
            E::At { source, .. } => source.kind(),
            _ => Kind::Run,
        }
    }
}
/// Only reached wrapped (a journal line or a shard that is not a sweep's).
impl Classify for crate::sweep::seed_report::StoredReportError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// Only reached wrapped, in a [`StoredReportError`](crate::sweep::seed_report::StoredReportError).
impl Classify for crate::analysis::report::UnreadStall {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::compare::HostError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::compare::CompareInputError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

// Typed causes that commands mostly say inside a richer error (a scenario key, a
// calibration file); each is the input's fault where it stands alone.

impl Classify for crate::scenario::units::QtyError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::scenario::units::SizeTooLarge {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::scenario::params::ExpressionError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::scenario::params::UnusableResult {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::scenario::replay_info::KernelKindError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::cli::WholeNumberError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// Only noted against its line; a garbled line is never fatal.
impl Classify for crate::cuzk_log::parse::GarbledRecord {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A host without a result is a row of the table, not a command's failure; said alone,
/// its search failed.
impl Classify for crate::compare::NoResult {
    fn kind(&self) -> Kind {
        Kind::Run
    }
}
impl Classify for crate::calibrate::measurements::UnusableMeasurement {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A refused calibration is as its refusal; a scratch file that cannot be written is not
/// the input's fault.
impl Classify for crate::calibrate::error::NotLoadable {
    fn kind(&self) -> Kind {
        use crate::calibrate::error::NotLoadable as E;
        match self {
            E::CannotCheck(_) => Kind::Run,
            E::Refused(e) => e.kind(),
        }
    }
}
impl Classify for crate::calibrate::validate::RemeasuredError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A latency curve or CPU table from a scenario or calibration file: the user's input.
impl Classify for crate::model::CurveError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
impl Classify for crate::model::CpuThroughputError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputError;
    use std::path::PathBuf;

    #[test]
    fn input_errors_stay_input_under_context() {
        let scenario = match crate::scenario::load(std::path::Path::new("/nonexistent/x.toml"), &[])
        {
            Ok(_) => panic!("a missing scenario loads"),
            Err(e) => CommandError::from(e),
        };
        let symlink = || OutputError::Symlink {
            path: PathBuf::from("x"),
        };
        let input: Vec<CommandError> = vec![
            scenario,
            crate::sweep::parse_param("nokey").unwrap_err().into(),
            crate::sweep::csv::from_csv("").unwrap_err().into(),
            crate::calibrate::CalibrateError::Input("x".into()).into(),
            symlink().into(),
            OutputError::NotEmpty {
                path: PathBuf::from("x"),
            }
            .into(),
            InputError::new("x").action("cannot resume").into(),
            crate::sweep::shard::merge_error("x").into(),
            crate::replay::ReplayInputError::FolderTaken {
                dir: PathBuf::from("x"),
                repredicted_from: None,
                has_logs: true,
            }
            .into(),
            crate::plot::PlotError::from(symlink()).into(),
            crate::sweep::SweepError::from(InputError::new("x"))
                .at("sweep point 1")
                .into(),
            crate::replay::ReplayError::from(InputError::new("x").file("replay.json"))
                .at("point 1")
                .into(),
            crate::sweep::SweepError::from(crate::sweep::parse_param("nokey").unwrap_err())
                .at("sweep point 1")
                .into(),
        ];
        for e in input {
            let e = e.context("with context on top");
            assert_eq!(e.kind(), Kind::Input, "{e:#}");
        }
    }

    #[test]
    fn run_failures_are_run() {
        let io = OutputError::Io {
            path: PathBuf::from("x"),
            source: std::io::Error::other("disk full"),
        };
        let run: Vec<CommandError> = vec![
            io.into(),
            CommandError::run("s.toml: run stalled: 3 of 10 jobs finished"),
            crate::sweep::SweepError::StoppedAfterFailedRun
                .at("sweep point 1")
                .into(),
            crate::replay::ReplayError::from(crate::replay::ExecutorFault::HoldTableStopped)
                .at("GPU 0")
                .into(),
            crate::replay::ReplayError::from(crate::replay::GpuError::NotBuiltIn)
                .at("s.toml has GPU stages")
                .into(),
            crate::replay::ReplayError::TimedOut { limit_s: 60.0 }.into(),
            crate::plot::PlotError::Draw("x".into()).into(),
        ];
        for e in run {
            assert_eq!(e.kind(), Kind::Run, "{e:#}");
        }
    }

    #[test]
    fn the_message_is_the_chain_of_causes() {
        let e = CommandError::from(crate::sweep::SweepError::StoppedAfterFailedRun)
            .context("sweep point 2");
        assert_eq!(
            format!("{e:#}"),
            "sweep point 2: sweep stopped after a failed run"
        );
        assert_eq!(format!("{e}"), "sweep point 2");
    }
}
