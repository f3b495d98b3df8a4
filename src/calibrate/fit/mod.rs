//! Turns [`Measurements`] into the model's parameters: DRAM capacity, the loaded-latency
//! curve, PCIe rates and their coupling to DRAM, kernel time models, and the contention
//! fits with their spreads and warnings.
//!
//! - [`kernel`]: NTT and MSM time models.
//! - [`latency`]: the loaded-latency curve.
//! - [`pcie`]: link rates, capacity and DMA coupling, pageable latency fraction.
//! - [`contention`]: offered-load latency, pages, compute, DMA policy, staging.
//! - [`cpu`]: the pools' compute throughput vs active cores (`[hardware.cpu]`).
//! - [`cpu_load`]: GPU kernels next to busy CPU threads (`[hardware.gpu.cpu_load]`).
//! - [`staging`]: pageable copies as CPU staging (`[hardware.gpu.pageable_staging]`).

pub mod contention;
pub mod cpu;
pub mod cpu_load;
pub mod kernel;
pub mod latency;
pub mod pcie;
pub mod staging;

pub use kernel::{KernelFit, Line, fit_kernel, fit_line, fit_msm, fit_ntt};
pub use latency::{isotonic, latency_curve, latency_medians};
pub use pcie::{
    COUPLING_NOISE, PcieFit, fit_capacity, fit_pcie, latency_frac, pageable_latency_exponent,
    pinned_latency_frac, saturated,
};

use crate::calibrate::error::{FitError, Result};
use crate::calibrate::measurements::{DmaStreamPoint, Measurements};
use crate::calibrate::probe::stream::Kernel;
use crate::model::CopyDir;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Everything fitted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Fitted {
    /// DRAM capacity, GB/s (DRAM bytes, write-allocate counted).
    pub capacity_gbps: f64,
    /// How the capacity was obtained.
    pub capacity_basis: String,
    /// Unloaded latency, ns.
    pub idle_latency_ns: f64,
    /// The mix whose curve became `latency_curve`.
    pub latency_curve_mix: String,
    /// (utilisation, ns) of the model's curve.
    pub latency_curve: Vec<(f64, f64)>,
    /// Curves per mix.
    pub curves: BTreeMap<String, Vec<(f64, f64)>>,
    /// PCIe, when measured.
    pub pcie: Option<PcieFit>,
    /// NTT models per variant.
    pub ntt: BTreeMap<String, KernelFit>,
    /// MSM model.
    pub msm: Option<KernelFit>,
    /// Fits of the contention probes (offered-load latency, pages, compute, DMA policy,
    /// pageable staging) with spreads, warnings and what could not be pinned down.
    #[serde(default)]
    pub contention: contention::ContentionFit,
    /// GPU kernels next to busy CPU threads, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_load: Option<cpu_load::CpuLoadFit>,
}

/// Fits all parameters.
pub fn fit(m: &Measurements) -> Result<Fitted> {
    let peak_stream = m
        .bandwidth
        .iter()
        .map(|p| p.dram_gbps)
        .chain(m.latency.iter().map(|p| p.total_gbps))
        .fold(0.0f64, f64::max);
    if peak_stream <= 0.0 {
        return Err(FitError::NoBandwidth.into());
    }
    if !peak_stream.is_finite() {
        return Err(FitError::NonFiniteBandwidth.into());
    }
    let (mut pcie, capacity, basis) = fit_pcie(m, peak_stream);
    let capacity_rounded = (capacity * 100.0).round() / 100.0;
    if !(capacity_rounded.is_finite() && capacity_rounded > 0.0) {
        return Err(FitError::Capacity(capacity).into());
    }
    let mut curves = BTreeMap::new();
    for mix in [Kernel::Read, Kernel::Copy] {
        let pts = latency_medians(m, mix);
        if !pts.is_empty() {
            curves.insert(mix.name().to_string(), latency_curve(&pts, capacity));
        }
    }
    let (mix, curve) = if let Some(c) = curves.get("copy") {
        ("copy (2:1 reads:writes at DRAM)", c.clone())
    } else if let Some(c) = curves.get("read") {
        ("read (reads only)", c.clone())
    } else {
        return Err(FitError::NoLatency.into());
    };
    let idle = curve.first().map_or(100.0, |p| p.1);
    if let Some(pf) = pcie.as_mut() {
        let lc = crate::model::LatencyCurve::new(curve.clone()).map_err(FitError::LatencyCurve)?;
        for h2d in [true, false] {
            let dir = if h2d { "h2d" } else { "d2h" };
            let fr: Vec<f64> = m
                .dma_stream
                .iter()
                .filter(|p| !p.pinned && p.dir == dir)
                .filter_map(|p| latency_frac(p, pf, capacity, &lc))
                .collect();
            let v = if fr.is_empty() {
                0.0
            } else {
                fr.iter().sum::<f64>() / fr.len() as f64
            };
            pf.notes.push(format!(
                "pageable {dir}: {:.2} of the copy time latency bound (from {} runs next to \
                 streams)",
                v,
                fr.len()
            ));
            if h2d {
                pf.pageable_h2d_latency_frac = v;
            } else {
                pf.pageable_d2h_latency_frac = v;
            }
        }
        // The pinned DMAs read the curve as the engine's v2 rules do: at offered load.
        let offered =
            crate::model::LatencyCurve::offered(curve.clone()).map_err(FitError::LatencyCurve)?;
        for dir in CopyDir::BOTH {
            let name = dir.name();
            let runs: Vec<&DmaStreamPoint> = (m.dma_stream.iter())
                .filter(|p| p.pinned && p.dir == name)
                .collect();
            let f = pf.dma_dram_factor(dir);
            *pf.pinned_latency_frac_mut(dir) =
                match pinned_latency_frac(&runs, f, capacity, &offered) {
                    Some((v, n)) => {
                        pf.notes.push(format!(
                            "pinned {name}: {v:.2} of the DMA time latency bound (slope of its \
                             slowdown on L/L(0) over {n} runs next to streams)"
                        ));
                        v
                    }
                    None => {
                        pf.notes.push(format!(
                            "pinned {name}: latency-bound share not observable (fewer than two \
                             runs next to streams where latency rose); 0 kept"
                        ));
                        0.0
                    }
                };
        }
        // The pageable copies' memcpy on the same curve: how steeply it slows.
        for dir in CopyDir::BOTH {
            let name = dir.name();
            let f = pf.pageable_copy_dram_factor + pf.dma_dram_factor(dir);
            let runs: Vec<&DmaStreamPoint> = (m.dma_stream.iter())
                .filter(|p| !p.pinned && p.dir == name && p.stream_threads > 0)
                .collect();
            let max = crate::model::PageableStaging::MAX_LATENCY_EXPONENT;
            let k = pageable_latency_exponent(&runs, f, capacity, &offered, max);
            pf.notes.push(match k {
                Some((k, n, raw)) => format!(
                    "pageable {name} memcpy: slows as (L/L(0))^{k:.2} (median over {n} runs next \
                     to streams of ln(alone/with) / ln(L/L(0)) on the offered-load curve: \
                     {raw:.2}, kept within 0 and {max}; 1 is Little's law)"
                ),
                None => format!(
                    "pageable {name} memcpy: latency exponent not observable (no run next to \
                     streams where latency rose); Little's law (1) kept"
                ),
            });
            *pf.pageable_latency_exponent_mut(dir) = k.map(|x| x.0);
        }
    }
    Ok(Fitted {
        capacity_gbps: capacity_rounded,
        capacity_basis: basis,
        idle_latency_ns: idle,
        latency_curve_mix: mix.into(),
        latency_curve: curve,
        curves,
        pcie,
        ntt: fit_ntt(&m.ntt),
        msm: fit_msm(&m.msm),
        contention: contention::fit_contention(m, capacity),
        cpu_load: cpu_load::fit_cpu_load(m),
    })
}
