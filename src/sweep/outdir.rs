//! Where a sweep writes: `output/<scenario-name>/<UTC timestamp>/` unless `--out DIR`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

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

/// The output folder: `out` if given, else `output/<scenario>/<timestamp>`.
pub fn resolve(out: Option<&Path>, scenario: &str) -> PathBuf {
    match out {
        Some(p) => p.to_path_buf(),
        None => Path::new("output")
            .join(folder_name(scenario))
            .join(timestamp(SystemTime::now())),
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
}
