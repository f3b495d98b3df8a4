//! Model -> replay plan: for each stage, what runs for real (a synthetic CPU kernel, a
//! PCIe copy, a GPU kernel, or nothing), and for each point (a [`PointPlan`]) the memory
//! the replay will take, so that `--dry-run` can show it and refuse what would not fit.

use serde_json::Value;

use crate::model::{HoldResource, Model, RateTarget};
use crate::scenario::Loaded;
use crate::scenario::replay_info::{G1_AFFINE_BYTES, KernelKind, StageReplayInfo, TransferInfo};

use super::kernels::{BufferSizes, CpuStageShape};

/// What one stage does on replay.
#[derive(Debug, Clone, PartialEq)]
pub struct StagePlan {
    /// Stage name.
    pub name: String,
    /// Mean standalone duration, seconds.
    pub mean_s: f64,
    /// A synthetic CPU kernel (stages that are neither copies nor GPU kernels).
    pub cpu: Option<CpuStageShape>,
    /// A real PCIe copy.
    pub copy: Option<TransferInfo>,
    /// A real GPU kernel.
    pub kernel: Option<KernelKind>,
}

/// An MSM that reads its points from host memory as it runs (a kernel stage whose
/// transfer is `read_by_kernel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MsmFromHost {
    /// log2 of the points.
    pub lg: u32,
    /// Points in pinned (true) or pageable host memory.
    pub pinned: bool,
}

impl MsmFromHost {
    /// How the dry run and the preparation log name it.
    pub fn label(&self) -> String {
        format!(
            "msm:{} reading its points from {} host memory",
            self.lg,
            if self.pinned { "pinned" } else { "pageable" }
        )
    }

    /// Host bytes of its points: a pageable copy is made beside the pinned ones.
    pub fn pageable_bytes(&self) -> f64 {
        if self.pinned {
            0.0
        } else {
            (1u64 << self.lg) as f64 * G1_AFFINE_BYTES as f64
        }
    }
}

impl StagePlan {
    /// The stage's MSM reading its points from host memory, if it is one.
    pub fn msm_from_host(&self) -> Option<MsmFromHost> {
        match (self.kernel, self.copy) {
            (Some(KernelKind::Msm { lg }), Some(t)) if t.read_by_kernel => Some(MsmFromHost {
                lg,
                pinned: t.pinned,
            }),
            _ => None,
        }
    }

    /// True when the stage needs a GPU to replay.
    pub fn needs_gpu(&self) -> bool {
        self.copy.is_some() || self.kernel.is_some()
    }

    /// One line for the dry-run listing.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.cpu {
            parts.push(format!(
                "cpu {} thread{}, {:.2} GB DRAM{}, {:.0}% latency-bound",
                c.threads,
                if c.threads == 1 { "" } else { "s" },
                // + 0.0 turns a stage's -0.0 bytes into 0.0 ("-0.00 GB" read as a debt).
                c.dram_bytes / 1e9 + 0.0,
                if c.write_frac > 0.0 {
                    format!(" ({:.0}% writes)", c.write_frac * 100.0)
                } else {
                    String::new()
                },
                c.latency_frac * 100.0
            ));
        }
        if let Some(m) = self.msm_from_host() {
            parts.push(format!("gpu kernel {}", m.label()));
        } else if let Some(t) = &self.copy {
            parts.push(format!(
                "{} {:.2} GB {}",
                t.dir.name(),
                t.bytes as f64 / 1e9,
                if t.pinned { "pinned" } else { "pageable" }
            ));
        }
        if let (Some(k), None) = (&self.kernel, self.msm_from_host()) {
            parts.push(format!("gpu kernel {}", k.label()));
        }
        if parts.is_empty() {
            parts.push("nothing (zero-time step: holds and markers only)".into());
        }
        format!(
            "{:<16} {:>9.4} s  {}",
            self.name,
            self.mean_s,
            parts.join(" + ")
        )
    }
}

/// Threads a CPU stage runs on: its pool threads (rounded up), else the cores it holds
/// for itself, else one.
fn cpu_threads(model: &Model, stage: usize) -> u32 {
    let s = &model.workload.stages[stage];
    let pool: f64 = s
        .demands
        .iter()
        .filter(|d| matches!(d.target, RateTarget::Pool(_)))
        .map(|d| d.amount)
        .sum();
    if pool > 0.0 {
        return pool.ceil() as u32;
    }
    let cores: u64 = s
        .holds
        .iter()
        .filter(|h| h.resource == HoldResource::Cores && h.until == stage)
        .map(|h| h.amount)
        .sum();
    cores.clamp(1, 1024) as u32
}

/// Builds the per-stage plan of a model.
pub fn stage_plans(model: &Model, info: &[StageReplayInfo]) -> Vec<StagePlan> {
    model
        .workload
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mean_s = s.duration.mean_s();
            let extra = info.get(i).copied().unwrap_or_default();
            let is_gpu = extra.transfer.is_some() || extra.kernel.is_some();
            let dram_gbps: f64 = s
                .demands
                .iter()
                .filter(|d| d.target == RateTarget::Dram)
                .map(|d| d.amount)
                .sum();
            let cpu = (!is_gpu && mean_s > 0.0).then(|| CpuStageShape {
                standalone_s: mean_s,
                threads: cpu_threads(model, i),
                dram_bytes: dram_gbps * 1e9 * mean_s,
                latency_frac: s.latency_bound_frac,
                write_frac: s.dram_write_frac.unwrap_or(0.0),
            });
            StagePlan {
                name: s.name.clone(),
                mean_s,
                cpu,
                copy: extra.transfer,
                kernel: extra.kernel,
            }
        })
        .collect()
}

/// Memory a replay point takes, bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryNeed {
    /// Host RAM: peak RAM permits (from the simulation) + kernel buffers + copy buffers.
    pub host_bytes: f64,
    /// GPU memory: peak VRAM permits (from the simulation) + kernel working sets.
    pub vram_bytes: f64,
}

/// Host bytes the GPU harness keeps for copies (a pinned and a pageable staging buffer
/// per direction, each up to 256 MiB).
pub const COPY_STAGING_BYTES: f64 = 4.0 * 256.0 * 1048576.0;

/// Memory needed by a point: the simulated peaks of RAM and VRAM permits plus what
/// the kernels themselves allocate.
pub fn memory_need(
    stages: &[StagePlan],
    ram_peak_bytes: f64,
    vram_peak_bytes: f64,
    buffers: BufferSizes,
) -> MemoryNeed {
    let any_cpu = stages.iter().any(|s| s.cpu.is_some());
    let any_copy = stages.iter().any(|s| s.copy.is_some());
    let mut host = ram_peak_bytes;
    if any_cpu {
        host += (buffers.chase_bytes + buffers.stream_bytes + buffers.fill_bytes) as f64;
    }
    if any_copy {
        host += COPY_STAGING_BYTES;
    }
    // Kernel working sets: each distinct kernel keeps its buffers resident on the device
    // (NTT: 2^lg scalars of 32 B; MSM: 2^lg affine points of 96 B + scalars), plus the
    // device side of the copy staging.
    let mut vram = vram_peak_bytes;
    let mut kinds: Vec<KernelKind> = stages.iter().filter_map(|s| s.kernel).collect();
    kinds.sort_by_key(|k| k.label());
    kinds.dedup();
    for k in kinds {
        vram += kernel_vram_bytes(k);
    }
    if any_copy {
        vram += 2.0 * 256.0 * 1048576.0;
    }
    let host_msm: f64 = stages
        .iter()
        .filter_map(|s| match s.kernel {
            Some(KernelKind::Msm { lg }) => Some((1u64 << lg) as f64 * (96.0 + 32.0)),
            _ => None,
        })
        .fold(0.0, f64::max);
    host += host_msm;
    // An MSM reading host points: sppark's second instance keeps its buckets and two
    // batches of points on the device (at most the points again); pageable points are
    // copied once on the host.
    let mut from_host: Vec<MsmFromHost> = stages.iter().filter_map(|s| s.msm_from_host()).collect();
    from_host.sort();
    from_host.dedup();
    for m in &from_host {
        vram += (1u64 << m.lg) as f64 * G1_AFFINE_BYTES as f64;
        host += m.pageable_bytes();
    }
    MemoryNeed {
        host_bytes: host,
        vram_bytes: vram,
    }
}

/// Device bytes one kernel kind keeps resident.
pub fn kernel_vram_bytes(k: KernelKind) -> f64 {
    match k {
        KernelKind::Ntt { lg } => (1u64 << lg) as f64 * 32.0,
        // points, scalars, and sppark's buckets and partial sums (about as much again)
        KernelKind::Msm { lg } => (1u64 << lg) as f64 * (96.0 + 32.0) * 2.0,
        KernelKind::Spin => 0.0,
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

/// Bytes in a GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load_str;
    use std::path::Path;

    const SCENARIO: &str = r#"
[hardware]
cpu_cores = 8
host_ram_gib = 16
dram = { capacity_gbps = 50 }
[hardware.gpu]
count = 1
vram_gib = 24
pcie_h2d_gbps = 25
pcie_d2h_gbps = 25
[hardware.pools]
msm = 4
[[workload.stages]]
name = "synth"
duration_s = 0.5
cores = 2
dram_gb = 4
latency_bound_frac = 0.3
holds = [{ resource = "host_ram", gib = 1, until = "gpu" }]
[[workload.stages]]
name = "up"
after = ["synth"]
transfer = { dir = "h2d", gb = 2.5, pinned = false }
[[workload.stages]]
name = "gpu"
after = ["up"]
duration_s = 0.1
gpu_kernel = true
gpu_kernel_kind = "ntt:24"
[[workload.stages]]
name = "tail"
after = ["synth"]
duration_s = 0.2
pool = { name = "msm", threads = 3.5 }
[[workload.stages]]
name = "spin"
after = ["gpu"]
duration_s = 0.01
gpu_kernel = true
[arrivals]
kind = "closed"
concurrency = 2
jobs = 4
"#;

    #[test]
    fn stages_become_cpu_kernels_copies_and_gpu_kernels() {
        let l = load_str(SCENARIO, Path::new("t.toml"), &[]).unwrap();
        let p = stage_plans(&l.model, &l.replay);
        let by = |n: &str| p.iter().find(|s| s.name == n).unwrap();
        let synth = by("synth").cpu.unwrap();
        assert_eq!(synth.threads, 2);
        assert!((synth.dram_bytes - 4e9).abs() < 1.0);
        assert_eq!(synth.latency_frac, 0.3);
        let up = by("up");
        assert!(up.cpu.is_none());
        let c = up.copy.unwrap();
        assert_eq!((c.bytes, c.pinned), (2_500_000_000, false));
        assert_eq!(by("gpu").kernel, Some(KernelKind::Ntt { lg: 24 }));
        assert_eq!(by("spin").kernel, Some(KernelKind::Spin));
        assert_eq!(by("tail").cpu.unwrap().threads, 4);
        assert!(by("gpu").describe().contains("ntt:24"));
    }

    #[test]
    fn memory_adds_permits_buffers_and_kernel_sets() {
        let l = load_str(SCENARIO, Path::new("t.toml"), &[]).unwrap();
        let p = stage_plans(&l.model, &l.replay);
        let m = memory_need(&p, 2e9, 1e9, BufferSizes::TEST);
        let t = BufferSizes::TEST;
        let bufs = (t.chase_bytes + t.stream_bytes + t.fill_bytes) as f64;
        assert_eq!(m.host_bytes, 2e9 + bufs + COPY_STAGING_BYTES);
        assert_eq!(
            m.vram_bytes,
            1e9 + (1u64 << 24) as f64 * 32.0 + 512.0 * 1048576.0
        );
    }

    #[test]
    fn a_gpu_kernel_kind_needs_a_gpu_kernel() {
        let bad = SCENARIO.replace(
            "duration_s = 0.2\n",
            "duration_s = 0.2\ngpu_kernel_kind = \"msm:20\"\n",
        );
        let e = load_str(&bad, Path::new("t.toml"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("gpu_kernel_kind"), "{e}");
        assert!(e.contains("gpu_kernel = true"), "{e}");
        let bad = SCENARIO.replace("ntt:24", "fft:24");
        let e = load_str(&bad, Path::new("t.toml"), &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("workload.stages[2].gpu_kernel_kind") && e.contains("allowed"),
            "{e}"
        );
    }
}
