//! Every predicted point of the study as a CSV (`docs/accuracy/points.csv.gz`): what the
//! error models were fitted to, committed so that a test can fit them again and check the
//! coverage claimed without running the engine over every replay.

use std::fmt::Write as _;

use crate::analysis::prediction::HostKnowledge;

use super::fit::Row;
use super::predict::Prediction;
use super::study::Study;

const HEADER: &str = "case,run,boot,card,calibration,profile,profile_card,shape,x,measured_s,runs,predicted_s,contention_stretch,host_log_sd";

/// The study's points, one line each, under the name of the way the host was known.
pub fn write(s: &Study) -> String {
    let mut o = String::from(HEADER);
    o.push('\n');
    for k in HostKnowledge::ALL {
        for r in s.rows(k) {
            let _ = writeln!(
                o,
                "{},{},{},{},{},{},{},{},{},{:e},{},{:e},{:e},{:e}",
                k.name(),
                r.run,
                r.boot,
                r.card,
                r.calibration,
                r.profile,
                r.profile_card,
                r.shape,
                r.x,
                r.measured,
                r.runs,
                r.predicted.seconds_per_job,
                r.predicted.inflation,
                r.predicted.host_log_sd
            );
        }
    }
    o
}

/// The bytes to store `text` at `path`: gzipped when the name ends in `.gz` (as the
/// committed copy is: it is read back through [`super::evidence::read_kept`]).
pub fn encode(path: &std::path::Path, text: &str) -> Vec<u8> {
    use std::io::Write as _;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(text.as_bytes()).expect("writing to memory");
        z.finish().expect("writing to memory")
    } else {
        text.as_bytes().to_vec()
    }
}

/// Reads what [`write`] wrote: each row under its way of knowing the host. The error
/// names the line and field.
pub fn read(text: &str) -> Result<Vec<(HostKnowledge, Row)>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h == HEADER => {}
        _ => return Err(format!("line 1: the header is not {HEADER:?}")),
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let f: Vec<&str> = line.split(',').collect();
        let at = |what: &str| format!("line {}: {what}", i + 1);
        if f.len() != 14 {
            return Err(at(&format!("{} fields, not 14", f.len())));
        }
        let k = (HostKnowledge::ALL.into_iter())
            .find(|k| k.name() == f[0])
            .ok_or_else(|| at(&format!("case {:?} is not a way of knowing a host", f[0])))?;
        let num = |j: usize| -> Result<f64, String> {
            (f[j].parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    at(&format!(
                        "field {} ({:?}) is not a finite number",
                        j + 1,
                        f[j]
                    ))
                })
        };
        out.push((
            k,
            Row {
                run: f[1].into(),
                boot: f[2].into(),
                card: f[3].into(),
                calibration: f[4].into(),
                profile: f[5].into(),
                profile_card: f[6].into(),
                shape: f[7].into(),
                x: num(8)?,
                measured: num(9)?,
                runs: f[10]
                    .parse()
                    .map_err(|_| at("field 11 (runs) is not a count"))?,
                predicted: Prediction {
                    seconds_per_job: num(11)?,
                    inflation: num(12)?,
                    host_log_sd: num(13)?,
                },
            },
        ));
    }
    Ok(out)
}
