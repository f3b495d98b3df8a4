//! A scenario run on several consecutive seeds in parallel, combined into one report
//! with 95% intervals ([`Report::replicated`]).
//!
//! Replication `i` uses seed `seed + i` (wrapping), so replication 0 is the scenario's
//! own run and any replication is re-run alone with `bwsim run --seed`. Each seed gives
//! the same result whatever the thread count or scheduling.

use rayon::prelude::*;

use super::{RunOptions, run_model_within};
use crate::analysis::report::Report;
use crate::engine::{EngineError, EngineLimits, NullObserver, Observer};
use crate::model::Model;

/// How many runs make an answer, and how they are seeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replicas {
    /// Runs, at least 1.
    pub count: usize,
}

impl Replicas {
    /// The seeds of the replications of a model seeded `seed`.
    pub fn seeds(&self, seed: u64) -> Vec<u64> {
        (0..self.count as u64)
            .map(|i| seed.wrapping_add(i))
            .collect()
    }
}

/// The model's report over `replicas` seeds; `extra` (a trace recorder) observes the
/// first replication only, the scenario's own seed.
pub fn run_replications<O: Observer + Send>(
    model: &Model,
    replicas: Replicas,
    opts: RunOptions,
    limits: EngineLimits,
    extra: &mut O,
) -> Result<Report, EngineError> {
    let seeds = replicas.seeds(model.seed);
    let (first, rest) = rayon::join(
        || run_model_within(model, opts, limits, extra),
        || {
            (seeds[1..].par_iter())
                .map(|&seed| {
                    let mut m = model.clone();
                    m.seed = seed;
                    run_model_within(&m, opts, limits, &mut NullObserver)
                })
                .collect::<Result<Vec<_>, _>>()
        },
    );
    let mut reports = vec![first?];
    reports.extend(rest?);
    Ok(Report::replicated(reports))
}
