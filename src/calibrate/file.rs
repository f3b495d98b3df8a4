//! The calibration file, read and written through one type, [`CalibrationFile`]:
//! `[hardware]` (cores, `[hardware.dram]`, `[hardware.gpu]`) and `[params]` that a scenario
//! can `include`, plus a `[calibration]` table with provenance, the fits with their
//! residuals, and every raw measurement.
//!
//! The `[hardware]` tables here are the form calibrate writes and reads back to render;
//! what each key means, its default when left out and the values it allows are the
//! scenario layer's alone: a calibration becomes a host model only as the host of a
//! scenario that includes it (`validate::load_calib`, and every scenario).

use super::fit::Fitted;
use super::measurements::Measurements;
use super::probe::stream::Kernel;
use super::probe::sys::HostInfo;
use crate::calibrate::error::{CalibrateError, Result, fail, failed};
use crate::calibrate::fit::cpu::{CpuTable, cpu_table};
use crate::calibrate::fit::staging::{StagingTable, staging_notes, staging_table};
use crate::model::{CACHE_LINE_BYTES, CopyDir, LatencyCurve};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// A whole calibration file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CalibrationFile {
    /// What a scenario including the file takes as its hardware.
    pub hardware: HardwareTable,
    /// Named values a scenario can use as `$name` (kernel times, per-thread rates).
    #[serde(default)]
    pub params: Params,
    /// Provenance, fits and raw measurements (the scenario loader ignores it).
    pub calibration: Provenance,
}

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

impl CalibrationFile {
    /// The file for measurements `m` and their fit.
    pub fn new(m: &Measurements, fit: &Fitted) -> Self {
        let host = m.host.clone().unwrap_or_else(HostInfo::gather);
        let gpu_name = m.gpu.as_ref().map_or("none", |g| g.name.as_str());
        let summary = format!(
            "{} ({} CPUs, {}), GPU {}, THP {}{}, measured {} by bwsim {} ({} mode)",
            host.hostname,
            host.cores,
            host.cpu_model,
            gpu_name,
            host.thp_mode(),
            if m.hugepages_advised {
                ", buffers advised MADV_HUGEPAGE"
            } else {
                ""
            },
            m.date,
            m.bwsim_version,
            m.mode
        );
        let gpu = match (&m.gpu, &fit.pcie) {
            (Some(g), Some(p)) => Some(GpuTable {
                // GPUs the multi-GPU probes drove (1 when they did not run).
                count: m.multi_pcie.iter().map(|p| p.gpus).max().unwrap_or(1) as u32,
                vram_gib: (g.vram_bytes as f64 / (1u64 << 30) as f64 * 10.0).floor() / 10.0,
                pcie_h2d_gbps: p.h2d_gbps,
                pcie_d2h_gbps: p.d2h_gbps,
                pcie_duplex_gbps: p.duplex_gbps,
                pageable_h2d_gbps: Some(p.pageable_h2d_gbps),
                pageable_d2h_gbps: Some(p.pageable_d2h_gbps),
                h2d_dram_factor: Some(p.h2d_dram_factor),
                d2h_dram_factor: Some(p.d2h_dram_factor),
                pageable_copy_dram_factor: Some(p.pageable_copy_dram_factor),
                pageable_staging: staging_table(&fit.contention),
                pinned_h2d_latency_frac: Some(p.pinned_h2d_latency_frac),
                pinned_d2h_latency_frac: Some(p.pinned_d2h_latency_frac),
                pageable_h2d_latency_frac: Some(p.pageable_h2d_latency_frac),
                pageable_d2h_latency_frac: Some(p.pageable_d2h_latency_frac),
                cpu_load: fit.cpu_load.as_ref().map(|c| CpuLoadTable {
                    busy_per_cpu: c.busy_per_cpu.clone(),
                    kernels: c.kernels.clone(),
                }),
            }),
            _ => None,
        };
        CalibrationFile {
            hardware: HardwareTable {
                cpu_cores: host.cores,
                cpu: cpu_table(m, &fit.contention),
                dram: DramTable {
                    capacity_gbps: fit.capacity_gbps,
                    latency_curve: fit.latency_curve.clone(),
                    latency_load: Some("offered".into()),
                    lines_in_flight_per_thread: lines_in_flight(m, fit).map(|(l, _)| l),
                    dma_h2d: dma_policy(fit, CopyDir::H2d),
                    dma_d2h: dma_policy(fit, CopyDir::D2h),
                },
                gpu,
            },
            params: Params(params(m, fit)),
            calibration: Provenance {
                summary,
                fitted: fit.clone(),
                measurements: m.clone(),
            },
        }
    }

    /// Reads a file's text into its tables: the shape of every table, and a DRAM capacity
    /// that is a finite number > 0 (named here, before any host is built from the file).
    /// The values of `[hardware.gpu]` are checked where they become the host, by the
    /// scenario layer (see `validate::load_calib`).
    pub fn parse(text: &str) -> Result<Self> {
        let de = toml::Deserializer::parse(text)
            .map_err(|e| failed!("calibration file is not valid TOML: {e}"))?;
        let file: CalibrationFile = serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            if at == "." {
                failed!("{}", e.inner())
            } else {
                failed!("[{at}]: {}", e.inner())
            }
        })?;
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<()> {
        let capacity = self.hardware.dram.capacity_gbps;
        if !(capacity.is_finite() && capacity > 0.0) {
            fail!(
                "[hardware.dram] capacity_gbps = {capacity}: must be a finite number of GB/s \
                 greater than 0"
            );
        }
        Ok(())
    }

    /// The file's text: commented `[hardware]` and `[params]` tables (numbers to 6
    /// significant digits), then `[calibration]`. Refuses a non-finite number.
    pub fn render(&self) -> Result<String> {
        let mut o = String::new();
        let prov = &self.calibration;
        let (fit, m) = (&prov.fitted, &prov.measurements);
        let hw = &self.hardware;
        writeln!(o, "# bwsim calibration: {}", one_line(&prov.summary))?;
        writeln!(
            o,
            "# Include it from a scenario: include = [\"calibration/<this file>\"]. Written by\n\
             # `bwsim calibrate`; [calibration] at the end holds provenance and raw data.\n"
        )?;
        writeln!(o, "[hardware]")?;
        writeln!(o, "cpu_cores = {}", hw.cpu_cores)?;
        writeln!(o)?;
        if let Some(c) = &hw.cpu {
            writeln!(o, "[hardware.cpu]")?;
            writeln!(
                o,
                "# Compute-bound hash loop on 1..N threads, one per core first. Per-core throughput\n\
                 # vs active cores, relative to one alone, fitted non-increasing (all-core frequency\n\
                 # cannot rise with more active cores). Stages opt in with compute_bound_frac."
            )?;
            writeln!(o, "physical_cores = {}", c.physical_cores)?;
            writeln!(o, "threads_per_core = {}", c.threads_per_core)?;
            writeln!(o, "smt_yield = {}", f(c.smt_yield))?;
            let pts: Vec<String> = (c.per_core_throughput.iter())
                .map(|&(n, r)| format!("[{}, {}]", n, f(r)))
                .collect();
            writeln!(o, "per_core_throughput = [{}]", pts.join(", "))?;
            writeln!(o)?;
        }
        writeln!(o, "[hardware.dram]")?;
        writeln!(
            o,
            "# DRAM bytes per second, write-allocate counted. {}",
            fit.capacity_basis
        )?;
        writeln!(o, "capacity_gbps = {}", f(hw.dram.capacity_gbps))?;
        writeln!(
            o,
            "# Loaded latency vs utilisation (achieved / capacity), pointer chase behind {} \
             streams",
            fit.latency_curve_mix
        )?;
        let pts: Vec<String> = hw
            .dram
            .latency_curve
            .iter()
            .map(|&(u, ns)| format!("[{}, {}]", f(u), f(ns)))
            .collect();
        writeln!(o, "latency_curve = [{}]", pts.join(", "))?;
        if let Some(load) = &hw.dram.latency_load {
            writeln!(
                o,
                "# Read the curve at offered load (demand / capacity): latency keeps rising past\n\
                 # saturation while queues build."
            )?;
            writeln!(o, "latency_load = \"{}\"", esc(load))?;
        }
        if let Some(lines) = hw.dram.lines_in_flight_per_thread {
            if let Some((_, note)) = lines_in_flight(m, fit) {
                writeln!(o, "# {}", one_line(&note))?;
            }
            writeln!(o, "lines_in_flight_per_thread = {}", f(lines))?;
        }
        for (dir, p) in [("h2d", &hw.dram.dma_h2d), ("d2h", &hw.dram.dma_d2h)] {
            if let Some(p) = p {
                let basis = fit.contention.dma.get(dir).map_or(
                    "not measured here; the direction's usual policy".to_string(),
                    |_| "fitted from the DMA-next-to-streams runs".to_string(),
                );
                writeln!(o, "# pinned {dir} DMA's DRAM share: {basis}")?;
                writeln!(o, "dma_{dir} = {{ policy = \"{}\" }}", esc(&p.policy))?;
            }
        }
        writeln!(o)?;
        if let Some(g) = &hw.gpu {
            writeln!(o, "[hardware.gpu]")?;
            if let Some(info) = &m.gpu {
                writeln!(
                    o,
                    "# {} (driver {})",
                    one_line(&info.name),
                    one_line(&info.driver_version)
                )?;
            }
            writeln!(o, "count = {}", g.count)?;
            writeln!(o, "vram_gib = {}", f(g.vram_gib))?;
            writeln!(o, "pcie_h2d_gbps = {}", f(g.pcie_h2d_gbps))?;
            writeln!(o, "pcie_d2h_gbps = {}", f(g.pcie_d2h_gbps))?;
            if let Some(d) = g.pcie_duplex_gbps {
                writeln!(o, "pcie_duplex_gbps = {}", f(d))?;
            }
            let opt = |o: &mut String, key: &str, v: Option<f64>| -> std::fmt::Result {
                match v {
                    Some(v) => writeln!(o, "{key} = {}", f(v)),
                    None => Ok(()),
                }
            };
            opt(&mut o, "pageable_h2d_gbps", g.pageable_h2d_gbps)?;
            opt(&mut o, "pageable_d2h_gbps", g.pageable_d2h_gbps)?;
            for n in fit.pcie.iter().flat_map(|p| &p.notes) {
                writeln!(o, "# {}", one_line(n))?;
            }
            opt(&mut o, "h2d_dram_factor", g.h2d_dram_factor)?;
            opt(&mut o, "d2h_dram_factor", g.d2h_dram_factor)?;
            opt(
                &mut o,
                "pageable_copy_dram_factor",
                g.pageable_copy_dram_factor,
            )?;
            writeln!(
                o,
                "# Share of each copy's time that waits on DRAM latency (a transfer stage takes it\n\
                 # unless it sets latency_bound_frac), fitted from the copies next to streams."
            )?;
            opt(&mut o, "pinned_h2d_latency_frac", g.pinned_h2d_latency_frac)?;
            opt(&mut o, "pinned_d2h_latency_frac", g.pinned_d2h_latency_frac)?;
            opt(
                &mut o,
                "pageable_h2d_latency_frac",
                g.pageable_h2d_latency_frac,
            )?;
            opt(
                &mut o,
                "pageable_d2h_latency_frac",
                g.pageable_d2h_latency_frac,
            )?;
            writeln!(o)?;
            for (dir, d) in (g.pageable_staging.iter())
                .flat_map(|t| [(CopyDir::H2d, &t.h2d), (CopyDir::D2h, &t.d2h)])
            {
                let Some(d) = d else { continue };
                writeln!(o, "[hardware.gpu.pageable_staging.{dir}]")?;
                writeln!(
                    o,
                    "# Pageable {dir} copies as the driver's one-thread memcpy through a pinned bounce\n\
                     # buffer, pipelined with the DMA: setup per call + bytes at min(memcpy, DMA)."
                )?;
                for n in staging_notes(&fit.contention, fit.pcie.as_ref(), dir) {
                    writeln!(o, "# {}", one_line(&n))?;
                }
                writeln!(o, "setup_s = {}", f(d.setup_s))?;
                writeln!(o, "memcpy_gbps = {}", f(d.memcpy_gbps))?;
                writeln!(o, "memcpy_pace = \"{}\"", esc(&d.memcpy_pace))?;
                writeln!(o)?;
            }
            if let Some(c) = &g.cpu_load {
                writeln!(o, "[hardware.gpu.cpu_load]")?;
                writeln!(
                    o,
                    "# Each kernel's time next to busy CPU threads (spinning, unpinned) over its time\n\
                     # alone: its host side (launches, waits, sppark's MSM bucket sums on one thread\n\
                     # per CPU) shares the CPUs. A GPU kernel stage takes its kind's curve (the nearest\n\
                     # measured size) at the pools' runnable threads per CPU."
                )?;
                for n in fit.cpu_load.iter().flat_map(|c| &c.notes) {
                    writeln!(o, "# {}", one_line(n))?;
                }
                let list = |v: &[f64]| v.iter().map(|&x| f(x)).collect::<Vec<_>>().join(", ");
                writeln!(o, "busy_per_cpu = [{}]", list(&c.busy_per_cpu))?;
                let kernels: Vec<String> = (c.kernels.iter())
                    .map(|(k, v)| format!("\"{}\" = [{}]", esc(k), list(v)))
                    .collect();
                writeln!(o, "kernels = {{ {} }}", kernels.join(", "))?;
                writeln!(o)?;
            }
        }
        writeln!(o, "[params]")?;
        for p in &self.params.0 {
            writeln!(
                o,
                "{} = {{ default = {}, doc = \"{}\" }}",
                p.name,
                f(p.default),
                esc(&p.doc)
            )?;
        }
        writeln!(o)?;
        #[derive(Serialize)]
        struct Wrapper<'a> {
            calibration: &'a Provenance,
        }
        o.push_str(&toml::to_string(&Wrapper { calibration: prov })?);
        check_finite(&o)?;
        Ok(o)
    }

    /// Renders the file and writes it atomically (temp file + rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = self.render()?;
        crate::output::write_atomic(path, text.as_bytes())?;
        Ok(())
    }
}

/// Cache lines a streaming thread keeps in flight (Little's law: lines = rate x latency /
/// 64 B) and how it was found: per stream kernel, the most any thread count implies at
/// its own load's latency (a thread's prefetchers run further ahead as latency rises),
/// and of the kernels the fewest, since the engine gives a stage at least what its own
/// standalone draw implies. None without bandwidth measurements.
fn lines_in_flight(m: &Measurements, fit: &Fitted) -> Option<(f64, String)> {
    let curve = LatencyCurve::offered(fit.latency_curve.clone()).ok()?;
    let l0 = curve.latency_ns(0.0);
    let mut per_kernel = Vec::new();
    for k in Kernel::ALL {
        let Some(one) = m.bw_at(k, 1) else { continue };
        let mut lines = one * l0 / CACHE_LINE_BYTES;
        for p in m
            .bandwidth
            .iter()
            .filter(|p| p.kernel == k && p.threads > 0)
        {
            let rate = m.bw_at(k, p.threads).unwrap_or(p.dram_gbps);
            let at = curve.latency_ns(rate / fit.capacity_gbps);
            lines = lines.max(rate * at / (CACHE_LINE_BYTES * p.threads as f64));
        }
        per_kernel.push((k.name(), lines));
    }
    let &(name, fewest) = per_kernel.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let all: Vec<String> = (per_kernel.iter())
        .map(|(k, l)| format!("{k} {l:.1}"))
        .collect();
    Some((
        fewest,
        format!(
            "lines in flight per streaming thread (rate x loaded latency / 64 B, most over thread counts): {}; the fewest ({name}) is the floor",
            all.join(", ")
        ),
    ))
}

/// The DRAM policy calibrate fitted for pinned DMAs of `dir`, else the direction's usual
/// one (H2D proportional, D2H priority, as measured on the H200 host).
fn dma_policy(fit: &Fitted, dir: CopyDir) -> Option<PolicyTable> {
    let usual = match dir {
        CopyDir::H2d => "proportional",
        CopyDir::D2h => "priority",
    };
    let policy = (fit.contention.dma.get(dir.name()))
        .filter(|f| crate::model::DramPolicy::parse(&f.policy).is_some())
        .map_or(usual.to_string(), |f| f.policy.clone());
    Some(PolicyTable { policy })
}

/// The `[params]` of measurements `m` and their fit. Sizes that were measured are given
/// as measured; others from the model.
fn params(m: &Measurements, fit: &Fitted) -> Vec<Param> {
    let mut out = Vec::new();
    let mut param = |name: &str, v: f64, doc: &str| {
        out.push(Param {
            name: name.into(),
            default: v,
            doc: doc.into(),
        });
    };
    param(
        "dram_idle_latency_ns",
        fit.idle_latency_ns,
        "unloaded DRAM latency (pointer chase), ns",
    );
    if let Some(r) = m.bw_at(Kernel::Copy, 1) {
        param(
            "cpu_copy_thread_gbps",
            r,
            "DRAM GB/s one thread draws running a copy (write-allocate counted)",
        );
    }
    if let Some(r) = m.bw_at(Kernel::Triad, 1) {
        param(
            "cpu_triad_thread_gbps",
            r,
            "DRAM GB/s one thread draws running a triad (write-allocate counted)",
        );
    }
    if let Some(p) = &fit.pcie {
        param(
            "pageable_h2d_latency_frac",
            p.pageable_h2d_latency_frac,
            "fraction of a pageable H2D copy's time that is DRAM-latency bound (its CPU memcpy); \
             use as the transfer stage's latency_bound_frac",
        );
        param(
            "pageable_d2h_latency_frac",
            p.pageable_d2h_latency_frac,
            "fraction of a pageable D2H copy's time that is DRAM-latency bound",
        );
        param(
            "pinned_h2d_latency_frac",
            p.pinned_h2d_latency_frac,
            "fraction of a pinned H2D DMA's time that is DRAM-latency bound (its reads of host \
             memory); use as the transfer stage's latency_bound_frac",
        );
        param(
            "pinned_d2h_latency_frac",
            p.pinned_d2h_latency_frac,
            "fraction of a pinned D2H DMA's time that is DRAM-latency bound",
        );
    }
    // Sizes that were measured are written as measured; others from the model.
    let ntt_at = |variant: &str, lg: u32| -> Option<(f64, &'static str)> {
        if let Some(p) = m.ntt.iter().find(|p| p.variant == variant && p.lg == lg) {
            return Some((p.ms / 1e3, "measured"));
        }
        fit.ntt.get(variant).map(|k| (k.seconds(lg), "model"))
    };
    let msm_at = |lg: u32| -> Option<(f64, &'static str)> {
        if let Some(p) = m.msm.iter().find(|p| p.lg == lg) {
            return Some((p.ms / 1e3, "measured"));
        }
        fit.msm
            .as_ref()
            .map(|k| (k.seconds(lg), "model, extrapolated"))
    };
    if let Some(nr) = fit.ntt.get("fwd_nr") {
        param(
            "ntt_a_ns",
            nr.a_ns,
            "NTT (BLS12-381 Fr, forward NR, device-resident) time = ntt_a_ns * n*log2(n) + ntt_b_s",
        );
        param("ntt_b_s", nr.b_s, "NTT fixed cost, s");
    }
    if let Some((t, how)) = ntt_at("fwd_nr", 27) {
        param(
            "ntt_2p27_s",
            t,
            &format!("forward NR NTT at 2^27, s ({how})"),
        );
    }
    for (variant, kf) in &fit.ntt {
        param(
            &format!("ntt_{variant}_a_ns"),
            kf.a_ns,
            &format!(
                "{variant} NTT: t = a * n*log2(n) + b, ns (b = {:.3e} s; rms rel residual {:.1}%)",
                kf.b_s,
                kf.rms_rel_residual * 100.0
            ),
        );
        if let Some((t, how)) = ntt_at(variant, 27) {
            param(
                &format!("ntt_{variant}_2p27_s"),
                t,
                &format!("{variant} NTT at 2^27, s ({how})"),
            );
        }
    }
    if let (Some((i, _)), Some((c, _)), Some((n, _))) = (
        ntt_at("inv_nr", 27),
        ntt_at("fwd_coset_rn", 27),
        ntt_at("inv_coset_nn", 27),
    ) {
        param(
            "h_ntt_2p27_s",
            3.0 * (i + c) + n,
            "NTT kernel time of supraseal's H phase at 2^27: 3 x (inverse NR + forward coset \
             RN) + inverse coset NN, s (pointwise kernels and uploads not included)",
        );
    }
    if let Some(kf) = &fit.msm {
        param(
            "msm_a_ns",
            kf.a_ns,
            &format!(
                "G1 MSM (points on device, scalars pinned host) time = msm_a_ns * {} + msm_b_s \
                 (rms rel residual {:.1}%)",
                kf.model,
                kf.rms_rel_residual * 100.0
            ),
        );
        param("msm_b_s", kf.b_s, "MSM fixed cost, s");
    }
    for lg in [26, 27] {
        if let Some((t, how)) = msm_at(lg) {
            param(
                &format!("msm_2p{lg}_s"),
                t,
                &format!("G1 MSM of 2^{lg} points, s ({how})"),
            );
        }
    }
    out
}

fn f(x: f64) -> String {
    // Up to 6 significant digits, always a float literal.
    if x == 0.0 {
        return "0.0".into();
    }
    let digits = (6 - x.abs().log10().floor() as i32 - 1).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Refuses a rendered file that is not valid TOML or holds a non-finite number (an
/// `inf` or `nan` would be read back as a capacity or a rate): the caller gets an error
/// naming the key instead of a file that breaks every scenario including it.
pub fn check_finite(text: &str) -> Result<()> {
    let t: toml::Table = toml::from_str(text)
        .map_err(|e| failed!("refusing to write a calibration file that is not valid TOML: {e}"))?;
    fn walk(v: &toml::Value, path: &str) -> Result<(), String> {
        match v {
            toml::Value::Float(x) if !x.is_finite() => Err(format!(
                "refusing to write a calibration file with {path} = {x}: every number must \
                 be finite (the measurements behind it are degenerate)"
            )),
            toml::Value::Table(t) => t
                .iter()
                .try_for_each(|(k, v)| walk(v, &format!("{path}.{k}"))),
            toml::Value::Array(a) => a
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| walk(v, &format!("{path}[{i}]"))),
            _ => Ok(()),
        }
    }
    t.iter()
        .try_for_each(|(k, v)| walk(v, k))
        .map_err(CalibrateError::Failed)
}

/// Text measured on the host (a driver version read once per GPU, a CPU model) as one
/// comment line: line breaks would end the comment and break the file.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::validate::{Calib, load_calib};
    use crate::model::PcieLink;

    fn bundled() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/calibration/h200-host.toml"
        ))
        .unwrap()
    }

    /// `text` read as validate and every scenario including it read a calibration.
    fn read_as_host(text: &str) -> Result<Calib> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cal.toml");
        std::fs::write(&path, text).unwrap();
        load_calib(&path)
    }

    #[test]
    fn non_finite_numbers_are_refused() {
        assert!(check_finite("[a]\nx = 1.0\n").is_ok());
        let e = check_finite("[hardware.dram]\ncapacity_gbps = inf\n").unwrap_err();
        assert!(e.to_string().contains("hardware.dram.capacity_gbps"), "{e}");
        assert!(check_finite("x = inf.0\n").is_err());
    }

    #[test]
    fn number_format_is_a_toml_float() {
        assert_eq!(f(1.0), "1.00000");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(123456.0), "123456.0");
        assert_eq!(f(0.000123456789), "0.000123457");
        let v: toml::Table = toml::from_str(&format!("x = {}", f(1234567.0))).unwrap();
        assert!(v["x"].is_float());
    }

    #[test]
    fn a_written_file_reads_back_as_written() {
        let text = bundled();
        let file = CalibrationFile::parse(&text).unwrap();
        // Rendering what was read gives every line back. TOML tables are unordered, so
        // [params] reads back sorted by name; everything else in the order written.
        let again = file.render().unwrap();
        let sorted = |s: &str| {
            let mut v: Vec<String> = s.lines().map(str::to_string).collect();
            v.sort();
            v
        };
        assert_eq!(sorted(&again), sorted(&text));
        let params_at = |s: &str| s.find("[params]").unwrap();
        assert_eq!(again[..params_at(&again)], text[..params_at(&text)]);
        assert_eq!(CalibrationFile::parse(&again).unwrap(), file);
        let g = file.hardware.gpu.as_ref().unwrap();
        // Written with every mechanism calibrate measured: staging, latency shares, the
        // DRAM rules; the host a scenario reads from it has them.
        let host = read_as_host(&text).unwrap();
        let link = host.link().unwrap();
        assert_eq!(link.pageable_copy_dram_factor, 2.0);
        assert!(link.pageable_h2d_staging.is_some());
        assert!(g.pinned_h2d_latency_frac.is_some_and(|f| f > 0.0));
        assert_eq!(
            link.latency_frac.pinned_h2d,
            g.pinned_h2d_latency_frac.unwrap()
        );
        let d = &file.hardware.dram;
        assert_eq!(d.latency_load.as_deref(), Some("offered"));
        assert!(d.lines_in_flight_per_thread.is_some_and(|l| l > 0.0));
        assert_eq!(d.dma_h2d.as_ref().unwrap().policy, "proportional");
        assert!(
            file.params
                .0
                .iter()
                .any(|p| p.name == "dram_idle_latency_ns")
        );
    }

    #[test]
    fn staging_tables_round_trip_and_bad_ones_name_the_key() {
        use crate::calibrate::fit::staging::StagingDirTable;
        let text = bundled();
        let mut file = CalibrationFile::parse(&text).unwrap();
        let g = file.hardware.gpu.as_mut().unwrap();
        g.pageable_staging = Some(StagingTable {
            h2d: Some(StagingDirTable {
                setup_s: 0.002,
                memcpy_gbps: 7.5,
                memcpy_pace: "latency-bound".into(),
            }),
            d2h: None,
        });
        let again = file.render().unwrap();
        assert!(
            again.contains("[hardware.gpu.pageable_staging.h2d]\n"),
            "{again}"
        );
        let back = CalibrationFile::parse(&again).unwrap();
        assert_eq!(back, file);
        let l = read_as_host(&again).unwrap().link().cloned().unwrap();
        let st = l.pageable_h2d_staging.unwrap();
        assert_eq!((st.setup_s, st.memcpy_gbps), (0.002, 7.5));
        assert_eq!(l.pageable_d2h_staging, None);
        let bad = again.replace("memcpy_pace = \"latency-bound\"", "memcpy_pace = \"fast\"");
        let e = read_as_host(&bad).unwrap_err().to_string();
        assert!(
            e.contains("hardware.gpu.pageable_staging.h2d.memcpy_pace") && e.contains("posted"),
            "{e}"
        );
    }

    #[test]
    fn cpu_load_tables_round_trip_and_bad_ones_name_the_key() {
        let text = bundled();
        let mut file = CalibrationFile::parse(&text).unwrap();
        let table = CpuLoadTable {
            busy_per_cpu: vec![0.0, 0.5, 1.0],
            kernels: BTreeMap::from([
                ("msm:20".to_string(), vec![1.0, 1.3, 2.1]),
                ("ntt:22".to_string(), vec![1.0, 1.0, 1.1]),
            ]),
        };
        file.hardware.gpu.as_mut().unwrap().cpu_load = Some(table.clone());
        let again = file.render().unwrap();
        assert!(again.contains("[hardware.gpu.cpu_load]\n"), "{again}");
        assert!(
            again.contains("\"msm:20\" = [1.00000, 1.30000, 2.10000]"),
            "{again}"
        );
        let read = CalibrationFile::parse(&again).unwrap();
        assert_eq!(read.hardware.gpu.unwrap().cpu_load, Some(table));
        let bad = again.replace("[1.00000, 1.30000, 2.10000]", "[1.0, 1.3]");
        let e = read_as_host(&bad).unwrap_err().to_string();
        assert!(
            e.contains("hardware.gpu.cpu_load.kernels") && e.contains("msm:20"),
            "{e}"
        );
    }

    /// Optional `[hardware.gpu]` keys left out of a calibration take the scenario
    /// layer's defaults: the pageable rates a share of the pinned ones, the DMA factors 1,
    /// the pageable memcpy's 2, the rule set's typical latency shares.
    #[test]
    fn left_out_gpu_keys_take_the_scenario_defaults() {
        let text = bundled();
        let (head, rest) = text.split_once("[hardware.gpu]\n").unwrap();
        let end = rest.find("\n[").unwrap();
        let optional = [
            "pageable_h2d_gbps",
            "pageable_d2h_gbps",
            "h2d_dram_factor",
            "d2h_dram_factor",
            "pageable_copy_dram_factor",
            "pinned_h2d_latency_frac",
            "pageable_h2d_latency_frac",
            "pageable_d2h_latency_frac",
        ];
        let kept: Vec<&str> = (rest[..end].lines())
            .filter(|l| !optional.iter().any(|k| l.starts_with(&format!("{k} = "))))
            .collect();
        let trimmed = format!("{head}[hardware.gpu]\n{}{}", kept.join("\n"), &rest[end..]);
        let g = CalibrationFile::parse(&trimmed)
            .unwrap()
            .hardware
            .gpu
            .unwrap();
        assert_eq!((g.pageable_h2d_gbps, g.h2d_dram_factor), (None, None));
        let l = read_as_host(&trimmed).unwrap().link().cloned().unwrap();
        let share = PcieLink::DEFAULT_PAGEABLE_SHARE;
        assert_eq!(l.pageable_h2d_gbps, g.pcie_h2d_gbps * share);
        assert_eq!(l.pageable_d2h_gbps, g.pcie_d2h_gbps * share);
        assert_eq!((l.h2d_dram_factor, l.d2h_dram_factor), (1.0, 1.0));
        assert_eq!(l.pageable_copy_dram_factor, 2.0);
        let typical = crate::scenario::rules::Rules::default().copy_latency_frac();
        assert_eq!(l.latency_frac.pinned_h2d, typical.pinned_h2d);
        assert_eq!(l.latency_frac.pageable_h2d, typical.pageable_h2d);
        assert_eq!(
            l.latency_frac.pinned_d2h,
            g.pinned_d2h_latency_frac.unwrap()
        );
    }

    #[test]
    fn bad_files_name_the_key() {
        let e = CalibrationFile::parse("x = 1").unwrap_err().to_string();
        assert!(e.contains("hardware"), "{e}");
        let e = CalibrationFile::parse(
            "[hardware]\ncpu_cores = 4\n[hardware.dram]\ncapacity_gbps = 10.0\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("latency_curve"), "{e}");
        assert!(CalibrationFile::parse("not toml [").is_err());
    }
}

#[cfg(test)]
mod one_line_tests {
    use super::one_line;

    #[test]
    fn host_text_with_line_breaks_stays_one_comment_line() {
        // nvidia-smi prints the driver version once per GPU.
        assert_eq!(
            one_line("580.159.04\n580.159.04\n"),
            "580.159.04 580.159.04"
        );
        let comment = format!("# NVIDIA H200 (driver {})", one_line("580.1\r\n580.1"));
        assert!(toml::from_str::<toml::Table>(&comment).unwrap().is_empty());
    }
}
