//! The exit code, decided in one place from the kind of the error alone: 0 success,
//! 1 the run failed or stalled (or a write failed), 2 bad input (scenario, flags, files,
//! output locations). Errors are classified when they enter the commands layer
//! ([`super::error`]).

use super::error::{CommandError, Kind};

/// The process exit code of a failed command.
pub fn exit_code(e: &CommandError) -> u8 {
    match e.kind() {
        Kind::Input => 2,
        Kind::Run => 1,
    }
}
