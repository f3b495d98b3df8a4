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
    /// Run a scenario over a parameter grid (several seeds per point, in parallel) and
    /// write sweep.csv, sweep.json and plots.
    Sweep(crate::sweep::SweepCli),
    /// Redraw a sweep's plots from its sweep.csv without simulating.
    Plot(crate::sweep::PlotCli),
    /// Measure this host (DRAM bandwidth and loaded latency, PCIe, GPU kernels) and write
    /// a calibration file that scenarios can include.
    Calibrate(CalibrateCliArgs),
    /// Run mixed contention experiments on this host and compare them with what the
    /// calibration predicts.
    Validate(ValidateCliArgs),
}

/// How long the calibration and validation probes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeMode {
    /// Seconds; small buffers (tests only: numbers are cache-bound).
    Tiny,
    /// Under 2 minutes.
    Quick,
    /// Under 10 minutes.
    Full,
}

/// Arguments of `bwsim calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateCliArgs {
    /// Short run (under 2 minutes); the same as `--mode quick`.
    #[arg(long, conflicts_with = "mode")]
    pub quick: bool,
    /// Probe length (default: full).
    #[arg(long, value_enum)]
    pub mode: Option<ProbeMode>,
    /// Calibration file to write (atomically).
    #[arg(long, default_value = "calibration.toml")]
    pub out: PathBuf,
    /// Do not advise huge pages (MADV_HUGEPAGE) for the probe buffers.
    #[arg(long)]
    pub no_hugepages: bool,
    /// Skip the GPU probes.
    #[arg(long)]
    pub no_gpu: bool,
    /// A GPU probe harness built by gpu/build.sh (default: the one embedded with
    /// `--features cuda`).
    #[arg(long, value_name = "PATH")]
    pub gpu_probe: Option<PathBuf>,
    /// Also write the raw measurements as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Re-fit measurements saved with `--json` instead of measuring.
    #[arg(long, value_name = "FILE")]
    pub refit: Option<PathBuf>,
}

/// Arguments of `bwsim validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateCliArgs {
    /// The calibration file to predict from.
    #[arg(long)]
    pub calibration: PathBuf,
    /// Short run; the same as `--mode quick`.
    #[arg(long, conflicts_with = "mode")]
    pub quick: bool,
    /// Experiment length (default: full).
    #[arg(long, value_enum)]
    pub mode: Option<ProbeMode>,
    /// Folder for validate.{csv,json,md,png}.
    #[arg(long, default_value = ".")]
    pub out_dir: PathBuf,
    /// Do not advise huge pages for the probe buffers.
    #[arg(long)]
    pub no_hugepages: bool,
    /// Skip the GPU experiments.
    #[arg(long)]
    pub no_gpu: bool,
    /// A GPU probe harness built by gpu/build.sh.
    #[arg(long, value_name = "PATH")]
    pub gpu_probe: Option<PathBuf>,
    /// Re-predict the experiments of an earlier validate.json instead of measuring.
    #[arg(long, value_name = "FILE")]
    pub remeasured: Option<PathBuf>,
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
    /// Caps on the run's estimated size.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Trace, TIMELINE log and timeline plot of this run.
    #[command(flatten)]
    pub exports: crate::trace::RunExportArgs,
}

/// Arguments of `bwsim check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Overrides, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Caps on the run's estimated size, as for `run`.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Caps checked when a scenario loads: an estimate of the run's events and memory
/// above them is an error naming the key that drives it.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Most engine events a run may be estimated to take (jobs x stage instances x 3).
    #[arg(long, value_name = "N", default_value_t = crate::scenario::limits::DEFAULT_MAX_EVENTS)]
    pub max_events: u64,
    /// Most simulation state, in GiB, a run may be estimated to hold at once.
    #[arg(long, value_name = "GIB", default_value_t = crate::scenario::limits::DEFAULT_MAX_MEMORY_GIB)]
    pub max_memory_gib: u64,
}

impl LimitArgs {
    /// The limits for `scenario::load_with`.
    pub fn limits(&self) -> crate::scenario::Limits {
        crate::scenario::Limits {
            max_events: self.max_events,
            max_memory_bytes: self.max_memory_gib.saturating_mul(1 << 30),
        }
    }
}
