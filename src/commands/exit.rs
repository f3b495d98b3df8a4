//! The exit code, decided in one place from the kind of the error: 0 success, 1 the run
//! failed or stalled (or a write failed), 2 bad input (scenario, flags, files, output
//! locations). Every typed error of the library is listed in [`classified_errors!`]; a
//! test scans the sources so that a new error type cannot be left out (and silently exit 1).

use std::error::Error;

use crate::output::OutputError;

/// What kind of failure an error is; the exit code follows from it alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The user's input is wrong: exit 2.
    Input,
    /// The simulation, a measurement or a write failed: exit 1.
    Run,
}

impl Kind {
    /// The process exit code of this kind.
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Input => 2,
            Kind::Run => 1,
        }
    }
}

/// An error type that knows its [`Kind`].
pub trait Classify {
    /// Input or run failure.
    fn kind(&self) -> Kind;
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
/// A sweep's error is as its cause: a point's scenario or SPEC is input, a failed run is not.
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
impl Classify for crate::sweep::csv::CsvError {
    fn kind(&self) -> Kind {
        Kind::Input
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
impl Classify for OutputError {
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
impl Classify for crate::replay::ReplayInputError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}
/// A replay's error is as its cause: a point that does not fit or a bad scenario is
/// input; the harness or a thread failing is not.
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
impl Classify for crate::sweep::MergeError {
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
impl Classify for super::sweep::ResumeError {
    fn kind(&self) -> Kind {
        Kind::Input
    }
}

/// Lists the classified error types once: generates [`kind_of_one`] and
/// [`CLASSIFIED_ERRORS`] (their names, checked against the sources by a test).
macro_rules! classified_errors {
    ($($t:ty),* $(,)?) => {
        fn kind_of_one(e: &(dyn Error + 'static)) -> Option<Kind> {
            $(if let Some(x) = e.downcast_ref::<$t>() {
                return Some(x.kind());
            })*
            None
        }
        /// The type names of every classified error.
        pub const CLASSIFIED_ERRORS: &[&str] = &[$(stringify!($t)),*];
    };
}

classified_errors!(
    crate::scenario::ScenarioError,
    crate::sweep::SpecError,
    crate::sweep::SweepError,
    crate::sweep::csv::CsvError,
    crate::plot::PlotError,
    crate::calibrate::CalibrateError,
    crate::engine::EngineError,
    crate::engine::DistributionError,
    OutputError,
    crate::replay::ReplayInputError,
    crate::replay::ReplayError,
    super::sweep::ResumeError,
    crate::sweep::MergeError,
    crate::compare::HostError,
    crate::compare::CompareInputError,
    crate::cuzk_log::LogInputError,
);

/// The kind of an error: that of the outermost classified error in its chain (context
/// added on top does not change it); unclassified errors (plain I/O, internal) are
/// run failures.
pub fn kind_of(e: &anyhow::Error) -> Kind {
    e.chain().find_map(kind_of_one).unwrap_or(Kind::Run)
}

/// The exit code of an error.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    kind_of(e).exit_code()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn every_input_error_type_exits_2() {
        let input: Vec<anyhow::Error> = vec![
            match crate::scenario::load(std::path::Path::new("/nonexistent/x.toml"), &[]) {
                Ok(_) => panic!("a missing scenario loads"),
                Err(e) => e.into(),
            },
            crate::sweep::parse_param("nokey").unwrap_err().into(),
            crate::sweep::csv::CsvError("x".into()).into(),
            crate::calibrate::CalibrateError::Input("x".into()).into(),
            OutputError::Symlink {
                path: PathBuf::from("x"),
            }
            .into(),
            OutputError::NotEmpty {
                path: PathBuf::from("x"),
            }
            .into(),
            super::super::sweep::ResumeError("x".into()).into(),
            crate::sweep::MergeError("x".into()).into(),
            crate::replay::ReplayInputError("x".into()).into(),
            crate::plot::PlotError::from(OutputError::Symlink {
                path: PathBuf::from("x"),
            })
            .into(),
            crate::sweep::SweepError::Input("x".into())
                .at("sweep point 1")
                .into(),
            crate::replay::ReplayError::from(crate::replay::ReplayInputError("x".into()))
                .at("point 1")
                .into(),
            crate::sweep::SweepError::from(crate::sweep::parse_param("nokey").unwrap_err())
                .at("sweep point 1")
                .into(),
        ];
        for e in input {
            let e = e.context("with context on top");
            assert_eq!(exit_code(&e), 2, "{e:#}");
        }
    }

    #[test]
    fn run_failures_exit_1() {
        let io = OutputError::Io {
            path: PathBuf::from("x"),
            source: std::io::Error::other("disk full"),
        };
        assert_eq!(exit_code(&io.into()), 1);
        assert_eq!(exit_code(&anyhow::anyhow!("internal")), 1);
        let run = crate::sweep::SweepError::Failed("x".into()).at("sweep point 1");
        assert_eq!(exit_code(&run.into()), 1);
        let harness = crate::replay::ReplayError::Failed("x".into()).at("GPU 0");
        assert_eq!(exit_code(&harness.into()), 1);
        let draw = crate::plot::PlotError::Draw("x".into());
        assert_eq!(exit_code(&draw.into()), 1);
    }
}
