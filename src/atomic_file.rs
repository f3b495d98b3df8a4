//! Writing output files atomically: write a temporary file in the destination folder,
//! then rename it over the target, so a reader (or a crash) never sees half a file.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// Writes `bytes` to `path` atomically, creating the parent folder if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |tmp| {
        std::fs::write(tmp, bytes)?;
        Ok(())
    })
}

/// Lets `fill` write the content to a temporary path (same folder, same extension, so
/// writers that pick a format by extension work), then renames it to `path`.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create folder {}", dir.display()))?;
    let suffix = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(".bwsim-")
        .suffix(&suffix)
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.flush()?;
    fill(tmp.path()).with_context(|| format!("cannot write {}", path.display()))?;
    // Temporary files are created owner-only; outputs are ordinary files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.persist(path)
        .with_context(|| format!("cannot rename the temporary file to {}", path.display()))?;
    Ok(())
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
}
