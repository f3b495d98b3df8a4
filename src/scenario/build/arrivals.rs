//! `[arrivals]`: a closed loop, Poisson arrivals or a trace file, the number of jobs and
//! the warm-up.

use std::path::{Path, PathBuf};

use crate::model::{ArrivalKind, Arrivals};

use crate::scenario::error::{ErrorKind, Locator, ScenarioError, join_key};
use crate::scenario::ignored::IgnoredKey;
use crate::scenario::schema::ArrivalsSpec;
use crate::scenario::trace_csv;
use crate::scenario::units::Qty;
use crate::scenario::values::positive;

pub(super) fn arrivals(
    a: &ArrivalsSpec,
    loc: &Locator,
    warnings: &mut Vec<String>,
    ignored: &mut Vec<IgnoredKey>,
) -> Result<Arrivals, ScenarioError> {
    let p = "arrivals";
    let k = |s: &str| join_key(p, s);
    let mut unused = |present: bool, key: &str, kind: &str| {
        if present {
            let why = format!("not used when arrivals.kind = {kind:?}");
            warnings.push(format!("{}: {why}", join_key(p, key)));
            ignored.push(IgnoredKey {
                key: join_key(p, key),
                by: k("kind"),
                why,
            });
        }
    };
    let (kind, trace_len) = match a.kind.as_str() {
        "closed" => {
            unused(a.rate_per_s.is_some(), "rate_per_s", "closed");
            unused(a.trace.is_some(), "trace", "closed");
            let c = a.concurrency.ok_or_else(|| {
                loc.error(
                    ErrorKind::MissingKey,
                    &k("concurrency"),
                    "missing; a closed loop needs concurrency >= 1 (jobs in flight)",
                )
            })?;
            if c == 0 {
                return Err(loc.error(
                    ErrorKind::Value,
                    &k("concurrency"),
                    "0 jobs in flight; a closed loop needs concurrency >= 1",
                ));
            }
            (ArrivalKind::Closed { concurrency: c }, None)
        }
        "poisson" => {
            unused(a.concurrency.is_some(), "concurrency", "poisson");
            unused(a.trace.is_some(), "trace", "poisson");
            let r = a.rate_per_s.ok_or_else(|| {
                loc.error(
                    ErrorKind::MissingKey,
                    &k("rate_per_s"),
                    "missing; Poisson arrivals need rate_per_s > 0 (jobs per second)",
                )
            })?;
            let r = positive(
                r,
                &k("rate_per_s"),
                "the arrival rate (jobs per second)",
                loc,
            )?;
            (ArrivalKind::Poisson { rate_per_s: r }, None)
        }
        "trace" => {
            unused(a.concurrency.is_some(), "concurrency", "trace");
            unused(a.rate_per_s.is_some(), "rate_per_s", "trace");
            let key = k("trace");
            let file = a.trace.as_ref().ok_or_else(|| {
                loc.error(
                    ErrorKind::MissingKey,
                    &key,
                    "missing; a trace needs trace = \"file.csv\" (a `time_s` column)",
                )
            })?;
            let base: PathBuf = match loc.file_of(&key) {
                Some(f) => f.parent().unwrap_or(Path::new("")).to_path_buf(),
                None => PathBuf::new(),
            };
            let path = base.join(file);
            let times = trace_csv::read(&path).map_err(|m| loc.error(ErrorKind::Trace, &key, m))?;
            let n = times.len() as u64;
            (ArrivalKind::Trace { times_s: times }, Some(n))
        }
        other => {
            return Err(loc.error(
                ErrorKind::Value,
                &k("kind"),
                format!(
                    "{other:?} is not an arrival kind; use \"closed\", \"poisson\" or \"trace\""
                ),
            ));
        }
    };
    let jobs = match (a.jobs, trace_len) {
        (Some(j), Some(n)) if j > n => {
            return Err(loc.error(
                ErrorKind::Value,
                &k("jobs"),
                format!("{j} jobs, but the trace has only {n} arrivals"),
            ));
        }
        (Some(j), _) => j,
        (None, Some(n)) => n,
        (None, None) => {
            return Err(loc.error(
                ErrorKind::MissingKey,
                &k("jobs"),
                "missing; the number of jobs to simulate (>= 1, warm-up included)",
            ));
        }
    };
    if jobs == 0 {
        return Err(loc.error(ErrorKind::Value, &k("jobs"), "0 jobs; simulate at least 1"));
    }
    let warmup_jobs = match &a.warmup_jobs {
        None => 0,
        Some(Qty::Num(x)) if *x >= 0.0 && x.fract() == 0.0 && *x < 1.8e19 => *x as u64,
        // One '%' after the number ("5%%" is no share).
        Some(Qty::Text(t))
            if t.trim()
                .strip_suffix('%')
                .and_then(|n| n.trim().parse::<f64>().ok())
                .is_some_and(|p| (0.0..100.0).contains(&p)) =>
        {
            let pct: f64 = (t.trim().strip_suffix('%').unwrap_or("0").trim())
                .parse()
                .unwrap_or(0.0);
            (jobs as f64 * pct / 100.0).floor() as u64
        }
        Some(q) => {
            return Err(loc.error(
                ErrorKind::Value,
                &k("warmup_jobs"),
                format!("{} is not allowed; give a whole number of jobs >= 0 or a share of jobs such as \"10%\" (below 100%)", q.shown()),
            ));
        }
    };
    if warmup_jobs >= jobs {
        return Err(loc.error(
            ErrorKind::Value,
            &k("warmup_jobs"),
            format!("{warmup_jobs} warm-up jobs leave none of the {jobs} jobs for statistics; warmup_jobs must be < jobs"),
        ));
    }
    Ok(Arrivals {
        kind,
        jobs,
        warmup_jobs,
    })
}
