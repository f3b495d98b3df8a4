//! How each DMA direction shares DRAM with CPU streams: the sharing policy (who slows)
//! and the DRAM bytes per DMA byte from runs that saturated DRAM.

use super::{ContentionFit, Spread, UNCHANGED, spread_checked};
use crate::calibrate::measurements::{DmaStreamPoint, Measurements};
use serde::{Deserialize, Serialize};

/// How a DMA direction shares DRAM with CPU streams.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DmaShareFit {
    /// "proportional" (the DMA slows about as much as the streams) or "priority" (it
    /// keeps its rate while the streams slow).
    pub policy: String,
    /// Median fraction the DMA lost next to the streams, over the runs.
    pub dma_slowdown: Spread,
    /// Median fraction the streams lost next to the DMA.
    pub stream_slowdown: Spread,
    /// DRAM bytes per DMA byte, (capacity - streams) / DMA over saturated runs (absent
    /// when no run saturated DRAM).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dram_factor: Option<Spread>,
    /// Pinned runs used.
    pub runs: usize,
}

fn slow(alone: f64, with: f64) -> f64 {
    if alone > 0.0 { 1.0 - with / alone } else { 0.0 }
}

pub(super) fn dma(m: &Measurements, capacity: f64, f: &mut ContentionFit) {
    for dir in ["h2d", "d2h"] {
        let runs: Vec<&DmaStreamPoint> = m
            .dma_stream
            .iter()
            .filter(|p| p.pinned && p.dir == dir && p.stream_threads > 0)
            .collect();
        if runs.is_empty() {
            f.unresolved.push(format!(
                "DMA sharing policy {dir}: no pinned run next to streams"
            ));
            continue;
        }
        let ds: Vec<f64> = runs
            .iter()
            .map(|p| slow(p.dma_alone_gbps, p.dma_with_gbps))
            .collect();
        let ss: Vec<f64> = runs
            .iter()
            .map(|p| slow(p.stream_alone_gbps, p.stream_with_gbps))
            .collect();
        let (Some(d), Some(s)) = (Spread::of(&ds), Spread::of(&ss)) else {
            continue;
        };
        for p in &runs {
            if p.stream_alone_gbps > capacity * (1.0 + UNCHANGED) {
                f.warnings.push(format!(
                    "{dir} x{}: the streams alone ran {:.1} GB/s, above the fitted capacity \
                     {capacity:.1} GB/s (non-physical capacity)",
                    p.stream_threads, p.stream_alone_gbps
                ));
            }
        }
        // Priority: the DMA keeps its rate (loses under 3%, or under a third of what the
        // streams lose) while the streams slow.
        let policy = if s.median > UNCHANGED && d.median < UNCHANGED.max(s.median / 3.0) {
            "priority"
        } else {
            "proportional"
        };
        if s.median <= UNCHANGED && d.median <= UNCHANGED {
            f.unresolved.push(format!(
                "DMA sharing policy {dir}: neither side slowed (DRAM never saturated); \
                 'proportional' is a default"
            ));
        }
        let mut factors = Vec::new();
        for p in &runs {
            let sat = p.stream_with_gbps < p.stream_alone_gbps * (1.0 - UNCHANGED)
                && p.stream_alone_gbps + p.dma_alone_gbps > capacity
                && p.dma_with_gbps > 0.0;
            if sat {
                let x = (capacity - p.stream_with_gbps) / p.dma_with_gbps;
                if !x.is_finite() {
                    continue;
                }
                if x < 1.0 {
                    f.warnings.push(format!(
                        "{dir} x{}: DMA DRAM factor {x:.2} < 1 is non-physical (every DMA \
                         byte crosses DRAM once); clamped to 1.0",
                        p.stream_threads
                    ));
                    factors.push(1.0);
                } else {
                    factors.push(x);
                }
            }
        }
        let dram_factor =
            spread_checked(&factors, &format!("{dir} DMA DRAM factor"), &mut f.warnings);
        if dram_factor.is_none() {
            f.unresolved
                .push(format!("{dir} DMA DRAM factor: no run saturated DRAM"));
        }
        f.dma.insert(
            dir.into(),
            DmaShareFit {
                policy: policy.into(),
                dma_slowdown: d,
                stream_slowdown: s,
                dram_factor,
                runs: runs.len(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::fit_contention;
    use super::*;
    use crate::calibrate::probe::stream::Kernel;

    fn dma_run(dir: &str, s: (f64, f64), d: (f64, f64)) -> DmaStreamPoint {
        DmaStreamPoint {
            dir: dir.into(),
            pinned: true,
            mix: Kernel::Copy,
            stream_threads: 8,
            stream_alone_gbps: s.0,
            stream_with_gbps: s.1,
            dma_alone_gbps: d.0,
            dma_with_gbps: d.1,
            mib: 1024,
            pass: 0,
            dma_seconds: 1.0,
        }
    }

    #[test]
    fn dma_policy_priority_vs_proportional_and_factor_clamped_with_warning() {
        let mut m = Measurements::default();
        // h2d keeps its rate while streams lose 20%: priority. C = 200: factor
        // (200 - 120) / 50 = 1.6.
        m.dma_stream
            .push(dma_run("h2d", (160.0, 120.0), (50.0, 50.0)));
        // d2h and streams both lose ~20%: proportional; factor (200-160)/48 < 1: clamped.
        m.dma_stream
            .push(dma_run("d2h", (200.0, 160.0), (60.0, 48.0)));
        let f = fit_contention(&m, 200.0);
        assert_eq!(f.dma["h2d"].policy, "priority");
        assert!((f.dma["h2d"].dram_factor.unwrap().median - 1.6).abs() < 1e-9);
        assert_eq!(f.dma["d2h"].policy, "proportional");
        assert_eq!(f.dma["d2h"].dram_factor.unwrap().median, 1.0);
        assert!(f.warnings.iter().any(|w| w.contains("non-physical")));
    }
}
