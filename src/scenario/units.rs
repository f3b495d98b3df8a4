//! Quantities with units: a key such as `duration_s` takes a bare number in the key's unit
//! or a string with an explicit unit of the same kind (`"300 ms"`, `"64 GiB"`, `"250 GB/s"`).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A raw quantity as written: a number (in the key's unit) or a string with a unit.
#[derive(Debug, Clone, PartialEq)]
pub enum Qty {
    /// A bare number, in the unit the key's name gives.
    Num(f64),
    /// A string such as `"300 ms"`.
    Text(String),
}

impl<'de> Deserialize<'de> for Qty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Qty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a string with a unit (e.g. \"300 ms\", \"64 GiB\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Qty, E> {
                Ok(Qty::Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Qty, E> {
                Ok(Qty::Num(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Qty, E> {
                Ok(Qty::Num(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Qty, E> {
                Ok(Qty::Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Kinds of quantity, each with its base unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    /// Seconds.
    Time,
    /// Bytes.
    Size,
    /// GB/s (10^9 bytes per second).
    Rate,
}

impl Dim {
    fn units(self) -> &'static [(&'static str, f64)] {
        const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
        match self {
            Dim::Time => &[
                ("ns", 1e-9),
                ("us", 1e-6),
                ("µs", 1e-6),
                ("ms", 1e-3),
                ("s", 1.0),
                ("sec", 1.0),
                ("min", 60.0),
                ("h", 3600.0),
            ],
            Dim::Size => &[
                ("B", 1.0),
                ("KB", 1e3),
                ("MB", 1e6),
                ("GB", 1e9),
                ("TB", 1e12),
                ("KiB", 1024.0),
                ("MiB", 1024.0 * 1024.0),
                ("GiB", GIB),
                ("TiB", GIB * 1024.0),
            ],
            Dim::Rate => &[
                ("MB/s", 1e-3),
                ("GB/s", 1.0),
                ("TB/s", 1e3),
                ("MiB/s", 1024.0 * 1024.0 / 1e9),
                ("GiB/s", GIB / 1e9),
            ],
        }
    }

    fn unit_list(self) -> String {
        self.units()
            .iter()
            .map(|(u, _)| *u)
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn base_unit(self) -> &'static str {
        match self {
            Dim::Time => "seconds",
            Dim::Size => "bytes",
            Dim::Rate => "GB/s",
        }
    }

    /// The unit a "no unit" message suggests (s, GB, GB/s).
    fn example_unit(self) -> &'static str {
        self.units()[if self == Dim::Time { 4 } else { 3 }].0
    }

    fn what(self) -> &'static str {
        match self {
            Dim::Time => "a time",
            Dim::Size => "a size",
            Dim::Rate => "a bandwidth",
        }
    }
}

/// A quantity that cannot be taken: what was written, for which kind of quantity, and what
/// was wrong with it. The message ends with what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QtyError {
    /// The number part of a string does not parse.
    #[error("{written:?} is not {}: write a number and a unit ({})", dim.what(), dim.unit_list())]
    NotANumber {
        /// The string as written.
        written: String,
        /// The kind of quantity the key takes.
        dim: Dim,
    },
    /// A string with a number and no unit.
    #[error(
        "{written:?} has no unit; write e.g. \"{number} {}\" or a bare number in the key's unit",
        dim.example_unit()
    )]
    NoUnit {
        /// The string as written.
        written: String,
        /// Its number.
        number: f64,
        /// The kind of quantity the key takes.
        dim: Dim,
    },
    /// A unit of another kind of quantity, or none bwsim knows.
    #[error("{written:?}: unknown unit {unit:?} for {}; allowed: {}", dim.what(), dim.unit_list())]
    UnknownUnit {
        /// The string as written.
        written: String,
        /// Its unit.
        unit: String,
        /// The kind of quantity the key takes.
        dim: Dim,
    },
    /// A finite number that overflows when converted to the base unit.
    #[error(
        "{shown} is too large for {}: converted to {} it is beyond the largest number bwsim \
         holds (about 1.8e308)",
        dim.what(),
        dim.base_unit()
    )]
    TooLarge {
        /// The value as written ([`Qty::shown`]).
        shown: String,
        /// The kind of quantity the key takes.
        dim: Dim,
    },
    /// Infinity or NaN.
    #[error("{shown} is not a finite number")]
    NotFinite {
        /// The value as written ([`Qty::shown`]).
        shown: String,
    },
    /// Below zero.
    #[error("{shown} is negative; {} must be >= 0", dim.what())]
    Negative {
        /// The value as written ([`Qty::shown`]).
        shown: String,
        /// The kind of quantity the key takes.
        dim: Dim,
    },
}

impl Qty {
    /// The value in base units (seconds, bytes, GB/s); `key_unit` converts a bare number
    /// (e.g. 2^30 for a `_gib` key). Rejects negative and non-finite values.
    pub fn in_base(&self, dim: Dim, key_unit: f64) -> Result<f64, QtyError> {
        let v = match self {
            Qty::Num(x) => x * key_unit,
            Qty::Text(t) => parse_text(t, dim)?,
        };
        if !v.is_finite() {
            // A finite number written in a large unit (`host_ram_gib = 1e308`) overflows
            // when converted: it is too large, not "not a number".
            let written_finite = match self {
                Qty::Num(x) => x.is_finite(),
                Qty::Text(t) => {
                    let t = t.to_ascii_lowercase();
                    !(t.contains("inf") || t.contains("nan"))
                }
            };
            let shown = self.shown();
            return Err(if written_finite && !v.is_nan() {
                QtyError::TooLarge { shown, dim }
            } else {
                QtyError::NotFinite { shown }
            });
        }
        if v < 0.0 {
            return Err(QtyError::Negative {
                shown: self.shown(),
                dim,
            });
        }
        Ok(v)
    }

    /// [`Qty::in_base`] with the error as its message, for callers that still reword it.
    pub fn to_base(&self, dim: Dim, key_unit: f64) -> Result<f64, String> {
        self.in_base(dim, key_unit).map_err(|e| e.to_string())
    }

    /// How the value was written, for messages.
    pub fn shown(&self) -> String {
        match self {
            // 1e308, not 309 digits.
            Qty::Num(x) if x.abs() >= 1e16 => format!("{x:e}"),
            Qty::Num(x) => format!("{x}"),
            Qty::Text(t) => format!("{t:?}"),
        }
    }
}

fn parse_text(t: &str, dim: Dim) -> Result<f64, QtyError> {
    let s = t.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(s.len());
    let (num, unit) = (s[..split].trim(), s[split..].trim());
    let written = || t.to_string();
    let number: f64 = num.parse().map_err(|_| QtyError::NotANumber {
        written: written(),
        dim,
    })?;
    if unit.is_empty() {
        return Err(QtyError::NoUnit {
            written: written(),
            number,
            dim,
        });
    }
    let factor = dim
        .units()
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, f)| *f)
        .ok_or_else(|| QtyError::UnknownUnit {
            written: written(),
            unit: unit.to_string(),
            dim,
        })?;
    Ok(number * factor)
}

/// Bytes per GiB.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Bytes per GB.
pub const GB: f64 = 1e9;

/// A size beyond what bwsim counts in bytes (a u64).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{bytes} bytes is too large")]
pub struct SizeTooLarge {
    /// The size asked for.
    pub bytes: f64,
}

/// The scenario layer says errors in words ([`super::error::Locator::error`]).
impl From<SizeTooLarge> for String {
    fn from(e: SizeTooLarge) -> String {
        e.to_string()
    }
}

/// Bytes as an integer, rejecting sizes too large to count.
pub fn to_bytes(b: f64) -> Result<u64, SizeTooLarge> {
    if b > 1.8e19 {
        Err(SizeTooLarge { bytes: b })
    } else {
        Ok(b.round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_take_the_key_unit() {
        assert_eq!(Qty::Num(2.0).to_base(Dim::Size, GIB).unwrap(), 2.0 * GIB);
        assert_eq!(Qty::Num(1.5).to_base(Dim::Time, 1.0).unwrap(), 1.5);
    }

    #[test]
    fn strings_carry_their_unit() {
        let t = |s: &str, d| Qty::Text(s.into()).in_base(d, 1.0);
        assert_eq!(t("300 ms", Dim::Time).unwrap(), 0.3);
        assert_eq!(t("1.5 s", Dim::Time).unwrap(), 1.5);
        assert_eq!(t("64 GiB", Dim::Size).unwrap(), 64.0 * GIB);
        assert_eq!(t("250 GB/s", Dim::Rate).unwrap(), 250.0);
        assert_eq!(t("1e3ms", Dim::Time).unwrap(), 1.0);
        assert_eq!(
            t("64 GiB", Dim::Time).unwrap_err().to_string(),
            "\"64 GiB\": unknown unit \"GiB\" for a time; allowed: ns, us, µs, ms, s, sec, \
             min, h"
        );
        assert_eq!(
            t("64", Dim::Time).unwrap_err().to_string(),
            "\"64\" has no unit; write e.g. \"64 s\" or a bare number in the key's unit"
        );
        assert_eq!(
            t("fast", Dim::Time).unwrap_err(),
            QtyError::NotANumber {
                written: "fast".into(),
                dim: Dim::Time
            }
        );
    }

    #[test]
    fn negative_and_non_finite_are_rejected() {
        assert_eq!(
            Qty::Num(-1.0).to_base(Dim::Time, 1.0).unwrap_err(),
            "-1 is negative; a time must be >= 0"
        );
        assert!(matches!(
            Qty::Num(f64::NAN).in_base(Dim::Time, 1.0),
            Err(QtyError::NotFinite { .. })
        ));
        assert!(matches!(
            Qty::Num(f64::INFINITY).in_base(Dim::Size, 1.0),
            Err(QtyError::NotFinite { .. })
        ));
        assert_eq!(
            Qty::Num(1e308)
                .in_base(Dim::Size, GIB)
                .unwrap_err()
                .to_string(),
            "1e308 is too large for a size: converted to bytes it is beyond the largest \
             number bwsim holds (about 1.8e308)"
        );
        assert_eq!(
            to_bytes(2e19).unwrap_err().to_string(),
            "20000000000000000000 bytes is too large"
        );
    }
}
