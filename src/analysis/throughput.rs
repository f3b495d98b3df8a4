//! The throughput answer, said one way everywhere: seconds per job and jobs per day, each
//! a mean with its 95% interval and written at the precision that interval allows, in
//! the scenario's own word for a job ("s/proof   2078 ± 10 proofs/day"). `run`'s
//! throughput line, its what-if sides, `sweep`'s knee and `compare`'s table cells and
//! JSON all come from [`Throughput`], so a wider interval (a prediction interval beside
//! the seeds' one) changes them all in one place.

use serde_json::{Value, json};

use super::interval::{Summary, interval_decimals};

/// Seconds in a day: throughput is said per day.
pub const SECONDS_PER_DAY: f64 = 86_400.0;

/// Significant digits of a value said without an interval (one run).
const DIGITS_WITHOUT_INTERVAL: i32 = 4;

/// What one job is called: "job", or the scenario's word (`workload.job_name`, e.g.
/// "proof"); its plural adds an "s".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobName(String);

impl Default for JobName {
    fn default() -> Self {
        JobName("job".into())
    }
}

impl JobName {
    /// The scenario's word for one job.
    pub fn new(word: impl Into<String>) -> Self {
        JobName(word.into())
    }

    /// One job: "proof".
    pub fn singular(&self) -> &str {
        &self.0
    }

    /// Several: "proofs".
    pub fn plural(&self) -> String {
        format!("{}s", self.0)
    }

    /// The throughput unit: "proofs/day".
    pub fn per_day(&self) -> String {
        format!("{}/day", self.plural())
    }

    /// The time unit: "s/proof".
    pub fn seconds_per(&self) -> String {
        format!("s/{}", self.0)
    }
}

/// A throughput: seconds per job and jobs per day over the replications (or one run).
#[derive(Debug, Clone, PartialEq)]
pub struct Throughput {
    /// Seconds per job: mean and 95% interval over the replications.
    pub seconds_per_job: Summary,
    /// Jobs per day: the mean of each replication's rate, and its interval.
    pub jobs_per_day: Summary,
    /// What a job is called.
    pub job: JobName,
}

impl Throughput {
    /// From seconds per job and jobs per hour over the same replications.
    pub fn new(seconds_per_job: Summary, jobs_per_hour: Summary, job: JobName) -> Self {
        Throughput {
            seconds_per_job,
            jobs_per_day: jobs_per_hour.scaled(24.0),
            job,
        }
    }

    /// One run: no interval.
    pub fn single(seconds_per_job: f64, job: JobName) -> Self {
        let one = |mean| Summary {
            n: 1,
            mean,
            ci95: None,
        };
        Throughput {
            seconds_per_job: one(seconds_per_job),
            jobs_per_day: one(SECONDS_PER_DAY / seconds_per_job),
            job,
        }
    }

    /// From seconds per job alone (a contention-free counterpart): jobs per day at the
    /// mean, its interval carried to first order (d(1/s) = ds / s^2).
    pub fn from_seconds_per_job(seconds_per_job: Summary, job: JobName) -> Self {
        let s = seconds_per_job.mean;
        let per_day = Summary {
            n: seconds_per_job.n,
            mean: SECONDS_PER_DAY / s,
            ci95: (seconds_per_job.ci95).map(|h| SECONDS_PER_DAY * h / (s * s)),
        };
        Throughput {
            seconds_per_job,
            jobs_per_day: per_day,
            job,
        }
    }

    /// Seconds per job as a cell: "41.58 ± 0.21".
    pub fn seconds_cell(&self) -> String {
        cell(&self.seconds_per_job)
    }

    /// Jobs per day as a cell: "2078 ± 10".
    pub fn per_day_cell(&self) -> String {
        cell(&self.jobs_per_day)
    }

    /// The line as every report prints it: "41.58 ± 0.21 s/proof   2078 ± 10 proofs/day".
    pub fn line(&self) -> String {
        format!(
            "{} {}   {} {}",
            self.seconds_cell(),
            self.job.seconds_per(),
            self.per_day_cell(),
            self.job.per_day()
        )
    }

    /// The same as JSON: each value's `mean` and `ci95` (null without an interval), the
    /// replications behind them, the job's name, the unit and the line as printed.
    pub fn to_json(&self) -> Value {
        let summary =
            |s: &Summary| json!({"mean": finite(s.mean), "ci95": s.ci95.and_then(finite)});
        json!({
            "seconds_per_job": summary(&self.seconds_per_job),
            "jobs_per_day": summary(&self.jobs_per_day),
            "replications": self.seconds_per_job.n,
            "job_name": self.job.singular(),
            "unit": self.job.per_day(),
            "line": self.line(),
        })
    }
}

/// A value at the precision its interval allows, or at [`DIGITS_WITHOUT_INTERVAL`]
/// significant digits without one.
pub fn cell(s: &Summary) -> String {
    match s.ci95 {
        Some(_) => s.display(decimals_for(s.mean)),
        None => significant(s.mean),
    }
}

/// `x` rounded to [`DIGITS_WITHOUT_INTERVAL`] significant digits: 0.03880, 238.7, 2227000.
pub fn significant(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = DIGITS_WITHOUT_INTERVAL - 1 - magnitude;
    if decimals >= 0 {
        format!("{x:.0$}", decimals as usize)
    } else {
        let step = 10f64.powi(-decimals);
        format!("{:.0}", (x / step).round() * step)
    }
}

/// `x` at the precision a 95% half-width allows (the half-width's two significant
/// digits, as [`cell`] writes a mean), or at [`DIGITS_WITHOUT_INTERVAL`] significant
/// digits without one: a value from one seed's run written beside an interval.
pub fn at_precision(x: f64, half_width: Option<f64>) -> String {
    let Some(h) = half_width.filter(|h| h.is_finite() && *h > 1e-6 * x.abs()) else {
        return significant(x);
    };
    let step = 10f64.powi(h.log10().floor() as i32 - 1);
    if step >= 1.0 {
        format!("{:.0}", (x / step).round() * step)
    } else {
        format!("{x:.0$}", interval_decimals(h))
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Decimals that keep [`DIGITS_WITHOUT_INTERVAL`] significant digits of `x`: the
/// precision of a value said without an interval (with one, the interval sets it).
pub fn decimals_for(x: f64) -> usize {
    if !x.is_finite() || x == 0.0 {
        return 0;
    }
    (DIGITS_WITHOUT_INTERVAL - 1 - x.abs().log10().floor() as i32).max(0) as usize
}

/// A number to three significant digits, with no more decimals than that needs.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let digits = 2 - x.abs().log10().floor() as i32;
    if digits <= 0 {
        let step = 10f64.powi(-digits);
        format!("{:.0}", (x / step).round() * step)
    } else {
        format!("{:.*}", digits as usize, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mean: f64, ci95: Option<f64>) -> Summary {
        Summary { n: 5, mean, ci95 }
    }

    #[test]
    fn the_line_says_both_units_at_the_precision_of_their_intervals() {
        let t = Throughput::new(
            s(41.58, Some(0.21)),
            s(86.6, Some(0.43)),
            JobName::new("proof"),
        );
        assert_eq!(t.line(), "41.58 ± 0.21 s/proof   2078 ± 10 proofs/day");
        let doc = t.to_json();
        assert_eq!(doc["unit"], "proofs/day");
        assert_eq!(doc["replications"], 5);
        assert!((doc["jobs_per_day"]["mean"].as_f64().unwrap() - 2078.4).abs() < 1e-9);
        assert_eq!(doc["line"], t.line());
    }

    #[test]
    fn one_run_keeps_four_significant_digits_and_no_interval() {
        let t = Throughput::single(0.0388, JobName::default());
        assert_eq!(t.line(), "0.03880 s/job   2227000 jobs/day");
        assert_eq!(t.to_json()["seconds_per_job"]["ci95"], Value::Null);
        assert_eq!(decimals_for(238.7), 1);
        assert_eq!(decimals_for(2078.0), 0);
    }

    #[test]
    fn a_value_beside_an_interval_keeps_the_digits_the_interval_allows() {
        assert_eq!(at_precision(0.037_36, Some(0.0013)), "0.0374");
        assert_eq!(at_precision(29.9991, Some(0.21)), "30.00");
        assert_eq!(at_precision(2_226.4, Some(15.0)), "2226");
        assert_eq!(at_precision(2_226.4, Some(150.0)), "2230");
        // No interval, or one of float noise: four significant digits.
        assert_eq!(at_precision(0.037_36, None), "0.03736");
        assert_eq!(at_precision(0.24, Some(1e-12)), "0.2400");
    }

    #[test]
    fn per_day_from_seconds_carries_the_interval_to_first_order() {
        let t = Throughput::from_seconds_per_job(s(20.0, Some(0.2)), JobName::default());
        assert_eq!(t.jobs_per_day.mean, 4320.0);
        assert!((t.jobs_per_day.ci95.unwrap() - 43.2).abs() < 1e-9);
        assert_eq!(t.line(), "20.00 ± 0.20 s/job   4320 ± 43 jobs/day");
    }
}
