//! The commands layer: one module per `bwsim` subcommand, each turning parsed flags into
//! library calls, checking output locations before any work, and printing results. The
//! exit code is decided in [`exit`] from the error's kind alone.

pub mod calibrate;
pub mod check;
pub mod compare;
pub mod exit;
pub mod log;
pub mod plot;
pub mod replay;
pub mod run;
pub mod sweep;
pub mod sweep_merge;
pub mod validate;

use crate::cli::Command;

/// Runs one parsed command. `Ok` is exit 0; an error's exit code is [`exit::exit_code`].
pub fn dispatch(command: Command) -> anyhow::Result<()> {
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
    }
}

#[cfg(test)]
mod sweep_tests;
