//! Output folders: a unique default `output/<scenario>/<UTC timestamp>[-N]` reserved with
//! an exclusive `create_dir`, and staged folders that are filled under a clearly named
//! sibling (`.NAME.partial`) and renamed into place when complete, so a folder is whole
//! or absent. A staged folder is locked (an advisory `flock` on the staging folder) for
//! as long as one process works in it, so two resumes of one folder cannot interleave;
//! a resume keeps only the files it names and deletes whatever an interrupted attempt
//! left half-written (temporary files, charts).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::OutputError;
use super::target::{check_dir_target, parent_of};

/// The longest folder name [`folder_name`] makes, in bytes: well under the 255 bytes most
/// file systems allow, leaving room for a staging folder's `.NAME.partial`.
pub const MAX_FOLDER_NAME: usize = 64;

/// A scenario name made safe as one folder name, at most [`MAX_FOLDER_NAME`] bytes (a
/// longer name is cut and ends in a hash of the whole, so two long names stay apart).
pub fn folder_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        return "scenario".into();
    }
    if s.len() <= MAX_FOLDER_NAME {
        return s;
    }
    // FNV-1a of the original name: stable across runs and platforms.
    let hash = name.bytes().fold(0xCBF2_9CE4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    });
    let tail = format!("-{:08x}", hash as u32);
    // ASCII only (every other character became '_'), so any byte is a char boundary.
    format!("{}{tail}", &s[..MAX_FOLDER_NAME - tail.len()])
}

/// UTC time as `YYYYMMDDTHHMMSSZ` (sorts by time; no ':' so it is a valid name anywhere).
pub fn timestamp(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `output/<scenario>/<timestamp>`, the base name of a default output folder.
pub fn default_folder(scenario: &str) -> PathBuf {
    Path::new("output")
        .join(folder_name(scenario))
        .join(timestamp(SystemTime::now()))
}

/// Creates a new empty folder at `base`, or `base-2`, `base-3`, ... if taken (exclusive
/// `create_dir`, so two processes never get the same one); returns it.
pub fn reserve_unique_folder(base: &Path) -> Result<PathBuf, OutputError> {
    let parent = parent_of(base);
    check_dir_target(&parent)?;
    std::fs::create_dir_all(&parent).map_err(|e| OutputError::io(&parent, e))?;
    let name = base
        .file_name()
        .map_or_else(|| "out".to_string(), |n| n.to_string_lossy().into_owned());
    for n in 1..10_000u32 {
        let candidate = if n == 1 {
            base.to_path_buf()
        } else {
            parent.join(format!("{name}-{n}"))
        };
        match std::fs::create_dir(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(OutputError::io(&candidate, e)),
        }
    }
    Err(OutputError::Unwritable {
        path: parent,
        why: format!("{name}-2 to {name}-9999 all exist"),
    })
}

/// Where the files of `dir` are written before it is complete: `.<name>.partial` beside it.
pub fn staging_path(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    parent_of(dir).join(format!(".{name}.partial"))
}

/// A folder filled under its staging name and renamed into place by [`StagedDir::commit`].
/// The staging folder stays locked while the value lives.
#[derive(Debug)]
pub struct StagedDir {
    /// The folder as it will be when complete.
    pub target: PathBuf,
    /// Where its files are written meanwhile.
    pub staging: PathBuf,
    /// The lock on `staging` (released when dropped, after the rename too).
    _lock: FolderLock,
}

/// An exclusive advisory lock on a folder, held while the value lives. Advisory: it
/// keeps other bwsim processes out, not other programs.
#[derive(Debug)]
struct FolderLock(std::fs::File);

impl FolderLock {
    /// Locks `dir` without waiting; another process holding it is [`OutputError::Busy`].
    fn try_lock(dir: &Path, target: &Path) -> Result<FolderLock, OutputError> {
        let f = std::fs::File::open(dir).map_err(|e| OutputError::io(dir, e))?;
        match f.try_lock() {
            Ok(()) => Ok(FolderLock(f)),
            Err(std::fs::TryLockError::WouldBlock) => Err(OutputError::Busy {
                path: target.to_path_buf(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(OutputError::io(dir, e)),
        }
    }

    /// True when `dir` is still the folder this lock is on (not renamed away, not
    /// replaced), so that the lock protects what the path now names.
    fn still_at(&self, dir: &Path) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (self.0.metadata(), std::fs::symlink_metadata(dir)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            dir.is_dir()
        }
    }
}

/// Refuses an output folder that a staged write could not put in place: a path that
/// names no folder of its own (`.`, `..`, a root), the current folder or one that holds
/// it (the commit replaces an empty target folder, which must not be where the user
/// stands), or a name too long for its staging sibling.
pub fn check_staged_target(target: &Path) -> Result<(), OutputError> {
    let refuse = |why: String| OutputError::Unwritable {
        path: target.to_path_buf(),
        why,
    };
    let Some(name) = target.file_name() else {
        return Err(refuse(
            "names no folder of its own ('.', '..' or a root); give the output folder by \
             name, e.g. --out results"
                .into(),
        ));
    };
    if let (Ok(dir), Ok(cwd)) = (target.canonicalize(), std::env::current_dir()) {
        let cwd = cwd.canonicalize().unwrap_or(cwd);
        if cwd.starts_with(&dir) {
            return Err(refuse(
                "is the current folder, or holds it; the finished output replaces this \
                 folder, so give a new folder name, e.g. --out results"
                    .into(),
            ));
        }
    }
    // The staging sibling is `.NAME.partial`: 9 bytes more than the name.
    if name.len() + 9 > 255 {
        return Err(refuse(format!(
            "the name is {} bytes long; the staging folder beside it needs 9 more and \
             most file systems allow 255: give a shorter name",
            name.len()
        )));
    }
    Ok(())
}

impl StagedDir {
    /// Starts a new staged folder for `target`, which must be absent or an empty folder;
    /// refuses when an interrupted attempt's staging folder is already there.
    pub fn begin(target: &Path) -> Result<StagedDir, OutputError> {
        check_staged_target(target)?;
        check_dir_target(target)?;
        if target.is_dir() {
            let mut entries = std::fs::read_dir(target).map_err(|e| OutputError::io(target, e))?;
            if entries.next().is_some() {
                return Err(OutputError::NotEmpty {
                    path: target.to_path_buf(),
                });
            }
        }
        let staging = staging_path(target);
        if std::fs::symlink_metadata(&staging).is_ok() {
            return Err(OutputError::Unwritable {
                path: target.to_path_buf(),
                why: format!(
                    "an interrupted sweep left {}; finish it with --resume {} or delete it",
                    staging.display(),
                    target.display()
                ),
            });
        }
        std::fs::create_dir_all(parent_of(&staging))
            .map_err(|e| OutputError::io(parent_of(&staging), e))?;
        std::fs::create_dir(&staging).map_err(|e| OutputError::io(&staging, e))?;
        let lock = FolderLock::try_lock(&staging, target)?;
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
            _lock: lock,
        })
    }

    /// Reopens the staging folder an interrupted attempt left for `target`, locked, and
    /// deletes everything in it but the files named in `keep` (what the interrupted
    /// attempt had half-written is written again, so nothing of it can mix in).
    pub fn reopen(target: &Path, keep: &[&str]) -> Result<StagedDir, OutputError> {
        let staging = staging_path(target);
        let meta = std::fs::symlink_metadata(&staging);
        if !meta.as_ref().is_ok_and(|m| m.is_dir()) {
            let finished = target.join("manifest.json").is_file();
            return Err(OutputError::Unwritable {
                path: target.to_path_buf(),
                why: if finished {
                    "nothing to resume: it is a finished output folder".into()
                } else {
                    format!("nothing to resume: {} does not exist", staging.display())
                },
            });
        }
        let lock = FolderLock::try_lock(&staging, target)?;
        if !lock.still_at(&staging) {
            // Another attempt finished (renamed it into place) while we opened it.
            return Err(OutputError::Unwritable {
                path: target.to_path_buf(),
                why: "nothing to resume: another bwsim finished it meanwhile".into(),
            });
        }
        if target.join("manifest.json").is_file() {
            // The folder is finished: a staging folder beside it can never be renamed
            // into place, so it is what a crashed or raced attempt left. Nobody holds it
            // (we do): remove it.
            let removed = std::fs::remove_dir_all(&staging).is_ok();
            return Err(OutputError::Unwritable {
                path: target.to_path_buf(),
                why: format!(
                    "nothing to resume: it is a finished output folder ({} the stale {} \
                     beside it)",
                    if removed {
                        "removed"
                    } else {
                        "could not remove"
                    },
                    staging.display()
                ),
            });
        }
        let entries = std::fs::read_dir(&staging).map_err(|e| OutputError::io(&staging, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| OutputError::io(&staging, e))?;
            let name = entry.file_name();
            if keep.iter().any(|k| name == *k) {
                continue;
            }
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let removed = if is_dir {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| OutputError::io(&path, e))?;
        }
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
            _lock: lock,
        })
    }

    /// A file inside the staging folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.staging.join(name)
    }

    /// Renames the staging folder to the target (replacing an empty target folder).
    pub fn commit(self) -> Result<PathBuf, OutputError> {
        if self.target.is_dir() {
            // Only an empty folder (a reserved default, or an empty --out) can be here.
            std::fs::remove_dir(&self.target).map_err(|e| OutputError::io(&self.target, e))?;
        }
        std::fs::rename(&self.staging, &self.target)
            .map_err(|e| OutputError::io(&self.target, e))?;
        Ok(self.target.clone())
    }

    /// Removes the staging folder (after a failure that a resume could not fix).
    pub fn abandon(self) {
        let _ = std::fs::remove_dir_all(&self.staging);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamp_is_utc_calendar_time() {
        assert_eq!(timestamp(UNIX_EPOCH), "19700101T000000Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_709_164_800 + 3_723); // 2024-02-29 01:02:03
        assert_eq!(timestamp(t), "20240229T010203Z");
    }

    #[test]
    fn folder_names_are_safe() {
        assert_eq!(folder_name("c2 32GiB/x"), "c2_32GiB_x");
        assert_eq!(folder_name(".."), "scenario");
    }

    #[test]
    fn reserved_folders_are_unique() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("o/20240101T000000Z");
        let a = reserve_unique_folder(&base).unwrap();
        let b = reserve_unique_folder(&base).unwrap();
        assert_eq!(a, base);
        assert_eq!(b, dir.path().join("o/20240101T000000Z-2"));
    }

    #[test]
    fn staged_folder_is_whole_or_absent() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("sweep");
        let staged = StagedDir::begin(&out).unwrap();
        std::fs::write(staged.file("a.csv"), "x").unwrap();
        assert!(!out.exists());
        assert!(
            StagedDir::begin(&out).is_err(),
            "a second sweep to the same --out"
        );
        let done = staged.commit().unwrap();
        assert_eq!(std::fs::read_to_string(done.join("a.csv")).unwrap(), "x");
        assert!(!staging_path(&out).exists());
        assert!(matches!(
            StagedDir::begin(&out),
            Err(OutputError::NotEmpty { .. })
        ));
    }
}
