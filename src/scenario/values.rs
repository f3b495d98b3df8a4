//! Checked values shared by the model builders: numbers in range, quantities in their
//! unit, exactly one of two keys (each error naming its key), and the sentinels for
//! hardware a scenario leaves unmodelled.

use super::error::{ErrorKind, Locator, ScenarioError};
use super::units::{Dim, Qty};

/// Host RAM when `host_ram_gib` is absent: not modelled (no stage may hold RAM).
pub const UNLIMITED_RAM: u64 = u64::MAX;
/// DRAM capacity when `[hardware.dram]` is absent: not modelled (no stage may draw DRAM
/// or be latency-bound).
pub const UNLIMITED_DRAM: f64 = f64::INFINITY;

/// A quantity in base units, with the key named on error.
pub fn qty(q: &Qty, dim: Dim, unit: f64, key: &str, loc: &Locator) -> Result<f64, ScenarioError> {
    q.to_base(dim, unit)
        .map_err(|m| loc.error(ErrorKind::Value, key, m))
}

/// A plain number that must be finite and within `lo..=hi` (`hi` may be infinite).
pub fn number(
    v: f64,
    lo: f64,
    hi: f64,
    key: &str,
    what: &str,
    loc: &Locator,
) -> Result<f64, ScenarioError> {
    if !v.is_finite() {
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!("{v} is not a finite number; {what}"),
        ));
    }
    if v < lo || v > hi {
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!("{v} is out of range; {what}"),
        ));
    }
    Ok(v)
}

/// A number that must be finite and > 0.
pub fn positive(v: f64, key: &str, what: &str, loc: &Locator) -> Result<f64, ScenarioError> {
    if !(v.is_finite() && v > 0.0) {
        return Err(loc.error(
            ErrorKind::Value,
            key,
            format!("{v} is not allowed; {what} must be > 0"),
        ));
    }
    Ok(v)
}

/// Exactly one of two alternative keys.
pub fn one_of<'a, T>(
    a: (&'a Option<T>, &str),
    b: (&'a Option<T>, &str),
    loc: &Locator,
) -> Result<Option<(&'a T, usize)>, ScenarioError> {
    match (a.0, b.0) {
        (Some(_), Some(_)) => Err(loc.error(
            ErrorKind::Value,
            b.1,
            format!(
                "both {} and {} are given; use one",
                a.1.rsplit('.').next().unwrap_or(a.1),
                b.1.rsplit('.').next().unwrap_or(b.1)
            ),
        )),
        (Some(x), None) => Ok(Some((x, 0))),
        (None, Some(y)) => Ok(Some((y, 1))),
        (None, None) => Ok(None),
    }
}

/// A TOML value's kind with its article, for messages: "an integer", "a string", "an
/// array", "a table", "a boolean", "a float", "a datetime".
pub fn kind_of(v: &toml::Value) -> String {
    let kind = v.type_str();
    let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {kind}")
}
