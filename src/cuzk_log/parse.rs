//! Reads cuzk daemon logs line by line, in the formats the engine and SupraSeal print:
//!
//! - `TIMELINE,<offset_ms>,<EVENT>,<job_id>,<detail>` (cuzk-core's `timeline_event`):
//!   the job id is a string (Curio's `porep-<miner>-<sector>`, `wdpost-...`, a UUID from
//!   cuzk-bench), the detail comma-separated `key=value` pairs (`worker=0,partition=3`,
//!   `gpu_ms=` on GPU_END) or one bare word (`monolithic`);
//! - `CUZK_TIMING: key=value ...` (SupraSeal C2's CUDA code, any `*_TIMING:` tag): no
//!   time, job or partition. Such a line is placed at the latest TIMELINE offset before
//!   it in its file (both go to stderr unbuffered, so file order is emission order) and
//!   attributed to the GPU bracket it came from (see [`Attribution`]).
//!
//! Records may follow a logger's or journald's prefix and carry ANSI colours; CRLF and a
//! last line without newline are accepted. Other lines are counted and skipped, except
//! cuzk's `GPU worker started worker_id=W gpu=G` lines, which say how workers map to GPUs.
//! A line that looks like a record but does not parse is garbled; so is a record with a
//! number that cannot be what it names: an offset, `gpu_ms=` or timer that is not
//! finite, negative or beyond 2^53 ms, an id (`worker=`, `gpu=`, `partition=`, and the
//! start-up lines' `worker_id=`, `gpu=`) that is not a whole number from 0 to 2^32 - 1.
//! A record with a value that is no number at all, or looks mis-split, is kept with a
//! warning. Neither is fatal, and each is counted and named by file and line.
//!
//! Ids are labels, not indices: nothing is sized by them (a GPU numbered 4294967295 is
//! one GPU of the report).

use std::collections::{BTreeMap, HashSet};

/// One TIMELINE record.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Offset from the engine's start, milliseconds.
    pub t_ms: f64,
    /// Event name, e.g. GPU_START.
    pub event: String,
    /// Job id, as logged.
    pub job: String,
    /// `partition=`, when given.
    pub partition: Option<u32>,
    /// `worker=`, when given (cuzk's global GPU worker number).
    pub worker: Option<u32>,
    /// `gpu=`, when given (older bwsim logs named the GPU directly).
    pub gpu: Option<u32>,
    /// `gpu_ms=` on GPU_END: the engine's own measure of the GPU call, ms.
    pub gpu_ms: Option<f64>,
    /// Every `key=value` of the detail as logged, unknown keys included (a bare word is
    /// a key with an empty value).
    pub details: Vec<(String, String)>,
}

/// One `*_TIMING:` line with at least one timer.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingLine {
    /// The latest TIMELINE offset before it in its file, ms (0 before any).
    pub t_ms: f64,
    /// Timers (`*_ms` keys with numbers), as logged.
    pub timers: Vec<(String, f64)>,
    /// The other `key=value` pairs (`gpu_tid`, `num_circuits`, ...).
    pub details: Vec<(String, String)>,
    /// The GPU bracket (job, partition) it is attributed to.
    pub bracket: Option<(String, Option<u32>)>,
}

/// A line that could not be read, or was read with a doubt.
#[derive(Debug, Clone, PartialEq)]
pub struct LineNote {
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
    /// TIMELINE records, in file order.
    pub markers: Vec<Marker>,
    /// Timing lines, in file order.
    pub timings: Vec<TimingLine>,
    /// Lines that looked like records but did not parse.
    pub garbled: Vec<LineNote>,
    /// Records kept with a doubt (a value that looks mis-split, an unreadable value).
    pub warnings: Vec<LineNote>,
    /// Lines read in all.
    pub lines: usize,
    /// Lines that were neither TIMELINE nor timing lines (ordinary daemon output).
    pub other_lines: usize,
    /// `*_TIMING:` lines without any timer (SupraSeal's allocation notes).
    pub timing_notes: usize,
    /// Records whose offset is earlier than the record before them in the same file.
    pub out_of_order: usize,
    /// Files whose last line had no newline (a log still being written, or cut off).
    pub unterminated_files: Vec<String>,
    /// Worker -> GPU from cuzk's `GPU worker started worker_id=W gpu=G` lines.
    pub worker_gpus: BTreeMap<u32, u32>,
    /// `gpu_workers_per_device=N` of cuzk's `initializing GPU workers` line.
    pub workers_per_gpu: Option<u32>,
}

/// Removes ANSI escape sequences (colours of tracing's and other loggers' output).
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // CSI: ESC [ parameters, ended by a letter; other escapes: one character.
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out.into()
}

/// Splits a detail field into `key=value` pairs on commas (cuzk) and spaces (older
/// bwsim logs). A bare word alone is a key with an empty value (`monolithic`); a bare
/// word beside pairs is a value that was split off its key: a warning.
fn split_details(detail: &str) -> (Vec<(String, String)>, Vec<String>) {
    let tokens: Vec<&str> = detail
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    let mut pairs = Vec::with_capacity(tokens.len());
    let mut doubts = Vec::new();
    for t in &tokens {
        match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => pairs.push((k.to_string(), v.to_string())),
            _ if tokens.len() == 1 => pairs.push((t.to_string(), String::new())),
            _ => doubts.push(format!(
                "'{t}' has no key: a value with a comma or space in it, split off its key? \
                 (the detail is comma-separated key=value pairs)"
            )),
        }
    }
    (pairs, doubts)
}

/// Why a line that looks like a TIMELINE record is not one (the line is garbled).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GarbledRecord {
    /// Fewer than offset, event and job id.
    #[error("expected TIMELINE,<offset_ms>,<event>,<job_id>,<detail>")]
    TooFewFields,
    /// The offset is not a number.
    #[error("offset '{0}' is not a number of milliseconds")]
    OffsetNotANumber(String),
    /// The offset is negative, infinite, NaN or beyond [`MAX_MS`].
    #[error(
        "offset '{0}' is not a time of the log: offsets are finite milliseconds from 0 to \
         9007199254740992 (2^53)"
    )]
    OffsetOutOfRange(String),
    /// The event is empty or has characters other than letters, digits and `_`.
    #[error("event '{0}' is not a marker name")]
    NotAnEvent(String),
    /// No job id.
    #[error("the job id is empty")]
    EmptyJob,
    /// A field's number cannot be what the field names.
    #[error("{key}='{value}' {problem}; {allowed}")]
    BadNumber {
        /// The field.
        key: String,
        /// Its value, as logged.
        value: String,
        /// What is wrong with it.
        problem: NumberProblem,
        /// What the field holds.
        allowed: &'static str,
    },
}

/// What is wrong with a number in a record (a part of [`GarbledRecord::BadNumber`]'s
/// message, not an error of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberProblem {
    /// NaN or an infinity.
    NotFinite,
    /// Below zero.
    Negative,
    /// An id with a fraction.
    NotWhole,
    /// Past the largest value the field holds.
    TooLarge,
}

impl std::fmt::Display for NumberProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NumberProblem::NotFinite => "is not a finite number",
            NumberProblem::Negative => "is negative",
            NumberProblem::NotWhole => "is not a whole number",
            NumberProblem::TooLarge => "is too large",
        })
    }
}

/// The largest time a record may carry, ms: 2^53, below which every whole millisecond
/// is exact in the f64 arithmetic of the analysis (about 285,000 years).
pub const MAX_MS: f64 = 9_007_199_254_740_992.0;

/// What a time field holds.
const TIMES: &str = "times are finite milliseconds from 0 to 9007199254740992 (2^53)";

/// What an id field holds.
const IDS: &str = "ids are whole numbers from 0 to 4294967295";

/// A time in ms: Ok(None) when the value is no number at all (the caller decides), an
/// error when it is a number no time can be.
fn time_ms(key: &str, value: &str) -> Result<Option<f64>, GarbledRecord> {
    let Ok(t) = value.trim().parse::<f64>() else {
        return Ok(None);
    };
    let problem = if !t.is_finite() {
        NumberProblem::NotFinite
    } else if t < 0.0 {
        NumberProblem::Negative
    } else if t > MAX_MS {
        NumberProblem::TooLarge
    } else {
        return Ok(Some(t + 0.0));
    };
    Err(GarbledRecord::BadNumber {
        key: key.to_string(),
        value: value.to_string(),
        problem,
        allowed: TIMES,
    })
}

/// An id: Ok(None) when the value is no number at all, an error when it is a number no
/// id can be.
fn id(key: &str, value: &str) -> Result<Option<u32>, GarbledRecord> {
    if let Ok(n) = value.parse::<u32>() {
        return Ok(Some(n));
    }
    let Ok(x) = value.parse::<f64>() else {
        return Ok(None);
    };
    let problem = if !x.is_finite() {
        NumberProblem::NotFinite
    } else if x < 0.0 {
        NumberProblem::Negative
    } else if x.fract() != 0.0 {
        NumberProblem::NotWhole
    } else if x > f64::from(u32::MAX) {
        NumberProblem::TooLarge
    } else {
        return Ok(Some(x as u32)); // a whole number written as 1e3 or 7.0
    };
    Err(GarbledRecord::BadNumber {
        key: key.to_string(),
        value: value.to_string(),
        problem,
        allowed: IDS,
    })
}

fn offset(text: &str) -> Result<f64, GarbledRecord> {
    match time_ms("offset", text) {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Err(GarbledRecord::OffsetNotANumber(text.to_string())),
        Err(_) => Err(GarbledRecord::OffsetOutOfRange(text.to_string())),
    }
}

/// A TIMELINE record and its doubts.
fn parse_timeline(rest: &str) -> Result<(Marker, Vec<String>), GarbledRecord> {
    let f: Vec<&str> = rest.splitn(4, ',').collect();
    if f.len() < 3 {
        return Err(GarbledRecord::TooFewFields);
    }
    let t_ms = offset(f[0])?;
    let event = f[1].trim();
    if event.is_empty() || !event.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(GarbledRecord::NotAnEvent(event.to_string()));
    }
    let job = f[2].trim();
    if job.is_empty() {
        return Err(GarbledRecord::EmptyJob);
    }
    let (details, mut doubts) = split_details(f.get(3).copied().unwrap_or(""));
    let mut marker = Marker {
        t_ms,
        event: event.to_string(),
        job: job.to_string(),
        partition: None,
        worker: None,
        gpu: None,
        gpu_ms: None,
        details: Vec::new(),
    };
    for (k, v) in &details {
        let slot = match k.as_str() {
            "partition" => &mut marker.partition,
            "worker" => &mut marker.worker,
            "gpu" => &mut marker.gpu,
            "gpu_ms" => {
                match time_ms(k, v)? {
                    Some(ms) => marker.gpu_ms = Some(ms),
                    None => doubts.push(format!("gpu_ms='{v}' is not a number of ms")),
                }
                continue;
            }
            _ => continue,
        };
        match id(k, v)? {
            Some(n) => *slot = Some(n),
            None => doubts.push(format!("{k}='{v}' is not a whole number; ignored")),
        }
    }
    marker.details = details;
    Ok((marker, doubts))
}

/// A timing line's pairs, split into timers and the rest.
#[derive(Default)]
struct TimingPairs {
    /// `*_ms` keys with numbers.
    timers: Vec<(String, f64)>,
    /// Other keys.
    details: Vec<(String, String)>,
    /// What looked wrong.
    doubts: Vec<String>,
}

/// A timing line's pairs (none for a note in prose); garbled when a timer's number
/// cannot be a time.
fn parse_timing(rest: &str) -> Result<TimingPairs, GarbledRecord> {
    let mut out = TimingPairs::default();
    let has_pairs = rest.split_whitespace().any(|t| t.contains('='));
    if !has_pairs {
        return Ok(out); // a note in prose, not a measurement
    }
    let TimingPairs {
        timers,
        details,
        doubts,
    } = &mut out;
    for t in rest.split_whitespace() {
        let Some((k, v)) = t.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            doubts.push(format!(
                "'{t}' has no key: a value split off its key? (timing lines are \
                 space-separated key=value pairs)"
            ));
            continue;
        };
        if k.ends_with("_ms") {
            match time_ms(k, v)? {
                Some(ms) => timers.push((k.to_string(), ms)),
                None => doubts.push(format!("timer {k}='{v}' is not a number; ignored")),
            }
        } else {
            details.push((k.to_string(), v.to_string()));
        }
    }
    Ok(out)
}

/// Which GPU bracket a timing line came from. SupraSeal's lines name no job: each goes
/// to the GPU bracket open at that moment (GPU_START seen, GPU_END not yet) that has
/// not yet reported the line's first key, the earliest started first. With one bracket
/// open this is exact; with several (two workers per GPU, several GPUs) it follows the
/// order the brackets took the GPU, which is the order their kernel regions run in.
#[derive(Debug, Default)]
struct Attribution {
    open: Vec<(String, Option<u32>, HashSet<String>)>,
}

impl Attribution {
    fn marker(&mut self, m: &Marker) {
        match m.event.as_str() {
            "GPU_START" => self.open.push((m.job.clone(), m.partition, HashSet::new())),
            "GPU_END" => {
                if let Some(i) = self
                    .open
                    .iter()
                    .position(|o| o.0 == m.job && o.1 == m.partition)
                {
                    self.open.remove(i);
                }
            }
            _ => {}
        }
    }

    fn timing(&mut self, first_key: &str) -> Option<(String, Option<u32>)> {
        let o = self.open.iter_mut().find(|o| !o.2.contains(first_key))?;
        o.2.insert(first_key.to_string());
        Some((o.0.clone(), o.1))
    }
}

/// Where a record's tag starts in a line: at its start or after a prefix that ends in
/// a space, colon, bracket or similar (not inside a word).
fn tag_at(line: &str, tag: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = line[from..].find(tag) {
        let at = from + i;
        let before = line[..at].chars().next_back();
        if before.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_')) {
            return Some(at);
        }
        from = at + tag.len();
    }
    None
}

/// A record tag found in a line.
enum Tag<'a> {
    Timeline(&'a str),
    Timing(&'a str),
}

fn find_record(line: &str) -> Option<Tag<'_>> {
    if let Some(at) = tag_at(line, "TIMELINE,") {
        return Some(Tag::Timeline(&line[at + "TIMELINE,".len()..]));
    }
    let at = line.find("_TIMING:")?;
    let start = line[..at]
        .rfind(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .map_or(0, |p| p + 1);
    if start == at {
        return None;
    }
    Some(Tag::Timing(&line[at + "_TIMING:".len()..]))
}

/// A whole-number `key=value` field of a tracing line (fields follow the message): None
/// when absent or no number, an error when a number no id can be.
fn field(line: &str, key: &str) -> Result<Option<u32>, GarbledRecord> {
    let value = line
        .split_whitespace()
        .find_map(|t| t.strip_prefix(key)?.strip_prefix('='));
    match value {
        Some(v) => id(key, v),
        None => Ok(None),
    }
}

impl ParsedLog {
    /// Reads cuzk's start-up lines: "pipeline GPU worker started worker_id=W gpu=G
    /// sub_id=S" per worker, "initializing GPU workers ... gpu_workers_per_device=N ..."
    /// once (cuzk-core engine.rs). Lines that disagree (a restarted daemon, logs of two
    /// hosts) keep the lower GPU and the larger count, whatever their order, with a doubt.
    fn start_up_line(&mut self, line: &str) -> Result<Option<String>, GarbledRecord> {
        if line.contains("GPU worker started") {
            let (Some(w), Some(g)) = (field(line, "worker_id")?, field(line, "gpu")?) else {
                return Ok(None);
            };
            let kept = self.worker_gpus.entry(w).or_insert(g);
            if *kept != g {
                let (a, b) = ((*kept).min(g), (*kept).max(g));
                *kept = a;
                return Ok(Some(format!(
                    "worker {w} is on GPU {a} and on GPU {b} in the start-up lines; GPU {a} \
                     is used"
                )));
            }
        } else if line.contains("initializing GPU workers")
            && let Some(n) = field(line, "gpu_workers_per_device")?.filter(|n| *n > 0)
        {
            let kept = *self.workers_per_gpu.get_or_insert(n);
            if kept != n {
                self.workers_per_gpu = Some(kept.max(n));
                return Ok(Some(format!(
                    "gpu_workers_per_device is {} and {} in the start-up lines; {} is used",
                    kept.min(n),
                    kept.max(n),
                    kept.max(n)
                )));
            }
        }
        Ok(None)
    }

    /// Adds the lines of one file (`name` is used in messages).
    pub fn add_text(&mut self, name: &str, text: &str) {
        if !text.is_empty() && !text.ends_with('\n') {
            self.unterminated_files.push(name.to_string());
        }
        let mut last_t = f64::NEG_INFINITY;
        let mut now = 0.0;
        let mut attribution = Attribution::default();
        for (i, raw) in text.lines().enumerate() {
            self.lines += 1;
            let line = strip_ansi(raw.trim_end_matches('\r'));
            let line = line.trim();
            let note = |problem: String| LineNote {
                file: name.to_string(),
                line: i + 1,
                problem,
            };
            match find_record(line) {
                None => {
                    // cuzk-core engine.rs: "pipeline GPU worker started worker_id=W gpu=G
                    // sub_id=S" per worker, "initializing GPU workers ...
                    // gpu_workers_per_device=N ..." once.
                    match self.start_up_line(line) {
                        Ok(Some(doubt)) => self.warnings.push(note(doubt)),
                        Ok(None) => {}
                        Err(garbled) => {
                            self.garbled.push(note(garbled.to_string()));
                            continue;
                        }
                    }
                    self.other_lines += 1;
                }
                Some(Tag::Timeline(rest)) => match parse_timeline(rest) {
                    Ok((m, doubts)) => {
                        self.warnings.extend(doubts.into_iter().map(note));
                        if m.t_ms < last_t {
                            self.out_of_order += 1;
                        }
                        last_t = last_t.max(m.t_ms);
                        now = m.t_ms;
                        attribution.marker(&m);
                        self.markers.push(m);
                    }
                    Err(garbled) => self.garbled.push(note(garbled.to_string())),
                },
                Some(Tag::Timing(rest)) => {
                    let TimingPairs {
                        timers,
                        details,
                        doubts,
                    } = match parse_timing(rest) {
                        Ok(pairs) => pairs,
                        Err(garbled) => {
                            self.garbled.push(note(garbled.to_string()));
                            continue;
                        }
                    };
                    self.warnings.extend(doubts.into_iter().map(note));
                    let Some((first, _)) = timers.first() else {
                        self.timing_notes += 1;
                        continue;
                    };
                    let bracket = attribution.timing(first);
                    self.timings.push(TimingLine {
                        t_ms: now,
                        timers,
                        details,
                        bracket,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> ParsedLog {
        let mut log = ParsedLog::default();
        log.add_text("a.log", text);
        log
    }

    #[test]
    fn reads_cuzk_records_with_string_ids_and_comma_details() {
        let log = parsed(
            "TIMELINE,1500,GPU_START,porep-1000-42,worker=3,partition=2\r\n\
             TIMELINE,4300,GPU_END,porep-1000-42,worker=3,partition=2,gpu_ms=2790,new_key=x\r\n\
             TIMELINE,4301,GPU_QUEUE,winpost-1000-0a1b,monolithic\n",
        );
        let m = &log.markers[1];
        assert_eq!(m.job, "porep-1000-42");
        assert_eq!((m.worker, m.partition, m.gpu), (Some(3), Some(2), None));
        assert_eq!(m.gpu_ms, Some(2790.0));
        assert_eq!(m.details.last().unwrap(), &("new_key".into(), "x".into()));
        assert_eq!(
            log.markers[2].details,
            [("monolithic".into(), String::new())]
        );
        assert!(log.warnings.is_empty() && log.garbled.is_empty());
    }

    #[test]
    fn prefixes_colours_and_journald_are_skipped() {
        let log = parsed(
            "Dec 02 07:10:11 host cuzk-daemon[812]: TIMELINE,10,SYNTH_START,a,partition=0\n\
             \u{1b}[2m2026-12-02T07:10:11.5Z\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m x: TIMELINE,11,SYNTH_END,a,partition=0,synth_ms=1\n\
             2026-12-02 07:10:12 INFO cuzk_core::engine: NOTTIMELINE,12,X,a,\n",
        );
        assert_eq!(log.markers.len(), 2);
        assert_eq!(log.other_lines, 1);
    }

    #[test]
    fn timing_lines_are_placed_and_attributed_to_the_open_bracket() {
        let log = parsed(
            "CUZK_TIMING: d_a_cache allocated 4096 MiB on gpu 0\n\
             TIMELINE,100,GPU_START,j1,worker=0,partition=0\n\
             TIMELINE,150,GPU_START,j2,worker=1,partition=5\n\
             CUZK_TIMING: pre_lock_cpu_ms=3 mutex_wait_ms=0\n\
             CUZK_TIMING: pre_lock_cpu_ms=3 mutex_wait_ms=1200\n\
             CUZK_TIMING: gpu_tid=0 tail_msm_ms=83 gpu_total_ms=1824\n\
             TIMELINE,2000,GPU_END,j1,worker=0,partition=0,gpu_ms=1900\n\
             CUZK_TIMING: gpu_tid=0 tail_msm_ms=80 gpu_total_ms=1800\n",
        );
        assert_eq!(log.timing_notes, 1);
        let b: Vec<_> = log.timings.iter().map(|t| t.bracket.clone()).collect();
        let j = |s: &str, p| Some((s.to_string(), Some(p)));
        assert_eq!(b, [j("j1", 0), j("j2", 5), j("j1", 0), j("j2", 5)]);
        assert_eq!(log.timings[2].t_ms, 150.0);
        assert_eq!(log.timings[2].details, [("gpu_tid".into(), "0".into())]);
        assert_eq!(log.timings[3].timers[1], ("gpu_total_ms".into(), 1800.0));
    }

    #[test]
    fn mis_split_values_are_warnings_with_their_line() {
        let log = parsed(
            "TIMELINE,1,GPU_START,j,worker=0,partition=3,7\n\
             TIMELINE,2,GPU_END,j,worker=x,partition=3\n\
             CUZK_TIMING: batch_add_ms=650 12\n",
        );
        assert_eq!(log.markers.len(), 2);
        let lines: Vec<usize> = log.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [1, 2, 3]);
        assert!(log.warnings[0].problem.contains("'7' has no key"));
        assert_eq!(log.timings[0].timers, [("batch_add_ms".into(), 650.0)]);
    }

    #[test]
    fn garbled_and_partial_lines_are_counted_not_fatal() {
        let log = parsed(
            "TIMELINE,abc,GPU_START,1,\nTIMELINE,5,GPU_END\nTIMELINE,3,GPU_END, ,\n\
             TIMELINE,7,GPU_E",
        );
        assert_eq!(log.garbled.len(), 4, "{:?}", log.garbled);
        assert!(log.garbled[0].problem.contains("offset 'abc'"));
        assert!(log.garbled[2].problem.contains("job id is empty"));
        assert_eq!(log.unterminated_files, ["a.log"]);
        let garbled = |rest: &str| parse_timeline(rest).unwrap_err();
        assert_eq!(garbled("5,GPU_END"), GarbledRecord::TooFewFields);
        assert_eq!(
            garbled("-1,GPU_END,j"),
            GarbledRecord::OffsetOutOfRange("-1".into())
        );
        assert_eq!(
            garbled("1,GPU END,j"),
            GarbledRecord::NotAnEvent("GPU END".into())
        );
    }

    #[test]
    fn numbers_no_field_can_hold_are_garbled_records_named_by_key() {
        let cases = [
            (
                "TIMELINE,5,GPU_END,j,gpu_ms=NaN",
                "gpu_ms='NaN' is not a finite number",
            ),
            (
                "TIMELINE,5,GPU_END,j,gpu_ms=inf",
                "gpu_ms='inf' is not a finite number",
            ),
            ("TIMELINE,5,GPU_END,j,gpu_ms=-3", "gpu_ms='-3' is negative"),
            (
                "TIMELINE,5,GPU_END,j,gpu_ms=1e400",
                "gpu_ms='1e400' is not a finite",
            ),
            (
                "TIMELINE,5,GPU_END,j,gpu_ms=1e17",
                "gpu_ms='1e17' is too large",
            ),
            ("TIMELINE,5,GPU_END,j,worker=-1", "worker='-1' is negative"),
            (
                "TIMELINE,5,GPU_END,j,worker=99999999999",
                "worker='99999999999' is too large",
            ),
            (
                "TIMELINE,5,GPU_END,j,partition=1.5",
                "partition='1.5' is not a whole",
            ),
            ("TIMELINE,5,GPU_END,j,gpu=-0.5", "gpu='-0.5' is negative"),
            (
                "TIMELINE,1e17,GPU_END,j,",
                "offset '1e17' is not a time of the log",
            ),
            (
                "CUZK_TIMING: a_ms=3 gpu_total_ms=-4",
                "gpu_total_ms='-4' is negative",
            ),
            (
                "CUZK_TIMING: gpu_total_ms=NaN",
                "gpu_total_ms='NaN' is not a finite",
            ),
            (
                "INFO x: pipeline GPU worker started worker_id=1 gpu=-1 sub_id=0",
                "gpu='-1' is negative",
            ),
        ];
        for (line, want) in cases {
            let log = parsed(&format!("{line}\n"));
            assert_eq!(log.garbled.len(), 1, "{line}: {:?}", log.warnings);
            assert!(
                log.garbled[0].problem.contains(want),
                "{line}: {:?}",
                log.garbled
            );
            assert!(log.markers.is_empty() && log.timings.is_empty() && log.worker_gpus.is_empty());
        }
        // A whole number written otherwise is one; a value that is no number is a doubt.
        let log = parsed("TIMELINE,5,GPU_END,j,worker=1e3,partition=2.0,gpu=x\n");
        assert_eq!(
            (log.markers[0].worker, log.markers[0].partition),
            (Some(1000), Some(2))
        );
        assert_eq!(log.warnings.len(), 1);
        assert!(log.garbled.is_empty());
    }

    #[test]
    fn start_up_lines_that_disagree_give_the_same_layout_in_any_order() {
        let a = "GPU worker started worker_id=2 gpu=1 sub_id=0\n\
                 initializing GPU workers gpu_workers_per_device=2\n";
        let b = "GPU worker started worker_id=2 gpu=0 sub_id=0\n\
                 initializing GPU workers gpu_workers_per_device=3\n";
        for text in [format!("{a}{b}"), format!("{b}{a}")] {
            let log = parsed(&text);
            assert_eq!(log.worker_gpus.get(&2), Some(&0));
            assert_eq!(log.workers_per_gpu, Some(3));
            assert_eq!(log.warnings.len(), 2, "{:?}", log.warnings);
        }
    }

    #[test]
    fn worker_lines_map_workers_to_gpus_and_order_is_checked() {
        let log = parsed(
            "2026-12-02T07:00:00Z  INFO cuzk_core::engine: initializing GPU workers num_gpus=2 gpu_workers_per_device=3 total_workers=6\n\
             2026-12-02T07:00:00Z  INFO cuzk_core::engine: pipeline GPU worker started worker_id=2 gpu=1 sub_id=0\n\
             TIMELINE,5,A,1,\nTIMELINE,3,B,1,\nTIMELINE,6,C,1,\n",
        );
        assert_eq!(log.worker_gpus.get(&2), Some(&1));
        assert_eq!(log.workers_per_gpu, Some(3));
        assert_eq!(log.out_of_order, 1);
    }
}
