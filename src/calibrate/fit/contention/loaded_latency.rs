//! Latency vs offered load per write fraction, and the page-size factor on latency, with
//! the checks that the latency curve was read over the page size it claims.

use super::{ContentionFit, PASS_DISAGREEMENT, Spread, UNCHANGED, spread_checked};
use crate::calibrate::measurements::{LatPoint, Measurements};
use crate::calibrate::probe::stream::Kernel;
use crate::calibrate::probe::sys::huge_shortfall;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

pub(super) fn offered(m: &Measurements, capacity: f64, f: &mut ContentionFit) {
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

pub(super) fn pages(m: &Measurements, f: &mut ContentionFit) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
