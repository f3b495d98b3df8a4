//! bwsim command line (calibrate / validate; the lead's CLI adds the rest).

use bwsim::calibrate::{
    CalibrateArgs, ValidateArgs, calibrate_command, probes::Mode, validate_command,
};
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "bwsim",
    version,
    about = "Memory-bandwidth contention simulator"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum ModeArg {
    Tiny,
    Quick,
    Full,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Self {
        match m {
            ModeArg::Tiny => Mode::Tiny,
            ModeArg::Quick => Mode::Quick,
            ModeArg::Full => Mode::Full,
        }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Measure this host (DRAM, latency, PCIe, GPU kernels) and write calibration.toml.
    Calibrate {
        /// Short run (under 2 minutes); same as --mode quick.
        #[arg(long)]
        quick: bool,
        /// tiny (seconds, tests), quick (< 2 min) or full (< 10 min, default).
        #[arg(long, value_enum)]
        mode: Option<ModeArg>,
        /// Output file.
        #[arg(long, default_value = "calibration.toml")]
        out: PathBuf,
        /// Do not advise huge pages for probe buffers.
        #[arg(long)]
        no_hugepages: bool,
        /// Skip GPU probes.
        #[arg(long)]
        no_gpu: bool,
        /// GPU probe harness built by gpu/build.sh (default: the embedded one).
        #[arg(long)]
        gpu_probe: Option<PathBuf>,
        /// Also write raw measurements as JSON.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Re-fit a measurements JSON (from --json) instead of measuring.
        #[arg(long)]
        refit: Option<PathBuf>,
    },
    /// Run mixed experiments for real and predict them from a calibration.
    Validate {
        /// The calibration file.
        #[arg(long)]
        calibration: PathBuf,
        /// Short run; same as --mode quick.
        #[arg(long)]
        quick: bool,
        /// tiny, quick or full (default).
        #[arg(long, value_enum)]
        mode: Option<ModeArg>,
        /// Folder for validate.{csv,json,md,png}.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Do not advise huge pages for probe buffers.
        #[arg(long)]
        no_hugepages: bool,
        /// Skip GPU experiments.
        #[arg(long)]
        no_gpu: bool,
        /// GPU probe harness built by gpu/build.sh (default: the embedded one).
        #[arg(long)]
        gpu_probe: Option<PathBuf>,
        /// Re-predict the experiments of an earlier validate.json instead of measuring.
        #[arg(long)]
        remeasured: Option<PathBuf>,
    },
}

fn mode(quick: bool, m: Option<ModeArg>) -> Mode {
    match (m, quick) {
        (Some(m), _) => m.into(),
        (None, true) => Mode::Quick,
        (None, false) => Mode::Full,
    }
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Calibrate {
            quick,
            mode: m,
            out,
            no_hugepages,
            no_gpu,
            gpu_probe,
            json,
            refit,
        } => calibrate_command(CalibrateArgs {
            mode: mode(quick, m),
            out,
            hugepages: !no_hugepages,
            no_gpu,
            gpu_probe,
            json,
            refit,
        }),
        Cmd::Validate {
            calibration,
            quick,
            mode: m,
            out_dir,
            no_hugepages,
            no_gpu,
            gpu_probe,
            remeasured,
        } => validate_command(ValidateArgs {
            calibration,
            mode: mode(quick, m),
            out_dir,
            hugepages: !no_hugepages,
            no_gpu,
            gpu_probe,
            remeasured,
        }),
    };
    if let Err(e) = r {
        eprintln!("bwsim: error: {e:#}");
        std::process::exit(1);
    }
}
