//! The file for measurements and their fit: the `[hardware]` values, the lines a
//! streaming thread keeps in flight, each DMA direction's DRAM policy and `[params]`.

use super::CalibrationFile;
use super::tables::{
    CpuLoadTable, DramTable, GpuTable, HardwareTable, Param, Params, PolicyTable, Provenance,
};
use crate::calibrate::fit::Fitted;
use crate::calibrate::fit::cpu::cpu_table;
use crate::calibrate::fit::staging::staging_table;
use crate::calibrate::measurements::Measurements;
use crate::calibrate::probe::stream::Kernel;
use crate::calibrate::probe::sys::HostInfo;
use crate::model::{CACHE_LINE_BYTES, CopyDir, LatencyCurve};

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
                pageable_staging: staging_table(&fit.contention, fit.pcie.as_ref()),
                pinned_h2d_latency_frac: Some(p.pinned_h2d_latency_frac),
                pinned_d2h_latency_frac: Some(p.pinned_d2h_latency_frac),
                pageable_h2d_latency_frac: Some(p.pageable_h2d_latency_frac),
                pageable_d2h_latency_frac: Some(p.pageable_d2h_latency_frac),
                cpu_load: fit.cpu_load.as_ref().map(|c| CpuLoadTable {
                    busy_per_cpu: c.busy_per_cpu.clone(),
                    kernels: c.kernels.clone(),
                    threads: c.threads.clone(),
                    // Written commented out (render): not read until a device run shows
                    // that they improve predictions (docs/model-v2.md).
                    next_to_streaming: None,
                    next_to_chasing: None,
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
}

/// Cache lines a streaming thread keeps in flight (Little's law: lines = rate x latency /
/// 64 B) and how it was found: per stream kernel, the most any thread count implies at
/// its own load's latency (a thread's prefetchers run further ahead as latency rises),
/// and of the kernels the fewest, since the engine gives a stage at least what its own
/// standalone draw implies. None without bandwidth measurements.
pub(super) fn lines_in_flight(m: &Measurements, fit: &Fitted) -> Option<(f64, String)> {
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
    // Every measured size as measured (the n/log2(n) fit misses single sizes by up to ~12%:
    // sppark's window steps with the size), and the C2 sizes from the fit where unmeasured.
    let mut msm_sizes: Vec<u32> = m.msm.iter().map(|p| p.lg).chain([26, 27]).collect();
    msm_sizes.sort_unstable();
    msm_sizes.dedup();
    for lg in msm_sizes {
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
