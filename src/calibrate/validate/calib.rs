//! What validate knows about the host, read from a calibration file alone (no
//! refitting): DRAM, the PCIe link, per-kernel stream rates, NTT models, and the model
//! v2 rules the calibration pins down.

use crate::calibrate::file::{CalibrationFile, GpuTable};
use crate::calibrate::fit::KernelFit;
use crate::calibrate::measurements::Measurements;
use crate::model::{DramPolicy, LatencyCurve, PcieLink};
use std::collections::BTreeMap;

/// What the model knows about the host, read from a calibration file.
#[derive(Debug, Clone)]
pub struct Calib {
    /// DRAM capacity, GB/s.
    pub capacity_gbps: f64,
    /// Loaded-latency curve.
    pub curve: LatencyCurve,
    /// The GPU's link, if the calibration has one.
    pub link: Option<PcieLink>,
    /// Raw calibration measurements (per-kernel stream rates vs threads).
    pub meas: Measurements,
    /// NTT models per variant.
    pub ntt: BTreeMap<String, KernelFit>,
    /// Latency-bound fraction of pageable (H2D, D2H) copies.
    pub pageable_latency_frac: (f64, f64),
    /// Model v2 rules for the engine's predictions; None: model v1 (the old rules).
    pub v2: Option<V2Rules>,
}

/// The model v2 mechanisms as the calibration pins them down (see docs/model-v2.md).
#[derive(Debug, Clone)]
pub struct V2Rules {
    /// DRAM policy of pinned H2D and D2H DMAs.
    pub dma_h2d: crate::model::DramPolicy,
    /// See `dma_h2d`.
    pub dma_d2h: crate::model::DramPolicy,
    /// The latency curve read as a function of offered load (extrapolated past its
    /// last point: latency keeps rising while queues build).
    pub offered_curve: LatencyCurve,
}

/// Builds the predictor's view of the host from a calibration file's text.
pub fn load_calib(text: &str) -> anyhow::Result<Calib> {
    let file = CalibrationFile::parse(text)?;
    let curve = file.latency_curve()?;
    let offered_curve = LatencyCurve::offered(file.hardware.dram.latency_curve.clone())
        .map_err(|e| anyhow::anyhow!("latency_curve: {e}"))?;
    let prov = file.calibration;
    let lat = prov.fitted.pcie.as_ref().map_or((0.0, 0.0), |p| {
        (p.pageable_h2d_latency_frac, p.pageable_d2h_latency_frac)
    });
    Ok(Calib {
        capacity_gbps: file.hardware.dram.capacity_gbps,
        curve,
        link: file.hardware.gpu.as_ref().map(GpuTable::link),
        meas: prov.measurements,
        ntt: prov.fitted.ntt,
        pageable_latency_frac: lat,
        v2: Some(V2Rules {
            dma_h2d: dma_policy(&prov.fitted.contention, "h2d", DramPolicy::Proportional),
            dma_d2h: dma_policy(&prov.fitted.contention, "d2h", DramPolicy::Priority),
            offered_curve,
        }),
    })
}

/// The DMA policy calibrate fitted for `dir`, or what a pinned DMA of that direction
/// shows on the hosts measured so far (H2D proportional, D2H priority).
fn dma_policy(
    c: &crate::calibrate::fit::contention::ContentionFit,
    dir: &str,
    default: DramPolicy,
) -> DramPolicy {
    c.dma
        .get(dir)
        .and_then(|f| DramPolicy::parse(&f.policy))
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_calibration_files_give_clear_errors() {
        let e = load_calib("x = 1").unwrap_err().to_string();
        assert!(e.contains("hardware"), "{e}");
        let e = load_calib("[hardware.dram]\ncapacity_gbps = 10.0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("latency_curve"), "{e}");
        assert!(load_calib("not toml [").is_err());
    }
}
