//! Reading the files a user names (scenarios, includes, trace and sweep CSVs, calibration
//! and measurement files, host profiles, earlier outputs read back): regular
//! files only and at most a size cap, so that `/dev/zero`, a FIFO or a directory is an
//! error naming the file instead of a hang or gigabytes of memory; and [`InputError`],
//! how bad input is said when it has no richer type of its own.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes a scenario or included TOML file may have (real ones are a few KiB).
pub const MAX_TOML_BYTES: u64 = 16 << 20;
/// The most bytes a CSV input (arrival trace, sweep table) may have.
pub const MAX_CSV_BYTES: u64 = 256 << 20;
/// The most bytes a JSON input bwsim wrote itself (measurements, validate and replay
/// results, sweep manifests, journals and shards) may have.
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// Reads `path` as UTF-8 text if it is a regular file of at most `max_bytes` bytes
/// (symlinks are followed). The error says what is wrong, without the path (callers
/// name the file their own way). A leading UTF-8 byte-order mark is dropped, since
/// spreadsheets write one.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String, std::io::Error> {
    use std::io::{Error, ErrorKind};
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!("it is {what}; bwsim reads input only from regular files"),
        ));
    }
    let too_big = || {
        Error::new(
            ErrorKind::InvalidInput,
            format!("it is larger than the limit of {max_bytes} bytes for this kind of input"),
        )
    };
    if meta.len() > max_bytes {
        return Err(too_big());
    }
    // The file may grow between the check and the read: never take more than the cap.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_big());
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Bad input said in parts: what could not be done, the file, the flag or key, what was
/// wrong, what is allowed. It reads `[action: ][file: ][key: ]problem[; allowed]`. The
/// one shape of the input errors that have no richer type of their own (a flag's value,
/// a saved sweep, a sweep.csv, shards to merge).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct InputError {
    /// What could not be done because of it ("cannot resume"), when said first.
    pub action: Option<&'static str>,
    /// The file or folder at fault.
    pub file: Option<PathBuf>,
    /// The flag or key at fault, as given (`--max-hours`, `--gpu-probe h.bin`).
    pub key: Option<String>,
    /// What is wrong.
    pub problem: String,
    /// What is allowed, or what to do instead.
    pub allowed: Option<String>,
}

impl InputError {
    /// `problem`, with nothing else said yet.
    pub fn new(problem: impl Into<String>) -> InputError {
        InputError {
            action: None,
            file: None,
            key: None,
            problem: problem.into(),
            allowed: None,
        }
    }

    /// What could not be done because of it.
    pub fn action(self, action: &'static str) -> InputError {
        InputError {
            action: Some(action),
            ..self
        }
    }

    /// The file or folder at fault.
    pub fn file(self, file: impl Into<PathBuf>) -> InputError {
        InputError {
            file: Some(file.into()),
            ..self
        }
    }

    /// The flag or key at fault.
    pub fn key(self, key: impl Into<String>) -> InputError {
        InputError {
            key: Some(key.into()),
            ..self
        }
    }

    /// What is allowed, or what to do instead.
    pub fn allowed(self, allowed: impl Into<String>) -> InputError {
        InputError {
            allowed: Some(allowed.into()),
            ..self
        }
    }

    fn message(&self) -> String {
        let mut m = String::new();
        if let Some(a) = self.action {
            m.push_str(a);
            m.push_str(": ");
        }
        if let Some(f) = &self.file {
            m.push_str(&format!("{}: ", f.display()));
        }
        if let Some(k) = &self.key {
            m.push_str(k);
            m.push_str(": ");
        }
        m.push_str(&self.problem);
        if let Some(a) = &self.allowed {
            m.push_str("; ");
            m.push_str(a);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_lose_their_bom() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        std::fs::write(&p, "\u{feff}time_s\n1\n").unwrap();
        assert_eq!(read_text(&p, 100).unwrap(), "time_s\n1\n");
    }

    #[test]
    fn directories_devices_and_big_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_text(dir.path(), 100).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let p = dir.path().join("big");
        std::fs::write(&p, "x".repeat(101)).unwrap();
        assert!(
            read_text(&p, 100)
                .unwrap_err()
                .to_string()
                .contains("limit")
        );
        if Path::new("/dev/zero").exists() {
            let e = read_text(Path::new("/dev/zero"), 100).unwrap_err();
            assert!(e.to_string().contains("regular file"), "{e}");
        }
        let p = dir.path().join("bin");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(
            read_text(&p, 100)
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
    }

    #[test]
    fn an_input_error_reads_as_its_parts_in_order() {
        let all = InputError::new("is not a regular file")
            .key("--gpu-probe h.bin")
            .allowed("give the harness, or --no-gpu")
            .file("dir")
            .action("cannot calibrate");
        assert_eq!(
            all.to_string(),
            "cannot calibrate: dir: --gpu-probe h.bin: is not a regular file; give the \
             harness, or --no-gpu"
        );
        assert_eq!(InputError::new("no rows").to_string(), "no rows");
    }
}
