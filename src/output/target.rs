//! Is this a place bwsim may write? A new path under a writable folder, or an existing
//! regular file (for files) or folder (for folders); never a symlink, FIFO or device.

use std::fs::FileType;
use std::path::{Path, PathBuf};

use super::OutputError;

/// Checks that `path` may receive a file: it is absent or a regular file (not a symlink),
/// and its nearest existing ancestor is a writable folder.
pub fn check_file_target(path: &Path) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            refuse_symlink(path, meta.file_type())?;
            if !meta.is_file() {
                return Err(OutputError::WrongKind {
                    path: path.to_path_buf(),
                    found: describe(meta.file_type()),
                    expected: "a regular file",
                });
            }
            check_writable_folder(&parent_of(path))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_writable_folder(&parent_of(path))
        }
        Err(e) => Err(OutputError::Unwritable {
            path: path.to_path_buf(),
            why: e.to_string(),
        }),
    }
}

/// Checks that `dir` may receive files: it is absent (and could be created) or a
/// writable folder that is not a symlink.
pub fn check_dir_target(dir: &Path) -> Result<(), OutputError> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) => {
            refuse_symlink(dir, meta.file_type())?;
            if !meta.is_dir() {
                return Err(OutputError::WrongKind {
                    path: dir.to_path_buf(),
                    found: describe(meta.file_type()),
                    expected: "a folder",
                });
            }
            check_writable_folder(dir)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            check_writable_folder(&parent_of(dir))
        }
        Err(e) => Err(OutputError::Unwritable {
            path: dir.to_path_buf(),
            why: e.to_string(),
        }),
    }
}

fn refuse_symlink(path: &Path, t: FileType) -> Result<(), OutputError> {
    if t.is_symlink() {
        Err(OutputError::Symlink {
            path: path.to_path_buf(),
        })
    } else {
        Ok(())
    }
}

pub(super) fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The nearest existing ancestor of `dir` must be a folder we can create files in
/// (tried for real with an anonymous temporary file, which leaves nothing behind).
fn check_writable_folder(dir: &Path) -> Result<(), OutputError> {
    let mut at = dir.to_path_buf();
    loop {
        match std::fs::metadata(&at) {
            Ok(meta) if meta.is_dir() => break,
            Ok(meta) => {
                return Err(OutputError::WrongKind {
                    path: at,
                    found: describe(meta.file_type()),
                    expected: "a folder",
                });
            }
            Err(_) => match at.parent() {
                Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
                _ => {
                    at = PathBuf::from(".");
                    break;
                }
            },
        }
    }
    tempfile::tempfile_in(&at)
        .map(drop)
        .map_err(|e| OutputError::Unwritable {
            path: at,
            why: e.to_string(),
        })
}

fn describe(t: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_regular_files_are_accepted() {
        let dir = tempfile::tempdir().unwrap();
        check_file_target(&dir.path().join("a/b/new.json")).unwrap();
        let f = dir.path().join("f.csv");
        std::fs::write(&f, "x").unwrap();
        check_file_target(&f).unwrap();
        check_dir_target(&dir.path().join("sub")).unwrap();
    }

    #[test]
    fn folders_devices_and_symlinks_are_refused_as_files() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_file_target(dir.path()).unwrap_err();
        assert!(e.is_input() && e.to_string().contains("a folder"), "{e}");
        let e = check_file_target(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(dir.path().join("target"), &link).unwrap();
            let e = check_file_target(&link).unwrap_err();
            assert!(matches!(e, OutputError::Symlink { .. }), "{e}");
        }
    }

    #[test]
    fn a_file_where_a_folder_is_expected_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        assert!(check_dir_target(&f).is_err());
        assert!(check_file_target(&f.join("under-a-file.csv")).is_err());
    }
}
