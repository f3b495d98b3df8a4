//! The host keys' spreads, measured: each key's value in every committed calibration
//! (fitted again from its raw measurements by today's fits), and its standard deviation
//! between boots of one host type.

use std::collections::BTreeMap;
use std::path::Path;

use crate::model::{Hardware, MemcpyPace};
use crate::prediction::{HostKey, HostSpread, Spread};

use super::AccuracyError;

/// How much wider the typical values' spreads are than one host type's between boots:
/// an estimate (a host never measured may differ from the typical values by more than
/// boots of one VM type differ from each other), not a measurement.
pub const TYPICAL_FACTOR: f64 = 3.0;

/// A key's value in one calibration, on the scale its spread is taken (the log of a
/// relative key, the value of the exponent).
pub fn key_value(host: &Hardware, key: HostKey) -> Option<f64> {
    let dram = &host.dram;
    let link = host.gpus.first().map(|g| &g.link);
    let idle = dram.latency.latency_ns_mix(0.0, None);
    let log = |x: f64| (x > 0.0 && x.is_finite()).then(|| x.ln());
    match key {
        HostKey::DramCapacity => log(dram.capacity_gbps),
        HostKey::LatencyIdle => log(idle),
        HostKey::LatencyRise => log(dram.latency.latency_ns_mix(0.6, None) - idle),
        HostKey::LinesInFlight => dram.sharing.lines_in_flight_per_thread.and_then(log),
        HostKey::PageableRate => {
            let l = link?;
            match &l.pageable_h2d_staging {
                Some(st) => log(st.memcpy_gbps),
                None => log(l.pageable_h2d_gbps),
            }
        }
        HostKey::MemcpyExponent => (link?.pageable_h2d_staging.as_ref())
            .filter(|st| st.memcpy_pace == MemcpyPace::LatencyBound)
            .map(|st| st.latency_exponent),
        HostKey::DmaFactor => log(link?.d2h_dram_factor),
    }
}

/// Each key's value in each calibration (`(card, host)` pairs), and its spread: the
/// sample standard deviation between the calibrations of one card (at least 3), the
/// largest over cards.
pub fn measure(
    hosts: &[(String, Hardware)],
) -> (HostSpread, BTreeMap<(HostKey, String), Vec<f64>>) {
    let mut values: BTreeMap<(HostKey, String), Vec<f64>> = BTreeMap::new();
    for (card, host) in hosts {
        for key in HostKey::ALL {
            if let Some(v) = key_value(host, key) {
                values.entry((key, card.clone())).or_default().push(v);
            }
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (card, _) in hosts {
        *counts.entry(card).or_default() += 1;
    }
    let spreads = (HostKey::ALL.into_iter())
        .map(|key| {
            let sd = (values.iter())
                .filter(|((k, _), v)| *k == key && v.len() >= 3)
                .map(|(_, v)| sample_sd(v))
                .fold(0.0, f64::max);
            Spread { key, sd }
        })
        .collect();
    let basis = format!(
        "the standard deviation of each key (of its log, but the memcpy exponent's value) between boots of one host type, the larger of {}; every committed calibration fitted again from its raw measurements",
        (counts.iter())
            .map(|(c, n)| format!("{c} ({n} boots)"))
            .collect::<Vec<_>>()
            .join(" and ")
    );
    (HostSpread { spreads, basis }, values)
}

/// The typical values' spreads: `calibrated`'s times [`TYPICAL_FACTOR`].
pub fn typical(calibrated: &HostSpread) -> HostSpread {
    HostSpread {
        spreads: (calibrated.spreads.iter())
            .map(|s| Spread {
                key: s.key,
                sd: s.sd * TYPICAL_FACTOR,
            })
            .collect(),
        basis: format!(
            "an estimate: {TYPICAL_FACTOR} times the spreads between boots of one host type (a host never calibrated may differ from the typical values by more than boots differ)"
        ),
    }
}

/// The host a calibration (its text) gives a scenario: written beside `dir` to be
/// included.
pub fn host_of_text(text: &str, dir: &Path, name: &str) -> Result<Hardware, AccuracyError> {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).map_err(|e| AccuracyError::file(&path, e.to_string()))?;
    let (host, _missing) = crate::calibrate::validate::calib::host_of(&path)
        .map_err(|e| AccuracyError::file(&path, e.to_string()))?;
    Ok(host)
}

pub fn sample_sd(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}
