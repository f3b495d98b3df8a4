//! The `bwsim` binary: parse arguments, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 1 the run failed or stalled; 2 bad input (scenario, flags).

use std::process::ExitCode;

use clap::Parser;

use bwsim::cli::{CheckArgs, Cli, Command, Format, RunArgs};
use bwsim::run::{RunOptions, run_model_with};
use bwsim::scenario;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Check(args) => check(args),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Input(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Run(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

enum Failure {
    /// The user's input is wrong.
    Input(String),
    /// The simulation could not complete.
    Run(String),
}

fn run(args: RunArgs) -> Result<ExitCode, Failure> {
    let loaded =
        scenario::load(&args.scenario, &args.sets).map_err(|e| Failure::Input(e.to_string()))?;
    let mut model = loaded.model;
    if let Some(seed) = args.seed {
        model.seed = seed;
    }
    let opts = RunOptions {
        ideal: !args.no_ideal,
    };
    let report = run_model_with(&model, opts, &mut bwsim::engine::NullObserver)
        .map_err(|e| Failure::Run(format!("{}: {e}", args.scenario.display())))?;
    match args.format {
        Format::Text => print!("{}", report.to_text()),
        Format::Json => println!("{}", report.to_json()),
    }
    // A stalled run still prints its (partial) report, but exits 1 and says why on stderr
    // so that scripts do not mistake it for a result.
    match report.notes.iter().find(|n| n.starts_with("stalled")) {
        Some(note) => {
            eprintln!("error: {}: run {note}", args.scenario.display());
            Ok(ExitCode::from(1))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

fn check(args: CheckArgs) -> Result<ExitCode, Failure> {
    let loaded =
        scenario::load(&args.scenario, &args.sets).map_err(|e| Failure::Input(e.to_string()))?;
    print!("{}", loaded.summary());
    Ok(ExitCode::SUCCESS)
}
