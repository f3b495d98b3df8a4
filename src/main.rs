//! The `bwsim` binary: parse the flags, dispatch to the command, turn the error (if any)
//! into a message and an exit code.
//!
//! Exit codes: 0 success; 1 the run failed or stalled, or a write failed; 2 bad input
//! (scenario, flags, files, output locations). A closed stdout pipe ends bwsim quietly.

use std::process::ExitCode;

use bwsim::commands::{dispatch, exit};

fn main() -> ExitCode {
    restore_default_sigpipe();
    let cli = bwsim::cli::parse();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(exit::exit_code(&e))
        }
    }
}

/// Rust ignores SIGPIPE, turning a closed pipe (`bwsim run ... | head -c 1`) into write
/// errors deep inside printing; the default action ends the process quietly instead, as
/// for other Unix tools.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
