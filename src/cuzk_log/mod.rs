//! `bwsim log`: reads cuzk daemon logs (TIMELINE records and CUZK_TIMING timer lines, as
//! cuzk and SupraSeal print them and `bwsim run --timeline-log` writes them) and reports GPU
//! utilisation, gaps, timer and stage statistics. Parsing ([`parse`]), analysis
//! ([`analyse`]), output ([`report`]), the log beside a model run ([`against`]),
//! parameter fitting ([`fit`], its loop in [`correct`]) and running the model as a log
//! ([`model`]) are separate; nothing here knows of clap.

pub mod against;
pub mod analyse;
pub mod breakdown;
pub mod correct;
pub mod fit;
pub mod model;
pub mod parse;
pub mod report;

use std::path::{Path, PathBuf};

pub use analyse::{AnalyseOptions, LogAnalysis, WorkerLayout, analyse};
pub use parse::ParsedLog;

/// Input `bwsim log` cannot take: a log file that cannot be read at all (missing, not a
/// regular file), or outputs and a fit that the inputs rule out.
#[derive(Debug, thiserror::Error)]
pub enum LogInputError {
    /// The file cannot be opened or read.
    #[error("{}: cannot read: {why}", file.display())]
    Unreadable {
        /// The log file.
        file: PathBuf,
        /// Why (part of the message, not a further cause: the chain would say it twice).
        why: std::io::Error,
    },
    /// A directory, FIFO or device: it would block or never end.
    #[error("{}: cannot read: not a regular file", file.display())]
    NotARegularFile {
        /// The log file.
        file: PathBuf,
    },
    /// An output would overwrite an input.
    #[error("{flag} {}: that is an input ({}); give a new path", output.display(), input.display())]
    OutputIsInput {
        /// The output's flag.
        flag: &'static str,
        /// The output.
        output: PathBuf,
        /// The input it names.
        input: PathBuf,
    },
    /// Two outputs name one file.
    #[error("{flag} {}: {other} writes there too; give two different paths", output.display())]
    OutputsCollide {
        /// The later output's flag.
        flag: &'static str,
        /// The file both name.
        output: PathBuf,
        /// The earlier output's flag.
        other: &'static str,
    },
    /// `--fit` with a scenario that has no parameter the log observes.
    #[error(
        "--fit: {} has no parameter this log observes; a parameter is fittable when a \
         stage's duration_s is exactly \"$name\" and the log has that stage alone: markers \
         X_START at \"stage:start\" and X_END at \"stage:end\", or a timer from \
         \"stage:start\" to \"stage:end\"",
        scenario.display()
    )]
    NothingToFit {
        /// The `--against` scenario.
        scenario: PathBuf,
    },
}

/// Reads and analyses the files; garbled lines are reported, never fatal.
pub fn read_and_analyse(
    files: &[PathBuf],
    opts: &AnalyseOptions,
) -> Result<(ParsedLog, LogAnalysis), LogInputError> {
    let mut log = ParsedLog::default();
    for f in files {
        let text = read_log(f)?;
        log.add_text(&f.display().to_string(), &text);
    }
    let a = analyse(&log, opts);
    Ok((log, a))
}

/// One log file's text. Invalid UTF-8 (a binary blob in the log) becomes replacement
/// characters, so the affected line is garbled or ignored rather than the whole file
/// refused.
fn read_log(file: &Path) -> Result<String, LogInputError> {
    let unreadable = |why| LogInputError::Unreadable {
        file: file.to_path_buf(),
        why,
    };
    // A FIFO or device would block or never end: only regular files are logs.
    let meta = std::fs::metadata(file).map_err(unreadable)?;
    if !meta.is_file() {
        return Err(LogInputError::NotARegularFile {
            file: file.to_path_buf(),
        });
    }
    let bytes = std::fs::read(file).map_err(unreadable)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
