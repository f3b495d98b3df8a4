//! Evaluating one `"$name"` or `"= expression"` string against the knobs' values
//! (`evalexpr`, in floating point; integral results become integers), and why one has
//! no value.

use std::collections::{BTreeMap, HashSet};

use evalexpr::{ContextWithMutableVariables, DefaultNumericTypes, HashMapContext};
use toml::Value;

use super::{MAX_EXPRESSION_CHARS, MAX_EXPRESSION_DEPTH, is_ident, references};

/// Why a `"$name"` or `"= expression"` string has no value: the string as written, what
/// was wrong and, where it helps, what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExpressionError {
    /// A `"$name"` value whose name is not a declared parameter.
    #[error(
        "{written:?} refers to unknown parameter {name:?}; {}",
        declared_list(declared)
    )]
    UnknownParam {
        /// The string as written.
        written: String,
        /// The name it refers to.
        name: String,
        /// The parameters that are declared.
        declared: Vec<String>,
    },
    /// An expression that uses a `$name` that is not a declared parameter.
    #[error(
        "{written:?} refers to unknown parameter ${name}; {}",
        declared_list(declared)
    )]
    UnknownInExpression {
        /// The expression as written.
        written: String,
        /// The name it refers to.
        name: String,
        /// The parameters that are declared.
        declared: Vec<String>,
    },
    /// `"$..."` that is not one identifier.
    #[error(
        "{0:?}: a \"$name\" value must be exactly one parameter name (use \"= ...\" for an \
         expression)"
    )]
    NotOneName(String),
    /// Longer than [`MAX_EXPRESSION_CHARS`].
    #[error(
        "expression is longer than {MAX_EXPRESSION_CHARS} characters; split it into parameters"
    )]
    TooLong,
    /// Nested deeper than [`MAX_EXPRESSION_DEPTH`].
    #[error(
        "expression nests parentheses more than {MAX_EXPRESSION_DEPTH} levels deep; simplify it"
    )]
    TooDeep,
    /// A `$` with no name after it.
    #[error("{0:?}: '$' must be followed by a parameter name")]
    EmptyName(String),
    /// A parameter an expression uses whose value is a table or an array.
    #[error("parameter ${name} is {kind}")]
    NotAScalar {
        /// The parameter.
        name: String,
        /// What its value is ("a table").
        kind: String,
    },
    /// The evaluator refused a parameter's value.
    #[error("{written:?}: {problem}")]
    Variable {
        /// The expression as written.
        written: String,
        /// The evaluator's words.
        problem: String,
    },
    /// The evaluator refused the expression.
    #[error(
        "cannot evaluate expression {written:?}: {problem}; expressions use + - * / ^ %, \
         parentheses, min, max, floor, round, ceil, if(cond, a, b) and $params"
    )]
    Evaluation {
        /// The expression as written.
        written: String,
        /// The evaluator's words.
        problem: String,
    },
    /// The expression evaluates to something a TOML value cannot be.
    #[error("expression {written:?} {result}")]
    Unusable {
        /// The expression as written.
        written: String,
        /// What its value is.
        result: UnusableResult,
    },
}

fn declared_list(declared: &[String]) -> String {
    if declared.is_empty() {
        "this scenario declares no [params]".to_string()
    } else {
        format!("declared: {}", declared.join(", "))
    }
}

/// An expression's value that is no TOML value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UnusableResult {
    /// Infinity or NaN (`1 / 0`).
    #[error("gives {0}, not a finite number")]
    NotFinite(f64),
    /// Nothing (an empty expression).
    #[error("gives no value")]
    Empty,
}

/// Evaluates one `"$name"` or `"= expression"` string against resolved parameters.
pub(super) fn substitute_str(
    s: &str,
    env: &BTreeMap<String, Value>,
) -> Result<Value, ExpressionError> {
    let declared = || env.keys().cloned().collect();
    if let Some(name) = s.strip_prefix('$') {
        return env.get(name).cloned().ok_or_else(|| {
            if is_ident(name) {
                ExpressionError::UnknownParam {
                    written: s.to_string(),
                    name: name.to_string(),
                    declared: declared(),
                }
            } else {
                ExpressionError::NotOneName(s.to_string())
            }
        });
    }
    let expr = s.strip_prefix('=').unwrap_or(s);
    if expr.chars().count() > MAX_EXPRESSION_CHARS {
        return Err(ExpressionError::TooLong);
    }
    if nesting_depth(expr) > MAX_EXPRESSION_DEPTH {
        return Err(ExpressionError::TooDeep);
    }
    let mut seen = HashSet::new();
    for r in references(expr) {
        if r.is_empty() {
            return Err(ExpressionError::EmptyName(s.to_string()));
        }
        if !env.contains_key(&r) {
            return Err(ExpressionError::UnknownInExpression {
                written: s.to_string(),
                name: r,
                declared: declared(),
            });
        }
        seen.insert(r);
    }
    let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
    for r in &seen {
        let val = match &env[r] {
            Value::Integer(i) => evalexpr::Value::Float(*i as f64),
            Value::Float(f) => evalexpr::Value::Float(*f),
            Value::Boolean(b) => evalexpr::Value::Boolean(*b),
            Value::String(s) => evalexpr::Value::String(s.clone()),
            other => {
                return Err(ExpressionError::NotAScalar {
                    name: r.clone(),
                    kind: crate::scenario::values::kind_of(other),
                });
            }
        };
        ctx.set_value(format!("p_{r}"), val)
            .map_err(|e| ExpressionError::Variable {
                written: s.to_string(),
                problem: e.to_string(),
            })?;
    }
    let code = float_literals(&expr.replace('$', "p_"));
    let out =
        evalexpr::eval_with_context(&code, &ctx).map_err(|e| ExpressionError::Evaluation {
            written: s.to_string(),
            problem: e.to_string(),
        })?;
    to_toml(out).map_err(|result| ExpressionError::Unusable {
        written: s.to_string(),
        result,
    })
}

/// The deepest parenthesis nesting in an expression.
fn nesting_depth(expr: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for ch in expr.chars() {
        match ch {
            '(' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn to_toml(v: evalexpr::Value<DefaultNumericTypes>) -> Result<Value, UnusableResult> {
    Ok(match v {
        evalexpr::Value::Float(f) => {
            if !f.is_finite() {
                return Err(UnusableResult::NotFinite(f));
            }
            if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Value::Integer(f as i64)
            } else {
                Value::Float(f)
            }
        }
        evalexpr::Value::Int(i) => Value::Integer(i),
        evalexpr::Value::Boolean(b) => Value::Boolean(b),
        evalexpr::Value::String(s) => Value::String(s),
        evalexpr::Value::Tuple(items) => Value::Array(
            items
                .into_iter()
                .map(to_toml)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        evalexpr::Value::Empty => return Err(UnusableResult::Empty),
    })
}

/// Rewrites integer literals as floats (`7 / 2` is 3.5, not 3), leaving strings,
/// identifiers and literals that are already floats alone.
fn float_literals(code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len() + 8);
    let mut i = 0;
    let mut in_str = false;
    while i < c.len() {
        let ch = c[i];
        if in_str {
            out.push(ch);
            if ch == '\\' && i + 1 < c.len() {
                out.push(c[i + 1]);
                i += 2;
                continue;
            }
            if ch == '"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if ch == '"' {
            in_str = true;
            out.push(ch);
            i += 1;
            continue;
        }
        let prev_ident = i > 0
            && (c[i - 1].is_alphanumeric()
                || c[i - 1] == '_'
                || c[i - 1] == '.'
                || c[i - 1] == ':');
        if ch.is_ascii_digit() && !prev_ident {
            let start = i;
            let mut is_float = false;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
            if i < c.len() && c[i] == '.' {
                is_float = true;
                i += 1;
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < c.len() && (c[i] == 'e' || c[i] == 'E') {
                is_float = true;
                i += 1;
                if i < c.len() && (c[i] == '+' || c[i] == '-') {
                    i += 1;
                }
                while i < c.len() && c[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let lit: String = c[start..i].iter().collect();
            let glued = i < c.len() && (c[i].is_alphanumeric() || c[i] == '_');
            out.push_str(&lit);
            if !is_float && !glued {
                out.push_str(".0");
            }
            continue;
        }
        out.push(ch);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn dollar_names_keep_their_type() {
        let e = env(&[("n", Value::Integer(4)), ("p", Value::Boolean(true))]);
        assert_eq!(substitute_str("$n", &e).unwrap(), Value::Integer(4));
        assert_eq!(substitute_str("$p", &e).unwrap(), Value::Boolean(true));
        assert_eq!(
            substitute_str("$nope", &e).unwrap_err().to_string(),
            "\"$nope\" refers to unknown parameter \"nope\"; declared: n, p"
        );
        assert_eq!(
            substitute_str("$a b", &e).unwrap_err(),
            ExpressionError::NotOneName("$a b".into())
        );
    }

    #[test]
    fn expressions_use_float_arithmetic() {
        let e = env(&[("ch", Value::Integer(8)), ("mts", Value::Integer(5200))]);
        let v = substitute_str("= 8 * $ch * $mts / 1000 * 0.75", &e).unwrap();
        assert!((v.as_float().unwrap() - 249.6).abs() < 1e-9, "{v}");
        assert_eq!(substitute_str("= 7 / 2", &e).unwrap(), Value::Float(3.5));
        assert_eq!(substitute_str("= $ch / 2", &e).unwrap(), Value::Integer(4));
        assert_eq!(
            substitute_str("= 1e3 + 1.5e-3 * 0", &e).unwrap(),
            Value::Integer(1000)
        );
        assert_eq!(
            substitute_str("= if($ch > 4, 1, 2)", &e).unwrap(),
            Value::Integer(1)
        );
        assert_eq!(
            substitute_str("= min($ch, 3)", &e).unwrap(),
            Value::Integer(3)
        );
        assert!(matches!(
            substitute_str("= $ch +", &e),
            Err(ExpressionError::Evaluation { .. })
        ));
        assert_eq!(
            substitute_str("= $x + 1", &e).unwrap_err().to_string(),
            "\"= $x + 1\" refers to unknown parameter $x; declared: ch, mts"
        );
        assert_eq!(
            substitute_str("= 1 / 0", &env(&[]))
                .unwrap_err()
                .to_string(),
            "expression \"= 1 / 0\" gives inf, not a finite number"
        );
        assert_eq!(
            substitute_str("$x", &env(&[])).unwrap_err().to_string(),
            "\"$x\" refers to unknown parameter \"x\"; this scenario declares no [params]"
        );
    }

    #[test]
    fn float_literals_leave_identifiers_and_floats() {
        assert_eq!(
            float_literals("p_x2 * 3 + 1.5 - 2e3"),
            "p_x2 * 3.0 + 1.5 - 2e3"
        );
        assert_eq!(float_literals("\"a1\" + 1"), "\"a1\" + 1.0");
        assert_eq!(float_literals("math::log2(8)"), "math::log2(8.0)");
    }
}
