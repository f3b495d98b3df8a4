//! `bwsim replay`: run a scenario's pipeline for real on this host and set it beside
//! the simulator's prediction, point by point over a concurrency range.
//!
//! The steps, one module each: the scenario becomes a per-stage plan and each point's
//! memory need ([`plan`]); CPU stages become self-calibrated synthetic kernels
//! ([`kernels`]); GPU stages and copies go to a harness process ([`gpu`], built from
//! `gpu/replay.cu` with the `cuda` feature, one process per GPU); [`executor`] runs the
//! DAG with real holds ([`holds`], granted by the engine's own rule) and arrivals; [`record`] writes the TIMELINE log; [`measure`] turns a run into the
//! simulator's metrics; [`compare`] and [`chart`] set measured beside predicted.

pub mod chart;
pub mod compare;
pub mod error;
pub mod executor;
pub mod gpu;
pub mod holds;
pub mod kernels;
pub mod measure;
pub mod memory;
pub mod plan;
pub mod record;
pub mod repredict;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use error::{Context, Result, failed};
use serde_json::{Value, json};

use crate::run::{RunOptions, run_model_with};
use crate::scenario::{self, Loaded};
use crate::sweep::grid::Grid;
use crate::sweep::spec::parse_param;

pub use error::ReplayError;

use compare::{PointResult, Predicted};
use executor::{Executor, GpuBackend};
use kernels::{BufferSizes, KernelHost};
use plan::{MemoryNeed, StagePlan, memory_need, stage_plans};

/// Bad input to `bwsim replay` that the scenario loader cannot see (exit code 2): a
/// point that would not fit this host's RAM or VRAM, a scenario replay cannot drive.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReplayInputError(pub String);

/// What `bwsim replay` was asked to do.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Scenario file.
    pub scenario: PathBuf,
    /// `--set KEY=VALUE` overrides for every point.
    pub sets: Vec<String>,
    /// `--param KEY=SPEC`: the points (None: one point, the scenario as it is).
    pub param: Option<String>,
    /// A calibration file merged over the scenario (its hardware and knobs win).
    pub calibration: Option<PathBuf>,
    /// Print the plan and the memory check, run nothing.
    pub dry_run: bool,
    /// Output folder (default `output/<scenario>/<timestamp>`).
    pub out: Option<PathBuf>,
    /// Replay runs per point.
    pub runs: u32,
    /// A GPU replay harness built by gpu/build.sh (default: the embedded one).
    pub gpu_harness: Option<PathBuf>,
    /// NVML sampling period, ms.
    pub nvml_period_ms: u32,
    /// Host RAM to plan against, bytes (default: this host's MemTotal).
    pub host_ram_bytes: Option<f64>,
    /// The longest replay to start, seconds of expected wall time over all points and runs.
    pub max_wall_s: f64,
    /// Kernel buffer sizes.
    pub buffers: BufferSizes,
}

impl ReplayOptions {
    /// Defaults for a scenario: one run per point, 200 ms NVML period, full buffers.
    pub fn new(scenario: impl Into<PathBuf>) -> ReplayOptions {
        ReplayOptions {
            scenario: scenario.into(),
            sets: Vec::new(),
            param: None,
            calibration: None,
            dry_run: false,
            out: None,
            runs: 1,
            gpu_harness: None,
            nvml_period_ms: 200,
            host_ram_bytes: None,
            max_wall_s: 4.0 * 3600.0,
            buffers: BufferSizes::REPLAY,
        }
    }
}

/// One point, planned.
pub struct PointPlan {
    /// Overrides that make this point.
    pub sets: Vec<String>,
    /// The swept value (0 without `--param`).
    pub x: f64,
    /// The scenario at this point.
    pub loaded: Loaded,
    /// What each stage does.
    pub stages: Vec<StagePlan>,
    /// The simulator's report (JSON) for this point.
    pub report: Value,
    /// Memory the replay of this point takes.
    pub memory: MemoryNeed,
}

impl PointPlan {
    /// Simulated time of the whole run: the replay's expected wall time.
    pub fn expected_wall_s(&self) -> f64 {
        self.report
            .get("sim_time_s")
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    }
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Loads the scenario at each point of `--param`, simulates it and plans its replay.
/// Stops, before simulating the next point, as soon as the points planned so far are
/// expected to take longer than `opts.max_wall_s` (x `opts.runs`): a range of 10,000
/// points is refused after the few that already exceed the limit, not after all.
pub fn plan_points(opts: &ReplayOptions) -> Result<Vec<PointPlan>> {
    let (param_key, values) = match &opts.param {
        Some(p) => {
            let param = parse_param(p)?;
            let grid = Grid::new(vec![param.clone()])?;
            let pts = grid.points();
            let sets: Vec<(Vec<String>, f64)> = pts
                .iter()
                .map(|pt| {
                    let x = pt.values[0].to_string().parse::<f64>().unwrap_or(0.0);
                    (grid.sets(pt), x)
                })
                .collect();
            (Some(param.key), sets)
        }
        None => (None, vec![(Vec::new(), 0.0)]),
    };
    let _ = param_key;
    let total = values.len();
    let mut out: Vec<PointPlan> = Vec::new();
    for (point_sets, x) in values {
        check_duration_of(&out, total, opts.runs, opts.max_wall_s)?;
        let mut sets = opts.sets.clone();
        sets.extend(point_sets.iter().cloned());
        let loaded = load(opts, &sets)?;
        let stages = stage_plans(&loaded.model, &loaded.replay);
        let report = predict_point(opts, &loaded, &sets)?;
        let gib = |path: &[&str]| {
            let mut v = &report;
            for p in path {
                v = &v[*p];
            }
            v.as_f64().unwrap_or(0.0) * GIB
        };
        let memory = memory_need(
            &stages,
            gib(&["ram", "peak_gib"]),
            gib(&["vram", "peak_gib"]),
            opts.buffers,
        );
        out.push(PointPlan {
            sets: point_sets,
            x,
            loaded,
            stages,
            report,
            memory,
        });
    }
    check_duration_of(&out, total, opts.runs, opts.max_wall_s)?;
    Ok(out)
}

/// The simulator's report (JSON) of one point: the prediction a replay is set beside.
pub(crate) fn predict_point(
    opts: &ReplayOptions,
    loaded: &Loaded,
    sets: &[String],
) -> Result<Value> {
    Ok(run_model_with(
        &loaded.model,
        RunOptions { ideal: false },
        &mut crate::engine::NullObserver,
    )
    .with_context(|| {
        format!(
            "simulating {} at {}",
            opts.scenario.display(),
            sets.join(" ")
        )
    })?
    .to_json())
}

/// Loads the scenario with `sets`, the calibration file (if any) merged over it.
fn load(opts: &ReplayOptions, sets: &[String]) -> Result<Loaded> {
    Ok(load_scenario(opts, sets)?)
}

/// [`load`], with the scenario layer's own error (which names the `--set` at fault).
fn load_scenario(
    opts: &ReplayOptions,
    sets: &[String],
) -> std::result::Result<Loaded, scenario::ScenarioError> {
    let Some(cal) = &opts.calibration else {
        return scenario::load(&opts.scenario, sets);
    };
    // TOML strings, quoted by TOML's own rules: Rust's `{:?}` escapes characters such
    // as a combining accent as `\u{301}`, which TOML does not read, so a scenario in a
    // folder named with one could not be replayed with a calibration.
    let quoted = |p: &Path| {
        let abs = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        toml::Value::String(abs.display().to_string()).to_string()
    };
    let text = format!("include = [{}, {}]\n", quoted(&opts.scenario), quoted(cal));
    let dir = opts.scenario.parent().unwrap_or(Path::new("."));
    let origin = dir.join(".bwsim-replay-with-calibration.toml");
    scenario::load_str(&text, &origin, sets)
}

/// The dry-run text: the stage plan, then per point the memory and expected time.
pub fn describe_plan(points: &[PointPlan], ram_limit: f64, vram_limit: f64) -> String {
    let mut s = String::new();
    let Some(first) = points.first() else {
        return s;
    };
    let m = &first.loaded.model;
    let _ = writeln!(
        s,
        "replay plan: {} ({} partition{} per job, {} jobs, {} warm-up)",
        m.name,
        m.workload.partitions,
        if m.workload.partitions == 1 { "" } else { "s" },
        m.arrivals.jobs,
        m.arrivals.warmup_jobs
    );
    let _ = writeln!(s, "stages (standalone mean, what runs for real):");
    for st in &first.stages {
        let _ = writeln!(s, "  {}", st.describe());
    }
    let _ = writeln!(
        s,
        "points (host RAM limit {:.1} GiB, VRAM limit {:.1} GiB):",
        ram_limit / GIB,
        vram_limit / GIB
    );
    let mut total = 0.0;
    for p in points {
        let fits = p.memory.host_bytes <= ram_limit && p.memory.vram_bytes <= vram_limit;
        total += p.expected_wall_s();
        let _ = writeln!(
            s,
            "  {:<32} RAM {:>7.1} GiB  VRAM {:>7.1} GiB  expected {:>8.1} s  predicted {:.3} s/job{}",
            if p.sets.is_empty() {
                "(scenario as is)".to_string()
            } else {
                p.sets.join(" ")
            },
            p.memory.host_bytes / GIB,
            p.memory.vram_bytes / GIB,
            p.expected_wall_s(),
            p.report["seconds_per_job"].as_f64().unwrap_or(f64::NAN),
            if fits { "" } else { "  DOES NOT FIT" }
        );
    }
    let _ = writeln!(
        s,
        "expected wall time per run over all points: {total:.1} s"
    );
    s
}

/// Refuses points that would not fit (exit 2), naming the point and the shortfall.
pub fn check_fit(points: &[PointPlan], ram_limit: f64, vram_limit: f64) -> Result<()> {
    for p in points {
        let what = if p.sets.is_empty() {
            "the scenario".to_string()
        } else {
            format!("point {}", p.sets.join(" "))
        };
        if p.memory.host_bytes > ram_limit {
            return Err(ReplayInputError(format!(
                "{what} needs {:.1} GiB of host RAM (RAM permits at their simulated peak + kernel and copy buffers), but this host has {:.1} GiB; lower the concurrency or the RAM holds (or pass --host-ram-gib if MemTotal understates it)",
                p.memory.host_bytes / GIB,
                ram_limit / GIB
            ))
            .into());
        }
        if p.memory.vram_bytes > vram_limit {
            return Err(ReplayInputError(format!(
                "{what} needs {:.1} GiB of GPU memory (VRAM permits at their simulated peak + kernel working sets), but the GPU has {:.1} GiB; lower the concurrency, the VRAM holds or the kernel sizes",
                p.memory.vram_bytes / GIB,
                vram_limit / GIB
            ))
            .into());
        }
    }
    Ok(())
}

/// Refuses, before anything runs (a dry run too), a plan that would not fit or would run
/// too long.
fn check_plan(points: &[PointPlan], ram: f64, vram: f64, opts: &ReplayOptions) -> Result<()> {
    check_fit(points, ram, vram)?;
    check_duration(points, opts.runs, opts.max_wall_s)
}

/// Refuses a replay expected to run longer than `max_wall_s` (exit 2): it runs in real
/// time, so a scenario sized for the simulator (10^5 one-second jobs) would take days.
fn check_duration(points: &[PointPlan], runs: u32, max_wall_s: f64) -> Result<()> {
    check_duration_of(points, points.len(), runs, max_wall_s)
}

/// [`check_duration`] of the first `points` of `total`: what they take alone is a lower
/// bound on the whole replay, so a plan is refused as soon as it passes the limit.
fn check_duration_of(points: &[PointPlan], total: usize, runs: u32, max_wall_s: f64) -> Result<()> {
    let expected: f64 = points.iter().map(|p| p.expected_wall_s()).sum::<f64>() * f64::from(runs);
    if expected > max_wall_s {
        let what = if points.len() < total {
            format!(
                "more than {:.1} h (the first {} of its {total} points alone, x {runs} run(s))",
                expected / 3600.0,
                points.len()
            )
        } else {
            format!(
                "about {:.1} h ({} point(s) x {runs} run(s))",
                expected / 3600.0,
                points.len()
            )
        };
        return Err(ReplayInputError(format!(
            "the replay would take {what}, above the limit of {:.1} h; lower arrivals.jobs \
             (with --set) or the points, or raise the limit with --max-hours",
            max_wall_s / 3600.0
        ))
        .into());
    }
    Ok(())
}

/// The files a replay (or a re-prediction) writes into its folder.
pub const RESULT_FILES: &[&str] = &["replay.csv", "replay.json", "replay.png", "replay.svg"];

/// Checks, before anything runs, a folder a replay (`repredicted_from: None`) or a
/// re-prediction of the replay in `DIR` (`Some(DIR)`) is to write into: it may be
/// written, it is not `DIR` (whose replay.json is the input), and it holds no other
/// replay's results, which are measurements that rerunning bwsim cannot make again. A
/// re-prediction may replace an earlier re-prediction of the same `DIR`: one that names
/// `DIR` as its source, or (written before re-predictions named their source) an
/// unnamed one in `DIR/repredicted` with no replay logs beside it.
pub fn check_results_folder(dir: &Path, repredicted_from: Option<&Path>) -> Result<()> {
    let mut inputs = Vec::new();
    if let Some(src) = repredicted_from {
        inputs.push((
            format!("the replay being re-predicted ({})", src.display()),
            src.join("replay.json"),
        ));
    }
    crate::output::check_outputs(
        &[crate::output::Output::new(
            "--out",
            dir,
            crate::output::OutputKind::Folder(RESULT_FILES),
        )],
        &inputs,
    )?;
    let existing = dir.join("replay.json");
    if !existing.is_file() {
        return Ok(());
    }
    let earlier = crate::input_file::read_text(&existing, crate::input_file::MAX_JSON_BYTES)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let from = earlier
        .as_ref()
        .and_then(|d| d.get(REPREDICTED_FROM))
        .and_then(Value::as_str);
    let has_logs = std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("timeline-p") && n.ends_with(".log")
        })
    });
    let replaceable = match (from, repredicted_from) {
        (Some(f), Some(src)) => crate::output::same_file(Path::new(f), src),
        (None, Some(src)) => !has_logs && crate::output::same_file(dir, &src.join("repredicted")),
        (_, None) => false,
    };
    if !replaceable {
        return Err(ReplayInputError(format!(
            "{}: holds the results of another replay (replay.json{}); bwsim does not write \
             over them, so give a new or empty --out folder",
            dir.display(),
            match (from, has_logs) {
                (Some(f), _) => format!(", re-predicted from {f}"),
                (None, true) => " and its measured timeline logs".to_string(),
                (None, false) => String::new(),
            }
        ))
        .into());
    }
    Ok(())
}

/// The key of a re-prediction's replay.json that names the replay it was made from.
pub const REPREDICTED_FROM: &str = "repredicted_from";

/// What a replay wrote.
pub struct ReplayOutcome {
    /// Output folder (None for a dry run).
    pub dir: Option<PathBuf>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// The points with their runs.
    pub points: Vec<PointResult>,
}

/// Whether this host can replay the plan, for a dry run: a plan with GPU stages needs a GPU
/// harness (the `cuda` feature or `--gpu-harness`) and as many NVIDIA devices as the
/// scenario's GPUs (counted as `/dev/nvidiaN`, without starting anything).
fn this_host(opts: &ReplayOptions, gpu_stages: &[&str], gpus: usize) -> String {
    if gpu_stages.is_empty() {
        return "this host: can run it (no GPU stages)".into();
    }
    let stages = gpu_stages.join(", ");
    if let Err(why) = gpu::locate(opts.gpu_harness.as_deref()) {
        return format!(
            "this host: cannot run it: GPU stages ({stages}) need a GPU harness; {why}"
        );
    }
    let visible = std::fs::read_dir("/dev")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_prefix("nvidia")
                        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                })
                .count()
        })
        .unwrap_or(0);
    if visible < gpus {
        return format!(
            "this host: cannot run it: the scenario has {gpus} GPU(s) for its GPU stages ({stages}), \
             this host shows {visible} NVIDIA device(s) in /dev"
        );
    }
    format!("this host: can run it (a GPU harness, {visible} NVIDIA device(s) for {gpus} GPU(s))")
}

/// Runs `bwsim replay`: plan, check, (unless dry-run) replay every point and write the
/// comparison. Prints the plan and the result table on stdout.
pub fn replay_command(opts: &ReplayOptions) -> Result<ReplayOutcome> {
    // Where the results go is checked before anything is simulated or run.
    if let (Some(d), false) = (&opts.out, opts.dry_run) {
        check_results_folder(d, None)?;
    }
    let points = plan_points(opts)?;
    let first = &points[0];
    let model = &first.loaded.model;
    let gpu_stages: Vec<&str> = first
        .stages
        .iter()
        .filter(|s| s.needs_gpu())
        .map(|s| s.name.as_str())
        .collect();
    let ram_limit = opts.host_ram_bytes.unwrap_or_else(|| {
        crate::calibrate::probe::sys::meminfo_bytes("MemTotal")
            .map(|b| b as f64)
            .unwrap_or(f64::INFINITY)
    });
    // Without a running harness, plan against the scenario's declared VRAM.
    let declared_vram = model
        .hardware
        .gpus
        .first()
        .map(|g| g.vram_bytes as f64)
        .unwrap_or(0.0);
    if opts.dry_run {
        crate::output::print_stdout(&describe_plan(&points, ram_limit, declared_vram))?;
        check_plan(&points, ram_limit, declared_vram, opts)?;
        crate::output::print_stdout(&format!(
            "{}\n",
            this_host(opts, &gpu_stages, model.hardware.gpus.len())
        ))?;
        return Ok(ReplayOutcome {
            dir: None,
            files: Vec::new(),
            points: Vec::new(),
        });
    }

    let harness = if gpu_stages.is_empty() {
        None
    } else {
        let path = gpu::locate(opts.gpu_harness.as_deref()).map_err(|why| {
            failed!(
                "{} has GPU stages ({}), which need a GPU to replay: {why}",
                opts.scenario.display(),
                gpu_stages.join(", ")
            )
        })?;
        Some(
            gpu::start_harnesses(path, model.hardware.gpus.len()).with_context(|| {
                format!(
                    "{} has GPU stages ({}), which need {} GPU(s) to replay",
                    opts.scenario.display(),
                    gpu_stages.join(", "),
                    model.hardware.gpus.len()
                )
            })?,
        )
    };
    // The smallest GPU bounds every point (partitions may bind to any of them).
    let vram_limit = harness
        .as_ref()
        .and_then(|hs| {
            hs.iter()
                .map(|h| h.vram_bytes())
                .try_fold(f64::INFINITY, |m, v| v.map(|v| m.min(v)))
        })
        .unwrap_or(declared_vram);
    crate::output::print_stdout(&describe_plan(&points, ram_limit, vram_limit))?;
    check_plan(&points, ram_limit, vram_limit, opts)?;

    let threads = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    eprintln!("replay: measuring this host's kernel rates...");
    let cpu = KernelHost::new(opts.buffers, threads);
    let huge_page_share = cpu.huge_page_share();
    eprintln!(
        "replay: buffers {:.0}% on huge pages; chase {:.1} ns/step, stream {:.1} GB/s per thread alone ({:.1} with {} threads), compute {:.0} M iters/s",
        huge_page_share.unwrap_or(f64::NAN) * 100.0,
        cpu.rates.chase_ns_per_step,
        cpu.rates.stream_gbps(1),
        cpu.rates.stream_gbps(threads),
        threads,
        cpu.rates.compute_iters_per_s / 1e6
    );
    let shortfalls = cpu.shortfall_warnings(
        points
            .iter()
            .flat_map(|p| p.stages.iter())
            .filter_map(|s| s.cpu.as_ref().map(|c| (s.name.as_str(), c))),
    );
    for w in &shortfalls {
        eprintln!("replay: warning: {w}");
    }
    for h in harness.iter().flatten() {
        let mut kinds: Vec<_> = points
            .iter()
            .flat_map(|p| p.stages.iter().filter_map(|s| s.kernel))
            .collect();
        kinds.sort_by_key(|k| k.label());
        kinds.dedup();
        eprintln!("replay: preparing GPU kernels ({} kinds)...", kinds.len());
        h.prepare(&kinds)?;
        for k in &kinds {
            if let Some(s) = h.kernel_alone_s(*k) {
                eprintln!("replay: {} alone {:.2} ms", k.label(), s * 1e3);
            }
        }
    }

    let dir = match &opts.out {
        Some(d) => {
            check_results_folder(d, None)?;
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.clone()
        }
        None => crate::output::reserve_unique_folder(&crate::output::default_folder(&model.name))?,
    };
    let mut files = Vec::new();
    let mut results = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let mut runs = Vec::new();
        for r in 0..opts.runs.max(1) {
            eprintln!(
                "replay: point {}/{} {} run {}/{} (expected {:.1} s)",
                i + 1,
                points.len(),
                p.sets.join(" "),
                r + 1,
                opts.runs.max(1),
                p.expected_wall_s()
            );
            let (m, log) = replay_point(
                p,
                &cpu,
                harness.as_deref().unwrap_or(&[]),
                opts.nvml_period_ms,
            )?;
            let path = dir.join(format!("timeline-p{i}-r{r}.log"));
            crate::output::write_atomic(&path, log.as_bytes())?;
            files.push(path);
            runs.push(m);
        }
        results.push(PointResult {
            sets: p.sets.clone(),
            x: p.x,
            predicted: Predicted::from_report(&p.report),
            runs,
        });
    }

    let host = json!({
        "cpus": threads,
        "chase_ns_per_step": cpu.rates.chase_ns_per_step,
        "stream_gbps_per_thread": cpu.rates.stream_gbps_per_thread,
        "compute_iters_per_s": cpu.rates.compute_iters_per_s,
        "warnings": shortfalls,
        "huge_page_share": huge_page_share,
        "gpu": harness.as_ref().and_then(|hs| hs.first()).map(|h| h.info.clone()),
        "gpus": harness.as_ref().map(|hs| hs.len()).unwrap_or(0),
    });
    let x_key = opts
        .param
        .as_deref()
        .and_then(|p| p.split_once('='))
        .map(|(k, _)| k.trim().to_string())
        .unwrap_or_else(|| "point".into());
    files.extend(write_results(
        &dir,
        &model.name,
        host,
        &results,
        &x_key,
        None,
    )?);
    crate::output::print_stdout(&compare::to_text(&results))?;
    Ok(ReplayOutcome {
        dir: Some(dir),
        files,
        points: results,
    })
}

/// Writes replay.csv, replay.json and the plot of `results` into `dir`; returns the files.
/// A re-prediction's replay.json names the replay it was made from.
fn write_results(
    dir: &Path,
    scenario: &str,
    host: Value,
    results: &[PointResult],
    x_key: &str,
    repredicted_from: Option<&Path>,
) -> Result<Vec<PathBuf>> {
    let csv = dir.join("replay.csv");
    crate::output::write_atomic(&csv, compare::to_csv(results).as_bytes())?;
    let json_path = dir.join("replay.json");
    let mut doc = compare::to_json(scenario, host, results);
    if let (Some(src), Some(o)) = (repredicted_from, doc.as_object_mut()) {
        o.insert(
            REPREDICTED_FROM.into(),
            Value::from(src.display().to_string()),
        );
    }
    crate::output::write_atomic(&json_path, format!("{doc:#}\n").as_bytes())?;
    let mut files = vec![csv, json_path];
    let chart = chart::ReplayChart {
        scenario,
        x_key,
        points: results,
    };
    files.extend(crate::plot::render::render(&chart, dir, "replay")?);
    Ok(files)
}

/// Replays one point once on `harnesses` (one per GPU of the model, or none): returns
/// what was measured and the TIMELINE log.
pub fn replay_point(
    p: &PointPlan,
    cpu: &KernelHost,
    harnesses: &[gpu::GpuHarness],
    nvml_period_ms: u32,
) -> Result<(measure::Measured, String)> {
    let model = &p.loaded.model;
    let mut nvml_on = !harnesses.is_empty();
    for h in harnesses {
        if let Err(e) = h.nvml_start(nvml_period_ms) {
            eprintln!(
                "warning: no nvidia-smi view for this run: {}",
                error::chain(&e)
            );
            nvml_on = false;
        }
    }
    let nvml_t0 = Instant::now();
    let backends: Vec<&dyn GpuBackend> = harnesses.iter().map(|h| h as &dyn GpuBackend).collect();
    let exec = Executor::new(model, &p.stages, cpu, backends)?;
    let offset = nvml_t0.elapsed().as_secs_f64();
    let max_wall = (p.expected_wall_s() * 4.0 + 60.0).max(60.0);
    let rec = exec.run(max_wall);
    // Every GPU's samples, pooled: their mean is the mean over GPUs (equal periods).
    let mut samples: Option<Vec<(f64, f64, f64)>> = nvml_on.then(Vec::new);
    for h in harnesses {
        match (h.nvml_stop(), samples.as_mut()) {
            (Ok(s), Some(all)) => {
                all.extend(s.samples.into_iter().map(|(t, u, w)| (t - offset, u, w)))
            }
            (Err(_), _) => samples = None,
            (Ok(_), None) => {}
        }
    }
    let rec = rec?;
    let m = measure::measure(model, &rec, samples.as_deref());
    Ok((m, record::timeline_log(model, &rec)))
}
