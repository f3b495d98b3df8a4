//! Kernel time models from GPU timings: t(n) = a * g(n) + b by weighted least squares
//! (NTT: g = n log2 n; MSM: the better of n and n / log2 n).

use crate::calibrate::measurements::{MsmPoint, NttPoint};
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
