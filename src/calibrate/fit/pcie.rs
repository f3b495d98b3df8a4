//! The PCIe link and its coupling to DRAM: pinned and pageable rates, DRAM capacity and
//! DRAM bytes per DMA byte from saturated stream + DMA runs, and the latency-bound
//! fractions of pageable copies and pinned DMAs.

use super::kernel::fit_line;
use crate::analysis::median::median;
use crate::calibrate::measurements::{DmaStreamPoint, Measurements};
use crate::model::CopyDir;
use serde::{Deserialize, Serialize};

/// PCIe parameters for the model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PcieFit {
    /// Pinned H2D GB/s.
    pub h2d_gbps: f64,
    /// Pinned D2H GB/s.
    pub d2h_gbps: f64,
    /// Both pinned directions at once, total GB/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplex_gbps: Option<f64>,
    /// Pageable H2D GB/s.
    pub pageable_h2d_gbps: f64,
    /// Pageable D2H GB/s.
    pub pageable_d2h_gbps: f64,
    /// DRAM bytes per pinned H2D byte.
    pub h2d_dram_factor: f64,
    /// DRAM bytes per pinned D2H byte.
    pub d2h_dram_factor: f64,
    /// Extra DRAM bytes per pageable byte (the CPU memcpy through the bounce buffer).
    pub pageable_copy_dram_factor: f64,
    /// Fraction of a pageable H2D copy's time that is DRAM-latency bound (its CPU memcpy).
    pub pageable_h2d_latency_frac: f64,
    /// The same for pageable D2H.
    pub pageable_d2h_latency_frac: f64,
    /// Fraction of a pinned H2D DMA's time that is DRAM-latency bound: its reads of
    /// host memory wait on DRAM with a bounded number in flight (0, and not written, in
    /// files that predate the fit: they read back as written).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pinned_h2d_latency_frac: f64,
    /// The same for pinned D2H (posted writes: expected near 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pinned_d2h_latency_frac: f64,
    /// How steeply a pageable H2D copy's memcpy slows with loaded latency (see
    /// [`pageable_latency_exponent`]; absent: not observable, Little's law kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageable_h2d_latency_exponent: Option<f64>,
    /// The same for pageable D2H.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageable_d2h_latency_exponent: Option<f64>,
    /// How each value was obtained.
    pub notes: Vec<String>,
}

impl PcieFit {
    /// The pageable memcpy's latency exponent fitted for `dir` (None: not observable).
    pub fn pageable_latency_exponent(&self, dir: CopyDir) -> Option<f64> {
        match dir {
            CopyDir::H2d => self.pageable_h2d_latency_exponent,
            CopyDir::D2h => self.pageable_d2h_latency_exponent,
        }
    }

    /// The same, to set.
    pub fn pageable_latency_exponent_mut(&mut self, dir: CopyDir) -> &mut Option<f64> {
        match dir {
            CopyDir::H2d => &mut self.pageable_h2d_latency_exponent,
            CopyDir::D2h => &mut self.pageable_d2h_latency_exponent,
        }
    }

    /// The pinned DMA's DRAM bytes per copied byte for `dir`.
    pub fn dma_dram_factor(&self, dir: CopyDir) -> f64 {
        match dir {
            CopyDir::H2d => self.h2d_dram_factor,
            CopyDir::D2h => self.d2h_dram_factor,
        }
    }

    /// The pinned DMA's latency-bound share for `dir`, to set.
    pub fn pinned_latency_frac_mut(&mut self, dir: CopyDir) -> &mut f64 {
        match dir {
            CopyDir::H2d => &mut self.pinned_h2d_latency_frac,
            CopyDir::D2h => &mut self.pinned_d2h_latency_frac,
        }
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Relative slowdown below which a side counts as not slowed (measurement noise).
pub const COUPLING_NOISE: f64 = 0.03;

/// True when both the streams and the DMA slowed down measurably: DRAM was the shared
/// bottleneck, so streams + factor x DMA = capacity holds for that run.
pub fn saturated(p: &DmaStreamPoint) -> bool {
    p.stream_alone_gbps > 0.0
        && p.dma_alone_gbps > 0.0
        && p.stream_with_gbps < p.stream_alone_gbps * (1.0 - COUPLING_NOISE)
        && p.dma_with_gbps < p.dma_alone_gbps * (1.0 - COUPLING_NOISE)
}

/// DRAM bytes per pinned DMA byte a real host can show: every DMA byte crosses DRAM
/// once, and a D2H write may add a read for ownership, so 1 to 2.
pub const PHYSICAL_DMA_FACTOR: std::ops::RangeInclusive<f64> = 1.0..=2.0;

/// The saturated runs' DMA rates must spread by this share of their mean for the line
/// S = C - f*D to have a slope: runs that all ran the DMA at about the same rate only
/// say where C is, and their noise would set f (a calibration on 2026-12-01 fitted
/// f = 2.41 and C = 264 GB/s from three runs at 50-53 GB/s of DMA).
pub const MIN_DMA_SPREAD: f64 = 0.10;

/// Fits DRAM capacity C and DRAM bytes per pinned DMA byte f from saturated runs, where
/// streams S and DMA D obey S + f*D = C: a least-squares line S = C - f*D, kept when the
/// runs' DMA rates spread enough to give it a slope and f is physical
/// ([`PHYSICAL_DMA_FACTOR`]). Otherwise f is taken as 1.0 (one DRAM access per DMA
/// byte) and C is the highest S + D of a saturated run; with none saturated, C is the
/// highest total traffic seen. Returns (C, f, explanation).
pub fn fit_capacity(peak_stream: f64, runs: &[&DmaStreamPoint]) -> (f64, f64, String) {
    let sat: Vec<&&DmaStreamPoint> = runs.iter().filter(|p| saturated(p)).collect();
    let seen = runs
        .iter()
        .map(|p| p.stream_with_gbps + p.dma_with_gbps)
        .fold(peak_stream, f64::max);
    let mut line_rejected = String::new();
    if sat.len() >= 2 {
        let ds: Vec<f64> = sat.iter().map(|p| p.dma_with_gbps).collect();
        let ss: Vec<f64> = sat.iter().map(|p| p.stream_with_gbps).collect();
        let lo = ds.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ds.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = ds.iter().sum::<f64>() / ds.len() as f64;
        let spread = (hi - lo) / mean;
        match fit_line(&ds, &ss) {
            _ if spread < MIN_DMA_SPREAD => {
                line_rejected = format!(
                    "the {} saturated runs' DMA rates spread {:.0}% (< {:.0}%), too little for \
                     a slope; ",
                    sat.len(),
                    spread * 100.0,
                    MIN_DMA_SPREAD * 100.0
                );
            }
            Some(l) if !PHYSICAL_DMA_FACTOR.contains(&-l.a) => {
                line_rejected = format!(
                    "the line through the {} saturated runs gave {:.2} DRAM bytes per DMA byte, \
                     outside the physical {:.0}-{:.0}; ",
                    sat.len(),
                    -l.a,
                    PHYSICAL_DMA_FACTOR.start(),
                    PHYSICAL_DMA_FACTOR.end()
                );
            }
            Some(l) => {
                let f = -l.a;
                let c = l.b.max(peak_stream);
                return (
                    c,
                    f,
                    format!(
                        "fitted from {} saturated stream+pinned-DMA runs (streams + {f:.2} x DMA \
                         = {c:.1} GB/s); CPU threads alone reached {peak_stream:.1}",
                        sat.len()
                    ),
                );
            }
            None => {}
        }
    }
    if let Some(p) = sat.iter().max_by(|a, b| {
        (a.stream_with_gbps + a.dma_with_gbps).total_cmp(&(b.stream_with_gbps + b.dma_with_gbps))
    }) {
        let c = (p.stream_with_gbps + p.dma_with_gbps).max(peak_stream);
        let which = match sat.len() {
            1 => "one saturated stream+DMA run".to_string(),
            n => format!(
                "{line_rejected}the saturated stream+DMA run (of {n}) with the most traffic"
            ),
        };
        return (
            c,
            1.0,
            format!(
                "{which}: {:.1} GB/s streams + 1.0 x {:.1} GB/s {} DMA; CPU threads alone \
                 reached {peak_stream:.1}",
                p.stream_with_gbps, p.dma_with_gbps, p.dir
            ),
        );
    }
    (
        seen,
        1.0,
        format!(
            "no saturated run: highest DRAM traffic seen ({seen:.1} GB/s, streams + DMA at 1.0 \
             byte per byte) is a lower bound; CPU threads alone reached {peak_stream:.1}"
        ),
    )
}

/// The fastest one-direction run of `dir`, its rate in that direction.
fn max_rate(m: &Measurements, dir: CopyDir, pinned: bool) -> Option<f64> {
    m.pcie
        .iter()
        .filter(|p| p.dir == dir.name() && p.pinned == pinned)
        .map(|p| match dir {
            CopyDir::H2d => p.h2d_gbps,
            CopyDir::D2h => p.d2h_gbps,
        })
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))
}

/// Fits the PCIe link, the DRAM capacity and the DMA coupling. `curve` gives L(u) for
/// the pageable copies' latency-bound fraction. Returns (pcie, capacity, basis).
pub fn fit_pcie(m: &Measurements, peak_stream: f64) -> (Option<PcieFit>, f64, String) {
    let pinned: Vec<&DmaStreamPoint> = m.dma_stream.iter().filter(|p| p.pinned).collect();
    let (cap, f, basis) = fit_capacity(peak_stream, &pinned);
    let (Some(h2d), Some(d2h)) = (
        max_rate(m, CopyDir::H2d, true),
        max_rate(m, CopyDir::D2h, true),
    ) else {
        return (None, cap, basis);
    };
    let duplex = m
        .pcie
        .iter()
        .filter(|p| p.dir == "both" && p.pinned)
        .map(|p| p.h2d_gbps + p.d2h_gbps)
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
    let mut notes = vec![format!("capacity and common DMA factor {f:.2}: {basis}")];
    // Per direction: runs whose demand exceeded C and whose streams slowed give
    // f_dir = (C - S_with) / D_with (D2H writes can cost more than H2D reads).
    let mut dir_factor = |dir: CopyDir| -> f64 {
        let v: Vec<f64> = m
            .dma_stream
            .iter()
            .filter(|p| p.pinned && p.dir == dir.name() && p.dma_with_gbps > 0.0)
            .filter(|p| p.stream_alone_gbps + p.dma_alone_gbps > cap)
            .filter(|p| p.stream_with_gbps < p.stream_alone_gbps * (1.0 - COUPLING_NOISE))
            .map(|p| ((cap - p.stream_with_gbps) / p.dma_with_gbps).clamp(0.25, 4.0))
            .collect();
        if v.is_empty() {
            notes.push(format!(
                "{dir}_dram_factor: no {dir} run oversubscribed DRAM; common factor {f:.2} kept"
            ));
            return f;
        }
        let Some(med) = median(&v) else { return f };
        notes.push(format!(
            "{dir}_dram_factor {med:.2}: (C - streams) / DMA over {} oversubscribed {dir} runs",
            v.len()
        ));
        med
    };
    let (h2d_f, d2h_f) = (dir_factor(CopyDir::H2d), dir_factor(CopyDir::D2h));
    // Pageable: extra DRAM bytes from saturated runs, given C and f.
    let mut extra = Vec::new();
    for p in m.dma_stream.iter().filter(|p| !p.pinned) {
        if saturated(p) {
            let e = (cap - p.stream_with_gbps) / p.dma_with_gbps
                - if p.dir == "h2d" { h2d_f } else { d2h_f };
            notes.push(format!(
                "pageable {} x{}: streams {:.1} -> {:.1}, DMA {:.1} -> {:.1} GB/s: {e:.2} extra \
                 DRAM bytes per byte",
                p.dir,
                p.stream_threads,
                p.stream_alone_gbps,
                p.stream_with_gbps,
                p.dma_alone_gbps,
                p.dma_with_gbps
            ));
            if (0.0..=4.0).contains(&e) {
                extra.push(e);
            }
        }
    }
    let copy_f = if extra.is_empty() {
        notes.push(
            "pageable_copy_dram_factor: not observable (no saturated pageable run with a \
             plausible value); physical default 2.0 (memcpy read + write) kept"
                .into(),
        );
        2.0
    } else {
        extra.iter().sum::<f64>() / extra.len() as f64
    };
    (
        Some(PcieFit {
            h2d_gbps: h2d,
            d2h_gbps: d2h,
            duplex_gbps: duplex,
            pageable_h2d_gbps: max_rate(m, CopyDir::H2d, false).unwrap_or(h2d / 4.0),
            pageable_d2h_gbps: max_rate(m, CopyDir::D2h, false).unwrap_or(d2h / 4.0),
            h2d_dram_factor: h2d_f,
            d2h_dram_factor: d2h_f,
            pageable_copy_dram_factor: copy_f,
            pageable_h2d_latency_frac: 0.0,
            pageable_d2h_latency_frac: 0.0,
            pageable_h2d_latency_exponent: None,
            pageable_d2h_latency_exponent: None,
            pinned_h2d_latency_frac: 0.0,
            pinned_d2h_latency_frac: 0.0,
            notes,
        }),
        cap,
        basis,
    )
}

/// Fraction phi of a pageable copy's time that is latency bound, from its slowdown next
/// to streams: D_alone / D_with = (1 - phi) + phi * L(u) / L(0). None if not observable.
pub fn latency_frac(
    p: &DmaStreamPoint,
    pf: &PcieFit,
    cap: f64,
    curve: &crate::model::LatencyCurve,
) -> Option<f64> {
    if p.dma_with_gbps <= 0.0 || p.dma_alone_gbps <= 0.0 {
        return None;
    }
    let slow = p.dma_alone_gbps / p.dma_with_gbps;
    let dram_f = pf.h2d_dram_factor + pf.pageable_copy_dram_factor;
    let u = ((p.stream_with_gbps + dram_f * p.dma_with_gbps) / cap).clamp(0.0, 1.0);
    let ratio = curve.slowdown(u);
    if ratio < 1.02 {
        return None;
    }
    Some(((slow - 1.0) / (ratio - 1.0)).clamp(0.0, 1.0))
}

/// Fraction phi of a pinned DMA's time that is DRAM-latency bound, from its runs next
/// to streams. A DMA that reads host memory keeps a bounded number of requests in
/// flight, each waiting a PCIe round trip plus the DRAM latency, so it slows as the
/// latency rises even before DRAM saturates: D_alone / D_with = (1 - phi) + phi L/L(0),
/// with L read on the offered-load `curve` at the run's load (streams + `dram_factor`
/// x DMA over `cap`). phi is the least-squares slope through the origin of
/// (D_alone/D_with - 1) on (L/L(0) - 1): the loaded runs, where the slowdown stands
/// above the noise, weigh most. Runs where latency rose less than 2% say nothing.
/// Returns (phi clamped to 0..=1, runs used), or None with fewer than two such runs.
pub fn pinned_latency_frac(
    runs: &[&DmaStreamPoint],
    dram_factor: f64,
    cap: f64,
    curve: &crate::model::LatencyCurve,
) -> Option<(f64, usize)> {
    let (mut xy, mut xx, mut n) = (0.0, 0.0, 0);
    for p in runs {
        if p.dma_with_gbps <= 0.0 || p.dma_alone_gbps <= 0.0 || cap <= 0.0 {
            continue;
        }
        let load = (p.stream_with_gbps + dram_factor * p.dma_with_gbps) / cap;
        let x = curve.slowdown(load) - 1.0;
        if x < 0.02 {
            continue;
        }
        let y = p.dma_alone_gbps / p.dma_with_gbps - 1.0;
        xy += x * y;
        xx += x * x;
        n += 1;
    }
    (n >= 2).then(|| ((xy / xx).clamp(0.0, 1.0), n))
}

/// The exponent k of a pageable copy's slowdown on loaded latency, from its runs next to
/// streams: the driver's memcpy thread runs at `alone x (L(0)/L)^k`. Little's law with
/// the lines in flight of its idle rate gives k = 1; a memcpy that also loses lines in
/// flight on a loaded host (its core's other thread streaming, its prefetches dropped)
/// falls faster. Per run, k = ln(alone / with) / ln(L/L(0)) with L read on the
/// offered-load `curve` at the run's load (streams + `dram_factor` x copy over `cap`),
/// as [`pinned_latency_frac`] reads it; the median over runs, within 0 and `max` (below 1:
/// only part of the memcpy's time waits on DRAM, the rest on its own CPU work). Runs
/// where latency rose less than 2% say nothing. Returns (k, runs used, the median before
/// clamping), or None without such a run.
pub fn pageable_latency_exponent(
    runs: &[&DmaStreamPoint],
    dram_factor: f64,
    cap: f64,
    curve: &crate::model::LatencyCurve,
    max: f64,
) -> Option<(f64, usize, f64)> {
    let ks: Vec<f64> = runs
        .iter()
        .filter(|p| p.dma_with_gbps > 0.0 && p.dma_alone_gbps > 0.0 && cap > 0.0)
        .filter_map(|p| {
            let load = (p.stream_with_gbps + dram_factor * p.dma_with_gbps) / cap;
            let ratio = curve.slowdown(load);
            (ratio >= 1.02).then(|| (p.dma_alone_gbps / p.dma_with_gbps).ln() / ratio.ln())
        })
        .filter(|k| k.is_finite())
        .collect();
    let n = ks.len();
    let k = median(&ks)?;
    Some((k.clamp(0.0, max), n, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::measurements::PciePoint;
    use crate::calibrate::probe::stream::Kernel;

    fn run(dir: &str, pinned: bool, s: (f64, f64), d: (f64, f64)) -> DmaStreamPoint {
        DmaStreamPoint {
            dir: dir.into(),
            pinned,
            mix: Kernel::Copy,
            stream_threads: 14,
            stream_alone_gbps: s.0,
            stream_with_gbps: s.1,
            dma_alone_gbps: d.0,
            dma_with_gbps: d.1,
            mib: 2048,
            pass: 0,
            dma_seconds: 2.0,
        }
    }

    #[test]
    fn capacity_and_dma_factor_recovered_from_saturated_runs() {
        // Truth: C = 180, f = 1.2. Streams alone 150; DMA alone 55.
        let mk = |dir: &str, d: f64| run(dir, true, (150.0, 180.0 - 1.2 * d), (55.0, d));
        let runs = [mk("h2d", 40.0), mk("d2h", 50.0)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (c, f, why) = fit_capacity(150.0, &refs);
        assert!(
            (c - 180.0).abs() < 1e-9 && (f - 1.2).abs() < 1e-9,
            "{c} {f} {why}"
        );
        // One saturated run: f = 1 assumed, C = S + D.
        let (c, f, _) = fit_capacity(150.0, &refs[..1]);
        assert_eq!((c, f), (132.0 + 40.0, 1.0));
        // Three saturated runs whose DMA rates hardly differ (a device calibration of
        // 2026-12-01): their noise gave a line of f = 2.41 and C = 264; no slope is read,
        // f = 1 and C is the largest S + D.
        let noisy = [
            run("h2d", true, (146.5, 141.6), (55.3, 50.1)),
            run("h2d", true, (152.2, 143.2), (55.2, 50.8)),
            run("d2h", true, (152.8, 135.8), (55.3, 52.9)),
        ];
        let refs: Vec<&DmaStreamPoint> = noisy.iter().collect();
        let (c, f, why) = fit_capacity(150.0, &refs);
        assert_eq!((c, f), (143.2 + 50.8, 1.0), "{why}");
        assert!(why.contains("too little for a slope"), "{why}");
        // A line with a slope but a factor no DMA can have (3 DRAM bytes per byte).
        let steep = [mk("h2d", 40.0), mk("d2h", 50.0)].map(|mut p| {
            p.stream_with_gbps = 250.0 - 3.0 * p.dma_with_gbps;
            p
        });
        let refs: Vec<&DmaStreamPoint> = steep.iter().collect();
        let (c, f, why) = fit_capacity(150.0, &refs);
        assert_eq!((c, f), (130.0 + 40.0, 1.0), "{why}");
        assert!(why.contains("outside the physical 1-2"), "{why}");
        // Nothing saturated (streams did not slow): a lower bound.
        let idle = [run("h2d", true, (100.0, 99.5), (55.0, 54.0))];
        let refs: Vec<&DmaStreamPoint> = idle.iter().collect();
        let (c, f, why) = fit_capacity(120.0, &refs);
        assert_eq!((c, f), (153.5, 1.0));
        assert!(why.contains("lower bound"));
    }

    #[test]
    fn pcie_fit_reads_rates_and_pageable_factor() {
        let mut m = Measurements::default();
        for (dir, pinned, h, d) in [
            ("h2d", true, 50.0, 0.0),
            ("d2h", true, 0.0, 52.0),
            ("both", true, 45.0, 47.0),
            ("h2d", false, 7.0, 0.0),
            ("d2h", false, 0.0, 14.0),
        ] {
            m.pcie.push(PciePoint {
                dir: dir.into(),
                pinned,
                mib: 1024,
                h2d_gbps: h,
                d2h_gbps: d,
            });
        }
        // C = 180, f = 1, pageable extra 2.5: S = 180 - 3.5 * 6.
        m.dma_stream = vec![
            run("h2d", true, (150.0, 140.0), (50.0, 40.0)),
            run("d2h", true, (150.0, 130.0), (52.0, 50.0)),
            run("h2d", false, (170.0, 180.0 - 3.5 * 6.0), (7.0, 6.0)),
        ];
        let (pf, c, _) = fit_pcie(&m, 150.0);
        let pf = pf.unwrap();
        assert!((c - 180.0).abs() < 1e-9);
        assert!((pf.h2d_dram_factor - 1.0).abs() < 1e-9);
        assert!((pf.pageable_copy_dram_factor - 2.5).abs() < 1e-9);
        assert_eq!(pf.duplex_gbps, Some(92.0));
        assert_eq!(pf.pageable_h2d_gbps, 7.0);
    }

    #[test]
    fn latency_fraction_recovered() {
        // L(u) doubles at u = 1; a copy 40% latency bound at u = 1 runs 1.4x slower.
        let curve = crate::model::LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let pf = PcieFit {
            h2d_gbps: 50.0,
            d2h_gbps: 50.0,
            duplex_gbps: None,
            pageable_h2d_gbps: 7.0,
            pageable_d2h_gbps: 7.0,
            h2d_dram_factor: 1.0,
            d2h_dram_factor: 1.0,
            pageable_copy_dram_factor: 2.0,
            pageable_h2d_latency_frac: 0.0,
            pageable_d2h_latency_frac: 0.0,
            pageable_h2d_latency_exponent: None,
            pageable_d2h_latency_exponent: None,
            pinned_h2d_latency_frac: 0.0,
            pinned_d2h_latency_frac: 0.0,
            notes: vec![],
        };
        let d_with = 7.0 / 1.4;
        let p = run("h2d", false, (200.0, 200.0 - 3.0 * d_with), (7.0, d_with));
        let phi = latency_frac(&p, &pf, 200.0, &curve).unwrap();
        assert!((phi - 0.4).abs() < 1e-9, "{phi}");
    }

    #[test]
    fn pageable_exponent_is_the_median_log_ratio() {
        // Offered-load curve: 100 ns idle, 200 ns at load 1. A memcpy of 8 GB/s alone with
        // exponent 2: at load 0.5 (1.5x latency) it runs 8 / 2.25, at load 1 (2x) 8 / 4.
        let curve = crate::model::LatencyCurve::offered(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        // dram factor 3 (DMA 1 + memcpy 2) over capacity 200: streams fill the rest.
        let at = |load: f64, slow: f64| {
            let d = 8.0 / slow;
            run("h2d", false, (200.0, load * 200.0 - 3.0 * d), (8.0, d))
        };
        let runs = [at(0.5, 2.25), at(1.0, 4.0), at(0.01, 1.0)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (k, n, raw) = pageable_latency_exponent(&refs, 3.0, 200.0, &curve, 4.0).unwrap();
        assert!(
            (k - 2.0).abs() < 1e-9 && (raw - 2.0).abs() < 1e-9,
            "{k} {raw}"
        );
        // The run at load 0.01 (latency up 1%) says nothing.
        assert_eq!(n, 2);
        // A memcpy that slowed less than latency rose (1.2x where latency doubled) is
        // only partly latency bound: k = ln 1.2 / ln 2. One that sped up keeps 0; one
        // that slowed beyond the bound is held at it.
        let runs = [at(1.0, 1.2)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (k, _, _) = pageable_latency_exponent(&refs, 3.0, 200.0, &curve, 4.0).unwrap();
        assert!((k - 1.2f64.ln() / 2f64.ln()).abs() < 1e-9, "{k}");
        let runs = [at(1.0, 0.9)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (k, _, raw) = pageable_latency_exponent(&refs, 3.0, 200.0, &curve, 4.0).unwrap();
        assert!(k == 0.0 && raw < 0.0, "{k} {raw}");
        let runs = [at(1.0, 40.0)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (k, _, _) = pageable_latency_exponent(&refs, 3.0, 200.0, &curve, 4.0).unwrap();
        assert_eq!(k, 4.0);
        assert_eq!(
            pageable_latency_exponent(&[], 3.0, 200.0, &curve, 4.0),
            None
        );
    }

    #[test]
    fn pinned_latency_fraction_is_the_slope_through_the_origin() {
        // Offered-load curve: 100 ns idle, 200 ns at load 1, 300 ns at 2 (the ray).
        let curve = crate::model::LatencyCurve::offered(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        // A DMA 20% latency bound: at load 0.5 (150 ns) it runs 1.1x slower, at load
        // 1.0 (200 ns) 1.2x. Streams + DMA make the load over capacity 200.
        let at = |load: f64, slow: f64| {
            let d = 50.0 / slow;
            run("h2d", true, (200.0, load * 200.0 - d), (50.0, d))
        };
        let runs = [at(0.5, 1.1), at(1.0, 1.2), at(0.01, 1.0)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (phi, n) = pinned_latency_frac(&refs, 1.0, 200.0, &curve).unwrap();
        assert!((phi - 0.2).abs() < 1e-9, "{phi}");
        // The run at load 0.01 (latency up 1%) is left out.
        assert_eq!(n, 2);
        // Noisy slowdowns: x = 0.5 and 1.0, y = 0.06 and 0.24: slope 0.27 / 1.25.
        let runs = [at(0.5, 1.06), at(1.0, 1.24)];
        let refs: Vec<&DmaStreamPoint> = runs.iter().collect();
        let (phi, _) = pinned_latency_frac(&refs, 1.0, 200.0, &curve).unwrap();
        assert!((phi - 0.27 / 1.25).abs() < 1e-9, "{phi}");
        // One usable run is not enough; a DMA that sped up is not bound (clamped to 0).
        assert!(pinned_latency_frac(&refs[..1], 1.0, 200.0, &curve).is_none());
        let faster = [at(0.5, 0.95), at(1.0, 0.97)];
        let refs: Vec<&DmaStreamPoint> = faster.iter().collect();
        assert_eq!(
            pinned_latency_frac(&refs, 1.0, 200.0, &curve).unwrap().0,
            0.0
        );
    }
}
