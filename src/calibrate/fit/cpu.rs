//! The CPU's compute throughput for the model's pools (`[hardware.cpu]`): from the
//! compute probe's per-thread rates at 1..N threads (one per core first), the per-core
//! throughput relative to one core alone as more cores are active, fitted
//! non-increasing (all-core frequency cannot rise with more active cores: a lower
//! first point is noise, averaged with its neighbours, not taken as a speed-up).

use super::contention::ContentionFit;
use super::latency::isotonic;
use crate::calibrate::measurements::Measurements;
use serde::{Deserialize, Serialize};

/// `[hardware.cpu]` as calibrate writes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CpuTable {
    /// Physical cores under the measured CPUs.
    pub physical_cores: usize,
    /// Hardware threads per core (1 when no SMT siblings were seen).
    pub threads_per_core: usize,
    /// Both siblings busy / one alone (1 without SMT pairs measured).
    pub smt_yield: f64,
    /// (active cores, throughput per core relative to one alone), non-increasing.
    pub per_core_throughput: Vec<(f64, f64)>,
}

/// The table, when the compute probe ran on at least one core count.
pub fn cpu_table(m: &Measurements, c: &ContentionFit) -> Option<CpuTable> {
    let threads_per_core = m.smt_groups.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let physical_cores = if m.smt_groups.is_empty() {
        m.host.as_ref().map_or(1, |h| h.cores.max(1))
    } else {
        m.smt_groups.len()
    };
    // Rows up to one thread per core measure per-core throughput alone.
    let mut rows: Vec<(f64, f64)> = (c.compute.iter())
        .filter(|r| r.threads >= 1 && r.threads <= physical_cores && r.relative > 0.0)
        .map(|r| (r.threads as f64, r.relative))
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    rows.dedup_by(|a, b| a.0 == b.0);
    if rows.is_empty() {
        return None;
    }
    let neg: Vec<f64> = rows.iter().map(|r| -r.1).collect();
    let fitted: Vec<f64> = isotonic(&neg).into_iter().map(|v| -v).collect();
    let first = fitted[0];
    let per_core_throughput = rows
        .iter()
        .zip(&fitted)
        .map(|(r, v)| (r.0, (v / first * 1e4).round() / 1e4))
        .collect();
    Some(CpuTable {
        physical_cores,
        threads_per_core,
        smt_yield: c
            .smt_yield
            .map_or(1.0, |y| y.clamp(1.0, threads_per_core as f64)),
        per_core_throughput,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::fit::contention::ComputeRow;

    #[test]
    fn a_slow_first_point_is_averaged_not_taken_as_a_speed_up() {
        let row = |threads, relative| ComputeRow {
            threads,
            per_thread_mops: 500.0 * relative,
            relative,
        };
        let c = ContentionFit {
            compute: vec![row(1, 1.0), row(2, 1.1), row(3, 1.06), row(4, 0.9)],
            ..Default::default()
        };
        let m = Measurements {
            smt_groups: vec![vec![0], vec![1], vec![2], vec![3]],
            ..Default::default()
        };
        let t = cpu_table(&m, &c).unwrap();
        // 1, 1.1, 1.06 pool to 1.0533; normalised to the first: 1, 1, 1, 0.9/1.0533.
        assert_eq!(t.physical_cores, 4);
        assert_eq!(t.threads_per_core, 1);
        assert_eq!(t.smt_yield, 1.0);
        let r: Vec<f64> = t.per_core_throughput.iter().map(|p| p.1).collect();
        assert_eq!(r[..3], [1.0, 1.0, 1.0]);
        assert!((r[3] - (0.9_f64 / (3.16 / 3.0) * 1e4).round() / 1e4).abs() < 1e-12);
    }
}
