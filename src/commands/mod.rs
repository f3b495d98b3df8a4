//! The commands layer: one module per `bwsim` subcommand, each turning parsed flags into
//! library calls, checking output locations before any work, and printing results. The
//! exit code is decided in [`exit`] from the error's kind alone.

pub mod accuracy;
pub mod calibrate;
pub mod check;
pub mod compare;
pub mod error;
pub mod exit;
pub mod log;
pub mod plot;
pub mod replay;
pub mod run;
pub mod sweep;
pub mod sweep_merge;
pub mod validate;

use std::path::PathBuf;

use crate::cli::Command;
use error::Result;

/// The files a loaded scenario was read from, each named for an error message, so that
/// no output is written over one of them ([`crate::output::check_outputs`]).
pub(crate) fn scenario_inputs(s: &crate::scenario::Summary) -> Vec<(String, PathBuf)> {
    let n = s.files.len();
    let mut out: Vec<(String, PathBuf)> = (s.files.iter().enumerate())
        .map(|(i, f)| {
            let what = if i + 1 == n {
                "the scenario"
            } else {
                "a file the scenario includes"
            };
            (what.to_string(), f.clone())
        })
        .collect();
    out.extend(
        (s.data_files.iter()).map(|f| ("the scenario's arrivals trace".to_string(), f.clone())),
    );
    out
}

/// Runs one parsed command. `Ok` is exit 0; an error's exit code is [`exit::exit_code`].
pub fn dispatch(command: Command) -> Result<()> {
    match command {
        Command::Run(args) => run::run(args),
        Command::Check(args) => check::check(args),
        Command::Compare(args) => compare::compare(args),
        // `sweep merge` is its own command module; it uses sweep's output helpers.
        Command::Sweep(crate::cli::SweepCli {
            action: Some(crate::cli::SweepAction::Merge(merge)),
            ..
        }) => sweep_merge::merge(merge),
        Command::Sweep(args) => sweep::sweep(args),
        Command::Plot(args) => plot::plot(args),
        Command::Log(args) => log::log(args),
        Command::Calibrate(args) => calibrate::calibrate(args),
        Command::Validate(args) => validate::validate(args),
        Command::Replay(args) => replay::replay(args),
        Command::Accuracy(args) => accuracy::accuracy(args),
    }
}

#[cfg(test)]
mod sweep_tests;
