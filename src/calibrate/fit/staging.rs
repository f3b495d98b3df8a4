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
}

/// A staged copy that keeps at least this share of its alone rate next to streams does
/// not wait on DRAM latency (what is left is pass-to-pass noise).
pub const POSTED_RATIO: f64 = 1.0 - PASS_DISAGREEMENT;

/// The median over sizes of the rate next to streams over alone (None: not measured).
fn contended(s: &StagingFit) -> Option<f64> {
    let v: Vec<f64> = s.contended_ratio.values().map(|r| r.median).collect();
    (!v.is_empty()).then(|| super::median_of(v))
}

/// The table from the staging fits, when either direction was measured; a latency-bound
/// memcpy takes the exponent the PCIe fit found for its direction.
pub fn staging_table(c: &ContentionFit, pcie: Option<&PcieFit>) -> Option<StagingTable> {
    let dir = |d: CopyDir| {
        let s = c.staging.get(d.name())?;
        let pace = match contended(s) {
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
}
