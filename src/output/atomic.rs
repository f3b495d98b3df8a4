//! Writing files atomically: a temporary file in the destination folder, renamed over
//! the target, so a reader (or a crash) never sees half a file. The target is checked
//! first: a symlink, FIFO, device or folder is refused, never replaced.

use std::io::Write;
use std::path::Path;

use super::OutputError;
use super::target::{check_file_target, parent_of};

/// Writes `bytes` to `path` atomically, creating the parent folder if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic_with(path, |tmp| std::fs::write(tmp, bytes))
}

/// Lets `fill` write the content to a temporary path (same folder, same extension, so
/// writers that pick a format by extension work), then renames it to `path`.
/// `fill` may fail with any error; an I/O error keeps its kind, any other becomes
/// [`OutputError::Render`] with the whole chain of causes.
pub fn write_atomic_with<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), OutputError> {
    check_file_target(path)?;
    let dir = parent_of(path);
    std::fs::create_dir_all(&dir).map_err(|e| OutputError::io(&dir, e))?;
    let suffix = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(".bwsim-")
        .suffix(&suffix)
        .tempfile_in(&dir)
        .map_err(|e| OutputError::io(&dir, e))?;
    tmp.flush().map_err(|e| OutputError::io(path, e))?;
    fill(tmp.path()).map_err(|e| match e.into().downcast::<std::io::Error>() {
        Ok(io) => OutputError::io(path, *io),
        Err(e) => OutputError::Render {
            path: path.to_path_buf(),
            why: causes(e.as_ref()),
        },
    })?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| OutputError::io(path, e))?;
    if super::test_kill_due("write") {
        super::test_kill();
    }
    // Temporary files are created owner-only; outputs are ordinary files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))
            .map_err(|e| OutputError::io(path, e))?;
    }
    // Checked again just before the rename: the target may have changed while we worked.
    check_file_target(path)?;
    tmp.persist(path)
        .map_err(|e| OutputError::io(path, e.error))?;
    Ok(())
}

/// An error and its causes, "outer: inner: ...".
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut next = e.source();
    while let Some(c) = next {
        s.push_str(": ");
        s.push_str(&c.to_string());
        next = c.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_leaves_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/a.csv");
        write_atomic(&p, b"x,y\n").unwrap();
        write_atomic(&p, b"z\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"z\n");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_target_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "keep").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(write_atomic(&link, b"x").is_err());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    }
}
