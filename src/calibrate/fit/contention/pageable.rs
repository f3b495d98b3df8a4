//! Pageable copies as a CPU staging memcpy plus the DMA: the per-call setup and rate
//! from two copy sizes, the rate next to streams over alone, and the DRAM bytes per
//! copied byte.

use super::{ContentionFit, Spread, UNCHANGED, spread_checked};
use crate::calibrate::measurements::Measurements;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A pageable copy as a CPU staging memcpy plus the DMA: time per call = setup + bytes
/// / rate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StagingFit {
    /// Fixed cost per call, s.
    pub setup_s: f64,
    /// Streaming rate, GB/s.
    pub gbps: f64,
    /// Measured alone rate per size (MiB -> GB/s across passes).
    pub alone_gbps: BTreeMap<String, Spread>,
    /// Rate next to streams over alone, per size (MiB -> ratio across passes).
    pub contended_ratio: BTreeMap<String, Spread>,
    /// DRAM bytes per copied byte from saturated runs (absent when not observable).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dram_bytes_per_byte: Option<Spread>,
    /// Rate next to streams over alone by streaming threads per CPU, fewest first (over
    /// sizes and passes; empty when not measured next to streams).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beside_streams: Vec<NeighbourPoint>,
}

/// A pageable copy's rate next to streams over alone at one streaming thread count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NeighbourPoint {
    /// Streaming threads per CPU.
    pub threads_per_cpu: f64,
    /// Rate next to them over alone, across sizes and passes.
    pub ratio: Spread,
}

/// Each streaming thread count's ratio of a pageable copy in `dir`, from `dma_stream`
/// and `pageable_beside_streams`, on a host of `cpus` CPUs.
fn beside_streams(
    m: &Measurements,
    dir: &str,
    cpus: usize,
    f: &mut ContentionFit,
) -> Vec<NeighbourPoint> {
    let mut by_threads: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for p in (m.dma_stream.iter())
        .chain(&m.pageable_beside_streams)
        .filter(|p| !p.pinned && p.dir == dir && p.stream_threads > 0 && p.dma_alone_gbps > 0.0)
    {
        by_threads
            .entry(p.stream_threads)
            .or_default()
            .push(p.dma_with_gbps / p.dma_alone_gbps);
    }
    (by_threads.iter())
        .filter_map(|(k, v)| {
            let what = format!("pageable {dir} next to {k} streams");
            Some(NeighbourPoint {
                threads_per_cpu: *k as f64 / cpus.max(1) as f64,
                ratio: spread_checked(v, &what, &mut f.warnings)?,
            })
        })
        .collect()
}

pub(super) fn staging(m: &Measurements, capacity: f64, f: &mut ContentionFit) {
    for dir in ["h2d", "d2h"] {
        let mut alone_by: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for p in m
            .dma_alone
            .iter()
            .filter(|p| !p.pinned && p.dir == dir && p.gbps > 0.0)
        {
            alone_by.entry(p.mib).or_default().push(p.gbps);
        }
        if alone_by.is_empty() {
            f.unresolved
                .push(format!("pageable {dir} staging: not measured"));
            continue;
        }
        let mut alone = BTreeMap::new();
        for (mib, v) in &alone_by {
            if let Some(s) = spread_checked(
                v,
                &format!("pageable {dir} {mib} MiB alone"),
                &mut f.warnings,
            ) {
                alone.insert(mib.to_string(), s);
            }
        }
        // Two sizes: t = setup + bytes / rate through the smallest and largest. Each
        // size's fastest pass, as for the link rates: on a shared host, interference only
        // slows a copy (passes of one size spread 20-36% on the H200 VM, and pipelines
        // there uploaded at the fastest pass's rate). For the same reason a copy that ran
        // faster next to streams than alone shows the alone pass was disturbed: its rate
        // next to streams is the better reading of the copy alone.
        let pts: Vec<(f64, f64)> = alone_by
            .iter()
            .filter_map(|(mib, v)| {
                let alone = Spread::of(v)?.max;
                let beside = (m.dma_stream.iter())
                    .filter(|p| !p.pinned && p.dir == dir && p.mib == *mib)
                    .map(|p| p.dma_with_gbps)
                    .filter(|g| g.is_finite())
                    .fold(0.0f64, f64::max);
                let g = if beside > alone {
                    f.warnings.push(format!(
                        "pageable {dir} {mib} MiB ran at {beside:.1} GB/s next to streams, \
                         faster than alone ({alone:.1}): the alone pass was disturbed; the \
                         faster rate is the copy's"
                    ));
                    beside
                } else {
                    alone
                };
                let b = (*mib as f64) * 1048576.0;
                Some((b, b / (g * 1e9)))
            })
            .collect();
        let (setup_s, gbps) = match (pts.first(), pts.last()) {
            (Some(a), Some(b)) if pts.len() >= 2 && b.1 > a.1 => {
                let rate = (b.0 - a.0) / (b.1 - a.1);
                let setup = a.1 - a.0 / rate;
                if setup < 0.0 {
                    f.warnings.push(format!(
                        "pageable {dir}: fitted setup {setup:.2e} s < 0 (small copies were \
                         faster per byte); setup clamped to 0 and the largest size's rate kept"
                    ));
                    (0.0, b.0 / b.1 / 1e9)
                } else {
                    (setup, rate / 1e9)
                }
            }
            (_, Some(b)) => {
                f.unresolved.push(format!(
                    "pageable {dir} staging setup cost: needs two copy sizes"
                ));
                (0.0, b.0 / b.1 / 1e9)
            }
            _ => continue,
        };
        let mut ratio_by: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        let mut bytes = Vec::new();
        for p in m
            .dma_stream
            .iter()
            .filter(|p| !p.pinned && p.dir == dir && p.stream_threads > 0)
        {
            if p.dma_alone_gbps > 0.0 {
                ratio_by
                    .entry(p.mib)
                    .or_default()
                    .push(p.dma_with_gbps / p.dma_alone_gbps);
            }
            let sat = p.stream_with_gbps < p.stream_alone_gbps * (1.0 - UNCHANGED)
                && p.dma_with_gbps > 0.0;
            if sat {
                let x = (capacity - p.stream_with_gbps) / p.dma_with_gbps;
                if x.is_finite() && x > 0.0 {
                    bytes.push(x);
                }
            }
        }
        let mut contended_ratio = BTreeMap::new();
        for (mib, v) in &ratio_by {
            if let Some(s) = spread_checked(
                v,
                &format!("pageable {dir} {mib} MiB next to streams"),
                &mut f.warnings,
            ) {
                contended_ratio.insert(mib.to_string(), s);
            }
        }
        let dram_bytes_per_byte = Spread::of(&bytes);
        if dram_bytes_per_byte.is_none() {
            f.unresolved.push(format!(
                "pageable {dir} DRAM bytes per byte: no run where the streams slowed"
            ));
        }
        // Threads per CPU need the host's CPUs; a file without them has no curve.
        let beside_streams = match &m.host {
            Some(h) => beside_streams(m, dir, h.cores, f),
            None => Vec::new(),
        };
        f.staging.insert(
            dir.into(),
            StagingFit {
                setup_s,
                gbps,
                alone_gbps: alone,
                contended_ratio,
                dram_bytes_per_byte,
                beside_streams,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::fit_contention;
    use super::*;
    use crate::calibrate::measurements::{DmaAlonePoint, DmaStreamPoint};

    #[test]
    fn staging_setup_and_rate_recovered_and_disagreeing_passes_warned() {
        // Truth: setup 1 ms, 10 GB/s.
        let mut m = Measurements::default();
        for (pass, jitter) in [(0, 1.0), (1, 1.3)] {
            for mib in [64u64, 1024] {
                let b = mib as f64 * 1048576.0;
                let t = 1e-3 + b / 10e9;
                let g = b / t / 1e9 * if mib == 64 { 1.0 } else { jitter };
                m.dma_alone.push(DmaAlonePoint {
                    pass,
                    dir: "h2d".into(),
                    pinned: false,
                    mib,
                    gbps: g,
                    seconds: 1.0,
                });
            }
        }
        let f = fit_contention(&m, 100.0);
        let s = &f.staging["h2d"];
        assert!(s.gbps > 10.0 && s.setup_s > 0.0, "{s:?}");
        assert!(f.warnings.iter().any(|w| w.contains("passes disagree")));
        // One pass only: exact.
        m.dma_alone.retain(|p| p.pass == 0);
        let f = fit_contention(&m, 100.0);
        let s = &f.staging["h2d"];
        assert!((s.gbps - 10.0).abs() < 1e-6 && (s.setup_s - 1e-3).abs() < 1e-9);
        assert!(f.unresolved.iter().any(|u| u.contains("d2h")));
        // Two passes of one size (the H200 VM's 1 GiB uploads): the fastest sets the rate.
        m.dma_alone.retain(|p| p.mib == 1024);
        m.dma_alone[0].gbps = 5.08;
        let mut faster = m.dma_alone[0].clone();
        faster.pass = 1;
        faster.gbps = 7.32;
        m.dma_alone.push(faster);
        let f = fit_contention(&m, 100.0);
        assert!((f.staging["h2d"].gbps - 7.32).abs() < 1e-9);
        assert_eq!(
            f.staging["h2d"].alone_gbps["1024"].median,
            (5.08 + 7.32) / 2.0
        );
        // Faster next to streams than any alone pass (run 4's 1 GiB D2H: 6.6 alone, 11.3
        // beside eight streams): the alone pass was disturbed, the faster reading is kept.
        m.dma_stream.push(DmaStreamPoint {
            dir: "h2d".into(),
            pinned: false,
            mix: crate::calibrate::probe::stream::Kernel::Copy,
            stream_threads: 8,
            stream_alone_gbps: 100.0,
            stream_with_gbps: 98.0,
            dma_alone_gbps: 7.32,
            dma_with_gbps: 9.5,
            mib: 1024,
            pass: 0,
            dma_seconds: 1.0,
        });
        let f = fit_contention(&m, 100.0);
        assert!((f.staging["h2d"].gbps - 9.5).abs() < 1e-9);
        assert!(f.warnings.iter().any(|w| w.contains("faster than alone")));
        assert_eq!(f.staging["h2d"].alone_gbps["1024"].max, 7.32);
    }

    #[test]
    fn the_rate_beside_streams_is_read_per_thread_count_and_the_half_runs_keep_their_fits() {
        // 16 CPUs; the D2H copy at 10 GB/s alone keeps 0.95, 0.85 and 0.8 of it beside 4,
        // 8 and 12 streams (two sizes at 8). The 4 and 12 runs sit in
        // pageable_beside_streams: only the 8 runs feed the per-size contended ratio.
        let mut m = Measurements {
            host: Some(crate::calibrate::measurements::HostInfo {
                hostname: "vm".into(),
                cpu_model: "x".into(),
                cores: 16,
                page_size: 4096,
                thp_enabled: "never".into(),
                mem_total_bytes: 1 << 34,
                kernel: "k".into(),
            }),
            ..Default::default()
        };
        let point = |threads: usize, mib: u64, ratio: f64| DmaStreamPoint {
            dir: "d2h".into(),
            pinned: false,
            mix: crate::calibrate::probe::stream::Kernel::Copy,
            stream_threads: threads,
            stream_alone_gbps: 100.0,
            stream_with_gbps: 99.0,
            dma_alone_gbps: 10.0,
            dma_with_gbps: 10.0 * ratio,
            mib,
            pass: 0,
            dma_seconds: 1.0,
        };
        for mib in [64, 1024] {
            m.dma_alone.push(DmaAlonePoint {
                pass: 0,
                dir: "d2h".into(),
                pinned: false,
                mib,
                gbps: 10.0,
                seconds: 1.0,
            });
            m.dma_stream.push(point(8, mib, 0.85));
        }
        m.pageable_beside_streams = vec![point(4, 64, 0.95), point(12, 64, 0.8)];
        let s = &fit_contention(&m, 100.0).staging["d2h"];
        let curve: Vec<(f64, f64)> = (s.beside_streams.iter())
            .map(|p| (p.threads_per_cpu, p.ratio.median))
            .collect();
        let want = [(0.25, 0.95), (0.5, 0.85), (0.75, 0.8)];
        assert_eq!(curve.len(), 3);
        for ((x, r), (wx, wr)) in curve.iter().zip(want) {
            assert!((x - wx).abs() < 1e-12 && (r - wr).abs() < 1e-9, "{curve:?}");
        }
        assert_eq!(s.beside_streams[1].ratio.n, 2);
        assert_eq!(
            s.contended_ratio.keys().collect::<Vec<_>>(),
            vec!["1024", "64"]
        );
        assert!((s.contended_ratio["64"].median - 0.85).abs() < 1e-9);
    }
}
