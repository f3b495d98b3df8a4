//! `--param KEY=SPEC`: which values a parameter takes. A SPEC is an inclusive range
//! `1..32`, a stepped range `1..64:4` (floats need a step: `0.5..2.0:0.25`), or a list
//! `4,8,12,16` of integers, floats or `true`/`false`.

use super::range;
pub use super::spec_error::{MAX_VALUES, SPEC_FORMS, SpecError};
use super::value::ParamValue;

/// A swept parameter: the scenario key and its values in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Dotted scenario key, as `--set` takes it (e.g. `arrivals.concurrency`).
    pub key: String,
    /// Values in the order given.
    pub values: Vec<ParamValue>,
}

/// Parses a `--param KEY=SPEC` argument.
pub fn parse_param(arg: &str) -> Result<Param, SpecError> {
    let (key, spec) = arg.split_once('=').ok_or_else(|| SpecError::MissingKey {
        arg: arg.to_string(),
    })?;
    let key = key.trim();
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(SpecError::MissingKey {
            arg: arg.to_string(),
        });
    }
    Ok(Param {
        key: key.to_string(),
        values: parse_spec(spec)?,
    })
}

/// Expands a SPEC into its values.
pub fn parse_spec(spec: &str) -> Result<Vec<ParamValue>, SpecError> {
    let s = spec.trim();
    if s.is_empty() {
        return Err(SpecError::invalid(spec, "it is empty"));
    }
    let values = if s.contains("..") {
        range::expand(spec, s)?
    } else {
        parse_list(spec, s)?
    };
    if values.len() > MAX_VALUES {
        return Err(SpecError::invalid(
            spec,
            format!("it has {} values, more than {MAX_VALUES}", values.len()),
        ));
    }
    Ok(values)
}

fn parse_list(spec: &str, s: &str) -> Result<Vec<ParamValue>, SpecError> {
    s.split(',')
        .map(|item| {
            if item.trim().is_empty() {
                return Err(SpecError::invalid(spec, "the list has an empty item"));
            }
            ParamValue::parse(item).ok_or_else(|| {
                SpecError::invalid(
                    spec,
                    format!("'{}' is not an integer, a float or true/false", item.trim()),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(spec: &str) -> Vec<String> {
        parse_spec(spec)
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect()
    }

    #[test]
    fn inclusive_range() {
        assert_eq!(texts("1..4"), ["1", "2", "3", "4"]);
        assert_eq!(parse_spec("1..32").unwrap().len(), 32);
        assert_eq!(texts("5..5"), ["5"]);
    }

    #[test]
    fn stepped_range_stops_at_or_before_end() {
        assert_eq!(texts("1..13:4"), ["1", "5", "9", "13"]);
        assert_eq!(parse_spec("1..64:4").unwrap().len(), 16);
        assert_eq!(texts("0..10:3"), ["0", "3", "6", "9"]);
    }

    #[test]
    fn float_range_has_clean_values() {
        assert_eq!(texts("0.1..0.5:0.1"), ["0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert_eq!(texts("0.5..2:0.5"), ["0.5", "1.0", "1.5", "2.0"]);
    }

    #[test]
    fn lists_of_ints_floats_and_bools() {
        assert_eq!(texts("4,8,12,16"), ["4", "8", "12", "16"]);
        assert_eq!(texts("0.5, 1.0,2"), ["0.5", "1.0", "2"]);
        assert_eq!(texts("true,false"), ["true", "false"]);
        assert_eq!(texts("7"), ["7"]);
    }

    #[test]
    fn param_argument_splits_at_first_equals() {
        let p = parse_param("params.synthesis_concurrency=1..3").unwrap();
        assert_eq!(p.key, "params.synthesis_concurrency");
        assert_eq!(p.values.len(), 3);
    }

    /// Every bad SPEC names itself and what is allowed.
    #[test]
    fn bad_specs_say_what_and_what_is_allowed() {
        let cases = [
            ("", "empty"),
            ("1..", "END"),
            ("..5", "START"),
            ("1..x", "'x'"),
            ("8..1", "greater than END"),
            ("1..10:0", "STEP must be positive"),
            ("1..10:-2", "STEP must be positive"),
            ("1..10:2:3", "one ':'"),
            ("0.5..2.0", "needs a STEP"),
            ("4,,8", "empty item"),
            ("4,abc", "'abc' is not an integer"),
            ("1..1000000", "more than"),
            ("1...5", "'...'"),
            // Found by the fuzz harness: '..' only after the ':' panicked.
            (":..", "no '..' before the ':'"),
            ("1:..5", "no '..' before the ':'"),
        ];
        for (spec, needle) in cases {
            let err = parse_spec(spec).unwrap_err().to_string();
            assert!(
                err.contains(&format!("'{spec}'")),
                "{spec}: error does not quote the SPEC: {err}"
            );
            assert!(
                err.contains(needle),
                "{spec}: expected '{needle}' in: {err}"
            );
            assert!(err.contains("stepped range"), "{spec}: no forms in: {err}");
        }
    }

    #[test]
    fn bad_param_arguments() {
        let e = parse_param("1..32").unwrap_err().to_string();
        assert!(e.contains("expected KEY=SPEC"), "{e}");
        let e = parse_param("=1..3").unwrap_err().to_string();
        assert!(e.contains("expected KEY=SPEC"), "{e}");
        let e = parse_param("a.b=1..x").unwrap_err().to_string();
        assert!(e.contains("invalid SPEC '1..x'"), "{e}");
    }
}
