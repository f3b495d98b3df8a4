//! The loaded-latency curve from pointer-chase points: medians of repeated passes,
//! utilisation of the fitted capacity, made non-decreasing by isotonic regression.

use crate::analysis::median::median;
use crate::calibrate::measurements::Measurements;
use crate::calibrate::probe::stream::Kernel;
use std::collections::BTreeMap;

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
    // Each entry holds at least the point that made it.
    by.into_values()
        .filter_map(|(bw, ns)| Some((median(&bw)?, median(&ns)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
