//! `bwsim log`: reads cuzk daemon logs (TIMELINE records and CUZK_TIMING timer lines, as
//! cuzk and SupraSeal print them and `bwsim run --timeline-log` writes them) and reports GPU
//! utilisation, gaps, timer and stage statistics. Parsing ([`parse`]), analysis
//! ([`analyse`]), output ([`report`]), the log beside a model run ([`against`]) and
//! parameter fitting ([`fit`]) are separate; nothing here knows of clap or runs the model.

pub mod against;
pub mod analyse;
pub mod breakdown;
pub mod correct;
pub mod fit;
pub mod parse;
pub mod report;

use std::path::PathBuf;

pub use analyse::{AnalyseOptions, LogAnalysis, WorkerLayout, analyse};
pub use parse::ParsedLog;

/// A log file that cannot be read at all (missing, not text): the user's input.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LogInputError(pub String);

/// Reads and analyses the files; garbled lines are reported, never fatal.
pub fn read_and_analyse(
    files: &[PathBuf],
    opts: &AnalyseOptions,
) -> Result<(ParsedLog, LogAnalysis), LogInputError> {
    let mut log = ParsedLog::default();
    for f in files {
        let cannot = |e: String| LogInputError(format!("{}: cannot read: {e}", f.display()));
        // A FIFO or device would block or never end: only regular files are logs.
        let meta = std::fs::metadata(f).map_err(|e| cannot(e.to_string()))?;
        if !meta.is_file() {
            return Err(cannot("not a regular file".into()));
        }
        let bytes = std::fs::read(f).map_err(|e| cannot(e.to_string()))?;
        // Invalid UTF-8 (a binary blob in the log) becomes replacement characters, so
        // the affected line is garbled or ignored rather than the whole file refused.
        log.add_text(&f.display().to_string(), &String::from_utf8_lossy(&bytes));
    }
    let a = analyse(&log, opts);
    Ok((log, a))
}
