//! `--set KEY=VALUE` overrides: a dotted path into the merged document (`arrivals.jobs`,
//! `workload.stages[2].duration_s`, `workload.stages.synth.cores`), the value parsed as a
//! TOML value (a bare word becomes a string).

use std::path::Path;

use toml::{Table, Value};

use super::error::{ErrorKind, Loc, ScenarioError, join_index, join_key};
use super::include::{Document, remove_prefix};

/// One parsed `--set` argument.
#[derive(Debug, Clone, PartialEq)]
pub struct SetArg {
    /// The argument as given.
    pub arg: String,
    /// The key as given (left of `=`).
    pub key: String,
    /// Path segments.
    pub segments: Vec<Segment>,
    /// The new value.
    pub value: Value,
}

/// One step of a dotted path.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    /// A table key (or, in an array of tables, the element whose `name` is this).
    Key(String),
    /// An array index.
    Index(usize),
}

fn set_error(root: &Path, arg: &str, key: &str, msg: String) -> ScenarioError {
    ScenarioError {
        kind: ErrorKind::Set,
        file: root.to_path_buf(),
        line_col: None,
        set: Some(arg.to_string()),
        key: key.to_string(),
        message: msg,
    }
}

/// Parses `KEY=VALUE`.
pub fn parse_set(arg: &str, root: &Path) -> Result<SetArg, ScenarioError> {
    let Some((key, raw)) = arg.split_once('=') else {
        return Err(set_error(
            root,
            arg,
            arg.trim(),
            "expected KEY=VALUE (e.g. --set arrivals.jobs=1000)".into(),
        ));
    };
    let key = key.trim().to_string();
    let segments = parse_path(&key).map_err(|m| set_error(root, arg, &key, m))?;
    Ok(SetArg {
        arg: arg.to_string(),
        key,
        segments,
        value: parse_value(raw.trim()),
    })
}

/// A TOML value (`1000`, `2.5`, `true`, `"x"`, `[1, 2]`, `{ a = 1 }`), else a bare string.
pub fn parse_value(raw: &str) -> Value {
    let doc = format!("v = {raw}");
    match doc.parse::<Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(raw.into())),
        Err(_) => Value::String(raw.to_string()),
    }
}

/// `a.b[2].c` -> [Key a, Key b, Index 2, Key c].
pub fn parse_path(key: &str) -> Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    if key.is_empty() {
        return Err("empty key".into());
    }
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() && out.is_empty() || (name.is_empty() && rest.is_empty()) {
            return Err(format!("empty segment in key {key:?}"));
        }
        if !name.is_empty() {
            if let Ok(i) = name.parse::<usize>()
                && !out.is_empty()
            {
                out.push(Segment::Index(i));
            } else {
                out.push(Segment::Key(name.to_string()));
            }
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("unclosed '[' in key {key:?}"))?;
            let idx: usize = rest[1..close].trim().parse().map_err(|_| {
                format!("{:?} is not an array index in key {key:?}", &rest[1..close])
            })?;
            out.push(Segment::Index(idx));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected {rest:?} after ']' in key {key:?}"));
            }
        }
    }
    Ok(out)
}

/// Applies one override to the document; returns the canonical dotted path it set
/// (array elements chosen by name are shown by index).
pub fn apply(doc: &mut Document, set: &SetArg, root: &Path) -> Result<String, ScenarioError> {
    let path = set_in_table(&mut doc.table, &set.segments, &set.value, "")
        .map_err(|(p, m)| set_error(root, &set.arg, &p, m))?;
    remove_prefix(&mut doc.locs, &path);
    doc.locs.insert(path.clone(), Loc::Set(set.arg.clone()));
    Ok(path)
}

type SetResult = Result<String, (String, String)>;

fn set_in_table(t: &mut Table, segs: &[Segment], value: &Value, prefix: &str) -> SetResult {
    let Segment::Key(k) = &segs[0] else {
        return Err((
            prefix.to_string(),
            "is a table; select a key in it, not an index".into(),
        ));
    };
    let path = join_key(prefix, k);
    if segs.len() == 1 {
        t.insert(k.clone(), value.clone());
        return Ok(path);
    }
    let child = t
        .entry(k.clone())
        .or_insert_with(|| Value::Table(Table::new()));
    set_in_value(child, &segs[1..], value, &path)
}

fn set_in_value(v: &mut Value, segs: &[Segment], value: &Value, path: &str) -> SetResult {
    match v {
        Value::Table(t) => set_in_table(t, segs, value, path),
        Value::Array(a) => {
            let idx = match &segs[0] {
                Segment::Index(i) => *i,
                Segment::Key(name) => a
                    .iter()
                    .position(|e| e.get("name").and_then(Value::as_str) == Some(name.as_str()))
                    .ok_or_else(|| {
                        let names: Vec<&str> = a
                            .iter()
                            .filter_map(|e| e.get("name").and_then(Value::as_str))
                            .collect();
                        (
                            path.to_string(),
                            format!(
                                "no entry named {name:?}; select by index [i] or by name ({})",
                                if names.is_empty() {
                                    "none have names".to_string()
                                } else {
                                    names.join(", ")
                                }
                            ),
                        )
                    })?,
            };
            let len = a.len();
            let p = join_index(path, idx);
            let Some(elem) = a.get_mut(idx) else {
                return Err((
                    p,
                    format!("index {idx} is out of range: {path} has {len} entries"),
                ));
            };
            if segs.len() == 1 {
                *elem = value.clone();
                return Ok(p);
            }
            set_in_value(elem, &segs[1..], value, &p)
        }
        other => Err((
            path.to_string(),
            format!(
                "is {}, not a table; there is no key below it",
                super::values::kind_of(other)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::include::load_str;

    #[test]
    fn paths_parse_keys_and_indices() {
        use Segment::*;
        assert_eq!(
            parse_path("workload.stages[2].duration_s").unwrap(),
            vec![
                Key("workload".into()),
                Key("stages".into()),
                Index(2),
                Key("duration_s".into())
            ]
        );
        assert_eq!(
            parse_path("a.b.3.c").unwrap(),
            vec![Key("a".into()), Key("b".into()), Index(3), Key("c".into())]
        );
        assert!(parse_path("a..b").is_err());
        assert!(parse_path("a[x]").is_err());
    }

    #[test]
    fn values_parse_as_toml_or_bare_strings() {
        assert_eq!(parse_value("1000"), Value::Integer(1000));
        assert_eq!(parse_value("2.5"), Value::Float(2.5));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("poisson"), Value::String("poisson".into()));
        assert_eq!(parse_value("\"a b\""), Value::String("a b".into()));
        assert_eq!(parse_value("300 ms"), Value::String("300 ms".into()));
    }

    #[test]
    fn sets_reach_array_elements_by_index_and_name() {
        let root = Path::new("t.toml");
        let mut d = load_str(
            "[[w.s]]\nname = \"a\"\nx = 1\n[[w.s]]\nname = \"b\"\nx = 2\n",
            root,
        )
        .unwrap();
        let p = apply(&mut d, &parse_set("w.s.b.x=5", root).unwrap(), root).unwrap();
        assert_eq!(p, "w.s[1].x");
        assert_eq!(d.table["w"]["s"][1]["x"].as_integer(), Some(5));
        apply(&mut d, &parse_set("w.s[0].x=7", root).unwrap(), root).unwrap();
        assert_eq!(d.table["w"]["s"][0]["x"].as_integer(), Some(7));
        assert_eq!(d.locs.get("w.s[0].x"), Some(&Loc::Set("w.s[0].x=7".into())));
        let e = apply(&mut d, &parse_set("w.s[5].x=1", root).unwrap(), root).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = apply(&mut d, &parse_set("w.s.zz.x=1", root).unwrap(), root).unwrap_err();
        assert!(e.to_string().contains("no entry named \"zz\""), "{e}");
        assert!(parse_set("novalue", root).is_err());
    }
}
