//! The bare engine on M/M/16 (no metrics, no scenario files), for profilers: it builds
//! with the engine crate alone, in seconds, so a change can be measured quickly.
//!
//! ```text
//! cargo build --release -p bwsim-engine --example bare_mm16
//! valgrind --tool=callgrind target/release/examples/bare_mm16 50000
//! ```

use std::time::Instant;

use bwsim_engine::engine::{NullObserver, simulate};
use bwsim_engine::model::*;

/// M/M/16 at rho = 0.9 (a lock of 16 held by an exponential stage, mean 1 s).
fn mm16(jobs: u64) -> Model {
    Model {
        name: "mm16".into(),
        seed: 1,
        hardware: Hardware {
            cpu_cores: 16,
            host_ram_bytes: 1 << 30,
            dram: Dram {
                capacity_gbps: 100.0,
                latency: LatencyCurve::flat(),
                efficiency_loss_per_stream: 0.0,
                sharing: Default::default(),
            },
            gpus: vec![],
            locks: vec![Lock {
                name: "server".into(),
                capacity: 16,
                per_gpu: false,
            }],
            pools: vec![],
        },
        workload: Workload {
            job_name: "job".into(),
            partitions: 1,
            stages: vec![Stage {
                name: "service".into(),
                per_partition: false,
                after: vec![],
                duration: Duration::Exponential { mean_s: 1.0 },
                holds: vec![Hold {
                    resource: HoldResource::Lock(0),
                    amount: 1,
                    until: 0,
                }],
                demands: vec![],
                latency_bound_frac: 0.0,
                compute_bound_frac: 0.0,
                dram_write_frac: None,
                host_thread: None,
                cpu_load: None,
                gpu_kernel: false,
                staged_copy: None,
            }],
        },
        arrivals: Arrivals {
            kind: ArrivalKind::Poisson { rate_per_s: 14.4 },
            jobs,
            warmup_jobs: jobs / 10,
        },
        instrumentation: Instrumentation::default(),
    }
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let model = mm16(n);
    let started = Instant::now();
    let summary = simulate(&model, &mut NullObserver).expect("runs");
    let wall = started.elapsed().as_secs_f64();
    println!(
        "mm16 n={n}: {} events in {wall:.3} s, {:.0} events/s, end {}",
        summary.events,
        summary.events as f64 / wall,
        summary.end
    );
}
