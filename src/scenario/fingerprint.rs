//! A scenario's fingerprint: a hash of the bytes of every file it was read from (the
//! scenario and its includes, in reading order), so that runs on different machines,
//! with the files at different paths, can tell whether they simulated the same input.

use std::path::PathBuf;

use super::Loaded;
use super::error::{ErrorKind, ScenarioError};

/// FNV-1a, 64 bits: stable across platforms and releases (std's hasher is not).
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The fingerprint of `files`' contents, as 16 hex digits; each file's length is hashed
/// before its bytes so that moving text from one file to the next changes it.
pub fn fingerprint_files(files: &[PathBuf]) -> Result<String, ScenarioError> {
    let mut h = 0xCBF2_9CE4_8422_2325_u64;
    for f in files {
        let bytes = std::fs::read(f).map_err(|e| {
            ScenarioError::in_file(ErrorKind::Io, f, None, format!("cannot read: {e}"))
        })?;
        h = fnv1a(h, &(bytes.len() as u64).to_le_bytes());
        h = fnv1a(h, &bytes);
    }
    Ok(format!("{h:016x}"))
}

/// The fingerprint of a loaded scenario's files: the scenario, its includes and the data
/// files it reads (an arrivals trace).
pub fn fingerprint(loaded: &Loaded) -> Result<String, ScenarioError> {
    let s = &loaded.summary;
    let all: Vec<PathBuf> = s.files.iter().chain(&s.data_files).cloned().collect();
    fingerprint_files(&all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_same_fingerprint_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.toml"), dir.path().join("b.toml"));
        std::fs::write(&a, "x = 1\n").unwrap();
        std::fs::write(&b, "x = 1\n").unwrap();
        let fa = fingerprint_files(std::slice::from_ref(&a)).unwrap();
        assert_eq!(fa, fingerprint_files(std::slice::from_ref(&b)).unwrap());
        assert_eq!(fa.len(), 16);
        std::fs::write(&b, "x = 2\n").unwrap();
        assert_ne!(fa, fingerprint_files(std::slice::from_ref(&b)).unwrap());
        // Text moved between files is a different input.
        std::fs::write(&a, "x = 1\nx").unwrap();
        std::fs::write(&b, " = 2\n").unwrap();
        let moved = fingerprint_files(&[a.clone(), b.clone()]).unwrap();
        std::fs::write(&a, "x = 1\n").unwrap();
        std::fs::write(&b, "x = 2\n").unwrap();
        assert_ne!(moved, fingerprint_files(&[a, b]).unwrap());
    }
}
