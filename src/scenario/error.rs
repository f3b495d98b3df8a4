//! The error type of scenario loading, and [`Locator`], which turns a dotted key path into
//! the file (and line) that set it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of problem a [`ScenarioError`] reports (for tests and exit codes; the message
/// is in the error's `Display`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file could not be read.
    Io,
    /// The TOML itself does not parse.
    Syntax,
    /// A key that the schema does not know.
    UnknownKey,
    /// A required key is absent.
    MissingKey,
    /// A value of the wrong type (string for a number, ...).
    Type,
    /// A value of the right type that is out of range or inconsistent.
    Value,
    /// A name that refers to nothing (stage, lock, pool, marker, parameter).
    Reference,
    /// A cycle among stages or includes.
    Cycle,
    /// A stage needs more of a resource than the host has.
    Capacity,
    /// A missing or unreadable include file.
    Include,
    /// A malformed arrival trace CSV.
    Trace,
    /// A malformed `--set KEY=VALUE`.
    Set,
    /// A `[params]` problem (unknown parameter, bad expression).
    Param,
}

/// Where a key's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loc {
    /// Written in a file at a line and column (1-based).
    File { file: PathBuf, line: u32, col: u32 },
    /// Given on the command line as `--set KEY=VALUE` (the whole argument).
    Set(String),
}

/// A scenario that cannot be loaded: which file, which key, what is wrong, what is allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    /// The kind of problem.
    pub kind: ErrorKind,
    /// The file that holds the offending key (the scenario itself, or an included file).
    pub file: PathBuf,
    /// Line and column (1-based) of the key, when known.
    pub line_col: Option<(u32, u32)>,
    /// The `--set` argument that supplied the value, when it came from the command line.
    pub set: Option<String>,
    /// Dotted key path, e.g. `workload.stages[2].duration_s` (empty for whole-file errors).
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, col)) = self.line_col {
            write!(f, ":{line}:{col}")?;
        }
        f.write_str(": ")?;
        if self.set.is_some() {
            f.write_str("--set ")?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

impl ScenarioError {
    /// An error about a whole file (I/O, syntax), optionally at a line and column.
    pub fn in_file(
        kind: ErrorKind,
        file: &Path,
        line_col: Option<(u32, u32)>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            file: file.to_path_buf(),
            line_col,
            set: None,
            key: String::new(),
            message: message.into(),
        }
    }
}

/// Byte offset to 1-based (line, column), columns counted in characters.
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    LineIndex::new(text).line_col(offset)
}

/// Line starts of a text, so that many offsets turn into (line, column) in
/// logarithmic time each: scanning from the start for every key made loading a file
/// with tens of thousands of keys quadratic. Columns count characters; so that a long
/// line (a 150,000-point array) does not make counting them quadratic either, the
/// characters before every [`CHAR_BLOCK`] bytes are counted once.
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
    /// Characters in `text[..k * CHAR_BLOCK]`, for each k.
    chars_before: Vec<usize>,
}

/// Bytes per checkpoint of [`LineIndex`]'s character count.
const CHAR_BLOCK: usize = 256;

/// True for the bytes that start a character (not UTF-8 continuation bytes): counting
/// them over any byte range counts the characters that start in it.
fn starts_char(b: &u8) -> bool {
    (b & 0xC0) != 0x80
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let mut chars_before = vec![0];
        for block in text.as_bytes().chunks(CHAR_BLOCK) {
            let last = *chars_before.last().expect("starts with 0");
            chars_before.push(last + block.iter().filter(|b| starts_char(b)).count());
        }
        LineIndex {
            text,
            starts,
            chars_before,
        }
    }

    /// Characters that start before byte `at`.
    fn chars_upto(&self, at: usize) -> usize {
        let block = at / CHAR_BLOCK;
        let from = block * CHAR_BLOCK;
        self.chars_before[block]
            + self.text.as_bytes()[from..at]
                .iter()
                .filter(|b| starts_char(b))
                .count()
    }

    /// 1-based (line, column) of a byte offset; columns count characters.
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let col = self.chars_upto(offset) - self.chars_upto(start) + 1;
        (sat(line), sat(col))
    }
}

fn sat(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// Maps dotted key paths to where they were set, so semantic errors can name file and line.
#[derive(Debug, Clone, Default)]
pub struct Locator {
    /// The scenario file (named when a key was set nowhere, e.g. a missing key).
    pub root: PathBuf,
    /// Path -> where it was set.
    pub locs: BTreeMap<String, Loc>,
    /// Path -> how its value was computed (`$param` or `= expression`), for messages.
    pub notes: BTreeMap<String, String>,
}

impl Locator {
    /// An error on `key`: finds the file/line (or `--set`) that set the key, or its nearest
    /// enclosing table, falling back to the scenario file.
    pub fn error(&self, kind: ErrorKind, key: &str, message: impl Into<String>) -> ScenarioError {
        let mut message = message.into();
        if let Some(note) = self.notes.get(key) {
            message.push_str(&format!(" (the value came from {note})"));
        }
        let mut probe = key.to_string();
        let loc = loop {
            if let Some(loc) = self.locs.get(&probe) {
                break Some(loc);
            }
            match parent_path(&probe) {
                Some(p) => probe = p,
                None => break None,
            }
        };
        // An unknown table introduced by a `--set` (`--set nope.key=1`) has no location of
        // its own: its child's `--set` names it.
        let loc = loc.or_else(|| {
            self.locs
                .iter()
                .find(|(k, l)| {
                    matches!(l, Loc::Set(_))
                        && k.strip_prefix(key)
                            .is_some_and(|rest| rest.starts_with(['.', '[']))
                })
                .map(|(k, l)| {
                    probe = k.clone();
                    l
                })
        });
        let (file, line_col, set) = match loc {
            Some(Loc::File { file, line, col }) => (file.clone(), Some((*line, *col)), None),
            Some(Loc::Set(arg)) if probe.starts_with(key) => {
                (self.root.clone(), None, Some(arg.clone()))
            }
            Some(Loc::Set(arg)) if probe == key || key.starts_with(&probe) => {
                (self.root.clone(), None, Some(arg.clone()))
            }
            Some(Loc::Set(_)) | None => (self.root.clone(), None, None),
        };
        // A key of the file refused because of a `--set` beside it (`--set
        // stages[0].duration_s=1` where the file gives `duration`): name the `--set` too.
        if set.is_none()
            && let Some(arg) = self.related_set(key, &message)
        {
            message.push_str(&format!(" (given --set {arg})"));
        }
        ScenarioError {
            kind,
            file,
            line_col,
            set,
            key: key.to_string(),
            message,
        }
    }

    /// A `--set` on `key`'s table, inside it, on a table holding it, or on a key the
    /// message names (`needs 8 cores, but the host has 4 (hardware.cpu_cores)`).
    fn related_set(&self, key: &str, message: &str) -> Option<&str> {
        let parent = parent_path(key);
        let under = |outer: &str, inner: &str| {
            inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with(['.', '[']))
        };
        self.locs.iter().find_map(|(k, l)| match l {
            Loc::Set(arg)
                if under(key, k)
                    || under(k, key)
                    || parent.is_some() && parent_path(k) == parent
                    || k.contains(['.', '[']) && message.contains(k.as_str()) =>
            {
                Some(arg.as_str())
            }
            _ => None,
        })
    }

    /// The file that set `key` (or the scenario file), for resolving relative paths.
    pub fn file_of(&self, key: &str) -> Option<&Path> {
        match self.locs.get(key)? {
            Loc::File { file, .. } => Some(file),
            Loc::Set(_) => None,
        }
    }
}

/// `a.b[2].c` -> `a.b[2]` -> `a.b` -> `a` -> None.
pub fn parent_path(path: &str) -> Option<String> {
    let cut = path.rfind(['.', '['])?;
    Some(path[..cut].to_string())
}

/// Joins a table key onto a path.
pub fn join_key(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// Joins an array index onto a path.
pub fn join_index(prefix: &str, index: usize) -> String {
    format!("{prefix}[{index}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_across_checkpoints() {
        // Multi-byte characters on both sides of several 256-byte checkpoints.
        let mut text = String::new();
        for i in 0..400 {
            text.push_str(if i % 7 == 0 { "é" } else { "a" });
            text.push_str(if i % 11 == 0 { "\u{1F600}" } else { "" });
            if i % 97 == 96 {
                text.push('\n');
            }
        }
        let index = LineIndex::new(&text);
        let mut line = 1;
        let mut col = 1;
        for (at, c) in text.char_indices() {
            assert_eq!(index.line_col(at), (line, col), "at byte {at}");
            if c == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
        }
    }

    #[test]
    fn line_col_counts_from_one() {
        let t = "a = 1\nbb = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, 9), (2, 4));
    }

    #[test]
    fn parent_paths_walk_up() {
        assert_eq!(parent_path("a.b[2].c").as_deref(), Some("a.b[2]"));
        assert_eq!(parent_path("a.b[2]").as_deref(), Some("a.b"));
        assert_eq!(parent_path("a"), None);
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let mut loc = Locator {
            root: "s.toml".into(),
            ..Default::default()
        };
        loc.locs.insert(
            "arrivals.jobs".into(),
            Loc::File {
                file: "s.toml".into(),
                line: 3,
                col: 1,
            },
        );
        let e = loc.error(ErrorKind::Value, "arrivals.jobs", "0 is too small");
        assert_eq!(e.to_string(), "s.toml:3:1: arrivals.jobs: 0 is too small");
        loc.locs.insert("seed".into(), Loc::Set("seed=-1".into()));
        let e = loc.error(ErrorKind::Value, "seed", "bad");
        assert_eq!(e.to_string(), "s.toml: --set seed: bad");
    }
}
