//! The scenario file as written: serde structs that reject unknown keys. Units and
//! cross-references are checked later, in `build`.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::units::Qty;

/// The whole (merged, substituted) scenario document.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<u64>,
    /// `"v2"` (default) or `"v1"`: see `rules.rs`.
    pub rules: Option<String>,
    /// Handled by `params` before deserialization.
    #[allow(dead_code)]
    pub params: Option<toml::Value>,
    /// Free-form provenance written by `bwsim calibrate` (measurements, fits): only its
    /// `summary` is read, to say which calibration a prediction rests on.
    pub calibration: Option<toml::Value>,
    pub hardware: HardwareSpec,
    pub workload: WorkloadSpec,
    pub arrivals: ArrivalsSpec,
    #[serde(default)]
    pub instrumentation: InstrumentationSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareSpec {
    pub cpu_cores: u32,
    pub host_ram_gib: Option<Qty>,
    pub host_ram: Option<Qty>,
    pub dram: Option<DramSpec>,
    pub gpu: Option<GpuSpec>,
    #[serde(default)]
    pub locks: BTreeMap<String, LockSpec>,
    #[serde(default)]
    pub pools: BTreeMap<String, f64>,
    pub cpu: Option<CpuSpec>,
}

/// `[hardware.cpu]`: how the host's threads are scheduled and how fast they compute as
/// more are active (applies to every pool).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuSpec {
    pub pool_sharing: Option<String>,
    pub physical_cores: Option<u32>,
    pub threads_per_core: Option<u32>,
    pub smt_yield: Option<f64>,
    pub per_core_throughput: Option<Vec<(f64, f64)>>,
    pub core_speed: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    pub capacity_gbps: Option<Qty>,
    pub channels: Option<u32>,
    pub mts: Option<f64>,
    pub bus_bytes: Option<f64>,
    pub efficiency: Option<f64>,
    pub latency_curve: Option<Vec<(f64, f64)>>,
    pub efficiency_loss_per_stream: Option<f64>,
    pub latency_load: Option<String>,
    pub lines_in_flight_per_thread: Option<f64>,
    pub dma_h2d: Option<DmaShareSpec>,
    pub dma_d2h: Option<DmaShareSpec>,
    pub latency_curve_write_fraction: Option<f64>,
    #[serde(default)]
    pub latency_mixes: Vec<LatencyMixSpec>,
    pub page_factor: Option<(f64, f64)>,
    pub latency_scale: Option<f64>,
    pub latency_rise_scale: Option<f64>,
}

/// One more read/write mix's latency curve (`hardware.dram.latency_mixes`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyMixSpec {
    pub write_fraction: f64,
    pub curve: Vec<(f64, f64)>,
}

/// How a DMA direction shares DRAM (`hardware.dram.dma_h2d` / `dma_d2h`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmaShareSpec {
    pub policy: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    pub count: Option<u32>,
    pub vram_gib: Option<Qty>,
    pub vram: Option<Qty>,
    pub pcie_h2d_gbps: Option<Qty>,
    pub pcie_d2h_gbps: Option<Qty>,
    pub pcie_duplex_gbps: Option<Qty>,
    pub pageable_h2d_gbps: Option<Qty>,
    pub pageable_d2h_gbps: Option<Qty>,
    pub h2d_dram_factor: Option<f64>,
    pub d2h_dram_factor: Option<f64>,
    pub pageable_copy_dram_factor: Option<f64>,
    pub pageable_staging: Option<PageableStagingSpec>,
    pub pinned_h2d_latency_frac: Option<f64>,
    pub pinned_d2h_latency_frac: Option<f64>,
    pub pageable_h2d_latency_frac: Option<f64>,
    pub pageable_d2h_latency_frac: Option<f64>,
    pub kernel_speed: Option<f64>,
    pub cpu_load: Option<CpuLoadSpec>,
}

/// `[hardware.gpu.cpu_load]`: kernel time next to busy CPU threads over its time
/// alone, per measured kernel (written by `bwsim calibrate`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuLoadSpec {
    /// Busy threads per CPU of each point.
    pub busy_per_cpu: Vec<f64>,
    /// `"msm:20" = [stretch per point]`.
    #[serde(default)]
    pub kernels: std::collections::BTreeMap<String, Vec<f64>>,
    /// `"msm:20" = CPUs its host side keeps busy while it runs`.
    #[serde(default)]
    pub threads: std::collections::BTreeMap<String, f64>,
    /// `[hardware.gpu.cpu_load.next_to_streaming]`: the kernels timed next to threads
    /// that stream memory.
    pub next_to_streaming: Option<NeighbourCurvesSpec>,
    /// `[hardware.gpu.cpu_load.next_to_chasing]`: next to threads that chase pointers.
    pub next_to_chasing: Option<NeighbourCurvesSpec>,
}

/// Kernel time next to busy threads of one kind over its time alone.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeighbourCurvesSpec {
    /// Busy threads per CPU of each point.
    pub busy_per_cpu: Vec<f64>,
    /// `"msm:20" = [stretch per point]`.
    #[serde(default)]
    pub kernels: std::collections::BTreeMap<String, Vec<f64>>,
}

/// Pageable copies as CPU staging pipelined with the DMA
/// (`hardware.gpu.pageable_staging.h2d` / `.d2h`); a direction left out keeps the
/// one-rate rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageableStagingSpec {
    pub h2d: Option<StagingDirSpec>,
    pub d2h: Option<StagingDirSpec>,
}

/// One direction's staging: setup per call, the memcpy thread's rate alone, its pace.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StagingDirSpec {
    pub setup_s: Option<Qty>,
    pub memcpy_gbps: Option<Qty>,
    pub memcpy_pace: Option<String>,
    pub memcpy_latency_exponent: Option<f64>,
    pub memcpy_beside_streams: Option<Vec<(f64, f64)>>,
}

/// A lock: `name = capacity` or `name = { capacity, per_gpu }`.
#[derive(Debug, Clone, PartialEq)]
pub struct LockSpec {
    pub capacity: i64,
    pub per_gpu: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LockTable {
    capacity: i64,
    #[serde(default)]
    per_gpu: bool,
}

impl<'de> Deserialize<'de> for LockSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LockSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a capacity (integer) or a table { capacity, per_gpu }")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LockSpec, E> {
                Ok(LockSpec {
                    capacity: v,
                    per_gpu: false,
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LockSpec, E> {
                Ok(LockSpec {
                    capacity: i64::try_from(v).unwrap_or(i64::MAX),
                    per_gpu: false,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LockSpec, A::Error> {
                let t = LockTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(LockSpec {
                    capacity: t.capacity,
                    per_gpu: t.per_gpu,
                })
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub job_name: Option<String>,
    pub partitions: Option<u32>,
    pub measured_on: Option<MeasuredOnSpec>,
    pub stages: Vec<StageSpec>,
}

/// `[workload.measured_on]`: the host the stage times were measured on; a key left out
/// is the running host's (`[hardware.cpu]`, `[hardware.gpu]`), so it does not scale.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasuredOnSpec {
    pub host: Option<String>,
    pub physical_cores: Option<u32>,
    pub threads_per_core: Option<u32>,
    pub smt_yield: Option<f64>,
    pub per_core_throughput: Option<Vec<(f64, f64)>>,
    pub core_speed: Option<f64>,
    pub gpu: Option<String>,
    pub gpu_kernel_speed: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    pub name: String,
    #[serde(default)]
    pub after: Vec<String>,
    pub per_partition: Option<bool>,
    pub duration_s: Option<Qty>,
    pub duration: Option<DistSpec>,
    pub cores: Option<u32>,
    #[serde(default)]
    pub holds: Vec<HoldSpec>,
    pub dram_gbps: Option<Qty>,
    pub dram_gb: Option<Qty>,
    pub latency_bound_frac: Option<f64>,
    pub compute_bound_frac: Option<f64>,
    pub dram_write_frac: Option<f64>,
    pub host_thread: Option<HostThreadSpec>,
    pub pool: Option<PoolUseSpec>,
    pub transfer: Option<TransferSpec>,
    pub gpu_kernel: Option<bool>,
    pub gpu_share: Option<f64>,
    /// Which real kernel `bwsim replay` runs for this GPU stage (`"ntt:25"`, `"msm:24"`,
    /// `"spin"`); the simulator ignores it.
    pub gpu_kernel_kind: Option<String>,
}

/// `duration = { dist = "...", ... }`; which fields are needed depends on `dist`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistSpec {
    pub dist: String,
    pub value_s: Option<Qty>,
    pub mean_s: Option<Qty>,
    pub std_s: Option<Qty>,
    pub min_s: Option<Qty>,
    pub max_s: Option<Qty>,
    pub scale_s: Option<Qty>,
    pub shape: Option<f64>,
    pub k: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldSpec {
    pub resource: String,
    pub amount: Option<Qty>,
    pub gib: Option<Qty>,
    pub until: Option<String>,
}

/// `host_thread = { pool = "cpu", frac = 0.3 }`: the host thread driving a stage.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostThreadSpec {
    pub pool: String,
    pub frac: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolUseSpec {
    pub name: String,
    pub threads: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferSpec {
    pub dir: String,
    pub gb: Option<Qty>,
    pub gib: Option<Qty>,
    pub pinned: Option<bool>,
    /// The stage's MSM reads these bytes (its points) from host memory itself as it runs,
    /// rather than a copy running beside it; `bwsim replay` only.
    pub read_by_kernel: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsSpec {
    pub kind: String,
    pub concurrency: Option<u32>,
    pub rate_per_s: Option<f64>,
    pub trace: Option<String>,
    pub jobs: Option<u64>,
    /// A count, or a share of `jobs` such as `"10%"`.
    pub warmup_jobs: Option<Qty>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentationSpec {
    #[serde(default)]
    pub markers: Vec<MarkerSpec>,
    #[serde(default)]
    pub spans: Vec<SpanSpec>,
    #[serde(default)]
    pub timers: Vec<TimerSpec>,
    pub timing_prefix: Option<String>,
    pub smi_sample_period_s: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerSpec {
    pub name: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerSpec {
    pub name: String,
    pub at: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpanSpec {
    pub name: String,
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub gpu_busy: bool,
}
