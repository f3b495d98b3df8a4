//! Command-line definitions (clap) only; `main.rs` dispatches.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// bwsim: predict throughput, GPU duty cycle and DRAM contention on GPU proving hosts.
#[derive(Debug, Parser)]
#[command(name = "bwsim", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Output formats of `bwsim run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable table.
    Text,
    /// One JSON object on stdout.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a scenario and print a report.
    Run(RunArgs),
    /// Validate a scenario and print a short summary of the model and its knobs.
    Check(CheckArgs),
}

/// Arguments of `bwsim run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Override a scenario key by dotted path, e.g. `--set arrivals.concurrency=20` or
    /// `--set params.synthesis_concurrency=15` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Random seed (overrides the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Skip the contention-free counterfactual run (`ideal.*` in the report).
    #[arg(long)]
    pub no_ideal: bool,
}

/// Arguments of `bwsim check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Overrides, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}
