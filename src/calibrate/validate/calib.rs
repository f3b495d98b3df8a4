//! What validate knows about the host, read from a calibration file alone (no
//! refitting): DRAM, the PCIe link, per-kernel stream rates, NTT models, and the model
//! v2 rules the calibration pins down.

use crate::calibrate::error::{Result, failed};
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
    /// The write-fraction axis: (write fraction, curve) of the other measured mixes
    /// (read 0, write 1/2) on the same axis as `offered_curve` (the copy mix, 1/3);
    /// empty: one curve for every mix.
    pub write_mixes: Vec<(f64, LatencyCurve)>,
    /// Latency-bound fraction of pinned (H2D, D2H) DMAs: their reads or writes of host
    /// memory wait on DRAM latency (0 in calibrations that predate the fit).
    pub pinned_latency_frac: (f64, f64),
}

/// Write share of the DRAM bytes of the copy mix, whose curve is the base one.
pub const COPY_WRITE_FRACTION: f64 = 1.0 / 3.0;

impl V2Rules {
    /// The latency curve the engine runs with: the base curve, with the write-fraction
    /// axis when there is one.
    pub fn latency(&self) -> LatencyCurve {
        if self.write_mixes.is_empty() {
            return self.offered_curve.clone();
        }
        (self.offered_curve.clone())
            .with_write_mixes(COPY_WRITE_FRACTION, self.write_mixes.clone())
            .unwrap_or_else(|_| self.offered_curve.clone())
    }
}

/// Builds the predictor's view of the host from a calibration file's text.
pub fn load_calib(text: &str) -> Result<Calib> {
    let file = CalibrationFile::parse(text)?;
    let curve = file.latency_curve()?;
    let offered_curve = LatencyCurve::offered(file.hardware.dram.latency_curve.clone())
        .map_err(|e| failed!("latency_curve: {e}"))?;
    let prov = file.calibration;
    let lat = prov.fitted.pcie.as_ref().map_or((0.0, 0.0), |p| {
        (p.pageable_h2d_latency_frac, p.pageable_d2h_latency_frac)
    });
    let pinned_lat = prov.fitted.pcie.as_ref().map_or((0.0, 0.0), |p| {
        (p.pinned_h2d_latency_frac, p.pinned_d2h_latency_frac)
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
            write_mixes: write_mixes(&prov.fitted.contention),
            offered_curve,
            pinned_latency_frac: pinned_lat,
        }),
    })
}

/// The read and write mixes' curves, as the base one is built: latency vs achieved load
/// (streams + chase over capacity), read as offered load. A mix whose points do not
/// make a curve (too few, not rising) is left out.
fn write_mixes(c: &crate::calibrate::fit::contention::ContentionFit) -> Vec<(f64, LatencyCurve)> {
    let mut out = Vec::new();
    for (name, m) in &c.offered_latency {
        if name == "copy" || (m.write_fraction - COPY_WRITE_FRACTION).abs() < 1e-9 {
            continue;
        }
        let mut pts: Vec<(f64, f64)> = Vec::new();
        for p in &m.points {
            let load = p.achieved_load.max(0.0);
            if pts.last().is_none_or(|l| load > l.0) {
                pts.push((load, p.latency_ns.median));
            }
        }
        if pts.len() >= 2
            && let Ok(curve) = LatencyCurve::offered(pts)
        {
            out.push((m.write_fraction, curve));
        }
    }
    out
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
