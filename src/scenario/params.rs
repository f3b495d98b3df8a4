//! `[params]`: named knobs. Values elsewhere may be `"$name"` (replaced by the knob's
//! value, keeping its type) or expressions `"= 8 * $dram_channels * $dram_mts / 1000"`
//! (evaluated with `evalexpr`, in floating point; integral results become integers).

use std::collections::BTreeMap;

use toml::Value;

use super::error::{ErrorKind, Locator, ScenarioError, join_index, join_key};

mod expression;

use expression::substitute_str;
pub use expression::{ExpressionError, UnusableResult};

/// A declared knob, its default, its current value and its one-line doc.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamInfo {
    /// Name (referenced as `$name`).
    pub name: String,
    /// Declared default.
    pub default: toml::Value,
    /// Value in effect (the default, or `--set params.NAME=V`), resolved when it is an
    /// expression.
    pub value: toml::Value,
    /// One-line description.
    pub doc: String,
}

/// The deepest parenthesis nesting accepted in an expression: the evaluator recurses per
/// level, and 100k levels overflowed the stack.
pub const MAX_EXPRESSION_DEPTH: usize = 64;
/// The longest expression accepted, in characters (a bound on the evaluator's work and
/// recursion for unary chains such as `- - - 1` that have no parentheses).
pub const MAX_EXPRESSION_CHARS: usize = 4096;
/// The longest chain of parameters defined through one another (`a = "$b"`, `b = "$c"`,
/// ...) accepted; resolving recurses per link.
pub const MAX_PARAM_CHAIN: usize = 256;

/// Top-level keys whose strings are never substituted.
const VERBATIM: &[&str] = &["name", "description", "params", "include", "calibration"];

/// Reads the `[params]` table of the merged document.
pub fn collect(doc: &toml::Table, loc: &Locator) -> Result<Vec<ParamInfo>, ScenarioError> {
    let Some(params) = doc.get("params") else {
        return Ok(Vec::new());
    };
    let Value::Table(params) = params else {
        return Err(loc.error(
            ErrorKind::Type,
            "params",
            format!(
                "is {}; [params] is a table of name = {{ default = V, doc = \"...\" }}",
                super::values::kind_of(params)
            ),
        ));
    };
    let mut out = Vec::new();
    for (name, decl) in params {
        let key = join_key("params", name);
        if !is_ident(name) {
            return Err(loc.error(
                ErrorKind::Param,
                &key,
                "parameter names are letters, digits and '_' (not starting with a digit)",
            ));
        }
        let (default, doc) = match decl {
            Value::Table(t) => {
                for k in t.keys() {
                    if k != "default" && k != "doc" {
                        return Err(loc.error(
                            ErrorKind::UnknownKey,
                            &join_key(&key, k),
                            "unknown key; a parameter has `default` and `doc`",
                        ));
                    }
                }
                let default = t.get("default").cloned().ok_or_else(|| {
                    loc.error(
                        ErrorKind::MissingKey,
                        &join_key(&key, "default"),
                        "missing; write name = { default = V, doc = \"...\" }",
                    )
                })?;
                let doc = match t.get("doc") {
                    None => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => {
                        return Err(loc.error(
                            ErrorKind::Type,
                            &join_key(&key, "doc"),
                            format!("is {}; expected a string", super::values::kind_of(other)),
                        ));
                    }
                };
                (default, doc)
            }
            scalar => (scalar.clone(), String::new()),
        };
        if !matches!(
            default,
            Value::Integer(_) | Value::Float(_) | Value::Boolean(_) | Value::String(_)
        ) {
            return Err(loc.error(
                ErrorKind::Type,
                &join_key(&key, "default"),
                format!(
                    "is {}; a parameter is a number, boolean or string",
                    super::values::kind_of(&default)
                ),
            ));
        }
        out.push(ParamInfo {
            name: name.clone(),
            value: default.clone(),
            default,
            doc,
        });
    }
    Ok(out)
}

/// Applies `--set params.NAME=V`: the parameter must exist and keep its type.
pub fn set_value(
    params: &mut [ParamInfo],
    name: &str,
    value: Value,
    loc: &Locator,
) -> Result<(), ScenarioError> {
    let key = join_key("params", name);
    let names = names(params);
    let Some(p) = params.iter_mut().find(|p| p.name == name) else {
        return Err(loc.error(
            ErrorKind::Param,
            &key,
            format!("unknown parameter {name:?}; this scenario declares: {names}"),
        ));
    };
    // An expression default ("= 128 * $gpus") stands for the number it evaluates to, so
    // a number replaces it (compare sets host RAM this way).
    let expression_default =
        matches!(&p.default, Value::String(s) if s.trim_start().starts_with('='));
    let compatible = matches!(
        (&p.default, &value),
        (
            Value::Integer(_) | Value::Float(_),
            Value::Integer(_) | Value::Float(_)
        ) | (Value::Boolean(_), Value::Boolean(_))
            | (Value::String(_), Value::String(_))
    ) || matches!(&value, Value::String(s) if s.starts_with('='))
        || (expression_default && matches!(&value, Value::Integer(_) | Value::Float(_)));
    if !compatible {
        return Err(loc.error(
            ErrorKind::Type,
            &key,
            format!(
                "{value} is {}, but the parameter's default ({}) is {}",
                super::values::kind_of(&value),
                p.default,
                super::values::kind_of(&p.default)
            ),
        ));
    }
    // A sweep may write an integer knob as 4.0: keep it an integer when it is one.
    p.value = match (&p.default, value) {
        (Value::Integer(_), Value::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
            Value::Integer(f as i64)
        }
        (_, v) => v,
    };
    Ok(())
}

fn names(params: &[ParamInfo]) -> String {
    if params.is_empty() {
        "(no parameters)".into()
    } else {
        params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

pub(super) fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Resolves parameters whose values are themselves `$other` or `= expressions`.
pub fn resolve(params: &mut [ParamInfo], loc: &Locator) -> Result<(), ScenarioError> {
    let mut done: BTreeMap<String, Value> = BTreeMap::new();
    let raw: BTreeMap<String, Value> = params
        .iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect();
    for p in params.iter() {
        let mut stack = Vec::new();
        resolve_one(&p.name, &raw, &mut done, &mut stack, loc)?;
    }
    for p in params.iter_mut() {
        p.value = done[&p.name].clone();
    }
    Ok(())
}

fn resolve_one(
    name: &str,
    raw: &BTreeMap<String, Value>,
    done: &mut BTreeMap<String, Value>,
    stack: &mut Vec<String>,
    loc: &Locator,
) -> Result<Value, ScenarioError> {
    if let Some(v) = done.get(name) {
        return Ok(v.clone());
    }
    let key = join_key("params", name);
    if let Some(pos) = stack.iter().position(|s| s == name) {
        let mut chain = stack[pos..].to_vec();
        chain.push(name.to_string());
        return Err(loc.error(
            ErrorKind::Cycle,
            &key,
            format!(
                "parameters refer to each other in a cycle: {}",
                chain.join(" -> ")
            ),
        ));
    }
    if stack.len() >= MAX_PARAM_CHAIN {
        return Err(loc.error(
            ErrorKind::Param,
            &key,
            format!(
                "parameters are defined through one another more than {MAX_PARAM_CHAIN} levels deep; shorten the chain"
            ),
        ));
    }
    let v = raw[name].clone();
    let refs = match &v {
        Value::String(s) if is_reference(s) => references(s),
        _ => Vec::new(),
    };
    stack.push(name.to_string());
    let mut env = BTreeMap::new();
    for r in refs {
        if !raw.contains_key(&r) {
            return Err(loc.error(
                ErrorKind::Param,
                &key,
                format!(
                    "refers to unknown parameter ${r}; declared: {}",
                    raw.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        let rv = resolve_one(&r, raw, done, stack, loc)?;
        env.insert(r, rv);
    }
    stack.pop();
    let out = match &v {
        Value::String(s) if is_reference(s) => {
            substitute_str(s, &env).map_err(|e| loc.error(ErrorKind::Param, &key, e.to_string()))?
        }
        _ => v,
    };
    done.insert(name.to_string(), out.clone());
    Ok(out)
}

fn is_reference(s: &str) -> bool {
    s.starts_with('$') || s.starts_with('=')
}

/// Every parameter the document's values refer to (`"$name"` and `"= expression"` strings
/// outside the keys never substituted, and the knobs' own defaults).
pub fn referenced(doc: &toml::Table) -> std::collections::BTreeSet<String> {
    fn walk(v: &Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::String(s) if is_reference(s) => out.extend(references(s)),
            Value::Table(t) => t.values().for_each(|v| walk(v, out)),
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for (k, v) in doc {
        if k == "params" || !VERBATIM.contains(&k.as_str()) {
            walk(v, &mut out);
        }
    }
    out
}

/// `$name` occurrences in a string.
pub(super) fn references(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < b.len() {
        if b[i] == '$' {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == '_') {
                j += 1;
            }
            out.push(b[i + 1..j].iter().collect());
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Replaces `"$name"` and `"= expr"` strings everywhere in the document except the verbatim
/// keys; records what each substituted path came from in `loc.notes`.
pub fn substitute(
    doc: &mut toml::Table,
    params: &[ParamInfo],
    loc: &mut Locator,
) -> Result<(), ScenarioError> {
    let env: BTreeMap<String, Value> = params
        .iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect();
    for (k, v) in doc.iter_mut() {
        if VERBATIM.contains(&k.as_str()) {
            continue;
        }
        walk(v, k, &env, loc)?;
    }
    Ok(())
}

fn walk(
    v: &mut Value,
    path: &str,
    env: &BTreeMap<String, Value>,
    loc: &mut Locator,
) -> Result<(), ScenarioError> {
    match v {
        Value::String(s) if is_reference(s) => {
            let note = if let Some(name) = s.strip_prefix('$') {
                format!("params.{name}")
            } else {
                format!("the expression {s:?}")
            };
            let new = substitute_str(s, env)
                .map_err(|e| loc.error(ErrorKind::Param, path, e.to_string()))?;
            loc.notes.insert(path.to_string(), note);
            *v = new;
        }
        Value::Table(t) => {
            for (k, item) in t.iter_mut() {
                walk(item, &join_key(path, k), env, loc)?;
            }
        }
        Value::Array(a) => {
            for (i, item) in a.iter_mut().enumerate() {
                walk(item, &join_index(path, i), env, loc)?;
            }
        }
        _ => {}
    }
    Ok(())
}
