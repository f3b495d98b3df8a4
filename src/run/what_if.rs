//! Quick what-ifs for the bottleneck (`bwsim run` makes them after the run itself): the model with one step more of one resource
//! ([`stepped`]), simulated with the same seed, for every candidate
//! ([`crate::analysis::knob::Resource`]).

use super::{RunOptions, run_model_within};
use crate::analysis::knob::{Knobs, Resource, STEP_FACTOR};
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
/// `base_seconds_per_job`.
pub fn what_ifs(
    model: &Model,
    base_seconds_per_job: f64,
    limits: EngineLimits,
) -> Result<Knobs, EngineError> {
    let mut results = Vec::new();
    for resource in Resource::ALL {
        let Some(m) = stepped(model, resource) else {
            continue;
        };
        let opts = RunOptions { ideal: false };
        let r = run_model_within(&m, opts, limits, &mut NullObserver)?;
        results.push((resource, r.seconds_per_job));
    }
    Ok(Knobs::new(base_seconds_per_job, results))
}
