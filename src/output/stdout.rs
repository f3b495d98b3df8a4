//! Printing results to stdout without panicking: a full disk is an error with a message;
//! a closed pipe (`bwsim run ... | head -c 1`) ends quietly.

use std::io::Write;
use std::path::PathBuf;

use super::OutputError;

/// Writes `text` to stdout and flushes. A closed pipe counts as success (the reader has
/// all it wanted); any other failure is an [`OutputError::Io`] naming stdout.
pub fn print_stdout(text: &str) -> Result<(), OutputError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(stdout_error(e)),
    }
}

/// An I/O error on stdout as an [`OutputError`].
pub fn stdout_error(e: std::io::Error) -> OutputError {
    OutputError::io(PathBuf::from("<stdout>"), e)
}
