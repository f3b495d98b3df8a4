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
    /// Run a scenario's pipeline for real on this host (synthetic CPU kernels, real
    /// copies and GPU kernels) and compare it with the simulation, point by point.
    Replay(ReplayCliArgs),
}

/// Arguments of `bwsim replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayCliArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// The points: KEY=SPEC as for `sweep`, e.g. `params.proofs_in_flight=1..12`
    /// (default: one point, the scenario as it is).
    #[arg(long, value_name = "KEY=SPEC")]
    pub param: Option<String>,
    /// Override a scenario key at every point (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// A calibration file merged over the scenario (its hardware and knobs win), used
    /// by both the replay's plan and the prediction.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Print the plan (sizes, memory, expected time per point) and check that it fits;
    /// run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Output folder (default output/<scenario>/<timestamp>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replay runs per point (the plot shows their spread).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub runs: u32,
    /// A GPU replay harness built by gpu/build.sh (default: the one embedded with
    /// `--features cuda`).
    #[arg(long, value_name = "PATH")]
    pub gpu_harness: Option<PathBuf>,
    /// NVML sampling period (utilization.gpu and power), ms.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(10..=10000))]
    pub nvml_period_ms: u32,
    /// Host RAM to plan against, GiB (default: MemTotal of this host).
    #[arg(long, value_name = "GIB")]
    pub host_ram_gib: Option<f64>,
    /// Small kernel buffers (tests and quick looks; DRAM numbers become cache-bound).
    #[arg(long, hide = true)]
    pub small_buffers: bool,
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
}
