//! Reads cuzk daemon logs line by line: `TIMELINE,<offset_ms>,<event>,<job>,<detail>`
//! markers and `CUZK_TIMING,<offset_ms>,<job>,partition=<p> name=ms ...` timer lines
//! (any prefix ending in `_TIMING`). Other lines (the daemon's ordinary logging) are
//! skipped; lines that look like ours but do not parse are counted as garbled, never
//! fatal. CRLF endings and a final line without newline are accepted.

/// One TIMELINE marker.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Offset from the daemon's start, milliseconds.
    pub t_ms: f64,
    /// Event name, e.g. GPU_START.
    pub event: String,
    /// Job number.
    pub job: u64,
    /// `partition=`, when given.
    pub partition: Option<u32>,
    /// `gpu=`, when given.
    pub gpu: Option<u32>,
}

/// One timer line.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingLine {
    /// Offset, milliseconds.
    pub t_ms: f64,
    /// Job number.
    pub job: u64,
    /// `partition=`, when given.
    pub partition: Option<u32>,
    /// Timer name (without `_ms`? no: as logged, e.g. `gpu_total_ms`) and milliseconds.
    pub timers: Vec<(String, f64)>,
}

/// A line that looked like a log record but could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Garbled {
    /// File the line came from.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

/// Everything read from one or more log files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedLog {
    /// Markers, in file order.
    pub markers: Vec<Marker>,
    /// Timer lines, in file order.
    pub timings: Vec<TimingLine>,
    /// Lines that looked like records but did not parse.
    pub garbled: Vec<Garbled>,
    /// Lines read in all.
    pub lines: usize,
    /// Lines that were neither TIMELINE nor timing lines (ordinary daemon output).
    pub other_lines: usize,
    /// Records whose offset is earlier than the record before them in the same file.
    pub out_of_order: usize,
    /// Files whose last line had no newline (a log still being written, or cut off).
    pub unterminated_files: Vec<String>,
}

/// Parses `key=value` pairs of a detail field.
fn detail_u32(detail: &str, key: &str) -> Result<Option<u32>, String> {
    for kv in detail.split_whitespace() {
        if let Some(v) = kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')) {
            return v
                .parse()
                .map(Some)
                .map_err(|_| format!("{key}='{v}' is not a whole number"));
        }
    }
    Ok(None)
}

fn offset(text: &str) -> Result<f64, String> {
    let t: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("offset '{text}' is not a number of milliseconds"))?;
    if !t.is_finite() || t < 0.0 {
        return Err(format!(
            "offset '{text}' is not a finite, non-negative time"
        ));
    }
    Ok(t)
}

fn job(text: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("job '{text}' is not a whole number"))
}

fn parse_timeline(rest: &str) -> Result<Marker, String> {
    let f: Vec<&str> = rest.splitn(4, ',').collect();
    if f.len() < 3 {
        return Err("expected TIMELINE,<offset_ms>,<event>,<job>,<detail>".into());
    }
    let event = f[1].trim();
    if event.is_empty() || !event.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("event '{event}' is not a marker name"));
    }
    let detail = f.get(3).copied().unwrap_or("");
    Ok(Marker {
        t_ms: offset(f[0])?,
        event: event.to_string(),
        job: job(f[2])?,
        partition: detail_u32(detail, "partition")?,
        gpu: detail_u32(detail, "gpu")?,
    })
}

fn parse_timing(rest: &str) -> Result<TimingLine, String> {
    let f: Vec<&str> = rest.splitn(3, ',').collect();
    if f.len() < 3 {
        return Err("expected <PREFIX>,<offset_ms>,<job>,partition=<p> name=ms ...".into());
    }
    let mut partition = None;
    let mut timers = Vec::new();
    for kv in f[2].split_whitespace() {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("'{kv}' is not name=value"))?;
        if k == "partition" {
            partition = Some(
                v.parse()
                    .map_err(|_| format!("partition='{v}' is not a whole number"))?,
            );
            continue;
        }
        let ms: f64 = v
            .parse()
            .map_err(|_| format!("timer {k}='{v}' is not a number"))?;
        if !ms.is_finite() {
            return Err(format!("timer {k}='{v}' is not finite"));
        }
        timers.push((k.to_string(), ms));
    }
    Ok(TimingLine {
        t_ms: offset(f[0])?,
        job: job(f[1])?,
        partition,
        timers,
    })
}

impl ParsedLog {
    /// Adds the lines of one file (`name` is used in messages).
    pub fn add_text(&mut self, name: &str, text: &str) {
        if !text.is_empty() && !text.ends_with('\n') {
            self.unterminated_files.push(name.to_string());
        }
        let mut last_t = f64::NEG_INFINITY;
        for (i, raw) in text.lines().enumerate() {
            self.lines += 1;
            let line = raw.trim_end_matches('\r').trim();
            // Records may follow a logger's own prefix (time, level): find our tag.
            let (tag, rest) = match find_record(line) {
                Some(x) => x,
                None => {
                    self.other_lines += 1;
                    continue;
                }
            };
            let parsed = if tag == "TIMELINE" {
                parse_timeline(rest).map(|m| {
                    let t = m.t_ms;
                    self.markers.push(m);
                    t
                })
            } else {
                parse_timing(rest).map(|m| {
                    let t = m.t_ms;
                    self.timings.push(m);
                    t
                })
            };
            match parsed {
                Ok(t) => {
                    if t < last_t {
                        self.out_of_order += 1;
                    }
                    last_t = last_t.max(t);
                }
                Err(problem) => self.garbled.push(Garbled {
                    file: name.to_string(),
                    line: i + 1,
                    problem,
                }),
            }
        }
    }
}

/// The record tag (`TIMELINE` or `*_TIMING`) and the text after its comma.
fn find_record(line: &str) -> Option<(&str, &str)> {
    if let Some(at) = line.find("TIMELINE,") {
        return Some(("TIMELINE", &line[at + "TIMELINE,".len()..]));
    }
    let at = line.find("_TIMING,")?;
    let start = line[..at]
        .rfind(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .map_or(0, |p| p + 1);
    if start == at {
        return None;
    }
    Some((
        &line[start..at + "_TIMING".len()],
        &line[at + "_TIMING,".len()..],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_kinds_with_crlf_and_prefixes() {
        let mut log = ParsedLog::default();
        log.add_text(
            "a.log",
            "TIMELINE,1.5,GPU_START,3,partition=2 gpu=1\r\n\
             2026-01-01 INFO cuzk: CUZK_TIMING,9.0,3,partition=2 gpu_total_ms=7.5 tail_msm_ms=1\r\n\
             some ordinary line\n",
        );
        assert_eq!(
            log.markers,
            [Marker {
                t_ms: 1.5,
                event: "GPU_START".into(),
                job: 3,
                partition: Some(2),
                gpu: Some(1)
            }]
        );
        assert_eq!(log.timings[0].timers[0], ("gpu_total_ms".into(), 7.5));
        assert_eq!(log.timings[0].partition, Some(2));
        assert_eq!((log.lines, log.other_lines, log.garbled.len()), (3, 1, 0));
        assert!(log.unterminated_files.is_empty());
    }

    #[test]
    fn garbled_and_partial_lines_are_counted_not_fatal() {
        let mut log = ParsedLog::default();
        log.add_text(
            "b.log",
            "TIMELINE,abc,GPU_START,1,\nTIMELINE,5,GPU_END\nTIMELINE,3,GPU_END,x,\n\
             CUZK_TIMING,4,1,partition=0 gpu_total_ms=zz\nTIMELINE,7,GPU_E",
        );
        assert_eq!(log.garbled.len(), 5, "{:?}", log.garbled);
        assert_eq!(log.garbled[0].line, 1);
        assert!(log.garbled[0].problem.contains("offset 'abc'"));
        assert_eq!(log.unterminated_files, ["b.log"]);
        assert!(log.markers.is_empty());
    }

    #[test]
    fn out_of_order_offsets_are_counted() {
        let mut log = ParsedLog::default();
        log.add_text(
            "c.log",
            "TIMELINE,5,A,1,\nTIMELINE,3,B,1,\nTIMELINE,6,C,1,\n",
        );
        assert_eq!(log.out_of_order, 1);
        assert_eq!(log.markers.len(), 3);
    }
}
