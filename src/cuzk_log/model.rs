//! The scenario beside a log: run it and read its own TIMELINE log back as a real one
//! ([`simulate`]), at the log's concurrency ([`model_concurrency`]), and fit its
//! durations until the model's medians match the log's ([`fit`], the loop itself in
//! [`super::correct`]).

use std::path::{Path, PathBuf};

use super::against;
use super::correct::{FitStart, correct_durations};
use super::fit::{Fitted, fit_targets};
use super::{AnalyseOptions, LogAnalysis, LogInputError, ParsedLog, WorkerLayout, analyse};
use crate::engine::EngineError;
use crate::run::{RunOptions, run_model_with};
use crate::scenario::{Loaded, ScenarioError};
use crate::trace::{TraceRecorder, log_text};

/// Why the scenario could not be run or fitted beside a log.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The scenario (with the `--set`s and the fitted values) does not load.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The engine refused or failed the run.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The log and the scenario rule the fit out.
    #[error(transparent)]
    Input(#[from] LogInputError),
    /// The model's jobs were left waiting on holds nobody releases.
    #[error("{}: the model stalled: {why}", scenario.display())]
    Stalled {
        /// The scenario file.
        scenario: PathBuf,
        /// The engine's account of the stall.
        why: String,
    },
}

/// Workers per GPU: `flag` (`--gpu-workers-per-device`), else the scenario's
/// `params.gpu_workers_per_device`, else cuzk's default (the log's own worker lines,
/// when present, win over the last two in the analysis).
pub fn worker_layout(flag: Option<u32>, scenario: Option<&Loaded>) -> WorkerLayout {
    if let Some(n) = flag {
        return WorkerLayout {
            per_gpu: n,
            source: "--gpu-workers-per-device".into(),
            explicit: true,
        };
    }
    let from_scenario = scenario.and_then(|l| {
        let p = l
            .params
            .iter()
            .find(|p| p.name == "gpu_workers_per_device")?;
        let n = p.value.as_integer().filter(|n| (1..=1024).contains(n))?;
        Some(WorkerLayout {
            per_gpu: n as u32,
            source: format!("{} params.gpu_workers_per_device", l.source.display()),
            explicit: false,
        })
    });
    from_scenario.unwrap_or_default()
}

/// The `--set`s the model runs with, its closed-loop concurrency and how it was chosen:
/// the user's `--set arrivals.concurrency` when given, else the log's median in flight.
pub fn model_concurrency(
    user_sets: &[String],
    loaded: &Loaded,
    log: &LogAnalysis,
) -> (Vec<String>, usize, &'static str) {
    let user_set = user_sets.iter().any(|s| {
        s.split_once('=')
            .is_some_and(|(k, _)| k.trim() == "arrivals.concurrency")
    });
    if user_set {
        let n = match loaded.model.arrivals.kind {
            crate::model::ArrivalKind::Closed { concurrency } => concurrency as usize,
            _ => 0,
        };
        return (user_sets.to_vec(), n, against::CONCURRENCY_SET);
    }
    let n = log.jobs_in_flight.median.max(1);
    let mut sets = user_sets.to_vec();
    sets.push(format!("arrivals.concurrency={n}"));
    (sets, n, against::CONCURRENCY_RULE)
}

/// Runs the scenario, writes its TIMELINE log in memory and analyses it as a real one
/// (warm-up: the scenario's own).
pub fn simulate(scenario: &Path, sets: &[String]) -> Result<LogAnalysis, ModelError> {
    let loaded = crate::scenario::load(scenario, sets)?;
    let model = loaded.model;
    let mut rec = TraceRecorder::new(&model);
    let report = run_model_with(&model, RunOptions { ideal: false }, &mut rec)?;
    if let Some(why) = report.stall() {
        return Err(ModelError::Stalled {
            scenario: scenario.to_path_buf(),
            why: why.to_string(),
        });
    }
    let mut log = ParsedLog::default();
    log.add_text("model", &log_text(&rec));
    Ok(analyse(
        &log,
        &AnalyseOptions {
            warmup_jobs: model.arrivals.warmup_jobs as usize,
            workers: WorkerLayout::default(),
        },
    ))
}

/// Corrects each fittable duration by log p50 / model p50 until they agree.
pub fn fit(
    scenario: &Path,
    sets: &[String],
    real: &LogAnalysis,
) -> Result<Vec<Fitted>, ModelError> {
    let doc = crate::scenario::include::load_file(scenario)?;
    let loaded = crate::scenario::load(scenario, sets)?;
    let targets: Vec<FitStart> = fit_targets(&doc.table)
        .into_iter()
        .filter_map(|t| {
            let p = loaded.params.iter().find(|p| p.name == t.param)?;
            let v = p
                .value
                .as_float()
                .or(p.value.as_integer().map(|i| i as f64))?;
            let observed = t.observable.p50_ms(real)?;
            Some((t, v, observed))
        })
        .filter(|(_, _, observed)| *observed > 0.0)
        .collect();
    if targets.is_empty() {
        return Err(LogInputError::NothingToFit {
            scenario: scenario.to_path_buf(),
        }
        .into());
    }
    let params: Vec<String> = targets.iter().map(|t| t.0.param.clone()).collect();
    let observables: Vec<_> = targets.iter().map(|t| t.0.observable.clone()).collect();
    correct_durations(targets, |values| {
        let mut s = sets.to_vec();
        s.extend(
            params
                .iter()
                .zip(values)
                .map(|(p, v)| format!("params.{p}={v}")),
        );
        let model = simulate(scenario, &s)?;
        Ok(observables
            .iter()
            .map(|o| o.p50_ms(&model).unwrap_or(f64::NAN))
            .collect())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(name)
    }

    #[test]
    fn the_model_read_as_a_log_sees_its_own_stages_and_concurrency() {
        let demo = scenario("demo.toml");
        let a = simulate(&demo, &[]).unwrap();
        assert!(a.gpus >= 1);
        let loaded = crate::scenario::load(&demo, &[]).unwrap();
        // The log's median in flight becomes the model's concurrency unless set.
        let (sets, n, rule) = model_concurrency(&[], &loaded, &a);
        assert_eq!(sets, [format!("arrivals.concurrency={n}")]);
        assert_eq!(rule, against::CONCURRENCY_RULE);
        let given = ["arrivals.concurrency=3".to_string()];
        let loaded3 = crate::scenario::load(&demo, &given).unwrap();
        assert_eq!(
            model_concurrency(&given, &loaded3, &a),
            (given.to_vec(), 3, against::CONCURRENCY_SET)
        );
    }

    #[test]
    fn the_worker_layout_is_the_flag_else_the_scenarios_knob_else_cuzks_default() {
        let c2 = crate::scenario::load(&scenario("c2-32g-cuzk.toml"), &[]).unwrap();
        let flag = worker_layout(Some(3), Some(&c2));
        assert_eq!((flag.per_gpu, flag.explicit), (3, true));
        let knob = worker_layout(None, Some(&c2));
        assert!(knob.source.ends_with("params.gpu_workers_per_device"));
        assert!(!knob.explicit);
        assert_eq!(worker_layout(None, None), WorkerLayout::default());
    }

    #[test]
    fn a_scenario_with_nothing_the_log_observes_cannot_be_fitted() {
        let demo = scenario("demo.toml");
        let real = simulate(&demo, &[]).unwrap();
        let e = fit(&demo, &[], &real).unwrap_err();
        assert!(
            matches!(e, ModelError::Input(LogInputError::NothingToFit { .. })),
            "{e}"
        );
    }

    #[test]
    fn a_stalled_model_is_named_with_its_scenario() {
        // Two jobs each grab one of their two partitions' 40 GiB of 100 and wait forever
        // for the second: a cross-job deadlock.
        let text = r#"seed = 3
[hardware]
cpu_cores = 8
host_ram_gib = 100
[workload]
partitions = 2
[[workload.stages]]
name = "prep"
duration = { dist = "exponential", mean_s = 1.0 }
cores = 1
[[workload.stages]]
name = "synth"
after = ["prep"]
duration_s = 1.0
cores = 1
holds = [{ resource = "host_ram", gib = 40, until = "finalize" }]
[[workload.stages]]
name = "finalize"
after = ["synth"]
per_partition = false
duration_s = 0.1
[arrivals]
kind = "closed"
concurrency = 2
jobs = 100
"#;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("deadlock.toml");
        std::fs::write(&file, text).unwrap();
        match simulate(&file, &[]) {
            Err(e @ ModelError::Stalled { .. }) => {
                assert!(
                    e.to_string()
                        .starts_with(&format!("{}: the model stalled: ", file.display()))
                );
            }
            other => panic!("{:?}", other.map(|a| a.gpus)),
        }
    }
}
