//! Raw measurements, exactly as the probes produced them. They are written verbatim
//! into the `[calibration]` table of `calibration.toml`, so every fitted number can be
//! traced back to (and re-fitted from) what was measured.

use crate::calibrate::error::Result;
use serde::{Deserialize, Serialize};

// The probes fill these records; the types are defined with the data (their methods
// live beside the probes that use them) so that the data does not import the probes.

/// A memory kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// Sum of one array at a time: reads only.
    Read,
    /// `b = a`: two DRAM reads (one is the write-allocate) per write.
    Copy,
    /// `a = b + s*c`: three DRAM reads per write.
    Triad,
    /// `b = s` (a fill): one DRAM read (the write-allocate) per write, the most
    /// write-heavy mix ordinary stores can make.
    Write,
}

/// What the host says about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// CPUs this process may run on (its affinity mask).
    pub cores: usize,
    /// Base page size in bytes.
    pub page_size: u64,
    /// Contents of /sys/kernel/mm/transparent_hugepage/enabled ("unknown" if absent).
    pub thp_enabled: String,
    /// Total RAM in bytes (MemTotal; on a VM whose memory grows with use this reads low).
    pub mem_total_bytes: u64,
    /// Kernel release.
    pub kernel: String,
}

/// Aggregate bandwidth of `threads` workers running one kernel.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BwPoint {
    /// Which kernel.
    pub kernel: Kernel,
    /// Worker threads (each pinned to its own CPU).
    pub threads: usize,
    /// DRAM bytes per second (write-allocate counted), GB/s.
    pub dram_gbps: f64,
    /// The same in STREAM's convention (no write-allocate), GB/s.
    pub stream_gbps: f64,
}

/// One loaded-latency point: a pointer chase while `stream_threads` run `mix`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatPoint {
    /// The background kernel (read: 1:0 reads:writes at DRAM; copy: 2:1).
    pub mix: Kernel,
    /// Background streaming threads.
    pub stream_threads: usize,
    /// Their DRAM GB/s during the chase.
    pub stream_gbps: f64,
    /// Stream plus the chase's own traffic (64 B per access), GB/s.
    pub total_gbps: f64,
    /// Nanoseconds per dependent access.
    pub ns: f64,
    /// Which pass over the sweep (passes interleave the mixes).
    #[serde(default)]
    pub pass: usize,
    /// CPUs of the background streams.
    #[serde(default)]
    pub stream_cpus: Vec<usize>,
    /// Each stream's standalone DRAM GB/s (same CPU and mix, nothing else running).
    #[serde(default)]
    pub stream_standalone_gbps: Vec<f64>,
    /// Each stream's achieved DRAM GB/s during the chase.
    #[serde(default)]
    pub stream_each_gbps: Vec<f64>,
    /// Offered load: the sum of the streams' standalone demand, GB/s (divide by the
    /// capacity for the offered utilisation; it can exceed 1).
    #[serde(default)]
    pub offered_gbps: f64,
}

/// One stream alone: its DRAM demand when nothing else runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StandalonePoint {
    /// The kernel.
    pub mix: Kernel,
    /// The CPU its worker is pinned to.
    pub cpu: usize,
    /// DRAM GB/s.
    pub gbps: f64,
}

/// A pointer chase over a buffer advised for huge pages or against them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PagePoint {
    /// Which pass.
    pub pass: usize,
    /// MADV_HUGEPAGE (true) or MADV_NOHUGEPAGE (false).
    pub huge: bool,
    /// The background kernel.
    pub mix: Kernel,
    /// Background streaming threads (0: idle).
    pub stream_threads: usize,
    /// Their DRAM GB/s during the chase.
    pub stream_gbps: f64,
    /// Nanoseconds per dependent access.
    pub ns: f64,
}

/// The compute-bound hash loop on a set of CPUs at once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ComputePoint {
    /// "scaling" (first k CPUs, one per core first), "smt_one" (one sibling of a core)
    /// or "smt_pair" (both siblings of that core).
    pub kind: String,
    /// The CPUs that ran it.
    pub cpus: Vec<usize>,
    /// Millions of hash rounds per second, per thread (same order as `cpus`).
    pub per_thread_mops: Vec<f64>,
    /// Their sum.
    pub total_mops: f64,
}

/// One DMA copy loop with nothing else running, per pass (the reference of the
/// DMA-vs-streams runs of the same pass).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DmaAlonePoint {
    /// Which pass.
    pub pass: usize,
    /// "h2d" or "d2h".
    pub dir: String,
    /// Pinned host buffer, else pageable.
    pub pinned: bool,
    /// Bytes per copy call, MiB.
    pub mib: u64,
    /// Achieved GB/s.
    pub gbps: f64,
    /// Seconds the loop ran (copies = gbps * seconds * 1e9 / bytes).
    pub seconds: f64,
}

/// One PCIe copy loop with nothing else running.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PciePoint {
    /// "h2d", "d2h" or "both".
    pub dir: String,
    /// Pinned (page-locked) host buffer, else pageable.
    pub pinned: bool,
    /// Copy size in MiB.
    pub mib: u64,
    /// Achieved host-to-device GB/s (0 if that direction did not run).
    pub h2d_gbps: f64,
    /// Achieved device-to-host GB/s.
    pub d2h_gbps: f64,
}

/// A DMA loop and `stream_threads` streaming threads, alone and together.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DmaStreamPoint {
    /// "h2d" or "d2h".
    pub dir: String,
    /// Pinned host buffer, else pageable.
    pub pinned: bool,
    /// The streams' kernel.
    pub mix: Kernel,
    /// Streaming threads.
    pub stream_threads: usize,
    /// Stream DRAM GB/s without the DMA.
    pub stream_alone_gbps: f64,
    /// Stream DRAM GB/s while the DMA ran.
    pub stream_with_gbps: f64,
    /// DMA GB/s without streams.
    pub dma_alone_gbps: f64,
    /// DMA GB/s while the streams ran.
    pub dma_with_gbps: f64,
    /// Bytes per copy call, MiB (0 in files from before this field).
    #[serde(default)]
    pub mib: u64,
    /// Which pass.
    #[serde(default)]
    pub pass: usize,
    /// Seconds the DMA loop ran next to the streams.
    #[serde(default)]
    pub dma_seconds: f64,
}

/// Median time of one NTT variant at one size (device-resident data).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NttPoint {
    /// log2 of the domain size.
    pub lg: u32,
    /// "fwd_nr", "inv_nr", "fwd_coset_rn" or "inv_coset_nn".
    pub variant: String,
    /// Milliseconds.
    pub ms: f64,
}

/// Median time of one G1 MSM (points on the device, scalars in pinned host memory).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MsmPoint {
    /// log2 of the number of points.
    pub lg: u32,
    /// Milliseconds.
    pub ms: f64,
}

/// The GPU as the harness reported it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct GpuInfo {
    /// Device name.
    pub name: String,
    /// Compute capability, e.g. "9.0".
    pub compute_capability: String,
    /// Multiprocessors.
    pub sms: u64,
    /// Device memory in bytes.
    pub vram_bytes: u64,
    /// CUDA driver API version (e.g. 13000).
    pub driver_api: u64,
    /// CUDA runtime version the harness was built with.
    pub runtime_api: u64,
    /// nvidia-smi's driver version, if it could be read.
    pub driver_version: String,
    /// The harness's verification reply (JSON text).
    pub verification: String,
}

/// Pinned copies on several GPUs: one GPU alone (`gpus` = 1, `first_gpu` its index) or
/// `gpus` GPUs at once from 0.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MultiPciePoint {
    /// "h2d", "d2h" or "both".
    pub dir: String,
    /// Copy size, MiB.
    pub mib: u64,
    /// The first GPU that copied.
    pub first_gpu: usize,
    /// GPUs copying at once.
    pub gpus: usize,
    /// Per copying GPU, host-to-device GB/s (0 where the direction did not run).
    pub h2d_gbps: Vec<f64>,
    /// Per copying GPU, device-to-host GB/s.
    pub d2h_gbps: Vec<f64>,
}

/// Pinned DMA on `gpus` GPUs at once next to `stream_threads` copy streams.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MultiDmaStreamPoint {
    /// "h2d" or "d2h".
    pub dir: String,
    /// GPUs copying at once.
    pub gpus: usize,
    /// Copy-stream threads.
    pub stream_threads: usize,
    /// The streams' GB/s without the DMAs.
    pub stream_alone_gbps: f64,
    /// The streams' GB/s next to the DMAs.
    pub stream_with_gbps: f64,
    /// Per GPU, its DMA GB/s next to the streams.
    pub dma_with_gbps: Vec<f64>,
}

/// One round of the settling phase: all streams running, then an idle chase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SettlePoint {
    /// Seconds since the buffers were ready.
    pub t_s: f64,
    /// DRAM GB/s of all streaming threads (copy).
    pub stream_gbps: f64,
    /// Idle pointer-chase ns per access.
    pub idle_ns: f64,
}

/// Everything measured in one calibration run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Measurements {
    /// "tiny", "quick" or "full".
    pub mode: String,
    /// UTC date and time of the run (RFC 3339).
    pub date: String,
    /// bwsim version that measured.
    pub bwsim_version: String,
    /// Host facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<HostInfo>,
    /// Buffers were advised MADV_HUGEPAGE.
    pub hugepages_advised: bool,
    /// Growth of AnonHugePages while the buffers were mapped (shows whether THP backed them).
    pub anon_huge_bytes_gained: u64,
    /// Bytes of each of the three arrays per streaming thread.
    pub stream_array_bytes: u64,
    /// Pointer-chase buffer bytes.
    pub chase_bytes: u64,
    /// Share of the pointer-chase buffer backed by huge pages (absent in older files and
    /// where /proc/self/smaps could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chase_huge_coverage: Option<f64>,
    /// Idle chase, ns, over each candidate chase buffer (the fastest was kept; a wide
    /// spread means the host backs memory unevenly). Empty in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chase_trial_ns: Vec<f64>,
    /// Settling rounds before measuring (freshly mapped memory on a VM can be slow for
    /// the first seconds); measurements start once two rounds agree.
    #[serde(default)]
    pub settle: Vec<SettlePoint>,
    /// Bandwidth vs thread count.
    pub bandwidth: Vec<BwPoint>,
    /// Loaded latency (read, copy and write mixes; offered load per point).
    pub latency: Vec<LatPoint>,
    /// Each streaming worker alone, per mix: the demand behind the offered load.
    #[serde(default)]
    pub standalone: Vec<StandalonePoint>,
    /// Pointer chase with and without huge pages, idle and loaded.
    #[serde(default)]
    pub pages: Vec<PagePoint>,
    /// AnonHugePages growth while the MADV_NOHUGEPAGE chase buffer was mapped.
    #[serde(default)]
    pub nohuge_anon_huge_bytes_gained: u64,
    /// SMT sibling groups of the allowed CPUs (one group per core).
    #[serde(default)]
    pub smt_groups: Vec<Vec<usize>>,
    /// Compute-bound throughput vs active threads, and SMT pairs.
    #[serde(default)]
    pub compute: Vec<ComputePoint>,
    /// The GPU, when GPU probes ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuInfo>,
    /// PCIe copy rates alone.
    pub pcie: Vec<PciePoint>,
    /// DMA vs streams.
    pub dma_stream: Vec<DmaStreamPoint>,
    /// DMA loops alone, per pass, direction, pinning and copy size.
    #[serde(default)]
    pub dma_alone: Vec<DmaAlonePoint>,
    /// Pageable copies next to more or fewer streams than `dma_stream`'s, for the
    /// memcpy's rate by its streaming neighbours (kept apart so that the fits of
    /// `dma_stream` read the runs they always read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pageable_beside_streams: Vec<DmaStreamPoint>,
    /// Several GPUs: pinned copies on each GPU alone and on all at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub multi_pcie: Vec<MultiPciePoint>,
    /// Several GPUs: pinned DMA on every GPU at once next to k copy streams.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub multi_dma_stream: Vec<MultiDmaStreamPoint>,
    /// NTT timings.
    pub ntt: Vec<NttPoint>,
    /// MSM timings.
    pub msm: Vec<MsmPoint>,
    /// GPU kernels timed next to busy CPU threads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_load: Vec<CpuLoadPoint>,
    /// MSMs timed next to threads that stream memory (`busy_threads` of them): fitted
    /// into a table the model reads, as ratios to the spinning curve, once switched on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_load_streaming: Vec<CpuLoadPoint>,
    /// MSMs timed next to threads that chase pointers, read the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_load_chasing: Vec<CpuLoadPoint>,
    /// What was skipped and why.
    pub skipped: Vec<String>,
}

/// One GPU kernel timed next to `busy_threads` spinning threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuLoadPoint {
    /// `"msm:20"`, `"ntt:22"`: the kernel as a stage's `gpu_kernel_kind` names it.
    pub kernel: String,
    /// Spinning threads beside it.
    pub busy_threads: usize,
    /// CPUs the process may use.
    pub cpus: usize,
    /// Pass over the kernels and levels.
    pub pass: usize,
    /// The kernel's time, ms (an MSM's median over repetitions, an NTT's mean over variants).
    pub ms: f64,
    /// CPUs the harness process kept busy while the kernel ran (its CPU time over the
    /// kernels' wall time: the waiting thread, sppark's host pool); None from a harness
    /// that does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_threads: Option<f64>,
}

/// No memory or PCIe rate measured on one host comes near 1 PB/s; larger values are
/// corrupt and would overflow the fits.
pub const MAX_PLAUSIBLE_GBPS: f64 = 1e6;

/// A measured number a fit cannot use, read as `field[index].key = value: what is allowed`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field} = {value}: {allowed}")]
pub struct UnusableMeasurement {
    /// Where it is, as `field[index].key`.
    pub field: String,
    /// The value.
    pub value: f64,
    /// What that field allows.
    pub allowed: Allowed,
}

/// What a measured number may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// A rate: finite, from 0 to [`MAX_PLAUSIBLE_GBPS`].
    Rate,
    /// A latency or time: finite and > 0.
    Time,
}

impl Allowed {
    fn admits(self, v: f64) -> bool {
        match self {
            Allowed::Rate => v.is_finite() && (0.0..=MAX_PLAUSIBLE_GBPS).contains(&v),
            Allowed::Time => v.is_finite() && v > 0.0,
        }
    }
}

impl std::fmt::Display for Allowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Allowed::Rate => write!(f, "must be a rate from 0 to {MAX_PLAUSIBLE_GBPS:e} GB/s"),
            Allowed::Time => f.write_str("must be a finite time > 0"),
        }
    }
}

impl Measurements {
    /// The idle chase of each candidate chase buffer, as printed by calibrate and
    /// validate (None when no candidates were timed).
    pub fn chase_candidates_line(&self) -> Option<String> {
        if self.chase_trial_ns.is_empty() {
            return None;
        }
        let t: Vec<String> = (self.chase_trial_ns.iter())
            .map(|v| format!("{v:.0}"))
            .collect();
        Some(format!(
            "pointer-chase candidates, idle ns: {} (the fastest kept)",
            t.join(", ")
        ))
    }

    /// The first value a fit cannot use: rates must be finite and >= 0, latencies and
    /// times finite and > 0.
    pub fn check(&self) -> Result<(), UnusableMeasurement> {
        let check = |field: String, value: f64, allowed: Allowed| {
            if allowed.admits(value) {
                Ok(())
            } else {
                Err(UnusableMeasurement {
                    field,
                    value,
                    allowed,
                })
            }
        };
        let rate = |field: String, v: f64| check(field, v, Allowed::Rate);
        let time = |field: String, v: f64| check(field, v, Allowed::Time);
        for (i, p) in self.bandwidth.iter().enumerate() {
            rate(format!("bandwidth[{i}].dram_gbps"), p.dram_gbps)?;
        }
        for (i, p) in self.latency.iter().enumerate() {
            rate(format!("latency[{i}].stream_gbps"), p.stream_gbps)?;
            rate(format!("latency[{i}].total_gbps"), p.total_gbps)?;
            time(format!("latency[{i}].ns"), p.ns)?;
        }
        for (i, p) in self.pcie.iter().enumerate() {
            rate(format!("pcie[{i}].h2d_gbps"), p.h2d_gbps)?;
            rate(format!("pcie[{i}].d2h_gbps"), p.d2h_gbps)?;
        }
        for (name, points) in [
            ("dma_stream", &self.dma_stream),
            ("pageable_beside_streams", &self.pageable_beside_streams),
        ] {
            for (i, p) in points.iter().enumerate() {
                rate(
                    format!("{name}[{i}].stream_alone_gbps"),
                    p.stream_alone_gbps,
                )?;
                rate(format!("{name}[{i}].stream_with_gbps"), p.stream_with_gbps)?;
                rate(format!("{name}[{i}].dma_alone_gbps"), p.dma_alone_gbps)?;
                rate(format!("{name}[{i}].dma_with_gbps"), p.dma_with_gbps)?;
            }
        }
        for (i, p) in self.multi_pcie.iter().enumerate() {
            for (g, v) in p.h2d_gbps.iter().enumerate() {
                rate(format!("multi_pcie[{i}].h2d_gbps[{g}]"), *v)?;
            }
            for (g, v) in p.d2h_gbps.iter().enumerate() {
                rate(format!("multi_pcie[{i}].d2h_gbps[{g}]"), *v)?;
            }
        }
        for (i, p) in self.multi_dma_stream.iter().enumerate() {
            rate(
                format!("multi_dma_stream[{i}].stream_alone_gbps"),
                p.stream_alone_gbps,
            )?;
            rate(
                format!("multi_dma_stream[{i}].stream_with_gbps"),
                p.stream_with_gbps,
            )?;
            for (g, v) in p.dma_with_gbps.iter().enumerate() {
                rate(format!("multi_dma_stream[{i}].dma_with_gbps[{g}]"), *v)?;
            }
        }
        for (i, p) in self.ntt.iter().enumerate() {
            time(format!("ntt[{i}].ms"), p.ms)?;
        }
        for (i, p) in self.msm.iter().enumerate() {
            time(format!("msm[{i}].ms"), p.ms)?;
        }
        Ok(())
    }

    /// Bandwidth points of one kernel sorted by thread count.
    pub fn bw_curve(&self, k: Kernel) -> Vec<(usize, f64)> {
        let mut v: Vec<(usize, f64)> = self
            .bandwidth
            .iter()
            .filter(|p| p.kernel == k)
            .map(|p| (p.threads, p.dram_gbps))
            .collect();
        v.sort_by_key(|p| p.0);
        v
    }

    /// DRAM GB/s of `threads` workers running `k`, interpolated linearly between the
    /// measured thread counts (None if the kernel was not measured).
    pub fn bw_at(&self, k: Kernel, threads: usize) -> Option<f64> {
        let c = self.bw_curve(k);
        if threads == 0 {
            return Some(0.0);
        }
        let first = *c.first()?;
        if threads <= first.0 {
            return Some(first.1 * threads as f64 / first.0 as f64);
        }
        for w in c.windows(2) {
            let ((t0, b0), (t1, b1)) = (w[0], w[1]);
            if threads <= t1 {
                let f = (threads - t0) as f64 / (t1 - t0) as f64;
                return Some(b0 + f * (b1 - b0));
            }
        }
        c.last().map(|p| p.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bw_at_interpolates_and_clamps() {
        let mut m = Measurements::default();
        for (t, b) in [(1, 10.0), (4, 34.0), (8, 50.0)] {
            m.bandwidth.push(BwPoint {
                kernel: Kernel::Copy,
                threads: t,
                dram_gbps: b,
                stream_gbps: b * 2.0 / 3.0,
            });
        }
        assert_eq!(m.bw_at(Kernel::Copy, 0), Some(0.0));
        assert_eq!(m.bw_at(Kernel::Copy, 1), Some(10.0));
        assert_eq!(m.bw_at(Kernel::Copy, 2), Some(18.0));
        assert_eq!(m.bw_at(Kernel::Copy, 6), Some(42.0));
        assert_eq!(m.bw_at(Kernel::Copy, 12), Some(50.0));
        assert_eq!(m.bw_at(Kernel::Read, 2), None);
    }

    #[test]
    fn check_names_the_first_unusable_number() {
        let mut m = Measurements::default();
        assert_eq!(m.check(), Ok(()));
        m.bandwidth.push(BwPoint {
            kernel: Kernel::Copy,
            threads: 1,
            dram_gbps: -5.0,
            stream_gbps: 1.0,
        });
        let e = m.check().unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.allowed),
            ("bandwidth[0].dram_gbps", Allowed::Rate)
        );
        assert_eq!(
            e.to_string(),
            "bandwidth[0].dram_gbps = -5: must be a rate from 0 to 1e6 GB/s"
        );
        m.bandwidth[0].dram_gbps = f64::INFINITY;
        assert!(m.check().is_err());
    }
}
