//! The calibration file's tables as calibrate writes them: `[hardware]` with its
//! `[hardware.dram]` and `[hardware.gpu]`, `[params]` and `[calibration]`.

use crate::calibrate::fit::Fitted;
use crate::calibrate::fit::cpu::CpuTable;
use crate::calibrate::fit::cpu_load::NeighbourCurves;
use crate::calibrate::fit::staging::StagingTable;
use crate::calibrate::measurements::Measurements;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// `[hardware]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HardwareTable {
    /// Cores of the host.
    pub cpu_cores: usize,
    /// `[hardware.cpu]`, when the compute probe ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuTable>,
    /// `[hardware.dram]`.
    pub dram: DramTable,
    /// `[hardware.gpu]`, when a GPU was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuTable>,
}

/// `[hardware.dram]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DramTable {
    /// DRAM bytes per second, GB/s, write-allocate counted.
    pub capacity_gbps: f64,
    /// (utilisation, ns) points of the loaded-latency curve.
    pub latency_curve: Vec<(f64, f64)>,
    /// "offered": the curve is read at offered load (written by calibrate; absent in
    /// older files, which then take the scenario's rule set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_load: Option<String>,
    /// Cache lines a streaming thread keeps in flight at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_in_flight_per_thread: Option<f64>,
    /// DRAM policy of pinned H2D DMAs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma_h2d: Option<PolicyTable>,
    /// DRAM policy of pinned D2H DMAs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma_d2h: Option<PolicyTable>,
}

/// `{ policy = "..." }`: how a DMA direction shares DRAM.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PolicyTable {
    /// "max-min", "proportional" or "priority".
    pub policy: String,
}

/// `[hardware.gpu]`: the GPU and its PCIe link. Keys left out take the scenario layer's
/// defaults when a scenario reads the file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GpuTable {
    /// GPUs (calibrate measures one).
    pub count: u32,
    /// Memory of each GPU, GiB.
    pub vram_gib: f64,
    /// Pinned host-to-device rate, GB/s.
    pub pcie_h2d_gbps: f64,
    /// Pinned device-to-host rate, GB/s.
    pub pcie_d2h_gbps: f64,
    /// Both directions at once, GB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_duplex_gbps: Option<f64>,
    /// Pageable host-to-device rate, GB/s.
    pub pageable_h2d_gbps: Option<f64>,
    /// Pageable device-to-host rate, GB/s.
    pub pageable_d2h_gbps: Option<f64>,
    /// DRAM bytes per byte of a pinned H2D DMA.
    pub h2d_dram_factor: Option<f64>,
    /// DRAM bytes per byte of a pinned D2H DMA.
    pub d2h_dram_factor: Option<f64>,
    /// Extra DRAM bytes per byte of a pageable copy's memcpy.
    pub pageable_copy_dram_factor: Option<f64>,
    /// Pageable copies as CPU staging pipelined with the DMA, per direction. Absent (a
    /// file written before staging was fitted): staging off, the one-rate rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageable_staging: Option<StagingTable>,
    /// Latency-bound share of a pinned H2D DMA (absent: the scenario's typical value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_h2d_latency_frac: Option<f64>,
    /// Latency-bound share of a pinned D2H DMA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_d2h_latency_frac: Option<f64>,
    /// Latency-bound share of an unstaged pageable H2D copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageable_h2d_latency_frac: Option<f64>,
    /// Latency-bound share of an unstaged pageable D2H copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageable_d2h_latency_frac: Option<f64>,
    /// GPU kernels next to busy CPU threads (absent: they keep their time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_load: Option<CpuLoadTable>,
}

/// `[hardware.gpu.cpu_load]`: each measured kernel's time over its time alone at each
/// count of busy threads per CPU.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuLoadTable {
    /// Busy threads per CPU of each point.
    pub busy_per_cpu: Vec<f64>,
    /// `"msm:20" = [stretch per point]`.
    pub kernels: BTreeMap<String, Vec<f64>>,
    /// `"msm:20" = CPUs its host side keeps busy while it runs` (absent: not measured).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub threads: BTreeMap<String, f64>,
    /// `[hardware.gpu.cpu_load.next_to_streaming]` (absent: not switched on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_to_streaming: Option<NeighbourCurves>,
    /// `[hardware.gpu.cpu_load.next_to_chasing]` (absent: not switched on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_to_chasing: Option<NeighbourCurves>,
}

/// One `[params]` entry: `name = { default = ..., doc = "..." }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Name, used as `$name` in a scenario.
    pub name: String,
    /// Value.
    pub default: f64,
    /// What it is, with its unit.
    pub doc: String,
}

/// `[params]`, one entry per [`Param`], written in this order (read back, by name).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(pub Vec<Param>);

/// The `[calibration]` table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// One-line summary of the host.
    pub summary: String,
    /// The fitted values with their bases and residuals.
    pub fitted: Fitted,
    /// The raw measurements.
    pub measurements: Measurements,
}

#[derive(Serialize, Deserialize)]
struct ParamValue {
    default: f64,
    #[serde(default)]
    doc: String,
}

impl Serialize for Params {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for p in &self.0 {
            map.serialize_entry(
                &p.name,
                &ParamValue {
                    default: p.default,
                    doc: p.doc.clone(),
                },
            )?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Params;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of name = { default = number, doc = \"text\" }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let mut out = Vec::new();
                while let Some((name, v)) = map.next_entry::<String, ParamValue>()? {
                    out.push(Param {
                        name,
                        default: v.default,
                        doc: v.doc,
                    });
                }
                Ok(Params(out))
            }
        }
        d.deserialize_map(V)
    }
}
