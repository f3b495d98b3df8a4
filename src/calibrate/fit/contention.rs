//! Fits of the contention probes for the engine's v2 mechanisms: latency vs offered
//! load per write fraction, the page-size factor, compute throughput vs active threads
//! and SMT yield, the DMA sharing policy and DRAM factor per direction, and pageable
//! copies as CPU staging. Every number carries its spread across passes; disagreeing
//! passes and non-physical values become `warnings` (never a silent clamp).

use crate::calibrate::measurements::{DmaStreamPoint, LatPoint, Measurements};
use crate::calibrate::probe::stream::Kernel;
use crate::calibrate::probe::sys::huge_shortfall;
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
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let (min, max) = (v[0], v[n - 1]);
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

/// One point of a latency-vs-offered-load table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OfferedRow {
    /// Background streams.
    pub stream_threads: usize,
    /// Sum of the streams' standalone demand over the capacity (can exceed 1).
    pub offered_load: f64,
    /// Achieved traffic (streams + chase) over the capacity.
    pub achieved_load: f64,
    /// Latency across passes, ns.
    pub latency_ns: Spread,
}

/// Latency vs offered load for one write fraction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OfferedCurve {
    /// Fraction of the streams' DRAM bytes that are writes.
    pub write_fraction: f64,
    /// Points by rising stream count.
    pub points: Vec<OfferedRow>,
}

/// Huge vs base pages for the pointer chase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PageFit {
    /// Idle latency with MADV_HUGEPAGE, ns.
    pub idle_huge_ns: Spread,
    /// Idle latency with MADV_NOHUGEPAGE, ns.
    pub idle_nohuge_ns: Spread,
    /// no-huge / huge at idle (the page-size factor on latency).
    pub idle_factor: f64,
    /// Streams behind the loaded point (0: none measured).
    pub loaded_stream_threads: usize,
    /// no-huge / huge at the loaded point (0: not measured).
    pub loaded_factor: f64,
}

/// Compute throughput per thread at k active threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ComputeRow {
    /// Active threads (one per core first, then SMT siblings).
    pub threads: usize,
    /// Mean Mops per thread.
    pub per_thread_mops: f64,
    /// Per-thread throughput relative to one thread alone.
    pub relative: f64,
}

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
    offered(m, capacity, &mut f);
    pages(m, &mut f);
    compute(m, &mut f);
    dma(m, capacity, &mut f);
    staging(m, capacity, &mut f);
    f
}

fn offered(m: &Measurements, capacity: f64, f: &mut ContentionFit) {
    for mix in Kernel::LATENCY_MIXES {
        let mut by_k: BTreeMap<usize, Vec<&LatPoint>> = BTreeMap::new();
        for p in m.latency.iter().filter(|p| p.mix == mix) {
            by_k.entry(p.stream_threads).or_default().push(p);
        }
        if by_k.is_empty() {
            f.unresolved.push(format!(
                "latency vs offered load, {} mix: not measured",
                mix.name()
            ));
            continue;
        }
        let mut points = Vec::new();
        for (k, ps) in by_k {
            let ns: Vec<f64> = ps.iter().map(|p| p.ns).collect();
            let what = format!("latency {} x{k}", mix.name());
            let Some(lat) = spread_checked(&ns, &what, &mut f.warnings) else {
                continue;
            };
            let med = |v: Vec<f64>| Spread::of(&v).map_or(0.0, |s| s.median);
            let offered = med(ps.iter().map(|p| p.offered_gbps).collect()) / capacity;
            let achieved = med(ps.iter().map(|p| p.total_gbps).collect()) / capacity;
            if achieved > 1.0 + PASS_DISAGREEMENT {
                f.warnings.push(format!(
                    "{what}: achieved {:.1} GB/s is above the fitted capacity {capacity:.1} GB/s \
                     (capacity too low?)",
                    achieved * capacity
                ));
            }
            points.push(OfferedRow {
                stream_threads: k,
                offered_load: offered,
                achieved_load: achieved,
                latency_ns: lat,
            });
        }
        if points.iter().all(|p| p.offered_load == 0.0) && points.len() > 1 {
            f.unresolved.push(format!(
                "latency vs offered load, {} mix: no standalone demand recorded (older \
                 measurements); offered_load is 0",
                mix.name()
            ));
        }
        f.offered_latency.insert(
            mix.name().into(),
            OfferedCurve {
                write_fraction: mix.write_fraction(),
                points,
            },
        );
    }
}

/// Warns when the latency curve was read over another page size than the one it
/// claims: the main chase buffer's huge-page share is low, or its idle latency is more
/// than [`PASS_DISAGREEMENT`] away from the page-size probe's huge-page chase.
fn chase_pages_check(m: &Measurements, huge_idle_ns: f64, warnings: &mut Vec<String>) {
    if let Some(c) = huge_shortfall(m.hugepages_advised, m.chase_huge_coverage) {
        warnings.push(format!(
            "the latency chase buffer is only {:.0}% huge-page backed although huge pages \
             were advised (fragmented memory?): the latency curve describes base-page \
             access; re-run calibrate (ideally right after boot or `echo 1 > \
             /proc/sys/vm/compact_memory`)",
            c * 100.0
        ));
    }
    if let (Some(lo), Some(hi)) = (
        m.chase_trial_ns.iter().copied().reduce(f64::min),
        m.chase_trial_ns.iter().copied().reduce(f64::max),
    ) && lo > 0.0
        && hi / lo - 1.0 > PASS_DISAGREEMENT
    {
        warnings.push(format!(
            "chase buffers mapped one after another read {lo:.0} to {hi:.0} ns idle: the host \
             backs this VM's memory unevenly (huge pages on some regions only); the fastest \
             was kept, and a workload's latency depends on where its memory lands"
        ));
    }
    let idle: Vec<f64> = m
        .latency
        .iter()
        .filter(|p| p.stream_threads == 0)
        .map(|p| p.ns)
        .collect();
    if let Some(idle) = Spread::of(&idle)
        && huge_idle_ns > 0.0
        && (idle.median / huge_idle_ns - 1.0).abs() > PASS_DISAGREEMENT
        && m.hugepages_advised
    {
        warnings.push(format!(
            "the latency curve's idle chase ({:.0} ns) is {:+.0}% off the page-size probe's \
             huge-page chase ({huge_idle_ns:.0} ns): the two buffers were backed by \
             different page sizes or the host changed between them; the latency curve \
             is not trustworthy",
            idle.median,
            (idle.median / huge_idle_ns - 1.0) * 100.0
        ));
    }
}

fn pages(m: &Measurements, f: &mut ContentionFit) {
    let ns = |huge: bool, loaded: bool| -> Vec<f64> {
        m.pages
            .iter()
            .filter(|p| p.huge == huge && (p.stream_threads > 0) == loaded)
            .map(|p| p.ns)
            .collect()
    };
    let (Some(h), Some(n)) = (
        spread_checked(&ns(true, false), "idle chase, huge pages", &mut f.warnings),
        spread_checked(&ns(false, false), "idle chase, base pages", &mut f.warnings),
    ) else {
        f.unresolved
            .push("page-size factor: the huge / no-huge chase did not run".into());
        return;
    };
    chase_pages_check(m, h.median, &mut f.warnings);
    let lh = Spread::of(&ns(true, true));
    let ln = Spread::of(&ns(false, true));
    let loaded_factor = match (lh, ln) {
        (Some(a), Some(b)) if a.median > 0.0 => b.median / a.median,
        _ => 0.0,
    };
    let idle_factor = n.median / h.median;
    if idle_factor < 1.0 - UNCHANGED {
        f.warnings.push(format!(
            "page-size factor {idle_factor:.2} < 1: base pages were faster than huge pages \
             (THP not in effect? see anon_huge_bytes_gained)"
        ));
    }
    f.pages = Some(PageFit {
        idle_huge_ns: h,
        idle_nohuge_ns: n,
        idle_factor,
        loaded_stream_threads: m.pages.iter().map(|p| p.stream_threads).max().unwrap_or(0),
        loaded_factor,
    });
}

fn compute(m: &Measurements, f: &mut ContentionFit) {
    let mut by_k: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for p in m.compute.iter().filter(|p| p.kind == "scaling") {
        if !p.cpus.is_empty() {
            by_k.entry(p.cpus.len())
                .or_default()
                .push(p.total_mops / p.cpus.len() as f64);
        }
    }
    let one = by_k.get(&1).and_then(|v| Spread::of(v)).map(|s| s.median);
    for (k, v) in &by_k {
        let Some(s) = Spread::of(v) else { continue };
        f.compute.push(ComputeRow {
            threads: *k,
            per_thread_mops: s.median,
            relative: one.map_or(0.0, |o| if o > 0.0 { s.median / o } else { 0.0 }),
        });
    }
    if f.compute.is_empty() {
        f.unresolved
            .push("compute throughput vs threads: not measured".into());
    }
    let ones: Vec<f64> = m
        .compute
        .iter()
        .filter(|p| p.kind == "smt_one")
        .map(|p| p.total_mops)
        .collect();
    let pairs: Vec<f64> = m
        .compute
        .iter()
        .filter(|p| p.kind == "smt_pair")
        .map(|p| p.total_mops)
        .collect();
    match (Spread::of(&ones), Spread::of(&pairs)) {
        (Some(o), Some(p)) if o.median > 0.0 => f.smt_yield = Some(p.median / o.median),
        _ => f
            .unresolved
            .push("SMT yield: no core with two siblings among the allowed CPUs".into()),
    }
}

fn slow(alone: f64, with: f64) -> f64 {
    if alone > 0.0 { 1.0 - with / alone } else { 0.0 }
}

fn dma(m: &Measurements, capacity: f64, f: &mut ContentionFit) {
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

fn staging(m: &Measurements, capacity: f64, f: &mut ContentionFit) {
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
        // there uploaded at the fastest pass's rate).
        let pts: Vec<(f64, f64)> = alone_by
            .iter()
            .filter_map(|(mib, v)| {
                let g = Spread::of(v)?.max;
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
        f.staging.insert(
            dir.into(),
            StagingFit {
                setup_s,
                gbps,
                alone_gbps: alone,
                contended_ratio,
                dram_bytes_per_byte,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::measurements::DmaAlonePoint;

    #[test]
    fn spread_reports_median_and_relative_range() {
        let s = Spread::of(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (11.0, 10.0, 12.0, 3));
        assert!((s.rel_spread - 2.0 / 11.0).abs() < 1e-12);
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[f64::INFINITY]).is_none());
    }

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
    }

    fn idle_chase(ns: f64) -> LatPoint {
        LatPoint {
            mix: Kernel::Copy,
            stream_threads: 0,
            stream_gbps: 0.0,
            total_gbps: 0.0,
            ns,
            pass: 0,
            stream_cpus: vec![],
            stream_standalone_gbps: vec![],
            stream_each_gbps: vec![],
            offered_gbps: 0.0,
        }
    }

    #[test]
    fn a_base_page_latency_chase_is_called_out() {
        // The slice of 2026-12-01 11:33: the main chase read 240-263 ns idle while the
        // page-size probe's huge-page buffer read 144 ns.
        let mut m = Measurements {
            hugepages_advised: true,
            chase_huge_coverage: Some(0.40),
            chase_trial_ns: vec![245.0, 380.0, 250.0],
            latency: vec![idle_chase(240.0), idle_chase(263.0)],
            ..Default::default()
        };
        let mut w = Vec::new();
        chase_pages_check(&m, 144.0, &mut w);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("40% huge-page backed"), "{}", w[0]);
        assert!(w[1].contains("245 to 380 ns"), "{}", w[1]);
        assert!(w[2].contains("+75%"), "{}", w[2]);
        // A fully backed buffer agreeing with the page-size probe: no warning.
        m.chase_huge_coverage = Some(1.0);
        m.chase_trial_ns = vec![140.0, 146.0, 139.0];
        m.latency = vec![idle_chase(146.0), idle_chase(150.0)];
        w.clear();
        chase_pages_check(&m, 144.0, &mut w);
        assert!(w.is_empty(), "{w:?}");
    }
}
