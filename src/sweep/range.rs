//! Ranges `START..END` and stepped ranges `START..END:STEP`, both inclusive of END when
//! a whole number of steps lands on it. Integer ranges stay integers; a range with any
//! float part yields floats and must say its step.

use super::spec_error::{MAX_VALUES, SpecError};
use super::value::ParamValue;

/// Expands the range SPEC `s` (trimmed; `spec` is the original, for errors).
pub(crate) fn expand(spec: &str, s: &str) -> Result<Vec<ParamValue>, SpecError> {
    let (bounds, step) = match s.split_once(':') {
        Some((b, st)) => {
            if st.contains(':') {
                return Err(SpecError::invalid(spec, "a range has at most one ':'"));
            }
            (b, Some(st.trim()))
        }
        None => (s, None),
    };
    if bounds.contains("...") {
        return Err(SpecError::invalid(
            spec,
            "'...' is not a range; write START..END",
        ));
    }
    // The caller saw '..' somewhere in the SPEC, but it may lie after the ':' (":..").
    let Some((start, end)) = bounds.split_once("..") else {
        return Err(SpecError::invalid(
            spec,
            "a range is START..END[:STEP]: no '..' before the ':'",
        ));
    };
    let (start, end) = (start.trim(), end.trim());
    if start.is_empty() {
        return Err(SpecError::invalid(
            spec,
            "the range has no START before '..'",
        ));
    }
    if end.is_empty() {
        return Err(SpecError::invalid(spec, "the range has no END after '..'"));
    }
    if step == Some("") {
        return Err(SpecError::invalid(spec, "the STEP after ':' is empty"));
    }
    let ints = (
        start.parse::<i64>(),
        end.parse::<i64>(),
        step.map(str::parse::<i64>).transpose(),
    );
    if let (Ok(a), Ok(b), Ok(st)) = ints {
        return int_range(spec, a, b, st.unwrap_or(1));
    }
    let num = |t: &str| {
        t.parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .ok_or_else(|| SpecError::invalid(spec, format!("'{t}' is not a number")))
    };
    let (a, b) = (num(start)?, num(end)?);
    let Some(step) = step else {
        return Err(SpecError::invalid(
            spec,
            "a float range needs a STEP, e.g. 0.5..2.0:0.25",
        ));
    };
    float_range(spec, a, b, num(step)?)
}

fn check_order(spec: &str, start_gt_end: bool, step_positive: bool) -> Result<(), SpecError> {
    if !step_positive {
        return Err(SpecError::invalid(spec, "STEP must be positive"));
    }
    if start_gt_end {
        return Err(SpecError::invalid(spec, "START is greater than END"));
    }
    Ok(())
}

fn int_range(spec: &str, a: i64, b: i64, step: i64) -> Result<Vec<ParamValue>, SpecError> {
    check_order(spec, a > b, step > 0)?;
    let count = ((b as i128 - a as i128) / step as i128) as u128 + 1;
    too_many(spec, count)?;
    Ok((0..count as i64)
        .map(|i| ParamValue::Int(a + i * step))
        .collect())
}

fn float_range(spec: &str, a: f64, b: f64, step: f64) -> Result<Vec<ParamValue>, SpecError> {
    check_order(spec, a > b, step > 0.0)?;
    // A small tolerance so 0.1..0.5:0.1 includes 0.5 despite binary rounding.
    let count = ((b - a) / step + 1e-9).floor() + 1.0;
    too_many(spec, count as u128)?;
    Ok((0..count as u64)
        .map(|i| ParamValue::float(a + i as f64 * step))
        .collect())
}

fn too_many(spec: &str, count: u128) -> Result<(), SpecError> {
    if count > MAX_VALUES as u128 {
        return Err(SpecError::invalid(
            spec,
            format!("it has {count} values, more than {MAX_VALUES}"),
        ));
    }
    Ok(())
}
