//! One value of a swept parameter, kept as the user wrote it so that `--set` receives
//! exactly that text (a float stays a float, `1.0` does not become the integer `1`).

use std::fmt;

/// A value of a swept parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// An integer, e.g. a concurrency.
    Int(i64),
    /// A real number, with the text that is passed on to the scenario.
    Float(f64, String),
    /// A switch.
    Bool(bool),
}

impl ParamValue {
    /// Parses one list item: `true`/`false`, an integer, or a float.
    pub fn parse(text: &str) -> Option<ParamValue> {
        let t = text.trim();
        match t {
            "true" => return Some(ParamValue::Bool(true)),
            "false" => return Some(ParamValue::Bool(false)),
            _ => {}
        }
        if let Ok(i) = t.parse::<i64>() {
            return Some(ParamValue::Int(i));
        }
        match t.parse::<f64>() {
            Ok(f) if f.is_finite() => Some(ParamValue::Float(f, t.to_string())),
            _ => None,
        }
    }

    /// A float value, formatted without binary noise (`0.1 + 0.2` prints `0.3`).
    pub fn float(f: f64) -> ParamValue {
        let mut s = format!("{f:.12}");
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.push('0');
        }
        let clean = s.parse::<f64>().unwrap_or(f);
        ParamValue::Float(clean, s)
    }

    /// The value as a number for plotting and ordering (`true` is 1, `false` is 0).
    pub fn as_f64(&self) -> f64 {
        match self {
            ParamValue::Int(i) => *i as f64,
            ParamValue::Float(f, _) => *f,
            ParamValue::Bool(b) => f64::from(u8::from(*b)),
        }
    }

    /// The value as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ParamValue::Int(i) => serde_json::Value::from(*i),
            ParamValue::Float(f, _) => serde_json::Value::from(*f),
            ParamValue::Bool(b) => serde_json::Value::from(*b),
        }
    }
}

/// True when `v` is the largest of several values swept: the best (or the knee) found
/// there may lie past the range, and the range should be widened to see. Both `compare`
/// (its best setting) and the sweep knee flag this.
pub fn is_top_of_range(swept: &[ParamValue], v: &ParamValue) -> bool {
    let x = v.as_f64();
    swept.iter().any(|s| s.as_f64() < x) && swept.iter().all(|s| s.as_f64() <= x)
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(i) => write!(f, "{i}"),
            ParamValue::Float(_, text) => f.write_str(text),
            ParamValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kinds_and_keeps_float_text() {
        assert_eq!(ParamValue::parse("12"), Some(ParamValue::Int(12)));
        assert_eq!(ParamValue::parse("true"), Some(ParamValue::Bool(true)));
        let v = ParamValue::parse("1.0").unwrap();
        assert_eq!(v.to_string(), "1.0");
        assert_eq!(v.as_f64(), 1.0);
        assert_eq!(ParamValue::parse("abc"), None);
        assert_eq!(ParamValue::parse("inf"), None);
    }

    #[test]
    fn the_top_of_a_range_is_its_largest_value_in_any_order() {
        let vals: Vec<ParamValue> = [8, 2, 4].map(ParamValue::Int).to_vec();
        assert!(is_top_of_range(&vals, &ParamValue::Int(8)));
        assert!(!is_top_of_range(&vals, &ParamValue::Int(4)));
        assert!(
            !is_top_of_range(&vals[..1], &ParamValue::Int(8)),
            "one value is no range"
        );
    }

    #[test]
    fn float_constructor_drops_binary_noise() {
        assert_eq!(ParamValue::float(0.1 + 0.2).to_string(), "0.3");
        assert_eq!(ParamValue::float(2.0).to_string(), "2.0");
    }
}
