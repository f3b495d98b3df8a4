//! `bwsim replay` from start to end: plan the points, refuse what does not fit or runs
//! too long, start the GPU harnesses and measure the CPU kernels, run the point loop
//! and write the comparison.

use std::path::PathBuf;

use super::compare::{self, PointResult};
use super::describe::describe_plan;
use super::error::{Context, Result};
use super::gpu::{self, GpuHarness};
use super::host::{self, CpuSide};
use super::limits::check_plan;
use super::options::ReplayOptions;
use super::plan::PointPlan;
use super::points::{inputs_fingerprint, plan_points};
use super::results::{RecordedInputs, check_results_folder, write_results};
use super::run_points::run_points;

/// What a replay wrote.
pub struct ReplayOutcome {
    /// Output folder (None for a dry run).
    pub dir: Option<PathBuf>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// The points with their runs.
    pub points: Vec<PointResult>,
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
    let calibration = first.loaded.summary.calibration.as_ref();
    if let Some(note) = calibration.and_then(|c| c.note()) {
        eprintln!("{note}");
    }
    let gpu_stages: Vec<&str> = first
        .stages
        .iter()
        .filter(|s| s.needs_gpu())
        .map(|s| s.name.as_str())
        .collect();
    let ram_limit = host::ram_limit(opts);
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
            host::this_host(opts, &gpu_stages, model.hardware.gpus.len())
        ))?;
        return Ok(ReplayOutcome {
            dir: None,
            files: Vec::new(),
            points: Vec::new(),
        });
    }

    let harness = start_gpus(opts, &gpu_stages, model.hardware.gpus.len())?;
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

    let cpu = CpuSide::measure(opts.buffers, &points);
    for h in harness.iter().flatten() {
        prepare_gpu_kernels(h, &points)?;
    }

    let dir = match &opts.out {
        Some(d) => {
            check_results_folder(d, None)?;
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.clone()
        }
        None => crate::output::reserve_unique_folder(&crate::output::default_folder(&model.name))?,
    };
    let (results, mut files) = run_points(
        &points,
        &dir,
        opts,
        &cpu.kernels,
        harness.as_deref().unwrap_or(&[]),
    )?;

    let host = cpu.to_json(harness.as_deref());
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
        &RecordedInputs {
            overrides: &opts.sets,
            fingerprint: inputs_fingerprint(&first.loaded),
            calibration,
            repredicted_from: None,
        },
    )?);
    crate::output::print_stdout(&compare::to_text(&results))?;
    Ok(ReplayOutcome {
        dir: Some(dir),
        files,
        points: results,
    })
}

/// One GPU harness per GPU of the model when the plan has GPU stages (None without).
fn start_gpus(
    opts: &ReplayOptions,
    gpu_stages: &[&str],
    gpus: usize,
) -> Result<Option<Vec<GpuHarness>>> {
    if gpu_stages.is_empty() {
        return Ok(None);
    }
    let path = gpu::locate(opts.gpu_harness.as_deref()).with_context(|| {
        format!(
            "{} has GPU stages ({}), which need a GPU to replay",
            opts.scenario.display(),
            gpu_stages.join(", ")
        )
    })?;
    let harnesses = gpu::start_harnesses(path, gpus).with_context(|| {
        format!(
            "{} has GPU stages ({}), which need {gpus} GPU(s) to replay",
            opts.scenario.display(),
            gpu_stages.join(", "),
        )
    })?;
    Ok(Some(harnesses))
}

/// Prepares on `h` every GPU kernel kind the points use and says how long each takes alone.
fn prepare_gpu_kernels(h: &GpuHarness, points: &[PointPlan]) -> Result<()> {
    let mut kinds: Vec<_> = points
        .iter()
        .flat_map(|p| p.stages.iter().filter_map(|s| s.kernel))
        .collect();
    kinds.sort_by_key(|k| k.label());
    kinds.dedup();
    let mut from_host: Vec<_> = points
        .iter()
        .flat_map(|p| p.stages.iter().filter_map(|s| s.msm_from_host()))
        .collect();
    from_host.sort();
    from_host.dedup();
    eprintln!(
        "replay: preparing GPU kernels ({} kinds)...",
        kinds.len() + from_host.len()
    );
    h.prepare(&kinds)?;
    h.prepare_from_host(&from_host)?;
    for k in &kinds {
        if let Some(s) = h.kernel_alone_s(*k) {
            eprintln!("replay: {} alone {:.2} ms", k.label(), s * 1e3);
        }
    }
    for m in &from_host {
        if let Some(s) = h.from_host_alone_s(*m) {
            eprintln!("replay: {} alone {:.2} ms", m.label(), s * 1e3);
        }
    }
    Ok(())
}
