//! What this host offers a replay: its RAM (the limit points are planned against),
//! whether it can run GPU stages at all (for a dry run, starting nothing), and the
//! rates of its CPU kernels, measured once before the points run, and each CPU stage's
//! sizing, corrected by running it alone once.

use serde_json::{Value, json};

use super::error::chain;
use super::gpu::{self, GpuHarness};
use super::kernels::{BufferSizes, CpuStageShape, KernelHost, SizingTrial, StageSizing};
use super::options::ReplayOptions;
use super::plan::PointPlan;

/// The host RAM to plan against: `--host-ram-gib`, else this host's MemTotal (no limit
/// where it cannot be read).
pub fn ram_limit(opts: &ReplayOptions) -> f64 {
    opts.host_ram_bytes.unwrap_or_else(|| {
        crate::calibrate::probe::sys::meminfo_bytes("MemTotal")
            .map(|b| b as f64)
            .unwrap_or(f64::INFINITY)
    })
}

/// The CPU side of a replay: the kernels, their measured rates on this host, and the
/// stages whose work they cannot reach.
pub struct CpuSide {
    /// The synthetic kernels, calibrated on this host.
    pub kernels: KernelHost,
    /// Threads the kernels may use (the host's parallelism).
    pub threads: u32,
    /// The share of the kernels' buffers on huge pages (None: unknown).
    pub huge_page_share: Option<f64>,
    /// A warning per stage whose work the kernels cannot reach on this host.
    pub shortfalls: Vec<String>,
    /// Each CPU stage's trial alone at the start, in the order the stages first appear.
    pub stage_sizing: Vec<StageSized>,
}

/// A CPU stage's trial alone at the start.
pub struct StageSized {
    /// Stage name.
    pub stage: String,
    /// Its stated standalone time (the plan's mean), seconds.
    pub stated_s: f64,
    /// What the trial found; None when the stage was too long to try.
    pub trial: Option<SizingTrial>,
}

/// Stages stated longer than this are not tried alone (a trial takes about three times the
/// stage's time); they keep the probe rates' sizing.
const MAX_TRIAL_S: f64 = 5.0;

/// Every CPU stage of every point, with its shape, in plan order.
fn cpu_stages(points: &[PointPlan]) -> impl Iterator<Item = (&str, &CpuStageShape)> {
    (points.iter())
        .flat_map(|p| p.stages.iter())
        .filter_map(|s| s.cpu.as_ref().map(|c| (s.name.as_str(), c)))
}

/// Runs every distinct CPU stage of `points` alone (by name, at its shape in the first
/// point that has it) and keeps the correction in `kernels` for the executor.
fn size_stages(kernels: &mut KernelHost, points: &[PointPlan]) -> Vec<StageSized> {
    let mut out: Vec<StageSized> = Vec::new();
    for (name, shape) in cpu_stages(points) {
        if out.iter().any(|o| o.stage == name) {
            continue;
        }
        if cpu_stages(points).any(|(n, c)| n == name && c != shape) {
            eprintln!(
                "replay: warning: stage {name} changes shape between points; its sizing is tried at the first point's shape and applied at every point"
            );
        }
        let trial = if shape.standalone_s > MAX_TRIAL_S {
            eprintln!(
                "replay: stage {name} alone: stated {:.3} s, longer than {MAX_TRIAL_S} s: not tried, sized from the probe rates",
                shape.standalone_s
            );
            None
        } else {
            let t = kernels.size_stage(shape);
            eprintln!(
                "replay: stage {name} alone: stated {:.3} s, as sized {:.3} s (mean of 2), after sizing {:.3} s",
                t.stated_s, t.as_sized_s, t.after_s
            );
            if t.sizing.memory_scale < 1.0 {
                eprintln!(
                    "replay: warning: stage {name}: alone, its memory parts took longer than its stated time even without arithmetic; they are scaled by {:.3}, so it moves fewer DRAM bytes than the prediction",
                    t.sizing.memory_scale
                );
            }
            kernels.set_sizing(name, t.sizing);
            Some(t)
        };
        out.push(StageSized {
            stage: name.to_string(),
            stated_s: shape.standalone_s,
            trial,
        });
    }
    out
}

impl CpuSide {
    /// Measures the kernels' rates with `buffers` and says on stderr what they are and
    /// which stages of `points` fall short.
    pub fn measure(buffers: BufferSizes, points: &[PointPlan]) -> CpuSide {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        eprintln!("replay: measuring this host's kernel rates...");
        let mut kernels = KernelHost::new(buffers, threads);
        let huge_page_share = kernels.huge_page_share();
        eprintln!(
            "replay: buffers {:.0}% on huge pages; chase {:.1} ns/step, stream {:.1} GB/s per thread alone ({:.1} with {} threads), compute {:.0} M iters/s",
            huge_page_share.unwrap_or(f64::NAN) * 100.0,
            kernels.rates.chase_ns_per_step,
            kernels.rates.stream_gbps(1),
            kernels.rates.stream_gbps(threads),
            threads,
            kernels.rates.compute_iters_per_s / 1e6
        );
        let shortfalls = kernels.shortfall_warnings(cpu_stages(points));
        for w in &shortfalls {
            eprintln!("replay: warning: {w}");
        }
        let stage_sizing = size_stages(&mut kernels, points);
        CpuSide {
            kernels,
            threads,
            huge_page_share,
            shortfalls,
            stage_sizing,
        }
    }

    /// replay.json's `host`: the CPU's rates and warnings, the GPUs the harnesses found.
    pub fn to_json(&self, harnesses: Option<&[GpuHarness]>) -> Value {
        let rates = &self.kernels.rates;
        let stage_sizing: Vec<Value> = (self.stage_sizing.iter())
            .map(|s| {
                let sizing = s.trial.map_or(StageSizing::IDENTITY, |t| t.sizing);
                json!({
                    "stage": s.stage,
                    "stated_s": s.stated_s,
                    "as_sized_s": s.trial.map(|t| t.as_sized_s),
                    "after_s": s.trial.map(|t| t.after_s),
                    "compute_shift_frac": sizing.compute_shift_frac,
                    "memory_scale": sizing.memory_scale,
                })
            })
            .collect();
        json!({
            "cpus": self.threads,
            "chase_ns_per_step": rates.chase_ns_per_step,
            "stream_gbps_per_thread": rates.stream_gbps_per_thread,
            "compute_iters_per_s": rates.compute_iters_per_s,
            "warnings": self.shortfalls,
            "huge_page_share": self.huge_page_share,
            "gpu": harnesses.and_then(|hs| hs.first()).map(|h| h.info.clone()),
            "gpus": harnesses.map(|hs| hs.len()).unwrap_or(0),
            "stage_sizing": stage_sizing,
        })
    }
}

/// Whether this host can replay the plan, for a dry run: a plan with GPU stages needs a GPU
/// harness (the `cuda` feature or `--gpu-harness`) and as many NVIDIA devices as the
/// scenario's GPUs (counted as `/dev/nvidiaN`, without starting anything).
pub fn this_host(opts: &ReplayOptions, gpu_stages: &[&str], gpus: usize) -> String {
    if gpu_stages.is_empty() {
        return "this host: can run it (no GPU stages)".into();
    }
    let stages = gpu_stages.join(", ");
    if let Err(why) = gpu::locate(opts.gpu_harness.as_deref()) {
        return format!(
            "this host: cannot run it: GPU stages ({stages}) need a GPU harness; {}",
            chain(&why)
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
