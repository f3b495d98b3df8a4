//! The `bwsim` binary: parse arguments, call the library, map errors to exit codes.
//!
//! Exit codes: 0 success; 1 the run failed or stalled; 2 bad input (scenario, flags).

use std::process::ExitCode;

use clap::Parser;

use bwsim::calibrate::{CalibrateArgs, ValidateArgs, probes::Mode};
use bwsim::cli::{
    CalibrateCliArgs, CheckArgs, Cli, Command, Format, ProbeMode, ReplayCliArgs, RunArgs,
    ValidateCliArgs,
};
use bwsim::run::RunOptions;
use bwsim::scenario;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(args),
        Command::Check(args) => check(args),
        Command::Calibrate(args) => calibrate(args),
        Command::Validate(args) => validate(args),
        Command::Sweep(args) => bwsim::sweep::sweep_command(args.into())
            .map(|()| ExitCode::SUCCESS)
            .map_err(classify),
        Command::Replay(args) => replay(args),
        Command::Plot(args) => bwsim::sweep::plot_command(&args.csv, args.out.as_deref())
            .map(|_| ExitCode::SUCCESS)
            .map_err(classify),
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

/// Bad SPECs and scenarios are the user's input (exit 2); anything else failed to run.
fn classify(e: anyhow::Error) -> Failure {
    let input = e.chain().any(|c| {
        c.is::<bwsim::sweep::SpecError>()
            || c.is::<scenario::ScenarioError>()
            || c.is::<bwsim::calibrate::InputError>()
            || c.is::<bwsim::sweep::csv::CsvError>()
            || c.is::<bwsim::replay::ReplayInputError>()
    });
    let msg = format!("{e:#}");
    if input {
        Failure::Input(msg)
    } else {
        Failure::Run(msg)
    }
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
    let (report, files) = bwsim::trace::run_with_exports(&model, opts, &args.exports)
        .map_err(|e| Failure::Run(format!("{}: {e:#}", args.scenario.display())))?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
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

fn probe_mode(quick: bool, mode: Option<ProbeMode>) -> Mode {
    match (mode, quick) {
        (Some(ProbeMode::Tiny), _) => Mode::Tiny,
        (Some(ProbeMode::Quick), _) | (None, true) => Mode::Quick,
        (Some(ProbeMode::Full), _) | (None, false) => Mode::Full,
    }
}

fn calibrate(a: CalibrateCliArgs) -> Result<ExitCode, Failure> {
    bwsim::calibrate::calibrate_command(CalibrateArgs {
        mode: probe_mode(a.quick, a.mode),
        out: a.out,
        hugepages: !a.no_hugepages,
        no_gpu: a.no_gpu,
        gpu_probe: a.gpu_probe,
        json: a.json,
        refit: a.refit,
    })
    .map_err(classify)?;
    Ok(ExitCode::SUCCESS)
}

fn validate(a: ValidateCliArgs) -> Result<ExitCode, Failure> {
    bwsim::calibrate::validate_command(ValidateArgs {
        calibration: a.calibration,
        mode: probe_mode(a.quick, a.mode),
        out_dir: a.out_dir,
        hugepages: !a.no_hugepages,
        no_gpu: a.no_gpu,
        gpu_probe: a.gpu_probe,
        remeasured: a.remeasured,
    })
    .map_err(classify)?;
    Ok(ExitCode::SUCCESS)
}

fn replay(a: ReplayCliArgs) -> Result<ExitCode, Failure> {
    let mut opts = bwsim::replay::ReplayOptions::new(a.scenario);
    opts.sets = a.sets;
    opts.param = a.param;
    opts.calibration = a.calibration;
    opts.dry_run = a.dry_run;
    opts.out = a.out;
    opts.runs = a.runs;
    opts.gpu_harness = a.gpu_harness;
    opts.nvml_period_ms = a.nvml_period_ms;
    opts.host_ram_bytes = a.host_ram_gib.map(|g| g * 1024.0 * 1024.0 * 1024.0);
    if a.small_buffers {
        opts.buffers = bwsim::replay::kernels::BufferSizes::TEST;
    }
    let outcome = bwsim::replay::replay_command(&opts).map_err(classify)?;
    for f in &outcome.files {
        eprintln!("wrote {}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}
