//! One simulation run, end to end: engine + metrics -> [`Report`]; [`replications`]
//! runs it on several seeds at once and combines them.

pub mod replications;

pub use replications::{Replicas, run_replications};

use std::time::Instant;

use crate::analysis::metrics::Metrics;
use crate::analysis::report::Report;
use crate::engine::{EngineError, EngineLimits, Observer, Tee, simulate_with};
use crate::model::{LatencyCurve, Model};

pub mod what_if;

/// Options for [`run_model_with`].
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Also simulate the contention-free counterfactual for `ideal.seconds_per_job`.
    pub ideal: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self { ideal: true }
    }
}

/// Runs a model and reports (with the contention-free ideal).
pub fn run_model(model: &Model) -> Result<Report, EngineError> {
    run_model_with(
        model,
        RunOptions::default(),
        &mut crate::engine::NullObserver,
    )
}

/// Runs a model, feeding `extra` (e.g. a trace recorder) the same events as the metrics.
pub fn run_model_with<O: Observer>(
    model: &Model,
    opts: RunOptions,
    extra: &mut O,
) -> Result<Report, EngineError> {
    run_model_within(model, opts, EngineLimits::default(), extra)
}

/// As [`run_model_with`], stopping with [`EngineError::EventLimit`] past `limits` (each
/// of the two runs, the ideal one included).
pub fn run_model_within<O: Observer>(
    model: &Model,
    opts: RunOptions,
    limits: EngineLimits,
    extra: &mut O,
) -> Result<Report, EngineError> {
    // The contention-free run shares nothing with the main one: it runs beside it, on its
    // own thread (the main run stays on this one, with the caller's observer).
    std::thread::scope(|scope| {
        let ideal = (opts.ideal).then(|| scope.spawn(|| ideal_seconds_per_job(model, limits)));
        let mut metrics = Metrics::new(model);
        let started = Instant::now();
        let summary = simulate_with(model, &mut Tee(&mut metrics, extra), limits)?;
        let wall = started.elapsed().as_secs_f64();
        let mut report = Report::build(model, &metrics.finish(&summary), wall);
        if let Some(ideal) = ideal {
            let seconds = ideal
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            report.ideal_seconds_per_job = Some(seconds?);
        }
        Ok(report)
    })
}

/// The same model with DRAM, PCIe and thread pools uncontended (capacities far beyond any
/// demand, flat latency, and every thread computing as fast as alone on its core): what the
/// pipeline would do if only its holds, locks and dependencies limited it.
pub fn uncontended(model: &Model) -> Model {
    let mut m = model.clone();
    let huge = 1e15;
    m.hardware.dram.capacity_gbps = huge;
    m.hardware.dram.latency = LatencyCurve::flat();
    for p in &mut m.hardware.pools {
        p.threads = huge;
        // Threads slowed by siblings and all-core frequency are contending for cores.
        p.cpu = None;
    }
    for g in &mut m.hardware.gpus {
        g.link.h2d_gbps = huge;
        g.link.d2h_gbps = huge;
        g.link.duplex_gbps = None;
    }
    m
}

fn ideal_seconds_per_job(model: &Model, limits: EngineLimits) -> Result<f64, EngineError> {
    let m = uncontended(model);
    let mut metrics = Metrics::new(&m);
    let summary = simulate_with(&m, &mut metrics, limits)?;
    let r = Report::build(&m, &metrics.finish(&summary), 0.0);
    Ok(r.seconds_per_job)
}
