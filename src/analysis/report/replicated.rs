//! One answer from several replications of a run: the same scenario on consecutive
//! seeds, each an independent sample of its randomness. The report's own fields stay
//! those of the first replication (the scenario's own seed), one whole run whose numbers
//! agree with each other (jobs per hour x seconds per job = 3600, a job's response = its
//! stages' waits and runs); [`Replications`] adds the answer over all seeds, mean and
//! 95% Student t interval ([`crate::analysis::interval`]), which the throughput line
//! shows. A stall on any seed stalls the whole answer.

use super::{Report, stall_note};
use crate::analysis::interval::{Summary, summarize};

/// The replication statistics a report carries when it combines more than one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Replications {
    /// The seed of each replication, in order (the first is the report's own).
    pub seeds: Vec<u64>,
    /// Seconds per job of each replication, in seed order.
    pub seconds_per_job_by_seed: Vec<f64>,
    /// Jobs per hour of each replication, in seed order.
    pub jobs_per_hour_by_seed: Vec<f64>,
    /// Seconds per job over replications.
    pub seconds_per_job: Summary,
    /// Jobs per hour over replications (the mean of each replication's rate).
    pub jobs_per_hour: Summary,
    /// Mean response time over replications, seconds.
    pub response_mean_s: Summary,
    /// The contention-free seconds per job over replications, when computed.
    pub ideal_seconds_per_job: Option<Summary>,
    /// Each stage's mean seconds over replications, in the report's stage order: the
    /// spread that sets the stage table's precision.
    pub stage_mean_s: Vec<Summary>,
}

impl Replications {
    /// How many runs were combined.
    pub fn count(&self) -> usize {
        self.seeds.len()
    }
}

impl Report {
    /// Combines the reports of one scenario run on several seeds (the first is the
    /// scenario's own seed). One report comes back unchanged.
    ///
    /// # Panics
    /// On an empty list: a run has at least one replication.
    pub fn replicated(reports: Vec<Report>) -> Report {
        let mut all = reports.into_iter();
        let mut combined = all.next().expect("at least one replication");
        let others: Vec<Report> = all.collect();
        if others.is_empty() {
            return combined;
        }
        let runs: Vec<&Report> = std::iter::once(&combined).chain(&others).collect();
        let of = |f: fn(&Report) -> f64| -> Vec<f64> { runs.iter().map(|r| f(r)).collect() };
        let summary = |values: &[f64]| summarize(values).expect("at least one value");
        let spj = of(|r| r.seconds_per_job);
        let jph = of(|r| r.jobs_per_hour);
        let ideal: Option<Vec<f64>> = runs.iter().map(|r| r.ideal_seconds_per_job).collect();
        let stage_mean_s = (combined.stages.iter().enumerate())
            .map(|(i, stage)| {
                let by_seed: Vec<f64> = (runs.iter())
                    .filter_map(|r| r.stages.get(i).filter(|s| s.name == stage.name))
                    .map(|s| s.mean_s)
                    .filter(|x| x.is_finite())
                    .collect();
                summarize(&by_seed).unwrap_or(Summary {
                    n: 0,
                    mean: f64::NAN,
                    ci95: None,
                })
            })
            .collect();
        let replications = Replications {
            seeds: runs.iter().map(|r| r.seed).collect(),
            seconds_per_job: summary(&spj),
            jobs_per_hour: summary(&jph),
            response_mean_s: summary(&of(|r| r.response_mean_s)),
            ideal_seconds_per_job: ideal.as_deref().map(summary),
            seconds_per_job_by_seed: spj,
            jobs_per_hour_by_seed: jph,
            stage_mean_s,
        };
        // A stall on any seed makes the whole answer partial: the first one is named.
        let stalls: Vec<_> = others.iter().filter_map(|r| r.stalled).collect();
        if combined.stalled.is_none() {
            combined.stalled = stalls.first().copied();
        }
        let seed = combined.seed;
        combined
            .notes
            .extend(stalls.iter().map(|s| stall_note(s, seed)));
        combined.replications = Some(replications);
        combined
    }
}
