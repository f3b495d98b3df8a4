//! Pageable copies as CPU staging for the model (`[hardware.gpu.pageable_staging.<dir>]`):
//! from the staging fit (copy time = setup + bytes / rate at two sizes, and the rate next
//! to streams over alone), the per-call setup, the memcpy thread's rate alone and whether
//! the memcpy waits on DRAM latency, with a comment line saying where each came from.

use super::contention::{ContentionFit, PASS_DISAGREEMENT, Spread, StagingFit};
use super::pcie::PcieFit;
use crate::model::{CopyDir, MemcpyPace};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[hardware.gpu.pageable_staging]` as calibrate writes it (a direction absent: not
/// measured, the one-rate rule for it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StagingTable {
    /// Host-to-device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2d: Option<StagingDirTable>,
    /// Device-to-host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d2h: Option<StagingDirTable>,
}

/// One direction's staging.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StagingDirTable {
    /// Fixed cost per copy call, s.
    pub setup_s: f64,
    /// The memcpy thread's rate alone on an idle host, GB/s copied.
    pub memcpy_gbps: f64,
    /// "latency-bound" or "posted" (see [`MemcpyPace`]; the scenario layer reads it).
    pub memcpy_pace: String,
    /// A latency-bound memcpy's exponent on loaded latency (absent: Little's law, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcpy_latency_exponent: Option<f64>,
    /// A memcpy paced by its neighbours: (streaming threads per CPU, rate / alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcpy_beside_streams: Option<Vec<(f64, f64)>>,
}

/// A staged copy that keeps at least this share of its alone rate next to streams does
/// not wait on DRAM latency (what is left is pass-to-pass noise).
pub const POSTED_RATIO: f64 = 1.0 - PASS_DISAGREEMENT;

/// Which direction's memcpy its streaming neighbours pace. A D2H memcpy reads the bounce
/// buffer the DMA has just written; on the H100 and H200 hosts it slowed as much beside
/// 8 pipeline workers drawing 50 GB/s as beside 8 probe streams drawing 129 GB/s, which
/// loaded latency cannot explain (it was 1.1x idle in the one, 1.7x in the other). An
/// H2D memcpy reads pageable DRAM and slows with latency: beside the same pipelines it
/// slowed far less than beside the probe's streams.
pub const PACED_BY_NEIGHBOURS: CopyDir = CopyDir::D2h;

/// The curve of rate next to streams over alone by streaming threads per CPU (each
/// ratio at most 1: a copy beside streams is not faster than alone); None when not
/// measured or not usable.
fn neighbour_curve(s: &StagingFit) -> Option<Vec<(f64, f64)>> {
    let pts: Vec<(f64, f64)> = (s.beside_streams.iter())
        .map(|p| (p.threads_per_cpu, p.ratio.median.min(1.0)))
        .collect();
    crate::model::StreamNeighbourCurve::new(&pts).map(|_| pts)
}

/// The median over sizes of the rate next to streams over alone (None: not measured).
fn contended(s: &StagingFit) -> Option<f64> {
    let v: Vec<f64> = s.contended_ratio.values().map(|r| r.median).collect();
    crate::analysis::median::median(&v)
}

/// The table from the staging fits, when either direction was measured; a latency-bound
/// memcpy takes the exponent the PCIe fit found for its direction.
pub fn staging_table(c: &ContentionFit, pcie: Option<&PcieFit>) -> Option<StagingTable> {
    let dir = |d: CopyDir| {
        let s = c.staging.get(d.name())?;
        let curve = (d == PACED_BY_NEIGHBOURS)
            .then(|| neighbour_curve(s))
            .flatten();
        let pace = match contended(s) {
            _ if curve.is_some() => MemcpyPace::BesideStreams,
            Some(r) if r >= POSTED_RATIO => MemcpyPace::Posted,
            _ => MemcpyPace::LatencyBound,
        };
        let exponent = pcie.and_then(|p| p.pageable_latency_exponent(d));
        Some(StagingDirTable {
            setup_s: s.setup_s,
            memcpy_gbps: s.gbps,
            memcpy_pace: pace.name().into(),
            memcpy_latency_exponent: exponent
                .filter(|k| pace == MemcpyPace::LatencyBound && *k != 1.0),
            memcpy_beside_streams: curve,
        })
    };
    let t = StagingTable {
        h2d: dir(CopyDir::H2d),
        d2h: dir(CopyDir::D2h),
    };
    (t.h2d.is_some() || t.d2h.is_some()).then_some(t)
}

/// (MiB, spread) by copy size, smallest first (the map's keys are size strings).
fn by_size(m: &BTreeMap<String, Spread>) -> impl Iterator<Item = (u64, Spread)> {
    let mut v: Vec<(u64, Spread)> = (m.iter())
        .filter_map(|(k, r)| Some((k.parse().ok()?, *r)))
        .collect();
    v.sort_by_key(|x| x.0);
    v.into_iter()
}

/// Comment lines for one direction's table: the sizes and rates behind the setup and
/// rate, whether the DMA or the memcpy sets the pace, and the contended ratio behind the
/// pace.
pub fn staging_notes(c: &ContentionFit, pcie: Option<&PcieFit>, dir: CopyDir) -> Vec<String> {
    let Some(s) = c.staging.get(dir.name()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let alone: Vec<String> = by_size(&s.alone_gbps)
        .map(|(mib, r)| format!("{mib} MiB {:.2} (fastest {:.2})", r.median, r.max))
        .collect();
    out.push(format!(
        "alone GB/s by copy size, median (fastest pass): {}; time = setup + bytes / rate \
         through the smallest and largest size's fastest passes (a negative setup is clamped \
         to 0 and the largest size's rate kept)",
        alone.join(", ")
    ));
    let pinned = pcie.map(|p| match dir {
        CopyDir::H2d => p.h2d_gbps,
        CopyDir::D2h => p.d2h_gbps,
    });
    if let Some(p) = pinned {
        out.push(if s.gbps >= p * (1.0 - PASS_DISAGREEMENT) {
            format!(
                "{:.1} GB/s is about the pinned DMA's {p:.1}: the DMA sets the pace; the memcpy's \
                 own rate is not observable",
                s.gbps
            )
        } else {
            format!(
                "{:.1} GB/s is well below the pinned DMA's {p:.1}: the memcpy sets the pace",
                s.gbps
            )
        });
    }
    let ratios: Vec<String> = by_size(&s.contended_ratio)
        .map(|(mib, r)| format!("{mib} MiB {:.2}", r.median))
        .collect();
    let curve: Vec<String> = (s.beside_streams.iter())
        .map(|p| format!("{:.2} per CPU {:.2}", p.threads_per_cpu, p.ratio.median))
        .collect();
    if let (true, Some(_)) = (dir == PACED_BY_NEIGHBOURS, neighbour_curve(s)) {
        out.push(format!(
            "next to streaming threads / alone, over sizes and passes: {}: a D2H memcpy, \
             which reads what the DMA just wrote, slowed as much beside pipeline workers \
             drawing little DRAM as beside these streams, so the streams beside it set its \
             pace (memcpy_pace = \"beside-streams\", each ratio at most 1), not loaded \
             latency",
            curve.join(", ")
        ));
        return out;
    }
    if !curve.is_empty() {
        out.push(format!(
            "next to streaming threads / alone, over sizes and passes: {} (not read: this \
             direction's memcpy waits on DRAM latency)",
            curve.join(", ")
        ));
    }
    out.push(match contended(s) {
        Some(r) if r >= POSTED_RATIO => format!(
            "next to streams / alone: {} (median {r:.2} >= {POSTED_RATIO:.2}): latency does not \
             slow it, memcpy_pace = \"posted\"",
            ratios.join(", ")
        ),
        Some(r) => {
            let pace = match pcie.and_then(|p| p.pageable_latency_exponent(dir)) {
                Some(k) if k != 1.0 => format!(
                    "(at the idle rate x (L(0)/L)^{k:.2}, memcpy_latency_exponent; 1 would \
                     be Little's law)"
                ),
                _ => "(Little's law at the idle rate)".to_string(),
            };
            format!(
                "next to streams / alone: {} (median {r:.2}): it slows as loaded latency \
                 rises, memcpy_pace = \"latency-bound\" {pace}",
                ratios.join(", ")
            )
        }
        None => "not measured next to streams: memcpy_pace = \"latency-bound\" assumed".into(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(ratio: f64) -> StagingFit {
        let one = |v: f64| Spread::of(&[v]).unwrap();
        StagingFit {
            setup_s: 1e-3,
            gbps: 8.0,
            alone_gbps: BTreeMap::from([("64".into(), one(7.5)), ("1024".into(), one(7.9))]),
            contended_ratio: BTreeMap::from([
                ("64".into(), one(ratio)),
                ("1024".into(), one(ratio + 0.02)),
            ]),
            dram_bytes_per_byte: None,
            beside_streams: Vec::new(),
        }
    }

    #[test]
    fn pace_follows_the_contended_ratio_and_absent_directions_stay_off() {
        let mut c = ContentionFit::default();
        assert_eq!(staging_table(&c, None), None);
        c.staging.insert("h2d".into(), fit(0.47));
        c.staging.insert("d2h".into(), fit(0.99));
        let t = staging_table(&c, None).unwrap();
        let h = t.h2d.as_ref().unwrap();
        assert_eq!((h.setup_s, h.memcpy_gbps), (1e-3, 8.0));
        assert_eq!(h.memcpy_pace, "latency-bound");
        assert_eq!(t.d2h.as_ref().unwrap().memcpy_pace, "posted");
        let notes = staging_notes(&c, None, CopyDir::H2d).join("\n");
        assert!(
            notes.contains("64 MiB 7.50 (fastest 7.50), 1024 MiB 7.90 (fastest 7.90)")
                && notes.contains("latency-bound"),
            "{notes}"
        );
        c.staging.remove("d2h");
        assert_eq!(staging_table(&c, None).unwrap().d2h, None);
    }

    #[test]
    fn a_d2h_memcpy_measured_beside_streams_is_paced_by_them_and_h2d_keeps_latency() {
        use super::super::contention::NeighbourPoint;
        let one = |v: f64| Spread::of(&[v]).unwrap();
        let curve = vec![
            NeighbourPoint {
                threads_per_cpu: 0.25,
                ratio: one(0.97),
            },
            NeighbourPoint {
                threads_per_cpu: 0.5,
                ratio: one(0.84),
            },
            NeighbourPoint {
                threads_per_cpu: 0.75,
                ratio: one(1.04),
            },
        ];
        let mut c = ContentionFit::default();
        for dir in ["h2d", "d2h"] {
            let mut s = fit(0.6);
            s.beside_streams = curve.clone();
            c.staging.insert(dir.into(), s);
        }
        let t = staging_table(&c, None).unwrap();
        let d2h = t.d2h.unwrap();
        assert_eq!(d2h.memcpy_pace, "beside-streams");
        // A ratio above 1 (a disturbed alone pass) is read as 1.
        assert_eq!(
            d2h.memcpy_beside_streams,
            Some(vec![(0.25, 0.97), (0.5, 0.84), (0.75, 1.0)])
        );
        assert_eq!(d2h.memcpy_latency_exponent, None);
        let h2d = t.h2d.unwrap();
        assert_eq!(
            (h2d.memcpy_pace.as_str(), h2d.memcpy_beside_streams),
            ("latency-bound", None)
        );
        let notes = staging_notes(&c, None, CopyDir::D2h).join("\n");
        assert!(
            notes.contains("0.50 per CPU 0.84") && notes.contains("beside-streams"),
            "{notes}"
        );
        let notes = staging_notes(&c, None, CopyDir::H2d).join("\n");
        assert!(
            notes.contains("not read") && notes.contains("latency-bound"),
            "{notes}"
        );
        // Not measured next to streams: the pace follows the contended ratio as before.
        c.staging.get_mut("d2h").unwrap().beside_streams.clear();
        let d2h = staging_table(&c, None).unwrap().d2h.unwrap();
        assert_eq!(
            (d2h.memcpy_pace.as_str(), d2h.memcpy_beside_streams),
            ("latency-bound", None)
        );
    }
}
