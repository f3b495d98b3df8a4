//! A small model for the engine's unit tests: one host without GPUs, stages added by
//! the test.

use crate::engine::{Observer, Scope, StageRecord};
use crate::model::*;

/// A host with 4 cores, a 100 GB/s flat-latency DRAM, one lock and no GPUs, running
/// `jobs` jobs of `partitions` partitions in a closed loop of `concurrency`.
pub(super) fn host_model(
    partitions: u32,
    stages: Vec<Stage>,
    jobs: u64,
    concurrency: u32,
) -> Model {
    Model {
        name: "test".into(),
        seed: 1,
        hardware: Hardware {
            cpu_cores: 4,
            host_ram_bytes: 1 << 30,
            dram: Dram {
                capacity_gbps: 100.0,
                latency: LatencyCurve::flat(),
                efficiency_loss_per_stream: 0.0,
                sharing: Default::default(),
            },
            gpus: vec![],
            locks: vec![Lock {
                name: "lock:l".into(),
                capacity: 1,
                per_gpu: false,
            }],
            pools: vec![],
        },
        workload: Workload {
            job_name: "job".into(),
            partitions,
            stages,
        },
        arrivals: Arrivals {
            kind: ArrivalKind::Closed { concurrency },
            jobs,
            warmup_jobs: 0,
        },
        instrumentation: Instrumentation::default(),
    }
}

/// A stage of fixed duration with no demands or holds.
pub(super) fn stage(name: &str, per_partition: bool, after: Vec<StageId>, secs: f64) -> Stage {
    Stage {
        name: name.into(),
        per_partition,
        after,
        duration: Duration::Fixed(secs),
        holds: vec![],
        demands: vec![],
        latency_bound_frac: 0.0,
        compute_bound_frac: 0.0,
        dram_write_frac: None,
        host_thread: None,
        cpu_load: None,
        gpu_kernel: false,
        staged_copy: None,
    }
}

/// (job, scope, stage, start s, end s) of every finished instance, in order.
#[derive(Default)]
pub(super) struct Finished(pub Vec<(u64, Scope, usize, f64, f64)>);

impl Observer for Finished {
    fn stage_finished(&mut self, r: &StageRecord) {
        let s = r.stage_ref;
        self.0
            .push((s.job, s.scope, s.stage, r.start.as_secs(), r.end.as_secs()));
    }
}
