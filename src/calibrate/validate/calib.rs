//! What validate knows about the host, read from a calibration file alone (no
//! refitting): DRAM, the PCIe link, per-kernel stream rates, NTT models, and the model
//! v2 rules the calibration pins down.

use crate::calibrate::file::read_provenance;
use crate::calibrate::fit::KernelFit;
use crate::calibrate::measurements::Measurements;
use crate::model::{DramPolicy, LatencyCurve, PcieLink};
use anyhow::{Context, anyhow, bail};
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
    /// The measured curves of the read-only and the 2:1 read:write mixes, for the
    /// mix-aware variant of the predictions (a possible model extension).
    pub mix_curves: Option<(LatencyCurve, LatencyCurve)>,
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
    let t: toml::Table = toml::from_str(text).context("calibration file is not valid TOML")?;
    let hw = t
        .get("hardware")
        .and_then(|v| v.as_table())
        .ok_or_else(|| anyhow!("calibration file has no [hardware] table"))?;
    let dram = hw
        .get("dram")
        .and_then(|v| v.as_table())
        .ok_or_else(|| anyhow!("calibration file has no [hardware.dram] table"))?;
    let fnum = |tab: &toml::Table, k: &str| -> Option<f64> {
        tab.get(k)
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
    };
    let capacity = fnum(dram, "capacity_gbps")
        .ok_or_else(|| anyhow!("[hardware.dram] lacks capacity_gbps"))?;
    if !(capacity.is_finite() && capacity > 0.0) {
        bail!(
            "[hardware.dram] capacity_gbps = {capacity}: must be a finite number of GB/s \
             greater than 0"
        );
    }
    let pts: Vec<(f64, f64)> = dram
        .get("latency_curve")
        .and_then(|v| v.as_array())
        .ok_or_else(|| anyhow!("[hardware.dram] lacks latency_curve"))?
        .iter()
        .filter_map(|p| {
            let a = p.as_array()?;
            let g = |i: usize| {
                a.get(i)
                    .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|x| x as f64)))
            };
            Some((g(0)?, g(1)?))
        })
        .collect();
    let curve = LatencyCurve::new(pts.clone()).map_err(|e| anyhow!("latency_curve: {e}"))?;
    let offered_curve = LatencyCurve::offered(pts).map_err(|e| anyhow!("latency_curve: {e}"))?;
    let link = hw.get("gpu").and_then(|v| v.as_table()).and_then(|g| {
        Some(PcieLink {
            h2d_gbps: fnum(g, "pcie_h2d_gbps")?,
            d2h_gbps: fnum(g, "pcie_d2h_gbps")?,
            duplex_gbps: fnum(g, "pcie_duplex_gbps"),
            pageable_h2d_gbps: fnum(g, "pageable_h2d_gbps")?,
            pageable_d2h_gbps: fnum(g, "pageable_d2h_gbps")?,
            h2d_dram_factor: fnum(g, "h2d_dram_factor").unwrap_or(1.0),
            d2h_dram_factor: fnum(g, "d2h_dram_factor").unwrap_or(1.0),
            pageable_copy_dram_factor: fnum(g, "pageable_copy_dram_factor").unwrap_or(2.0),
        })
    });
    if let Some(l) = &link {
        for (key, v) in [
            ("pcie_h2d_gbps", l.h2d_gbps),
            ("pcie_d2h_gbps", l.d2h_gbps),
            ("pageable_h2d_gbps", l.pageable_h2d_gbps),
            ("pageable_d2h_gbps", l.pageable_d2h_gbps),
            ("h2d_dram_factor", l.h2d_dram_factor),
            ("d2h_dram_factor", l.d2h_dram_factor),
            ("pageable_copy_dram_factor", l.pageable_copy_dram_factor),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("[hardware.gpu] {key} = {v}: must be a finite number greater than 0");
            }
        }
    }
    let prov = read_provenance(text).context("calibration file's [calibration] table")?;
    let lat = prov.fitted.pcie.as_ref().map_or((0.0, 0.0), |p| {
        (p.pageable_h2d_latency_frac, p.pageable_d2h_latency_frac)
    });
    Ok(Calib {
        capacity_gbps: capacity,
        curve,
        link,
        meas: prov.measurements,
        ntt: prov.fitted.ntt,
        pageable_latency_frac: lat,
        mix_curves: mix_curves(&prov.fitted.curves),
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

fn mix_curves(
    curves: &std::collections::BTreeMap<String, Vec<(f64, f64)>>,
) -> Option<(LatencyCurve, LatencyCurve)> {
    let r = LatencyCurve::new(curves.get("read")?.clone()).ok()?;
    let c = LatencyCurve::new(curves.get("copy")?.clone()).ok()?;
    Some((r, c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_calibration_files_give_clear_errors() {
        let e = load_calib("x = 1").unwrap_err().to_string();
        assert!(e.contains("[hardware]"), "{e}");
        let e = load_calib("[hardware.dram]\ncapacity_gbps = 10.0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("latency_curve"), "{e}");
        assert!(load_calib("not toml [").is_err());
    }
}
