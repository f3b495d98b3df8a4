//! Fits of the contention probes: latency vs offered load per write fraction and the
//! page-size factor (`loaded_latency`), compute throughput vs active threads and SMT yield
//! (`compute`), the DMA sharing policy and DRAM factor per direction (`dma`), and pageable
//! copies as CPU staging (`pageable`). Every number carries its spread across passes;
//! disagreeing passes and non-physical values become `warnings` (never a silent clamp).

mod compute;
mod dma;
mod loaded_latency;
mod pageable;

pub use compute::ComputeRow;
pub use dma::DmaShareFit;
pub use loaded_latency::{OfferedCurve, OfferedRow, PageFit};
pub use pageable::{NeighbourPoint, StagingFit};

use crate::calibrate::measurements::Measurements;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Passes disagreeing by more than this (max - min over the median) are warned about.
pub const PASS_DISAGREEMENT: f64 = 0.10;
/// A rate that moved by less than this fraction is taken as unchanged.
const UNCHANGED: f64 = 0.03;

/// The median of repeated values and how far apart they were.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Spread {
    /// Median across passes.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// (max - min) / median (0 with one pass).
    pub rel_spread: f64,
    /// Number of values.
    pub n: usize,
}

impl Spread {
    /// None for an empty or non-finite set.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let median = crate::analysis::median::median(values)?;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let n = values.len();
        let rel_spread = if median.abs() > 0.0 {
            (max - min) / median.abs()
        } else {
            0.0
        };
        Some(Self {
            median,
            min,
            max,
            rel_spread,
            n,
        })
    }
}

/// Everything fitted from the contention probes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ContentionFit {
    /// Latency vs offered load per mix ("read", "copy", "write").
    pub offered_latency: BTreeMap<String, OfferedCurve>,
    /// Page-size factor.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pages: Option<PageFit>,
    /// Compute throughput vs active threads.
    pub compute: Vec<ComputeRow>,
    /// Both SMT siblings' total over one sibling alone (1: no gain, 2: perfect).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub smt_yield: Option<f64>,
    /// DMA sharing per direction ("h2d", "d2h").
    pub dma: BTreeMap<String, DmaShareFit>,
    /// Pageable copies per direction.
    pub staging: BTreeMap<String, StagingFit>,
    /// What could not be pinned down (too few points, no GPU, ...).
    pub unresolved: Vec<String>,
    /// Passes that disagreed and values that were non-physical.
    pub warnings: Vec<String>,
}

fn spread_checked(values: &[f64], what: &str, warnings: &mut Vec<String>) -> Option<Spread> {
    let s = Spread::of(values)?;
    if s.n > 1 && s.rel_spread > PASS_DISAGREEMENT {
        warnings.push(format!(
            "{what}: passes disagree by {:.0}% ({:.4} .. {:.4}, median {:.4})",
            s.rel_spread * 100.0,
            s.min,
            s.max,
            s.median
        ));
    }
    Some(s)
}

/// Fits the contention probes against the DRAM capacity `capacity` (GB/s).
pub fn fit_contention(m: &Measurements, capacity: f64) -> ContentionFit {
    let mut f = ContentionFit::default();
    loaded_latency::offered(m, capacity, &mut f);
    loaded_latency::pages(m, &mut f);
    compute::compute(m, &mut f);
    dma::dma(m, capacity, &mut f);
    pageable::staging(m, capacity, &mut f);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_reports_median_and_relative_range() {
        let s = Spread::of(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (11.0, 10.0, 12.0, 3));
        assert!((s.rel_spread - 2.0 / 11.0).abs() < 1e-12);
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[f64::INFINITY]).is_none());
    }
}
