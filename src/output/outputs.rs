//! Every output of a command, checked together before any work: each target may be
//! written (as [`check_file_target`] and [`check_dir_target`] say), a chart's sibling
//! formats too (`X.png` is drawn with `X.svg` beside it), no two outputs share a path, and
//! no output is one of the command's inputs (a trace written over the scenario, a
//! re-prediction over the replay it reads).

use std::path::{Component, Path, PathBuf};

use super::OutputError;
use super::target::{check_dir_target, check_file_target};

/// What an output flag writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// One file.
    File,
    /// A chart: `X.png` and `X.svg` (whichever extension was given).
    Chart,
    /// A folder and the files it will hold (by name).
    Folder(&'static [&'static str]),
}

/// One output a command will write, with the flag that names it (for messages).
#[derive(Debug, Clone)]
pub struct Output {
    /// The flag, e.g. `--trace`.
    pub flag: String,
    /// The path given.
    pub path: PathBuf,
    /// File, chart or folder.
    pub kind: OutputKind,
}

impl Output {
    /// An output of `kind` at `path`, named by `flag`.
    pub fn new(flag: impl Into<String>, path: impl Into<PathBuf>, kind: OutputKind) -> Output {
        Output {
            flag: flag.into(),
            path: path.into(),
            kind,
        }
    }

    /// The files it writes.
    fn files(&self) -> Vec<PathBuf> {
        match self.kind {
            OutputKind::File => vec![self.path.clone()],
            OutputKind::Chart => ["png", "svg"]
                .iter()
                .map(|e| self.path.with_extension(e))
                .collect(),
            OutputKind::Folder(names) => names.iter().map(|n| self.path.join(n)).collect(),
        }
    }
}

/// Checks every output before any work: each may be written, none shares a path with
/// another, none is one of `inputs` (each named by what it is, e.g. "the scenario").
pub fn check_outputs(outputs: &[Output], inputs: &[(String, PathBuf)]) -> Result<(), OutputError> {
    let mut written: Vec<(&str, PathBuf)> = Vec::new();
    for o in outputs {
        if let OutputKind::Folder(_) = o.kind {
            check_dir_target(&o.path)?;
        }
        for f in o.files() {
            check_file_target(&f)?;
            written.push((o.flag.as_str(), f));
        }
    }
    for (i, (flag, f)) in written.iter().enumerate() {
        if let Some((other, _)) = written[..i].iter().find(|(_, g)| same_file(f, g)) {
            let why = if other == flag {
                format!("{flag} names it twice; give each output its own path")
            } else {
                format!(
                    "is written by both {other} and {flag}, so one would replace the other; \
                     give each output its own path"
                )
            };
            return Err(OutputError::Clash {
                path: f.clone(),
                why,
            });
        }
        if let Some((what, _)) = inputs.iter().find(|(_, g)| same_file(f, g)) {
            return Err(OutputError::Clash {
                path: f.clone(),
                why: format!(
                    "{flag} would write over {what}, which is an input of this command; give \
                     the output another path"
                ),
            });
        }
    }
    Ok(())
}

/// True when `a` and `b` name the same file: the same file on disk (hard links and
/// symlinked folders included), or, where one does not exist yet, the same absolute path
/// once its existing folders are resolved.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    resolved(a) == resolved(b)
}

/// `path` made absolute with `.` and `..` resolved lexically, then its longest existing
/// prefix replaced by its canonical form (symlinks resolved).
fn resolved(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("."))
            .join(path)
    };
    let mut lexical = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            c => lexical.push(c),
        }
    }
    let mut rest = Vec::new();
    let mut at = lexical.as_path();
    loop {
        if let Ok(canon) = at.canonicalize() {
            let mut out = canon;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(p), Some(name)) => {
                rest.push(name.to_os_string());
                at = p;
            }
            _ => return lexical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_outputs_on_one_path_are_refused_naming_both_flags() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("x.log");
        let outs = [
            Output::new("--trace", &f, OutputKind::File),
            Output::new(
                "--timeline-log",
                d.path().join("sub/../x.log"),
                OutputKind::File,
            ),
        ];
        let e = check_outputs(&outs, &[]).unwrap_err();
        assert!(e.is_input());
        let msg = e.to_string();
        assert!(
            msg.contains("--trace") && msg.contains("--timeline-log"),
            "{msg}"
        );
    }

    #[test]
    fn an_output_that_is_an_input_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let scenario = d.path().join("s.toml");
        std::fs::write(&scenario, "x").unwrap();
        let outs = [Output::new("--trace", &scenario, OutputKind::File)];
        let e = check_outputs(&outs, &[("the scenario".into(), scenario.clone())]).unwrap_err();
        assert!(e.to_string().contains("the scenario"), "{e}");
        // Inside a folder output too.
        let outs = [Output::new(
            "--out-dir",
            d.path(),
            OutputKind::Folder(&["s.toml"]),
        )];
        assert!(check_outputs(&outs, &[("the scenario".into(), scenario)]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_chart_sibling_that_cannot_be_written_is_refused_before_work() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("x.svg")).unwrap();
        let outs = [Output::new(
            "--plot",
            d.path().join("x.png"),
            OutputKind::Chart,
        )];
        let e = check_outputs(&outs, &[]).unwrap_err();
        assert!(e.to_string().contains("x.svg"), "{e}");
        std::fs::remove_dir(d.path().join("x.svg")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("x.svg")).unwrap();
        assert!(check_outputs(&outs, &[]).is_err());
    }

    #[test]
    fn distinct_paths_pass() {
        let d = tempfile::tempdir().unwrap();
        let outs = [
            Output::new("--trace", d.path().join("a.json"), OutputKind::File),
            Output::new("--plot", d.path().join("c.png"), OutputKind::Chart),
        ];
        check_outputs(&outs, &[("the scenario".into(), d.path().join("s.toml"))]).unwrap();
    }
}
