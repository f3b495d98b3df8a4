//! Metric names of the JSON report, as dotted paths, in one place. The JSON exporter
//! writes them, charts and sweep tables read them, so renaming a key here renames it
//! everywhere and a chart can never ask for a key the report no longer writes.

pub const SCENARIO: &str = "scenario";
pub const SEED: &str = "seed";
/// What one job is called (`workload.job_name`: "job", "proof").
pub const JOB_NAME: &str = "job_name";
pub const JOBS_COMPLETED: &str = "jobs_completed";
pub const JOBS_MEASURED: &str = "jobs_measured";
pub const WARMUP_JOBS: &str = "warmup_jobs";
pub const SIM_TIME_S: &str = "sim_time_s";
pub const WINDOW_S: &str = "window_s";
pub const SECONDS_PER_JOB: &str = "seconds_per_job";
pub const JOBS_PER_HOUR: &str = "jobs_per_hour";
/// The throughput unit every report says: 24 x [`JOBS_PER_HOUR`].
pub const JOBS_PER_DAY: &str = "jobs_per_day";
pub const RESPONSE_MEAN_S: &str = "response.mean_s";
pub const RESPONSE_MAX_S: &str = "response.max_s";
pub const IDEAL_SECONDS_PER_JOB: &str = "ideal.seconds_per_job";
pub const IDEAL_JOBS_PER_HOUR: &str = "ideal.jobs_per_hour";
pub const IDEAL_JOBS_PER_DAY: &str = "ideal.jobs_per_day";
pub const GPU_TRUE_BUSY_FRAC: &str = "gpu.true_busy_frac";
/// Each GPU's kernel duty, in GPU order (an array: no sweep metric).
pub const GPU_KERNEL_DUTY: &str = "gpu.kernel_duty";
pub const GPU_BRACKETED_BUSY_FRAC: &str = "gpu.bracketed_busy_frac";
/// The nvidia-smi view: share of sample windows (`instrumentation.smi_sample_period_s`)
/// in which any kernel ran.
pub const GPU_SAMPLED_BUSY_FRAC: &str = "gpu.sampled_busy_frac";
pub const GPU_BRACKETED_SECONDS_PER_JOB: &str = "gpu.bracketed_seconds_per_job";
/// The gpu_busy brackets added up over the window (the seed's formula; the union is
/// [`GPU_BRACKETED_BUSY_FRAC`]).
pub const GPU_BRACKETS_SUMMED_FRAC: &str = "gpu.brackets_summed_frac";
/// The same sum over each GPU's own span: its first bracket's start to its last one's end.
pub const GPU_BRACKETS_SUMMED_SPAN_FRAC: &str = "gpu.brackets_summed_span_frac";
/// Mean gap between GPU operations (one run of brackets' end to the next one's start), s.
pub const GPU_MEAN_GAP_S: &str = "gpu.mean_gap_s";
/// Object: span name -> mean length, seconds.
pub const GPU_SPANS_MEAN_S: &str = "gpu.spans_mean_s";
/// Object: what the gpu_busy brackets were spent on; `brackets`, `mean_bracket_s`,
/// `verdict` and per part (see [`breakdown_metric`]) `<part>_s` (mean per bracket),
/// `<part>_s_per_job` (per measured job and GPU) and `<part>_share` (of bracketed time).
pub const GPU_BREAKDOWN: &str = "gpu.breakdown";
pub const DRAM_CAPACITY_GBPS: &str = "dram.capacity_gbps";
pub const DRAM_MEAN_UTILIZATION: &str = "dram.mean_utilization";
pub const DRAM_MEAN_GBPS: &str = "dram.mean_gbps";
pub const DRAM_PEAK_GBPS: &str = "dram.peak_gbps";
/// DRAM's usable capacity, GB/s, time-averaged: the nominal `capacity_gbps` less what
/// interleaving streams lose.
pub const DRAM_USABLE_GBPS: &str = "dram.usable_gbps";
/// Mean share of the usable capacity drawn.
pub const DRAM_USABLE_UTILIZATION: &str = "dram.usable_utilization";
/// Time-averaged streams on DRAM (null when DRAM loses no efficiency per stream).
pub const DRAM_MEAN_STREAMS: &str = "dram.mean_streams";
pub const DRAM_EFFICIENCY_LOSS_PER_STREAM: &str = "dram.efficiency_loss_per_stream";
pub const DRAM_MEAN_LATENCY_SLOWDOWN: &str = "dram.mean_latency_slowdown";
pub const DRAM_MAX_LATENCY_SLOWDOWN: &str = "dram.max_latency_slowdown";
/// Object: stage name -> the `STAGE_*` leaves.
pub const STAGES: &str = "stages";
/// Object: rate resource name -> capacity, mean_utilization, peak.
pub const RATES: &str = "rates";
/// Object: holdable instance name -> capacity, mean_occupancy, peak, wait_s.
pub const HOLDS: &str = "holds";
pub const RAM_PEAK_GIB: &str = "ram.peak_gib";
pub const RAM_CAPACITY_GIB: &str = "ram.capacity_gib";
pub const VRAM_PEAK_GIB: &str = "vram.peak_gib";
/// The what-if step that buys most (`threads`, `dram`, ..., or `none`) when the steps
/// ran, else the busiest resource.
pub const BOTTLENECK_RESOURCE: &str = "bottleneck.resource";
pub const BOTTLENECK_REASON: &str = "bottleneck.reason";
/// `what_if_steps` or `occupancy`: what named `bottleneck.resource`.
pub const BOTTLENECK_NAMED_BY: &str = "bottleneck.named_by";
/// The occupancy analysis: the most occupied resource, why, and the what-if step that
/// adds more of it (null when none does).
pub const BOTTLENECK_BUSIEST_RESOURCE: &str = "bottleneck.busiest.resource";
pub const BOTTLENECK_BUSIEST_REASON: &str = "bottleneck.busiest.reason";
pub const BOTTLENECK_BUSIEST_STEP: &str = "bottleneck.busiest.step";
/// Object: resource -> seconds blamed on it.
pub const BOTTLENECK_BLAME_S: &str = "bottleneck.blame_s";
/// Object, or null when not computed (`run --no-what-if`, sweeps): `knob` (the resource
/// key, or null), `verdict`, and per resource `<resource>.{step, seconds_per_job, gain,
/// share}`.
pub const WHAT_IF: &str = "what_if";
pub const PREDICTION: &str = "prediction";
pub const LITTLE_L: &str = "little.l";
pub const LITTLE_LAMBDA_W: &str = "little.lambda_w";
pub const NOTES: &str = "notes";
/// Object: the answer as the throughput line says it
/// ([`crate::analysis::throughput::Throughput::to_json`]): `seconds_per_job` and
/// `jobs_per_day` (`mean`, `ci95`), `replications`, `job_name`, `unit`, `line`.
pub const THROUGHPUT: &str = "throughput";
pub const ENGINE_EVENTS: &str = "engine.events";
pub const ENGINE_WALL_S: &str = "engine.wall_s";

/// Object written only by a report of several replications (`bwsim run`'s default):
/// `count`, `seeds`, `details_seed` (the seed every other key describes), and for each
/// of the [`REPLICATED_LEAVES`] its `mean` and `ci95` (half-width of the 95% interval)
/// over the seeds; `seconds_per_job` and `jobs_per_hour` also list each seed's value
/// (`by_seed`).
pub const REPLICATIONS: &str = "replications";

/// The metrics under [`REPLICATIONS`] with a mean and an interval; `jobs_per_day` is 24 x
/// `jobs_per_hour`, `ideal_seconds_per_job` is absent with `--no-ideal`.
pub const REPLICATED_LEAVES: [&str; 4] = [
    "seconds_per_job",
    "jobs_per_hour",
    "jobs_per_day",
    "response_mean_s",
];

/// Leaves under `stages.<name>.`
pub const STAGE_COUNT: &str = "count";
pub const STAGE_MEAN_S: &str = "mean_s";
pub const STAGE_STANDALONE_MEAN_S: &str = "standalone_mean_s";
pub const STAGE_INFLATION: &str = "inflation";
pub const STAGE_MEAN_WAIT_S: &str = "mean_wait_s";
pub const STAGE_LOST_S: &str = "lost_s";
/// The 95% half-width of `mean_s` over the replications; only in a replicated report
/// (the stage table's precision comes from it).
pub const STAGE_MEAN_S_CI95: &str = "mean_s_ci95";

/// Every fixed key the JSON report writes, in the order it writes them.
pub const ALL: [&str; 56] = [
    SCENARIO,
    SEED,
    JOB_NAME,
    JOBS_COMPLETED,
    JOBS_MEASURED,
    WARMUP_JOBS,
    SIM_TIME_S,
    WINDOW_S,
    SECONDS_PER_JOB,
    JOBS_PER_HOUR,
    JOBS_PER_DAY,
    RESPONSE_MEAN_S,
    RESPONSE_MAX_S,
    IDEAL_SECONDS_PER_JOB,
    IDEAL_JOBS_PER_HOUR,
    IDEAL_JOBS_PER_DAY,
    GPU_TRUE_BUSY_FRAC,
    GPU_BRACKETED_BUSY_FRAC,
    GPU_BRACKETED_SECONDS_PER_JOB,
    GPU_BRACKETS_SUMMED_FRAC,
    GPU_BRACKETS_SUMMED_SPAN_FRAC,
    GPU_MEAN_GAP_S,
    GPU_SAMPLED_BUSY_FRAC,
    GPU_SPANS_MEAN_S,
    GPU_BREAKDOWN,
    DRAM_CAPACITY_GBPS,
    DRAM_MEAN_UTILIZATION,
    DRAM_MEAN_GBPS,
    DRAM_PEAK_GBPS,
    DRAM_USABLE_GBPS,
    DRAM_USABLE_UTILIZATION,
    DRAM_MEAN_STREAMS,
    DRAM_EFFICIENCY_LOSS_PER_STREAM,
    DRAM_MEAN_LATENCY_SLOWDOWN,
    DRAM_MAX_LATENCY_SLOWDOWN,
    STAGES,
    RATES,
    HOLDS,
    RAM_PEAK_GIB,
    RAM_CAPACITY_GIB,
    VRAM_PEAK_GIB,
    BOTTLENECK_RESOURCE,
    BOTTLENECK_REASON,
    BOTTLENECK_NAMED_BY,
    BOTTLENECK_BUSIEST_RESOURCE,
    BOTTLENECK_BUSIEST_REASON,
    BOTTLENECK_BUSIEST_STEP,
    BOTTLENECK_BLAME_S,
    WHAT_IF,
    PREDICTION,
    LITTLE_L,
    LITTLE_LAMBDA_W,
    NOTES,
    THROUGHPUT,
    ENGINE_EVENTS,
    ENGINE_WALL_S,
];

/// Every leaf the JSON report writes under each stage, in order.
pub const STAGE_LEAVES: [&str; 6] = [
    STAGE_COUNT,
    STAGE_MEAN_S,
    STAGE_STANDALONE_MEAN_S,
    STAGE_INFLATION,
    STAGE_MEAN_WAIT_S,
    STAGE_LOST_S,
];

/// Leaves under `gpu.breakdown.`, after the part's key (e.g. `lock_wait_share`).
pub const BREAKDOWN_PER_BRACKET_S: &str = "_s";
pub const BREAKDOWN_PER_JOB_S: &str = "_s_per_job";
pub const BREAKDOWN_SHARE: &str = "_share";

/// The dotted key of one part of the GPU bracket breakdown, e.g.
/// `gpu.breakdown.kernels_share`; `part` is a [`crate::analysis::gap::GapPart::key`].
pub fn breakdown_metric(part: &str, leaf: &str) -> String {
    format!("{GPU_BREAKDOWN}.{part}{leaf}")
}

/// The dotted key of one stage's metric, e.g. `stages.synth.inflation`.
pub fn stage_metric(stage: &str, leaf: &str) -> String {
    format!("{STAGES}.{stage}.{leaf}")
}
