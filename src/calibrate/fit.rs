//! Fits the model's parameters from [`Measurements`]: DRAM capacity, the loaded-latency
//! curve, PCIe rates and their coupling to DRAM, and kernel time models.

use super::data::{DmaStreamPoint, Measurements, MsmPoint, NttPoint};
use super::stream::Kernel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Least-squares line y = a*x + b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Slope.
    pub a: f64,
    /// Intercept.
    pub b: f64,
}

/// Fits y = a*x + b by ordinary least squares. Needs two distinct x values.
pub fn fit_line(xs: &[f64], ys: &[f64]) -> Option<Line> {
    let n = xs.len();
    if n < 2 || ys.len() != n {
        return None;
    }
    let mx = xs.iter().sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    if sxx <= 0.0 || !sxx.is_finite() {
        return None;
    }
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let a = sxy / sxx;
    Some(Line { a, b: my - a * mx })
}

/// A kernel time model t(n) = a * g(n) + b, with its residuals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelFit {
    /// "n*log2(n)", "n" or "n/log2(n)".
    pub model: String,
    /// Nanoseconds per unit of g(n).
    pub a_ns: f64,
    /// Fixed cost in seconds.
    pub b_s: f64,
    /// Root-mean-square relative residual.
    pub rms_rel_residual: f64,
    /// (log2 n, measured ms, model ms).
    pub points: Vec<(u32, f64, f64)>,
}

impl KernelFit {
    /// Model time in seconds at size 2^lg.
    pub fn seconds(&self, lg: u32) -> f64 {
        self.a_ns * 1e-9 * g(&self.model, lg) + self.b_s
    }
}

fn g(model: &str, lg: u32) -> f64 {
    let n = (lg as f64).exp2();
    match model {
        "n*log2(n)" => n * lg as f64,
        "n/log2(n)" => n / lg as f64,
        _ => n,
    }
}

/// Fits t = a*g(n) + b over (lg, ms) points. Weighted towards relative error by
/// fitting in seconds and scoring the relative residual.
pub fn fit_kernel(model: &str, pts: &[(u32, f64)]) -> Option<KernelFit> {
    // Relative weighting: divide each equation by its measured time.
    let xs: Vec<f64> = pts.iter().map(|&(lg, _)| g(model, lg)).collect();
    let ys: Vec<f64> = pts.iter().map(|&(_, ms)| ms * 1e-3).collect();
    let (a, b) = weighted_line(&xs, &ys)?;
    let mut sq = 0.0;
    let mut points = Vec::new();
    for (&(lg, ms), &x) in pts.iter().zip(&xs) {
        let fit_ms = (a * x + b) * 1e3;
        sq += ((fit_ms - ms) / ms).powi(2);
        points.push((lg, ms, fit_ms));
    }
    Some(KernelFit {
        model: model.into(),
        a_ns: a * 1e9,
        b_s: b,
        rms_rel_residual: (sq / pts.len() as f64).sqrt(),
        points,
    })
}

/// Least squares of y = a x + b with weights 1/y^2 (minimises relative error).
fn weighted_line(xs: &[f64], ys: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&x, &y) in xs.iter().zip(ys) {
        if y.is_nan() || y <= 0.0 {
            return None;
        }
        let w = 1.0 / (y * y);
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
    let det = sw * sxx - sx * sx;
    if det.abs() < 1e-300 {
        return None;
    }
    let a = (sw * sxy - sx * sy) / det;
    let b = (sy - a * sx) / sw;
    Some((a, b))
}

/// NTT model per variant: t = a * n*log2(n) + b.
pub fn fit_ntt(points: &[NttPoint]) -> BTreeMap<String, KernelFit> {
    let mut by: BTreeMap<String, Vec<(u32, f64)>> = BTreeMap::new();
    for p in points {
        by.entry(p.variant.clone()).or_default().push((p.lg, p.ms));
    }
    by.into_iter()
        .filter_map(|(k, pts)| fit_kernel("n*log2(n)", &pts).map(|f| (k, f)))
        .collect()
}

/// MSM model: the better (by relative residual) of t = a*n + b and t = a*n/log2(n) + b.
pub fn fit_msm(points: &[MsmPoint]) -> Option<KernelFit> {
    let pts: Vec<(u32, f64)> = points.iter().map(|p| (p.lg, p.ms)).collect();
    let lin = fit_kernel("n", &pts);
    let pip = fit_kernel("n/log2(n)", &pts);
    match (lin, pip) {
        (Some(l), Some(p)) => Some(if p.rms_rel_residual < l.rms_rel_residual {
            p
        } else {
            l
        }),
        (l, p) => l.or(p),
    }
}

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Pool-adjacent-violators: the non-decreasing sequence closest (least squares) to `y`.
pub fn isotonic(y: &[f64]) -> Vec<f64> {
    let mut blocks: Vec<(f64, usize)> = Vec::new(); // (mean, count)
    for &v in y {
        blocks.push((v, 1));
        while blocks.len() >= 2 {
            let (m2, c2) = blocks[blocks.len() - 1];
            let (m1, c1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let l = blocks.len() - 1;
            blocks[l] = (
                (m1 * c1 as f64 + m2 * c2 as f64) / (c1 + c2) as f64,
                c1 + c2,
            );
        }
    }
    blocks
        .into_iter()
        .flat_map(|(m, c)| std::iter::repeat_n(m, c))
        .collect()
}

/// Turns (achieved GB/s, ns) points into a utilisation curve for capacity `cap`:
/// sorted by utilisation, clamped to [0, 1], the lowest-load point placed at u = 0 (idle
/// latency), latency made non-decreasing by isotonic regression (noise is averaged, not
/// ratcheted up), points closer than 0.01 in utilisation merged.
pub fn latency_curve(points: &[(f64, f64)], cap: f64) -> Vec<(f64, f64)> {
    if points.is_empty() || cap.is_nan() || cap <= 0.0 {
        return Vec::new();
    }
    let mut p: Vec<(f64, f64)> = points
        .iter()
        .filter(|(bw, ns)| bw.is_finite() && ns.is_finite() && *ns > 0.0)
        .map(|&(bw, ns)| ((bw / cap).clamp(0.0, 1.0), ns))
        .collect();
    if p.is_empty() {
        return Vec::new();
    }
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p[0].0 = 0.0;
    let ns = isotonic(&p.iter().map(|x| x.1).collect::<Vec<_>>());
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (&(u, _), &l) in p.iter().zip(&ns) {
        match out.last_mut() {
            Some(last) if u - last.0 < 0.01 => last.1 = last.1.max(l),
            _ => out.push((u, l)),
        }
    }
    out.iter()
        .map(|&(u, ns)| ((u * 1e4).round() / 1e4, (ns * 10.0).round() / 10.0))
        .collect()
}

/// Medians of repeated loaded-latency points, per mix and stream-thread count:
/// (total GB/s, ns) pairs.
pub fn latency_medians(m: &Measurements, mix: Kernel) -> Vec<(f64, f64)> {
    let mut by: BTreeMap<usize, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for p in m.latency.iter().filter(|p| p.mix == mix) {
        let e = by.entry(p.stream_threads).or_default();
        e.0.push(p.total_gbps);
        e.1.push(p.ns);
    }
    by.into_values()
        .map(|(bw, ns)| (median_of(bw), median_of(ns)))
        .collect()
}

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
    /// How each value was obtained.
    pub notes: Vec<String>,
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

/// Fits DRAM capacity C and DRAM bytes per pinned DMA byte f from saturated runs, where
/// streams S and DMA D obey S + f*D = C: a least-squares line S = C - f*D. With one
/// saturated run f is taken as 1.0 (one DRAM access per DMA byte) and C = S + D; with
/// none, C is the highest total traffic seen. Returns (C, f, explanation).
pub fn fit_capacity(peak_stream: f64, runs: &[&DmaStreamPoint]) -> (f64, f64, String) {
    let sat: Vec<&&DmaStreamPoint> = runs.iter().filter(|p| saturated(p)).collect();
    let seen = runs
        .iter()
        .map(|p| p.stream_with_gbps + p.dma_with_gbps)
        .fold(peak_stream, f64::max);
    if sat.len() >= 2 {
        let ds: Vec<f64> = sat.iter().map(|p| p.dma_with_gbps).collect();
        let ss: Vec<f64> = sat.iter().map(|p| p.stream_with_gbps).collect();
        if let Some(l) = fit_line(&ds, &ss) {
            let f = -l.a;
            if (0.25..=4.0).contains(&f) {
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
        }
    }
    if let Some(p) = sat.iter().max_by(|a, b| {
        (a.stream_with_gbps + a.dma_with_gbps).total_cmp(&(b.stream_with_gbps + b.dma_with_gbps))
    }) {
        let c = (p.stream_with_gbps + p.dma_with_gbps).max(peak_stream);
        return (
            c,
            1.0,
            format!(
                "one saturated stream+DMA run: {:.1} GB/s streams + 1.0 x {:.1} GB/s {} DMA; \
                 CPU threads alone reached {peak_stream:.1}",
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

fn max_rate(m: &Measurements, dir: &str, pinned: bool, h2d: bool) -> Option<f64> {
    m.pcie
        .iter()
        .filter(|p| p.dir == dir && p.pinned == pinned)
        .map(|p| if h2d { p.h2d_gbps } else { p.d2h_gbps })
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))
}

/// Fits the PCIe link, the DRAM capacity and the DMA coupling. `curve` gives L(u) for
/// the pageable copies' latency-bound fraction. Returns (pcie, capacity, basis).
pub fn fit_pcie(m: &Measurements, peak_stream: f64) -> (Option<PcieFit>, f64, String) {
    let pinned: Vec<&DmaStreamPoint> = m.dma_stream.iter().filter(|p| p.pinned).collect();
    let (cap, f, basis) = fit_capacity(peak_stream, &pinned);
    let (Some(h2d), Some(d2h)) = (
        max_rate(m, "h2d", true, true),
        max_rate(m, "d2h", true, false),
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
    let mut dir_factor = |dir: &str| -> f64 {
        let v: Vec<f64> = m
            .dma_stream
            .iter()
            .filter(|p| p.pinned && p.dir == dir && p.dma_with_gbps > 0.0)
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
        let med = median_of(v.clone());
        notes.push(format!(
            "{dir}_dram_factor {med:.2}: (C - streams) / DMA over {} oversubscribed {dir} runs",
            v.len()
        ));
        med
    };
    let (h2d_f, d2h_f) = (dir_factor("h2d"), dir_factor("d2h"));
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
            pageable_h2d_gbps: max_rate(m, "h2d", false, true).unwrap_or(h2d / 4.0),
            pageable_d2h_gbps: max_rate(m, "d2h", false, false).unwrap_or(d2h / 4.0),
            h2d_dram_factor: h2d_f,
            d2h_dram_factor: d2h_f,
            pageable_copy_dram_factor: copy_f,
            pageable_h2d_latency_frac: 0.0,
            pageable_d2h_latency_frac: 0.0,
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
    pub contention: super::fit_contention::ContentionFit,
}

/// Fits all parameters.
pub fn fit(m: &Measurements) -> anyhow::Result<Fitted> {
    let peak_stream = m
        .bandwidth
        .iter()
        .map(|p| p.dram_gbps)
        .chain(m.latency.iter().map(|p| p.total_gbps))
        .fold(0.0f64, f64::max);
    if peak_stream <= 0.0 {
        anyhow::bail!("no bandwidth measurements to fit a DRAM capacity from");
    }
    if !peak_stream.is_finite() {
        anyhow::bail!("the measured bandwidths include a non-finite value");
    }
    let (mut pcie, capacity, basis) = fit_pcie(m, peak_stream);
    let capacity_rounded = (capacity * 100.0).round() / 100.0;
    if !(capacity_rounded.is_finite() && capacity_rounded > 0.0) {
        anyhow::bail!("the fitted DRAM capacity {capacity} GB/s is not a finite number > 0");
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
        anyhow::bail!("no latency measurements to fit a latency curve from");
    };
    let idle = curve.first().map_or(100.0, |p| p.1);
    if let Some(pf) = pcie.as_mut() {
        let lc = crate::model::LatencyCurve::new(curve.clone())
            .map_err(|e| anyhow::anyhow!("fitted latency curve: {e}"))?;
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
        contention: super::fit_contention::fit_contention(m, capacity),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::data::{DmaStreamPoint, PciePoint};

    #[test]
    fn line_recovers_slope_and_intercept() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 * x + 2.0).collect();
        let l = fit_line(&xs, &ys).unwrap();
        assert!((l.a - 3.0).abs() < 1e-12 && (l.b - 2.0).abs() < 1e-12);
        assert!(fit_line(&[1.0, 1.0], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn ntt_model_recovers_known_parameters() {
        // t = 0.15 ns * n log n + 0.2 ms, with +-1% alternating noise.
        let pts: Vec<NttPoint> = (20..=27)
            .map(|lg| {
                let n = (lg as f64).exp2();
                let t = 0.15e-9 * n * lg as f64 + 0.2e-3;
                let noise = if lg % 2 == 0 { 1.01 } else { 0.99 };
                NttPoint {
                    lg,
                    variant: "fwd_nr".into(),
                    ms: t * noise * 1e3,
                }
            })
            .collect();
        let f = &fit_ntt(&pts)["fwd_nr"];
        assert!((f.a_ns - 0.15).abs() / 0.15 < 0.02, "{}", f.a_ns);
        assert!(f.rms_rel_residual < 0.02);
        assert!((f.seconds(27) - (0.15e-9 * 27.0 * 2f64.powi(27) + 0.2e-3)).abs() < 0.01);
    }

    #[test]
    fn msm_model_prefers_the_generating_form() {
        let pts: Vec<MsmPoint> = (20..=26)
            .map(|lg| {
                let n = (lg as f64).exp2();
                MsmPoint {
                    lg,
                    ms: (150.0e-9 * n / lg as f64 + 5e-3) * 1e3,
                }
            })
            .collect();
        let f = fit_msm(&pts).unwrap();
        assert_eq!(f.model, "n/log2(n)");
        assert!((f.a_ns - 150.0).abs() < 0.5);
        assert!((f.b_s - 5e-3).abs() < 1e-5);
        let lin: Vec<MsmPoint> = (20..=26)
            .map(|lg| MsmPoint {
                lg,
                ms: (8.0e-9 * (lg as f64).exp2() + 1e-3) * 1e3,
            })
            .collect();
        assert_eq!(fit_msm(&lin).unwrap().model, "n");
    }

    #[test]
    fn latency_curve_is_sorted_monotone_and_normalised() {
        // A known curve: L(u) = 100 + 300 u^4 sampled at achieved bandwidths of cap 200.
        let pts: Vec<(f64, f64)> = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95]
            .iter()
            .rev()
            .map(|&u: &f64| (u * 200.0, 100.0 + 300.0 * u.powi(4)))
            .collect();
        let c = latency_curve(&pts, 200.0);
        assert_eq!(c[0], (0.0, 100.0));
        assert!(c.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1));
        let model = crate::model::LatencyCurve::new(c.clone()).unwrap();
        assert!((model.latency_ns(0.9) - (100.0 + 300.0 * 0.9f64.powi(4))).abs() < 0.5);
        // A noisy dip is averaged away (isotonic), not kept and not ratcheted up.
        let c = latency_curve(&[(0.0, 100.0), (50.0, 120.0), (100.0, 116.0)], 100.0);
        assert_eq!(c[1].1, 118.0);
        assert_eq!(c[2].1, 118.0);
        assert_eq!(isotonic(&[1.0, 3.0, 2.0, 4.0]), vec![1.0, 2.5, 2.5, 4.0]);
    }

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
            notes: vec![],
        };
        let d_with = 7.0 / 1.4;
        let p = run("h2d", false, (200.0, 200.0 - 3.0 * d_with), (7.0, d_with));
        let phi = latency_frac(&p, &pf, 200.0, &curve).unwrap();
        assert!((phi - 0.4).abs() < 1e-9, "{phi}");
    }
}
