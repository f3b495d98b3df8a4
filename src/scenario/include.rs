//! Reading scenario files: TOML parsing with key locations, `include = [...]` merging
//! (recursive, relative to the including file, with cycle detection).
//!
//! A file included more than once (a diamond, or a list naming it again) is read and
//! merged from its includes once; later inclusions reuse that document, so includes
//! that fan out cost what their distinct files cost, not a power of the fan-out. The
//! include entries of one load are bounded ([`MAX_INCLUDE_ENTRIES`]).

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::{Spanned, Table, Value};

use super::error::{ErrorKind, LineIndex, Loc, ScenarioError, join_index, join_key, line_col};

/// A merged TOML document and where each key in it was set.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// The merged table.
    pub table: Table,
    /// Dotted path -> where it was set.
    pub locs: BTreeMap<String, Loc>,
    /// Every file read, the scenario itself last.
    pub files: Vec<PathBuf>,
}

/// The deepest chain of includes (a file including a file including ...) accepted; real
/// scenarios use one or two levels, and thousands overflowed the stack.
pub const MAX_INCLUDE_DEPTH: usize = 64;

/// The most `include` entries one scenario load follows, over all its files (real
/// scenarios have a handful; thousands only come from files including each other over
/// and over).
pub const MAX_INCLUDE_ENTRIES: usize = 256;

/// What one load has read: the chain of files being read (for cycles and depth), every
/// file already merged with its includes (by canonical path), entries followed so far.
#[derive(Default)]
struct Loader {
    stack: Vec<PathBuf>,
    done: HashMap<PathBuf, Document>,
    entries: usize,
}

/// Reads a scenario or included file: a regular file of bounded size.
fn read(path: &Path) -> std::io::Result<String> {
    crate::input_file::read_text(path, crate::input_file::MAX_TOML_BYTES)
}

/// Reads `path` and everything it includes.
pub fn load_file(path: &Path) -> Result<Document, ScenarioError> {
    let text = read(path).map_err(|e| {
        ScenarioError::in_file(ErrorKind::Io, path, None, format!("cannot read: {e}"))
    })?;
    let mut loader = Loader {
        stack: vec![canonical(path)],
        ..Loader::default()
    };
    load_text(&text, path, &mut loader)
}

/// Parses `text` as if it were the file `origin` (includes resolve relative to it).
pub fn load_str(text: &str, origin: &Path) -> Result<Document, ScenarioError> {
    let mut loader = Loader {
        stack: vec![canonical(origin)],
        ..Loader::default()
    };
    load_text(text, origin, &mut loader)
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

fn load_text(text: &str, file: &Path, loader: &mut Loader) -> Result<Document, ScenarioError> {
    let (mut table, locs) = parse(text, file)?;
    let mut doc = Document::default();
    if let Some(inc) = table.remove("include") {
        let inc_loc = locs.get("include").cloned();
        let at = match &inc_loc {
            Some(Loc::File { line, col, .. }) => Some((*line, *col)),
            _ => None,
        };
        let err = |kind, msg: String| ScenarioError {
            kind,
            file: file.to_path_buf(),
            line_col: at,
            set: None,
            key: "include".into(),
            message: msg,
        };
        let names: Vec<String> = match inc {
            Value::String(s) => vec![s],
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s),
                    other => Err(err(
                        ErrorKind::Type,
                        format!(
                            "entry {i} is {}; include takes an array of file paths (strings)",
                            super::values::kind_of(&other)
                        ),
                    )),
                })
                .collect::<Result<_, _>>()?,
            other => {
                return Err(err(
                    ErrorKind::Type,
                    format!(
                        "is {}; include takes an array of file paths (strings)",
                        super::values::kind_of(&other)
                    ),
                ));
            }
        };
        let dir = file.parent().unwrap_or(Path::new(""));
        let mut previous: Option<PathBuf> = None;
        for name in names {
            let path = dir.join(&name);
            loader.entries += 1;
            if loader.entries > MAX_INCLUDE_ENTRIES {
                return Err(err(
                    ErrorKind::Include,
                    format!(
                        "more than {MAX_INCLUDE_ENTRIES} include entries in all (at {}); a \
                         file is included over and over: include each file once",
                        path.display()
                    ),
                ));
            }
            let canon = canonical(&path);
            // The same file twice in a row merges to what it merges to once.
            if previous.as_ref() == Some(&canon) {
                continue;
            }
            previous = Some(canon.clone());
            if let Some(sub) = loader.done.get(&canon) {
                merge(&mut doc, sub.clone());
                continue;
            }
            let stack = &loader.stack;
            if stack.len() >= MAX_INCLUDE_DEPTH {
                return Err(err(
                    ErrorKind::Include,
                    format!(
                        "includes nest more than {MAX_INCLUDE_DEPTH} files deep (at {}); flatten the chain",
                        path.display()
                    ),
                ));
            }
            let text = match read(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(err(
                        ErrorKind::Include,
                        format!(
                            "included file {name:?} not found (looked for {}); include paths are relative to the including file",
                            path.display()
                        ),
                    ));
                }
                Err(e) => {
                    return Err(err(
                        ErrorKind::Include,
                        format!("cannot read included file {}: {e}", path.display()),
                    ));
                }
            };
            if let Some(pos) = stack.iter().position(|p| *p == canon) {
                let mut chain: Vec<String> = stack[pos..]
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                chain.push(canon.display().to_string());
                return Err(err(
                    ErrorKind::Cycle,
                    format!("include cycle: {}", chain.join(" -> ")),
                ));
            }
            loader.stack.push(canon.clone());
            let sub = load_text(&text, &path, loader)?;
            loader.stack.pop();
            loader.done.insert(canon, sub.clone());
            merge(&mut doc, sub);
        }
    }
    let this = Document {
        table,
        locs,
        files: vec![file.to_path_buf()],
    };
    merge(&mut doc, this);
    Ok(doc)
}

/// The dotted key of a `key = value` line at byte `at`, with its `[table]` header:
/// best effort, for naming the key in a syntax error (None for other lines).
fn key_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    let plain = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    if !plain(key) {
        return None;
    }
    let table = text[..start].lines().rev().find_map(|l| {
        let l = l.trim();
        let inner = l.strip_prefix('[')?.strip_suffix(']')?;
        Some(inner.trim_matches(['[', ']']).trim().to_string())
    });
    Some(match table {
        Some(t) if plain(&t) => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

/// Parses one file's text into a table and the locations of its keys.
fn parse(text: &str, file: &Path) -> Result<(Table, BTreeMap<String, Loc>), ScenarioError> {
    let syntax = |e: toml::de::Error| {
        let at = e.span().map(|s| line_col(text, s.start));
        let msg = e.message().trim().to_string();
        let mut err = ScenarioError::in_file(
            ErrorKind::Syntax,
            file,
            at,
            format!("TOML syntax error: {msg}"),
        );
        // A bad value (a 309-digit number, say) is easier to fix with its key named.
        if let Some(key) = e.span().and_then(|s| key_at(text, s.start)) {
            err.key = key;
        }
        err
    };
    let spanned = DeTable::parse(text).map_err(syntax)?;
    let table: Table = text.parse().map_err(syntax)?;
    let mut locs = BTreeMap::new();
    walk_table(
        spanned.get_ref(),
        "",
        &LineIndex::new(text),
        file,
        &mut locs,
    );
    Ok((table, locs))
}

fn walk_table(
    t: &DeTable<'_>,
    prefix: &str,
    lines: &LineIndex<'_>,
    file: &Path,
    locs: &mut BTreeMap<String, Loc>,
) {
    for (k, v) in t.iter() {
        let path = join_key(prefix, k.get_ref());
        let (line, col) = lines.line_col(k.span().start);
        locs.insert(
            path.clone(),
            Loc::File {
                file: file.to_path_buf(),
                line,
                col,
            },
        );
        walk_value(v, &path, lines, file, locs);
    }
}

fn walk_value(
    v: &Spanned<DeValue<'_>>,
    path: &str,
    lines: &LineIndex<'_>,
    file: &Path,
    locs: &mut BTreeMap<String, Loc>,
) {
    match v.get_ref() {
        DeValue::Table(t) => walk_table(t, path, lines, file, locs),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let p = join_index(path, i);
                let (line, col) = lines.line_col(item.span().start);
                locs.insert(
                    p.clone(),
                    Loc::File {
                        file: file.to_path_buf(),
                        line,
                        col,
                    },
                );
                walk_value(item, &p, lines, file, locs);
            }
        }
        _ => {}
    }
}

/// Merges `over` into `base`: tables merge key by key, anything else (arrays included) is
/// replaced by `over`'s value.
pub fn merge(base: &mut Document, over: Document) {
    merge_table(&mut base.table, over.table, "", &mut base.locs);
    base.locs.extend(over.locs);
    // Each file once, where it was first read (bounded by the include entries).
    for f in over.files {
        if !base.files.contains(&f) {
            base.files.push(f);
        }
    }
}

fn merge_table(base: &mut Table, over: Table, prefix: &str, locs: &mut BTreeMap<String, Loc>) {
    for (k, v) in over {
        let path = join_key(prefix, &k);
        match (base.get_mut(&k), v) {
            (Some(Value::Table(bt)), Value::Table(ot)) => merge_table(bt, ot, &path, locs),
            (_, v) => {
                remove_prefix(locs, &path);
                base.insert(k, v);
            }
        }
    }
}

/// Forgets the locations of `path` and everything below it: `path`, `path.*` and
/// `path[*`, each a contiguous range of the sorted map (so the cost is what is removed,
/// not the size of the map: merging a file of many keys over a large one was quadratic).
pub fn remove_prefix(locs: &mut BTreeMap<String, Loc>, path: &str) {
    locs.remove(path);
    // '/' and '\\' are the characters right after '.' and '['.
    for (open, close) in [('.', '/'), ('[', '\\')] {
        let (lo, hi) = (format!("{path}{open}"), format!("{path}{close}"));
        let doomed: Vec<String> = locs
            .range::<str, _>((Bound::Included(lo.as_str()), Bound::Excluded(hi.as_str())))
            .map(|(k, _)| k.clone())
            .collect();
        for k in doomed {
            locs.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        load_str(text, Path::new("t.toml")).unwrap()
    }

    #[test]
    fn locations_cover_nested_keys_and_arrays() {
        let d = doc("a = 1\n[b]\nc = 2\n[[s]]\nname = \"x\"\n[[s]]\nname = \"y\"\n");
        let at = |k: &str| match d.locs.get(k) {
            Some(Loc::File { line, .. }) => *line,
            other => panic!("{k}: {other:?}"),
        };
        assert_eq!(at("a"), 1);
        assert_eq!(at("b.c"), 3);
        assert_eq!(at("s[1].name"), 7);
    }

    #[test]
    fn merge_overrides_scalars_and_merges_tables() {
        let mut a = doc("[h]\nx = 1\ny = 2\n[[s]]\nn = 1\n[[s]]\nn = 2\n");
        let b = load_str("[h]\ny = 3\n[[s]]\nn = 9\n", Path::new("u.toml")).unwrap();
        merge(&mut a, b);
        assert_eq!(a.table["h"]["x"].as_integer(), Some(1));
        assert_eq!(a.table["h"]["y"].as_integer(), Some(3));
        assert_eq!(a.table["s"].as_array().unwrap().len(), 1);
        assert!(!a.locs.contains_key("s[1]"));
        assert!(
            matches!(a.locs.get("h.y"), Some(Loc::File { file, .. }) if file == Path::new("u.toml"))
        );
    }

    #[test]
    fn a_file_included_again_merges_as_it_did_when_read_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        // b sets h = {x}; c replaces h with a number; b again makes it a table; d is
        // reached through b and c (a diamond) and read once.
        w("d.toml", "[k]\nd = 1\n");
        w("b.toml", "include = [\"d.toml\"]\n[h]\nx = 1\n");
        w("c.toml", "include = [\"d.toml\"]\nh = 5\n[k]\nc = 2\n");
        w(
            "a.toml",
            "include = [\"b.toml\", \"b.toml\", \"c.toml\", \"b.toml\"]\n",
        );
        let a = load_file(&dir.path().join("a.toml")).unwrap();
        assert_eq!(a.table["h"]["x"].as_integer(), Some(1));
        assert_eq!(a.table["k"]["d"].as_integer(), Some(1));
        assert_eq!(a.table["k"]["c"].as_integer(), Some(2));
        // Each file once in the list of files read, the including file last.
        let names: Vec<String> = (a.files.iter())
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["d.toml", "b.toml", "c.toml", "a.toml"]);
    }

    #[test]
    fn removing_a_key_keeps_keys_that_only_share_its_prefix() {
        let mut d = doc("a = 1
ab = 2
ac = [1]
[a2]
x = 1
");
        d.locs.insert("a.x".into(), d.locs["a"].clone());
        d.locs.insert("a[0]".into(), d.locs["a"].clone());
        remove_prefix(&mut d.locs, "a");
        let left: Vec<&str> = d.locs.keys().map(String::as_str).collect();
        assert_eq!(left, ["a2", "a2.x", "ab", "ac", "ac[0]"]);
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = load_str("a = 1\nb = = 2\n", Path::new("t.toml")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert_eq!(e.line_col.map(|l| l.0), Some(2));
        assert!(e.to_string().starts_with("t.toml:2:"), "{e}");
    }
}
