//! Quick what-ifs for the bottleneck (`bwsim run` makes them after the run itself): the model with one step more of one resource
//! ([`stepped`]), simulated with the same seed, for every candidate
//! ([`crate::analysis::knob::Resource`]).

use super::{RunOptions, run_model_within};
use crate::analysis::knob::{FailedStep, Knobs, Resource, STEP_FACTOR};
use crate::engine::{EngineError, EngineLimits, NullObserver};
use crate::model::Model;

fn more(x: f64) -> f64 {
    x * STEP_FACTOR
}

fn more_u32(x: u32) -> u32 {
    (x as f64 * STEP_FACTOR).round().max(x as f64 + 1.0) as u32
}

/// `model` with one step more of `resource`; None when the model has none of it (no GPU,
/// no DRAM bandwidth modelled, no thread pool).
pub fn stepped(model: &Model, resource: Resource) -> Option<Model> {
    let mut m = model.clone();
    let hw = &mut m.hardware;
    match resource {
        Resource::Threads => {
            if hw.pools.is_empty() && hw.cpu_cores == 0 {
                return None;
            }
            hw.cpu_cores = more_u32(hw.cpu_cores);
            for p in &mut hw.pools {
                p.threads = more(p.threads);
                if let Some(cpu) = &mut p.cpu {
                    cpu.physical_cores = more_u32(cpu.physical_cores);
                }
            }
        }
        Resource::HostRam => {
            hw.host_ram_bytes = (hw.host_ram_bytes as f64 * STEP_FACTOR) as u64;
        }
        Resource::Dram => {
            if !hw.dram.capacity_gbps.is_finite() {
                return None;
            }
            hw.dram.capacity_gbps = more(hw.dram.capacity_gbps);
        }
        Resource::Pcie => {
            if hw.gpus.is_empty() {
                return None;
            }
            for g in &mut hw.gpus {
                let l = &mut g.link;
                l.h2d_gbps = more(l.h2d_gbps);
                l.d2h_gbps = more(l.d2h_gbps);
                l.duplex_gbps = l.duplex_gbps.map(more);
                l.pageable_h2d_gbps = more(l.pageable_h2d_gbps);
                l.pageable_d2h_gbps = more(l.pageable_d2h_gbps);
            }
        }
        Resource::Gpus => {
            let mut gpu = hw.gpus.last()?.clone();
            gpu.name = format!("gpu{}", hw.gpus.len());
            hw.gpus.push(gpu);
        }
    }
    Some(m)
}

/// Simulates every candidate's step (no ideal run) and compares each with
/// `base_seconds_per_job`. A step whose run fails is that step's failure, kept with its
/// reason; the others and the base answer stand.
pub fn what_ifs(model: &Model, base_seconds_per_job: f64, limits: EngineLimits) -> Knobs {
    let mut results = Vec::new();
    let mut failed = Vec::new();
    for resource in Resource::ALL {
        let Some(m) = stepped(model, resource) else {
            continue;
        };
        let opts = RunOptions { ideal: false };
        match run_model_within(&m, opts, limits, &mut NullObserver) {
            Ok(r) => results.push((resource, r.seconds_per_job)),
            Err(e) => failed.push(FailedStep {
                resource,
                reason: e.to_string(),
            }),
        }
    }
    let mut knobs = Knobs::new(base_seconds_per_job, results);
    knobs.failed = failed;
    knobs
}

/// The what-if steps of `model` run on its seed, against its own run: the bottleneck as
/// `run` names it, for callers that have no report at hand (`compare`'s best setting).
pub fn what_ifs_of(model: &Model, limits: EngineLimits) -> Result<Knobs, EngineError> {
    let base = run_model_within(
        model,
        RunOptions { ideal: false },
        limits,
        &mut NullObserver,
    )?;
    Ok(what_ifs(model, base.seconds_per_job, limits))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::analysis::report::Report;

    #[test]
    fn a_failing_step_is_that_steps_failure_and_the_others_stand() {
        let model = crate::scenario::load(Path::new("scenarios/demo.toml"), &[])
            .unwrap()
            .model;
        // Enough events for no step's run: every step fails on its own, none aborts.
        let tight = EngineLimits { max_events: 10 };
        let knobs = what_ifs(&model, 1.0, tight);
        assert!(knobs.what_ifs.is_empty(), "{knobs:?}");
        let stepped: Vec<Resource> = knobs.failed.iter().map(|f| f.resource).collect();
        assert_eq!(stepped, Resource::ALL, "{knobs:?}");
        assert!(
            knobs.failed[0].reason.contains("limit of 10 events"),
            "{knobs:?}"
        );
        // The report prints each failed step on its own line.
        let mut report = crate::run::run_model(&model).unwrap();
        report.knobs = Some(knobs);
        let text = Report::to_text(&report);
        assert!(
            text.contains("GPUs              +1  failed: the run passed its limit"),
            "{text}"
        );
        // With room to run, no step fails.
        let ok = what_ifs(&model, report.seconds_per_job, EngineLimits::default());
        assert!(ok.failed.is_empty() && ok.what_ifs.len() == Resource::ALL.len());
    }
}
