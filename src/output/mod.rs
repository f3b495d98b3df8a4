//! Every file and folder bwsim writes goes through here: target checks (never through a
//! symlink, never over a FIFO, device or folder), atomic file writes, output folders
//! (unique defaults, staged sweeps renamed into place) and fallible printing to stdout.
//!
//! The checks run twice: once before any simulation ([`check_file_target`],
//! [`check_dir_target`]) so that a bad location costs no work, and again at write time.

mod atomic;
mod error;
mod folder;
mod kill;
mod outputs;
mod stdout;
mod target;

pub use atomic::{write_atomic, write_atomic_with};
pub use error::OutputError;
pub use folder::{
    MAX_FOLDER_NAME, StagedDir, check_staged_target, default_folder, folder_name,
    reserve_unique_folder, staging_path, timestamp,
};
pub use kill::{test_kill, test_kill_due};
pub use outputs::{Output, OutputKind, check_outputs, same_file};
pub use stdout::{print_stdout, stdout_error};
pub use target::{check_dir_target, check_file_target};
