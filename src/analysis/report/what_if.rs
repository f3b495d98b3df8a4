//! A what-if: the scenario with some changes against the same scenario without them,
//! both replicated on the same seeds, and the difference with its own 95% interval from
//! the per-seed differences (common random numbers: the noise both runs share cancels).
//! A difference whose interval holds 0 is reported as not resolved, never as a sign.

use std::fmt::Write;

use serde_json::{Value, json};

use super::Report;
use crate::analysis::interval::{Summary, paired_difference, summarize};
use crate::analysis::throughput::decimals_for;

/// The baseline and the changed run, each over the same seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    /// The changes, `KEY=VALUE` as given.
    pub changes: Vec<String>,
    /// Why a change has no effect on this scenario, when the scenario layer knows (a key
    /// another key overrides), one per such change.
    pub no_effect: Vec<String>,
    /// The scenario without the changes.
    pub baseline: Report,
    /// The scenario with them.
    pub changed: Report,
    /// The part of the model's error the two arms do not share, as a 95% half-width on
    /// the log of their ratio; None when unknown (the verdict then rests on the seeds).
    pub unshared_error: Option<f64>,
}

/// What the replications say about one metric's change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// Changed minus baseline, paired by seed.
    pub seconds_per_job: Summary,
    /// Changed minus baseline jobs per day, paired by seed.
    pub jobs_per_day: Summary,
    /// The mean change in seconds per job, percent of the baseline's.
    pub seconds_per_job_pct: f64,
    /// Every seed gave the changed run exactly the baseline's time: the change did not
    /// reach anything the scenario simulates (no noise to speak of).
    pub identical: bool,
}

impl Difference {
    /// True when the interval of the change in seconds per job excludes 0.
    pub fn resolved(&self) -> bool {
        self.seconds_per_job.excludes_zero()
    }
}

/// Each seed's value of a report: the replications' list, or the one run's.
fn by_seed(r: &Report, f: fn(&super::Replications) -> &Vec<f64>, one: f64) -> Vec<f64> {
    r.replications
        .as_ref()
        .map_or_else(|| vec![one], |x| f(x).clone())
}

impl WhatIf {
    /// The paired difference; `None` when the two sides were not run on the same seeds.
    pub fn difference(&self) -> Option<Difference> {
        let seeds = |r: &Report| r.replications.as_ref().map(|x| x.seeds.clone());
        if seeds(&self.baseline) != seeds(&self.changed) || self.baseline.seed != self.changed.seed
        {
            return None;
        }
        let spj = |r: &Report| by_seed(r, |x| &x.seconds_per_job_by_seed, r.seconds_per_job);
        let jph = |r: &Report| by_seed(r, |x| &x.jobs_per_hour_by_seed, r.jobs_per_hour);
        let (base_spj, changed_spj) = (spj(&self.baseline), spj(&self.changed));
        let identical = base_spj.iter().zip(&changed_spj).all(|(b, c)| b == c);
        let seconds_per_job = paired_difference(&base_spj, &changed_spj)?;
        let jobs_per_day =
            paired_difference(&jph(&self.baseline), &jph(&self.changed))?.scaled(24.0);
        let base = summarize(&spj(&self.baseline))?.mean;
        Some(Difference {
            seconds_per_job,
            jobs_per_day,
            seconds_per_job_pct: 100.0 * seconds_per_job.mean / base,
            identical,
        })
    }

    /// The what-if for a terminal.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let w = &mut o;
        let seeds = self.baseline.replications.as_ref().map_or(1, |r| r.count());
        let _ = writeln!(
            w,
            "what-if      {} against scenario {} as given, {seeds} paired replications \
             (seeds {} to {})",
            self.changes.join(" "),
            self.baseline.scenario,
            self.baseline.seed,
            self.baseline.seed.wrapping_add(seeds as u64 - 1)
        );
        for (label, r) in [("baseline", &self.baseline), ("changed", &self.changed)] {
            let _ = writeln!(
                w,
                "{label:<12} {}   busiest {}",
                r.throughput().line(),
                r.bottleneck.resource
            );
        }
        let job = &self.baseline.job_name;
        match self.difference() {
            Some(d) => {
                let _ = writeln!(
                    w,
                    "difference   {} {} ({:+.1}%)   {} {}",
                    signed_cell(&d.seconds_per_job),
                    job.seconds_per(),
                    d.seconds_per_job_pct,
                    signed_cell(&d.jobs_per_day),
                    job.per_day()
                );
                let _ = writeln!(w, "             {}", verdict(&d, seeds, &self.no_effect));
                if let Some(line) = self.model_verdict(&d) {
                    let _ = writeln!(w, "             {line}");
                }
            }
            None => {
                let _ = writeln!(w, "difference   unknown: the two runs used different seeds");
            }
        }
        for (label, r) in [("baseline", &self.baseline), ("changed", &self.changed)] {
            for n in &r.notes {
                let _ = writeln!(w, "note         {label}: {n}");
            }
        }
        o
    }

    /// The what-if as one JSON object: each side's report and the difference.
    pub fn to_json(&self) -> Value {
        let difference = self.difference().map(|d| {
            let ci = |s: Summary| s.ci95.map_or(Value::Null, |h| json!(h));
            json!({
                "seconds_per_job": d.seconds_per_job.mean,
                "seconds_per_job_ci95": ci(d.seconds_per_job),
                "seconds_per_job_pct": d.seconds_per_job_pct,
                "jobs_per_day": d.jobs_per_day.mean,
                "jobs_per_day_ci95": ci(d.jobs_per_day),
                "resolved": d.resolved(),
                "identical": d.identical,
                "unshared_model_error": self.unshared_error.map(|e| e.exp() - 1.0),
                "resolved_beyond_model_error": self.beyond_model_error(&d),
            })
        });
        json!({
            "changes": self.changes,
            "no_effect": self.no_effect,
            "baseline": self.baseline.to_json(),
            "changed": self.changed.to_json(),
            "difference": difference,
        })
    }
}

impl WhatIf {
    /// Whether a difference the seeds resolve also exceeds the model's error that the two
    /// arms do not share; None when that error is unknown or the seeds do not resolve it.
    pub fn beyond_model_error(&self, d: &Difference) -> Option<bool> {
        let e = self.unshared_error?;
        if !d.resolved() || d.identical {
            return None;
        }
        let base = self.baseline.throughput().seconds_per_job.mean;
        let ratio = (base + d.seconds_per_job.mean) / base;
        Some(ratio.ln().abs() > e)
    }

    /// The difference against the prediction intervals: the model's error is mostly
    /// shared by the two arms (same host keys, same stage times, same rules), and only
    /// the part that grows with contention differs between them.
    fn model_verdict(&self, d: &Difference) -> Option<String> {
        let e = self.unshared_error?;
        let pct = (e.exp() - 1.0) * 100.0;
        Some(match self.beyond_model_error(d)? {
            true => format!(
                "and beyond the model's error the two arms do not share (±{pct:.1}%): resolved by the prediction intervals too"
            ),
            false => format!(
                "but within the model's error the two arms do not share (±{pct:.1}%): resolved by the seeds, not by the prediction intervals"
            ),
        })
    }
}

/// A difference at the precision of its interval, with its sign.
fn signed_cell(s: &Summary) -> String {
    s.display_signed(decimals_for(s.mean))
}

/// Faster, slower, not resolved (never a sign the replications do not settle), or
/// identical on every seed: then the change has no effect, which is no noise.
fn verdict(d: &Difference, seeds: usize, no_effect: &[String]) -> String {
    if d.identical {
        return match no_effect {
            [] => "identical on every seed: the change has no effect here (it reaches nothing \
                   this scenario simulates)"
                .to_string(),
            reasons => format!("identical on every seed: {}", reasons.join("; ")),
        };
    }
    if seeds < 2 {
        return "not resolved: one replication gives no interval; use --replications 2 or more"
            .into();
    }
    if d.resolved() {
        let way = if d.seconds_per_job.mean < 0.0 {
            "faster"
        } else {
            "slower"
        };
        format!("{way}: resolved (the 95% interval of the change excludes 0)")
    } else {
        format!(
            "not resolved: the change is within the noise of {seeds} replications (its 95% \
             interval includes 0); more --replications narrow the interval"
        )
    }
}
