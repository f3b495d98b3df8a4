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
    Sweep(SweepCli),
    /// Compare host profiles on a scenario: each host's best concurrency, proofs/day,
    /// bottleneck, RAM and $/proof as a Markdown table (or JSON) and a chart.
    Compare(CompareArgs),
    /// Redraw a sweep's plots from its sweep.csv without simulating.
    Plot(PlotCli),
    /// Read cuzk daemon logs (TIMELINE and CUZK_TIMING lines): GPU utilisation, gaps
    /// between GPU operations, timer and stage durations by percentile, concurrency.
    Log(LogArgs),
    /// Measure this host (DRAM bandwidth and loaded latency, PCIe, GPU kernels) and write
    /// a calibration file that scenarios can include.
    Calibrate(CalibrateCliArgs),
    /// Run mixed contention experiments on this host and compare them with what the
    /// calibration predicts.
    Validate(ValidateCliArgs),
    /// Run a scenario's pipeline for real on this host (synthetic CPU kernels, real
    /// copies and GPU kernels) and compare it with the simulation, point by point.
    Replay(ReplayCliArgs),
    /// Rebuild the accuracy tables and the prediction intervals' data from the committed
    /// device runs: every replay predicted again by today's model, under its own boot's
    /// calibration, every other boot's, and typical values.
    Accuracy(AccuracyArgs),
}

/// Arguments of `bwsim accuracy`.
#[derive(Debug, clap::Args)]
pub struct AccuracyArgs {
    /// The evidence manifest (boots, calibrations, replay calls).
    #[arg(long, value_name = "FILE", default_value = "runs/evidence.toml")]
    pub evidence: PathBuf,
    /// The repository root the manifest's scenarios are relative to.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Where to write the coverage and transfer tables (Markdown).
    #[arg(long, value_name = "FILE", default_value = "docs/accuracy/coverage.md")]
    pub out: PathBuf,
    /// Where to write every predicted point (CSV, gzipped when the name ends in `.gz`):
    /// the coverage test fits the error models again from it.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "docs/accuracy/points.csv.gz"
    )]
    pub points: PathBuf,
    /// Also write the prediction intervals' data file here (it is built into bwsim:
    /// rebuild after writing `data/prediction-intervals.toml`).
    #[arg(long, value_name = "FILE")]
    pub write_data: Option<PathBuf>,
    /// Predict each point under its own boot's calibration only (no transfer matrix).
    #[arg(long)]
    pub own_only: bool,
    /// Leave out the predictions with typical values.
    #[arg(long)]
    pub no_typical: bool,
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
    /// Replay runs per point (the plot shows their spread): the repeat count, named as in
    /// every command.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub replications: u32,
    /// The old name of --replications, kept for one release.
    #[arg(long, hide = true, conflicts_with = "replications", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub runs: Option<u32>,
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
    /// The longest replay to start, hours: every point's expected time x --replications (a replay
    /// runs in real time, so 10^5 one-second jobs would take days).
    #[arg(long, value_name = "HOURS", default_value_t = 4.0)]
    pub max_hours: f64,
    /// Run nothing: read the measured points of an earlier replay's output folder
    /// (DIR/replay.json) and set the current model's prediction beside them (writes to
    /// --out, default DIR/repredicted).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["dry_run", "param"])]
    pub repredict: Option<PathBuf>,
    /// Small kernel buffers (tests and quick looks; DRAM numbers become cache-bound).
    #[arg(long, hide = true)]
    pub small_buffers: bool,
}

/// How long the calibration and validation probes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProbeMode {
    /// Seconds; small buffers (tests only: numbers are cache-bound).
    Tiny,
    /// About 3 minutes with a GPU, under 2 without.
    Quick,
    /// Under 10 minutes.
    Full,
}

/// Probe flags shared by `bwsim calibrate` and `bwsim validate`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Short run (about 3 minutes with a GPU); the same as `--mode quick`.
    #[arg(long, conflicts_with = "mode")]
    pub quick: bool,
    /// Probe length [default: full].
    #[arg(long, value_enum)]
    pub mode: Option<ProbeMode>,
    /// Do not advise huge pages (MADV_HUGEPAGE) for the probe buffers.
    #[arg(long)]
    pub no_hugepages: bool,
    /// Skip the GPU probes and experiments.
    #[arg(long)]
    pub no_gpu: bool,
    /// A GPU probe harness built by gpu/build.sh (default: the one embedded with
    /// `--features cuda`).
    #[arg(long, value_name = "PATH")]
    pub gpu_probe: Option<PathBuf>,
}

impl ProbeArgs {
    /// The probe length these flags ask for (`--quick` is `--mode quick`).
    pub fn mode(&self) -> ProbeMode {
        match (self.mode, self.quick) {
            (Some(m), _) => m,
            (None, true) => ProbeMode::Quick,
            (None, false) => ProbeMode::Full,
        }
    }
}

/// Arguments of `bwsim calibrate`.
#[derive(Debug, clap::Args)]
pub struct CalibrateCliArgs {
    /// Probe length, huge pages, GPU.
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Calibration file to write (atomically).
    #[arg(long, default_value = "calibration.toml")]
    pub out: PathBuf,
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
    /// Probe length, huge pages, GPU.
    #[command(flatten)]
    pub probe: ProbeArgs,
    /// Folder for validate.{csv,json,md,png,svg} (`--out-dir`, its old name, still works).
    #[arg(
        long = "out",
        alias = "out-dir",
        value_name = "DIR",
        default_value = "."
    )]
    pub out_dir: PathBuf,
    /// Re-predict the experiments of an earlier validate.json instead of measuring.
    #[arg(long, value_name = "FILE")]
    pub remeasured: Option<PathBuf>,
}

/// A scenario file and its `--set` overrides, shared by `run` and `check`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScenarioArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// Override a scenario key by dotted path, e.g. `--set arrivals.concurrency=20` or
    /// `--set params.synthesis_concurrency=15` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

/// Arguments of `bwsim run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The scenario and its overrides.
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Random seed (overrides the scenario's `seed`): 0 to 2^64 - 1.
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Skip the contention-free counterfactual run (`ideal.*` in the report).
    #[arg(long)]
    pub no_ideal: bool,
    /// Runs on seeds seed, seed+1, ... (in parallel): the throughput is their mean with a
    /// 95% interval; 1 is a single run with no interval.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub replications: u32,
    /// A change to weigh against the scenario as given (with its --set), e.g.
    /// `--what-if hardware.dram.channels=12` (repeatable): both run on the same seeds and
    /// the difference is reported with its own 95% interval.
    #[arg(long = "what-if", value_name = "KEY=VALUE", conflicts_with_all = ["trace", "timeline_log", "plot"])]
    pub what_if: Vec<String>,
    /// Skip the what-ifs (one step more of each resource, `what_if.*` in the report).
    #[arg(long)]
    pub no_what_if: bool,
    /// Caps on the run's estimated size.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Trace, TIMELINE log and timeline plot of this run (its first replication).
    #[command(flatten)]
    pub exports: RunExportArgs,
}

/// The export flags of `bwsim run`.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct RunExportArgs {
    /// Write a Chrome/Perfetto trace of the run (stages as slices, DRAM GB/s as a counter).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write a TIMELINE-style log of the instrumentation markers.
    #[arg(long, value_name = "FILE")]
    pub timeline_log: Option<PathBuf>,
    /// Draw the run's timeline (timeline.png and .svg, and timeline_steady zoomed on steady
    /// state) into DIR
    /// [default: output/<scenario>/<UTC timestamp>].
    #[arg(long, value_name = "DIR")]
    pub plot: Option<Option<PathBuf>>,
}

impl RunExportArgs {
    /// True when any export was asked for (so a trace must be recorded).
    pub fn any(&self) -> bool {
        self.trace.is_some() || self.timeline_log.is_some() || self.plot.is_some()
    }
}

/// Arguments of `bwsim check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The scenario and its overrides.
    #[command(flatten)]
    pub input: ScenarioArgs,
    /// Caps on the run's estimated size, as for `run`.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Arguments of `bwsim sweep`.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepCli {
    /// `merge`: join the folders of a sharded sweep (otherwise: run a sweep).
    #[command(subcommand)]
    pub action: Option<SweepAction>,
    /// Scenario file (TOML); not needed with --resume.
    #[arg(required_unless_present = "resume")]
    pub scenario: Option<PathBuf>,
    /// A swept parameter: KEY=SPEC, SPEC being 1..32, 1..64:4, or 4,8,12 (repeat for a grid).
    #[arg(
        long = "param",
        value_name = "KEY=SPEC",
        required_unless_present = "resume"
    )]
    pub params: Vec<String>,
    /// Runs per point, on independent seeds (their mean and 95% interval): the repeat
    /// count, named as in every command.
    #[arg(long, default_value_t = 3, value_parser = parse_replication_count)]
    pub replications: u32,
    /// The old name of --replications, kept for one release.
    #[arg(long, hide = true, conflicts_with = "replications", value_parser = parse_replication_count)]
    pub seeds: Option<u32>,
    /// Worker threads [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Output folder, new or empty [default: output/<scenario>/<UTC timestamp>].
    #[arg(long, value_name = "DIR", conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Override a scenario key at every point, e.g. --set arrivals.jobs=200.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Base seed for the per-point seeds [default: the scenario's seed]: 0 to 2^64 - 1.
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Finish the interrupted sweep whose output folder was DIR, reusing its finished
    /// points (the other flags come from its manifest).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["scenario", "params", "sets", "seed"])]
    pub resume: Option<PathBuf>,
    /// Run only slice I of N of the grid (I from 0 to N-1; point k belongs to shard
    /// k mod N, with the seeds of the whole grid) and write shard.json; join the slices
    /// with `bwsim sweep merge`.
    #[arg(long, value_name = "I/N", value_parser = crate::sweep::ShardSpec::parse, conflicts_with = "resume")]
    pub shard: Option<crate::sweep::ShardSpec>,
    /// Sweep a key even where it has no effect (another key overrides it, e.g.
    /// hardware.dram.channels beside a measured capacity_gbps): refused without this.
    #[arg(long)]
    pub allow_ignored: bool,
    /// Test hook: stop as if interrupted after N points are saved.
    #[arg(long, value_name = "N", hide = true)]
    pub stop_after: Option<usize>,
}

/// Subcommands of `bwsim sweep`.
#[derive(Debug, Clone, Subcommand)]
pub enum SweepAction {
    /// Join the folders of a sharded sweep (`--shard I/N` runs, every I once) into the
    /// sweep.csv, sweep.json and plots a sweep on one machine writes.
    Merge(SweepMergeCli),
}

/// Arguments of `bwsim sweep merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepMergeCli {
    /// Shard output folders, in any order.
    #[arg(required = true, value_name = "DIR")]
    pub shards: Vec<PathBuf>,
    /// Folder for the merged outputs, new or empty.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Arguments of `bwsim compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct CompareArgs {
    /// Scenario file (TOML), e.g. scenarios/c2-32g-cuzk.toml.
    pub scenario: PathBuf,
    /// A host profile (repeatable), e.g. scenarios/hosts/c2-reference.toml.
    #[arg(long = "host", value_name = "FILE", required = true)]
    pub hosts: Vec<PathBuf>,
    /// A knob to search per host, KEY=SPEC as for `sweep` (repeatable) [default: every
    /// [params] knob named *concurrency, over 1..2 x its default in at most 16 steps].
    #[arg(long = "search", value_name = "KEY=SPEC")]
    pub search: Vec<String>,
    /// Override a scenario key for every host (before the host's own overrides).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Runs per searched setting, on independent seeds: proofs/day is their mean with a
    /// 95% interval (1 gives no interval, so no two hosts are told apart).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub replications: u32,
    /// The old name of --replications, kept for one release.
    #[arg(long, hide = true, conflicts_with = "replications", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub seeds: Option<u32>,
    /// Base seed for the per-setting seeds [default: the scenario's seed]: 0 to 2^64 - 1.
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Worker threads [default: all cores].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Years a purchase price is written off over.
    #[arg(long, default_value_t = crate::compare::cost::DEFAULT_AMORTISE_YEARS)]
    pub amortise_years: f64,
    /// Electricity price, US dollars per kWh (for hosts with power_w).
    #[arg(long, default_value_t = crate::compare::cost::DEFAULT_POWER_PRICE_PER_KWH)]
    pub power_price_per_kwh: f64,
    /// Name the cheapest fleet (k hosts of one kind) that reaches this many proofs/day.
    #[arg(long, value_name = "N")]
    pub target_proofs_per_day: Option<f64>,
    /// Draw the chart to FILE (.png) and beside it the .svg.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Arguments of `bwsim plot`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotCli {
    /// A sweep.csv written by `bwsim sweep`.
    pub csv: PathBuf,
    /// Folder for the plots [default: the CSV's folder].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
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

/// Arguments of `bwsim log`.
#[derive(Debug, clap::Args)]
pub struct LogArgs {
    /// Log files (read in order; TIMELINE and *_TIMING lines are picked out of any other
    /// output).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Jobs to skip as warm-up: the window (for GPU busy, timers and jobs in flight)
    /// opens when this many have completed, as arrivals.warmup_jobs does for `bwsim run`;
    /// 0 opens it at the first record.
    #[arg(long, default_value_t = 0)]
    pub warmup_jobs: usize,
    /// GPU workers per device, to map cuzk's `worker=` numbers to GPUs [default: the
    /// log's own "GPU worker started" lines, else the --against scenario's
    /// params.gpu_workers_per_device, else cuzk's default 2].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub gpu_workers_per_device: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Run this scenario at the log's concurrency (the time-weighted median of jobs in
    /// flight, as arrivals.concurrency, unless --set arrivals.concurrency gives it) and
    /// show log and model stage by stage.
    #[arg(long, value_name = "SCENARIO")]
    pub against: Option<PathBuf>,
    /// Override a key of the --against scenario (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "against")]
    pub sets: Vec<String>,
    /// Fit the --against scenario's durations that the log observes (a stage whose
    /// duration_s is "$param", bracketed by markers or a timer), report each one's
    /// sensitivity and write them to --fit-out as a scenario that includes the original.
    #[arg(long, requires = "against")]
    pub fit: bool,
    /// Where --fit writes [default: fit.toml].
    #[arg(long, value_name = "FILE", requires = "fit")]
    pub fit_out: Option<PathBuf>,
    /// Draw jobs in flight, stages in flight and GPUs busy over time to FILE (.png, and
    /// the .svg beside it).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// A flag's value that is not a whole number in the flag's range: the value as typed, what
/// the flag takes, and the range allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{value}' is not {what}: {allowed}")]
pub struct WholeNumberError {
    /// The value as typed.
    pub value: String,
    /// What the flag takes ("a seed").
    pub what: &'static str,
    /// The whole numbers allowed, said in full.
    pub allowed: String,
}

/// `--seed`: a whole number in the seed's range (u64), with a message that says so
/// instead of the parser's ("number too large to fit in target type").
pub fn parse_seed(s: &str) -> Result<u64, WholeNumberError> {
    s.trim().parse::<u64>().map_err(|_| WholeNumberError {
        value: s.to_string(),
        what: "a seed",
        allowed: format!("a seed is a whole number from 0 to {} (2^64 - 1)", u64::MAX),
    })
}

/// `sweep --replications`: runs per sweep point, 1 to 2^32 - 1 (larger sweeps are
/// refused later by the size limits, with the estimate).
pub fn parse_replication_count(s: &str) -> Result<u32, WholeNumberError> {
    match s.trim().parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(WholeNumberError {
            value: s.to_string(),
            what: "a replication count",
            allowed: format!("--replications takes a whole number from 1 to {}", u32::MAX),
        }),
    }
}

/// The repeat count a command runs with: `--replications`, or its old name (`--seeds`,
/// `--runs`) when that was given, with the deprecation note to print.
pub fn replications(given: u32, old: Option<u32>, old_flag: &str) -> (u32, Option<String>) {
    match old {
        Some(n) => (
            n,
            Some(format!(
                "{old_flag} is deprecated and will be removed: the repeat count is \
                 --replications in every command (run, sweep, compare, replay)"
            )),
        ),
        None => (given, None),
    }
}

/// Flags a user may reach for that mean another flag of bwsim: (typed, meant). The
/// repeat count is `--replications` everywhere; `--seed` sets a seed value.
pub const SAME_MEANING: [(&str, &str); 4] = [
    ("--seeds", "--replications"),
    ("--runs", "--replications"),
    ("--repeats", "--replications"),
    ("--reps", "--replications"),
];

/// Parses the command line. An unknown flag that means a flag bwsim has (`run --seeds`)
/// gets that flag as its suggestion, not the nearest spelling (`--seed`, which sets a seed).
pub fn parse() -> Cli {
    Cli::try_parse().unwrap_or_else(|e| with_same_meaning(e).exit())
}

/// `e` with the suggestion of [`SAME_MEANING`] for an unknown flag found there.
pub fn with_same_meaning(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let meant = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(typed)) => {
            let flag = typed.split('=').next().unwrap_or(typed);
            SAME_MEANING
                .iter()
                .find(|(t, _)| *t == flag)
                .map(|(_, m)| m.to_string())
        }
        _ => None,
    };
    let Some(meant) = meant else {
        return e;
    };
    // clap's usage line names the flag it would have suggested: name the meant one.
    let old = match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(old)) => Some(old.clone()),
        _ => None,
    };
    if let (Some(old), Some(ContextValue::StyledStr(usage))) = (old, e.get(ContextKind::Usage)) {
        let with_value = |flag: &str| {
            let value = flag
                .trim_start_matches('-')
                .to_uppercase()
                .replace('-', "_");
            format!("{flag} <{value}>")
        };
        let usage = usage
            .to_string()
            .replace(&with_value(&old), &with_value(&meant));
        e.insert(ContextKind::Usage, ContextValue::StyledStr(usage.into()));
    }
    e.insert(ContextKind::SuggestedArg, ContextValue::String(meant));
    e
}
