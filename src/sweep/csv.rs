//! sweep.csv: one row per point. Columns: `scenario`, `job_name` (what a job is called;
//! files written before it lack the column and read as "job"), one column per swept
//! key, `seeds`,
//! `stalled` (how many seeds stalled), then `<metric>_mean` and `<metric>_ci95` for every metric, then `bottleneck`. The
//! columns between `scenario` and `seeds` are the swept keys, so the file alone is
//! enough to redraw every plot (`bwsim plot sweep.csv`).

use std::fmt::{Display, Write as _};

use super::table::{Row, Stat, SweepTable};
use super::value::ParamValue;
use crate::analysis::keys::JOB_NAME;
use crate::analysis::throughput::JobName;
use crate::input_file::InputError;

/// Writes the table as CSV text. Numbers use Rust's shortest round-trip form, so the
/// bytes are a pure function of the values; a missing value is an empty cell.
pub fn to_csv(t: &SweepTable) -> String {
    let mut out = String::new();
    let mut header = vec!["scenario".to_string(), JOB_NAME.to_string()];
    header.extend(t.params.iter().cloned());
    header.push("seeds".into());
    header.push("stalled".into());
    for m in &t.metrics {
        header.push(format!("{m}_mean"));
        header.push(format!("{m}_ci95"));
    }
    header.push("bottleneck".into());
    write_record(&mut out, &header);
    for row in &t.rows {
        let mut rec = vec![t.scenario.clone(), t.job_name.singular().to_string()];
        rec.extend(row.values.iter().map(|v| v.to_string()));
        rec.push(row.seeds.to_string());
        rec.push(row.stalled.to_string());
        for s in &row.stats {
            rec.push(s.map(|s| num(s.mean)).unwrap_or_default());
            rec.push(s.and_then(|s| s.ci95).map(num).unwrap_or_default());
        }
        rec.push(row.bottleneck.clone());
        write_record(&mut out, &rec);
    }
    out
}

fn num(f: f64) -> String {
    if f.is_finite() {
        format!("{f}")
    } else {
        String::new()
    }
}

fn write_record(out: &mut String, fields: &[String]) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if f.contains([',', '"', '\n', '\r']) {
            let _ = write!(out, "\"{}\"", f.replace('"', "\"\""));
        } else {
            out.push_str(f);
        }
    }
    out.push('\n');
}

/// Splits CSV text into records (RFC 4180 quoting).
fn parse_records(text: &str) -> Result<Vec<Vec<String>>, InputError> {
    let mut records = Vec::new();
    let mut rec = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut line = 1;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => {
                if c == '\n' {
                    line += 1;
                }
                field.push(c);
            }
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => rec.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                rec.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut rec));
                line += 1;
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err(InputError::new(format!(
            "line {line}: a quoted field is not closed"
        )));
    }
    if !field.is_empty() || !rec.is_empty() {
        rec.push(field);
        records.push(rec);
    }
    Ok(records)
}

/// Reads a sweep.csv back into a table.
pub fn from_csv(text: &str) -> Result<SweepTable, InputError> {
    let records = parse_records(text)?;
    let (header, body) = records
        .split_first()
        .or_input_error(|| "the file is empty")?;
    if header.first().map(String::as_str) != Some("scenario") {
        return Err(InputError::new(
            "line 1: the first column must be 'scenario' (is this a bwsim sweep.csv?)",
        ));
    }
    let seeds_col = header
        .iter()
        .position(|h| h == "seeds")
        .or_input_error(|| "line 1: no 'seeds' column")?;
    if header.last().map(String::as_str) != Some("bottleneck") {
        return Err(InputError::new(
            "line 1: the last column must be 'bottleneck'",
        ));
    }
    // `job_name` was added later; sweeps written before it have none ("job").
    let first_param = if header.get(1).map(String::as_str) == Some(JOB_NAME) {
        2
    } else {
        1
    };
    let params: Vec<String> = header[first_param.min(seeds_col)..seeds_col].to_vec();
    // `stalled` was added later; sweeps written before it have none (and no stalls known).
    let stalled_col =
        (header.get(seeds_col + 1).map(String::as_str) == Some("stalled")).then_some(seeds_col + 1);
    let first_metric = stalled_col.map_or(seeds_col + 1, |c| c + 1);
    let metric_cols = &header[first_metric..header.len() - 1];
    if metric_cols.len() % 2 != 0 {
        return Err(InputError::new(
            "line 1: metric columns must come in <metric>_mean, <metric>_ci95 pairs",
        ));
    }
    let mut metrics = Vec::new();
    for pair in metric_cols.chunks(2) {
        let m = pair[0]
            .strip_suffix("_mean")
            .filter(|m| pair[1].strip_suffix("_ci95") == Some(m))
            .or_input_error(|| {
                format!(
                    "line 1: expected <metric>_mean, <metric>_ci95, found '{}', '{}'",
                    pair[0], pair[1]
                )
            })?;
        metrics.push(m.to_string());
    }
    let mut scenario = String::new();
    let mut job_name = JobName::default();
    let mut rows = Vec::new();
    for (i, rec) in body.iter().enumerate() {
        let line = i + 2;
        if rec.len() == 1 && rec[0].is_empty() {
            continue;
        }
        if rec.len() != header.len() {
            return Err(InputError::new(format!(
                "line {line}: {} fields, the header has {}",
                rec.len(),
                header.len()
            )));
        }
        scenario = rec[0].clone();
        if first_param == 2 {
            job_name = JobName::new(rec[1].clone());
        }
        let values = rec[first_param.min(seeds_col)..seeds_col]
            .iter()
            .zip(&params)
            .map(|(v, p)| {
                ParamValue::parse(v)
                    .or_input_error(|| format!("line {line}: '{v}' for {p} is not a value"))
            })
            .collect::<Result<Vec<_>, InputError>>()?;
        let seeds = rec[seeds_col]
            .parse()
            .or_input_error(|| format!("line {line}: seeds '{}' is not a count", rec[seeds_col]))?;
        let stalled = match stalled_col {
            Some(c) => rec[c]
                .parse()
                .or_input_error(|| format!("line {line}: stalled '{}' is not a count", rec[c]))?,
            None => 0,
        };
        let cell = |j: usize| -> Result<Option<f64>, InputError> {
            let s = &rec[first_metric + j];
            if s.is_empty() {
                return Ok(None);
            }
            s.parse().map(Some).or_input_error(|| {
                format!(
                    "line {line}: '{s}' in {} is not a number",
                    header[first_metric + j]
                )
            })
        };
        let mut stats = Vec::with_capacity(metrics.len());
        for k in 0..metrics.len() {
            stats.push(match cell(2 * k)? {
                Some(mean) => Some(Stat {
                    mean,
                    ci95: cell(2 * k + 1)?,
                }),
                None => None,
            });
        }
        rows.push(Row {
            values,
            seeds,
            stalled,
            stats,
            bottleneck: rec[rec.len() - 1].clone(),
        });
    }
    Ok(SweepTable {
        scenario,
        job_name,
        params,
        metrics,
        rows,
    })
}

/// A failed read as an [`InputError`]: `what: cause`, or `what` alone for a missing value.
trait OrInputError<T> {
    fn or_input_error<D: Display>(self, what: impl FnOnce() -> D) -> Result<T, InputError>;
}

impl<T, E: Display> OrInputError<T> for Result<T, E> {
    fn or_input_error<D: Display>(self, what: impl FnOnce() -> D) -> Result<T, InputError> {
        self.map_err(|e| InputError::new(format!("{}: {e}", what())))
    }
}

impl<T> OrInputError<T> for Option<T> {
    fn or_input_error<D: Display>(self, what: impl FnOnce() -> D) -> Result<T, InputError> {
        self.ok_or_else(|| InputError::new(what().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SweepTable {
        SweepTable {
            scenario: "demo, \"quoted\"".into(),
            job_name: JobName::new("proof"),
            params: vec!["arrivals.concurrency".into(), "params.pinned".into()],
            metrics: vec!["jobs_per_hour".into(), "stages.synth.inflation".into()],
            rows: vec![
                Row {
                    values: vec![ParamValue::Int(1), ParamValue::Bool(true)],
                    seeds: 3,
                    stalled: 1,
                    stats: vec![
                        Some(Stat {
                            mean: 100.5,
                            ci95: Some(2.25),
                        }),
                        Some(Stat {
                            mean: 1.0,
                            ci95: None,
                        }),
                    ],
                    bottleneck: "gpu0".into(),
                },
                Row {
                    values: vec![ParamValue::Int(2), ParamValue::float(0.5)],
                    seeds: 3,
                    stalled: 0,
                    stats: vec![
                        Some(Stat {
                            mean: 0.1 + 0.2,
                            ci95: Some(0.0),
                        }),
                        None,
                    ],
                    bottleneck: String::new(),
                },
            ],
        }
    }

    #[test]
    fn columns_are_scenario_params_seeds_metric_pairs_bottleneck() {
        let csv = to_csv(&table());
        let header = csv.lines().next().unwrap();
        assert_eq!(
            header,
            "scenario,job_name,arrivals.concurrency,params.pinned,seeds,stalled,jobs_per_hour_mean,jobs_per_hour_ci95,\
             stages.synth.inflation_mean,stages.synth.inflation_ci95,bottleneck"
        );
        assert_eq!(
            csv.lines().nth(1).unwrap(),
            "\"demo, \"\"quoted\"\"\",proof,1,true,3,1,100.5,2.25,1,,gpu0"
        );
    }

    #[test]
    fn round_trips_exactly() {
        let t = table();
        let back = from_csv(&to_csv(&t)).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn csv_without_a_stalled_column_still_reads() {
        let t = from_csv("scenario,x,seeds,m_mean,m_ci95,bottleneck\ns,1,3,2.5,,dram\n").unwrap();
        assert_eq!((t.rows[0].seeds, t.rows[0].stalled), (3, 0));
        assert_eq!(t.metrics, ["m"]);
        // Nor a job_name column: its jobs are "job"s and its first swept key is x.
        assert_eq!(t.job_name, JobName::default());
        assert_eq!(t.params, ["x"]);
    }

    #[test]
    fn rejects_foreign_csv_with_line_numbers() {
        let e = from_csv("a,b\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("first column must be 'scenario'"), "{e}");
        let e = from_csv("scenario,x,seeds,m_mean,m_ci95,bottleneck\ns,1,3,zz,,dram\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("'zz'"), "{e}");
        let e = from_csv("scenario,x,seeds,m_mean,m_ci95,bottleneck\ns,1,3\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2: 3 fields"), "{e}");
    }
}
