//! The spreads and error models behind prediction intervals, as data: the file
//! `data/prediction-intervals.toml`, built into the binary. `bwsim accuracy --write-data`
//! rebuilds it from the committed replays and calibrations; each table says what it was
//! measured on.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::analysis::prediction::{ErrorModel, HostKnowledge};

use super::spread::{HostKey, HostSpread, Spread};

/// The file as shipped.
pub const SHIPPED: &str = include_str!("../../data/prediction-intervals.toml");

/// One way of knowing the host: the spreads of its keys and the model's error.
#[derive(Debug, Clone, PartialEq)]
pub struct Basis {
    pub spread: HostSpread,
    pub error: ErrorModel,
    /// What the error model was measured on.
    pub provenance: String,
}

/// Every basis the file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalData {
    pub calibrated: Basis,
    pub calibrated_stages_moved: Basis,
    pub typical: Basis,
    pub typical_stages_moved: Basis,
}

impl IntervalData {
    /// The basis for a host known as `k`.
    pub fn basis(&self, k: HostKnowledge) -> &Basis {
        match k {
            HostKnowledge::Calibrated => &self.calibrated,
            HostKnowledge::CalibratedStagesMoved => &self.calibrated_stages_moved,
            HostKnowledge::Typical => &self.typical,
            HostKnowledge::TypicalStagesMoved => &self.typical_stages_moved,
        }
    }

    /// Reads the file's text; the error names the table and key at fault.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: FileSpec = toml::from_str(text).map_err(|e| e.to_string())?;
        let basis = |name: &str, b: BasisSpec| -> Result<Basis, String> {
            let mut spreads = Vec::new();
            for (key, sd) in &b.spread {
                let key = HostKey::from_name(key)
                    .ok_or_else(|| format!("{name}.spread.{key}: not a host key"))?;
                if !(sd.is_finite() && *sd >= 0.0) {
                    return Err(format!("{name}.spread.{}: {sd} is not >= 0", key.name()));
                }
                spreads.push(Spread { key, sd: *sd });
            }
            spreads.sort_by_key(|s| s.key);
            let e = &b.error;
            let ok = |x: f64| x.is_finite() && x >= 0.0;
            if !(ok(e.floor)
                && ok(e.contention)
                && ok(e.weight)
                && e.quantile > 0.0
                && e.bias.is_finite())
            {
                return Err(format!(
                    "{name}.error: floor, contention and weight >= 0, quantile > 0, bias finite"
                ));
            }
            Ok(Basis {
                spread: HostSpread {
                    spreads,
                    basis: b.spread_basis,
                },
                error: ErrorModel {
                    floor: e.floor,
                    contention: e.contention,
                    weight: e.weight,
                    quantile: e.quantile,
                    bias: e.bias,
                },
                provenance: e.provenance.clone(),
            })
        };
        Ok(Self {
            calibrated: basis("calibrated", file.calibrated)?,
            calibrated_stages_moved: basis(
                "calibrated_stages_moved",
                file.calibrated_stages_moved,
            )?,
            typical: basis("typical", file.typical)?,
            typical_stages_moved: basis("typical_stages_moved", file.typical_stages_moved)?,
        })
    }
}

/// The shipped file, read once.
pub fn intervals() -> &'static IntervalData {
    static DATA: OnceLock<IntervalData> = OnceLock::new();
    DATA.get_or_init(|| {
        IntervalData::parse(SHIPPED)
            .unwrap_or_else(|e| panic!("data/prediction-intervals.toml as shipped: {e}"))
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    calibrated: BasisSpec,
    calibrated_stages_moved: BasisSpec,
    typical: BasisSpec,
    typical_stages_moved: BasisSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BasisSpec {
    spread_basis: String,
    spread: std::collections::BTreeMap<String, f64>,
    error: ErrorSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorSpec {
    floor: f64,
    contention: f64,
    weight: f64,
    quantile: f64,
    bias: f64,
    provenance: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_reads_and_typical_is_wider_than_calibrated() {
        let d = IntervalData::parse(SHIPPED).unwrap();
        for key in HostKey::ALL {
            let sd = |b: &Basis| b.spread.spreads.iter().find(|s| s.key == key).map(|s| s.sd);
            let (c, t) = (sd(&d.calibrated), sd(&d.typical));
            assert!(c.is_some() && t.is_some(), "{key:?}");
            assert!(t >= c, "{key:?}: typical {t:?} < calibrated {c:?}");
            assert_eq!(c, sd(&d.calibrated_stages_moved), "{key:?}");
            assert_eq!(t, sd(&d.typical_stages_moved), "{key:?}");
        }
    }

    #[test]
    fn a_bad_file_names_the_key() {
        let bad = SHIPPED.replacen("dram_capacity", "dram_capacty", 1);
        let e = IntervalData::parse(&bad).unwrap_err();
        assert!(e.contains("dram_capacty: not a host key"), "{e}");
    }
}
