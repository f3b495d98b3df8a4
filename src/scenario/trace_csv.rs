//! Arrival traces: a CSV file with a header row holding a `time_s` column (other columns are
//! ignored), one arrival per row, times in seconds, non-negative and non-decreasing.

use std::path::Path;

/// Reads arrival times from a trace CSV; the error names the line and the problem.
pub fn read(path: &Path) -> Result<Vec<f64>, String> {
    let text = crate::input_file::read_text(path, crate::input_file::MAX_CSV_BYTES)
        .map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    parse(&text).map_err(|m| format!("{}{m}", path.display()))
}

/// Parses trace text; errors start with `:LINE: ` (or `: ` for whole-file problems).
pub fn parse(text: &str) -> Result<Vec<f64>, String> {
    // Spreadsheets save CSV with a UTF-8 byte-order mark; it is not part of the header.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((hline, header)) = lines.next() else {
        return Err(": empty trace; expected a header row with a `time_s` column".into());
    };
    let cols: Vec<&str> = header
        .split(',')
        .map(|c| c.trim().trim_matches('"'))
        .collect();
    let col = cols.iter().position(|c| *c == "time_s").ok_or_else(|| {
        format!(":{hline}: header {header:?} has no `time_s` column (arrival times in seconds)")
    })?;
    let mut out = Vec::new();
    let mut prev = 0.0f64;
    for (n, line) in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != cols.len() {
            return Err(format!(
                ":{n}: {} fields, but the header has {}",
                fields.len(),
                cols.len()
            ));
        }
        let raw = fields[col].trim_matches('"');
        let t: f64 = raw
            .parse()
            .map_err(|_| format!(":{n}: time_s {raw:?} is not a number"))?;
        if !t.is_finite() || t < 0.0 {
            return Err(format!(
                ":{n}: time_s {raw} must be a finite number >= 0 seconds"
            ));
        }
        if t < prev {
            return Err(format!(
                ":{n}: time_s {raw} is earlier than the previous row ({prev}); times must not decrease"
            ));
        }
        prev = t;
        out.push(t);
    }
    if out.is_empty() {
        return Err(": the trace has a header but no arrivals".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_time_column() {
        let t = parse("job,time_s\n# comment\na,0\nb,0.5\n\nc,2\n").unwrap();
        assert_eq!(t, vec![0.0, 0.5, 2.0]);
    }

    #[test]
    fn malformed_rows_name_their_line() {
        assert_eq!(
            parse("time_s\n0\nabc\n").unwrap_err(),
            ":3: time_s \"abc\" is not a number"
        );
        assert!(parse("time_s\n1\n0.5\n").unwrap_err().starts_with(":3:"));
        assert!(parse("time_s\n-1\n").unwrap_err().starts_with(":2:"));
        assert!(parse("t\n1\n").unwrap_err().contains("no `time_s`"));
        assert!(parse("a,time_s\n1\n").unwrap_err().starts_with(":2:"));
        assert!(parse("").is_err());
        assert!(parse("time_s\n").is_err());
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_header() {
        assert_eq!(parse("\u{feff}time_s\n1\n").unwrap(), vec![1.0]);
    }
}
