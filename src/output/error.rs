//! What can go wrong when bwsim writes a file, a folder or to stdout.

use std::path::PathBuf;

/// A refused output location (the user's input: exit 2) or a failed write (exit 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The target exists and is a symlink; bwsim never writes through one.
    #[error("{path}: is a symlink; bwsim does not write through symlinks (give the real path)")]
    Symlink {
        /// The refused path.
        path: PathBuf,
    },
    /// The target exists but is not what is expected (a FIFO, device or folder for a file;
    /// a file for a folder).
    #[error(
        "{path}: is {found}, not {expected}; give a new path, or a path that is already {expected}"
    )]
    WrongKind {
        /// The refused path.
        path: PathBuf,
        /// What it is, e.g. "a FIFO".
        found: &'static str,
        /// What bwsim wanted to write there, e.g. "a regular file".
        expected: &'static str,
    },
    /// The folder that would hold the output cannot be written (or is not a folder).
    #[error("{path}: cannot write here ({why})")]
    Unwritable {
        /// The folder.
        path: PathBuf,
        /// Why, in words.
        why: String,
    },
    /// A sweep was pointed at a folder that already holds files.
    #[error(
        "{path}: folder is not empty; give a new or empty --out folder, or finish an interrupted sweep with --resume"
    )]
    NotEmpty {
        /// The folder.
        path: PathBuf,
    },
    /// Another bwsim process is working in this output folder (a second `--resume` of
    /// one folder, say).
    #[error(
        "{path}: another bwsim is working in this folder now (its staging folder is locked); wait for it to finish, or stop it, then --resume again"
    )]
    Busy {
        /// The output folder.
        path: PathBuf,
    },
    /// Two outputs on one path, or an output that is one of the inputs.
    #[error("{path}: {why}")]
    Clash {
        /// The path given twice.
        path: PathBuf,
        /// Which flags or inputs name it, and what to do.
        why: String,
    },
    /// Writing failed (disk full, I/O error) after the location was accepted.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The system's reason.
        #[source]
        source: std::io::Error,
    },
    /// A renderer (e.g. a PNG encoder) failed while filling a file.
    #[error("cannot write {path}: {why}")]
    Render {
        /// The file.
        path: PathBuf,
        /// The renderer's message.
        why: String,
    },
}

impl OutputError {
    /// True when the user's choice of location is at fault (exit 2), false when the write
    /// itself failed (exit 1).
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            OutputError::Symlink { .. }
                | OutputError::WrongKind { .. }
                | OutputError::Unwritable { .. }
                | OutputError::NotEmpty { .. }
                | OutputError::Busy { .. }
                | OutputError::Clash { .. }
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> OutputError {
        OutputError::Io {
            path: path.into(),
            source,
        }
    }
}
