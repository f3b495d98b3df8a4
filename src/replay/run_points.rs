//! The point loop: every point replayed `--replications` times, each run's TIMELINE log written
//! beside the results, and what each run measured (with a look at the host's memory just
//! before it) set beside the point's prediction.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::compare::{PointResult, Predicted};
use super::error::{self, Result};
use super::executor::{Executor, GpuBackend};
use super::gpu;
use super::kernels::KernelHost;
use super::options::ReplayOptions;
use super::plan::PointPlan;
use super::{measure, record};

/// Replays every point `opts.runs` times (at least once), writing each run's TIMELINE log
/// into `dir`; returns the points with what their runs measured, and the logs written.
pub fn run_points(
    points: &[PointPlan],
    dir: &Path,
    opts: &ReplayOptions,
    cpu: &KernelHost,
    harnesses: &[gpu::GpuHarness],
) -> Result<(Vec<PointResult>, Vec<PathBuf>)> {
    let mut files = Vec::new();
    let mut results = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let mut runs = Vec::new();
        for r in 0..opts.runs.max(1) {
            let now = cpu.probe_now();
            eprintln!(
                "replay: point {}/{} {} run {}/{} (expected {:.1} s; host now: chase {:.0} ns/step, one thread streams {:.1} GB/s)",
                i + 1,
                points.len(),
                p.sets.join(" "),
                r + 1,
                opts.runs.max(1),
                p.expected_wall_s(),
                now.chase_ns_per_step,
                now.stream_gbps_one_thread
            );
            let (mut m, log) = replay_point(p, cpu, harnesses, opts.nvml_period_ms)?;
            m.host_before = Some(now);
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
    Ok((results, files))
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
