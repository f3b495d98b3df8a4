//! Output folders: a unique default `output/<scenario>/<UTC timestamp>[-N]` reserved with
//! an exclusive `create_dir`, and staged folders that are filled under a clearly named
//! sibling (`.NAME.partial`) and renamed into place when complete, so a folder is whole
//! or absent.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::OutputError;
use super::target::{check_dir_target, parent_of};

/// A scenario name made safe as one folder name.
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
        "scenario".into()
    } else {
        s
    }
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
#[derive(Debug)]
pub struct StagedDir {
    /// The folder as it will be when complete.
    pub target: PathBuf,
    /// Where its files are written meanwhile.
    pub staging: PathBuf,
}

impl StagedDir {
    /// Starts a new staged folder for `target`, which must be absent or an empty folder;
    /// refuses when an interrupted attempt's staging folder is already there.
    pub fn begin(target: &Path) -> Result<StagedDir, OutputError> {
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
        if staging.exists() {
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
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
        })
    }

    /// Reopens the staging folder an interrupted attempt left for `target`.
    pub fn reopen(target: &Path) -> Result<StagedDir, OutputError> {
        let staging = staging_path(target);
        if !staging.is_dir() {
            return Err(OutputError::Unwritable {
                path: target.to_path_buf(),
                why: format!("nothing to resume: {} does not exist", staging.display()),
            });
        }
        Ok(StagedDir {
            target: target.to_path_buf(),
            staging,
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
        Ok(self.target)
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
