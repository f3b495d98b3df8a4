//! A small driver for profilers (valgrind --tool=callgrind, perf): runs one engine
//! workload and prints events, wall time and events per second.
//!
//! ```text
//! cargo build --release --example profile_engine
//! valgrind --tool=callgrind target/release/examples/profile_engine mm16 50000
//! valgrind --tool=callgrind target/release/examples/profile_engine mm16-metrics 50000
//! valgrind --tool=callgrind target/release/examples/profile_engine c2 100 30
//! valgrind --tool=callgrind target/release/examples/profile_engine ps 50000
//! ```

use std::path::Path;
use std::time::Instant;

use bwsim::engine::{NullObserver, simulate};
use bwsim::model::*;
use bwsim::run::{RunOptions, run_model_with};

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
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map_or("mm16", String::as_str);
    let n: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let started = Instant::now();
    let events = match what {
        "mm16" => simulate(&mm16(n), &mut NullObserver).expect("runs").events,
        "mm16-metrics" => {
            let r = run_model_with(&mm16(n), RunOptions { ideal: false }, &mut NullObserver)
                .expect("runs");
            println!("mean response {:.6} s", r.response_mean_s);
            r.engine_events
        }
        "c2" => {
            let conc = args.get(3).map_or("30", String::as_str);
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/c2-32g-cuzk.toml");
            let sets = [
                format!("arrivals.jobs={n}"),
                format!("params.synthesis_concurrency={conc}"),
            ];
            let m = bwsim::scenario::load(&path, &sets).expect("loads").model;
            let r =
                run_model_with(&m, RunOptions { ideal: false }, &mut NullObserver).expect("runs");
            println!("seconds per proof {:.6}", r.seconds_per_job);
            r.engine_events
        }
        "ps" => {
            // M/M/1-PS of the peer benchmark, with metrics (what `bwsim run --no-ideal` does).
            let path =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/scenarios/ps.toml");
            let sets = [
                format!("arrivals.jobs={n}"),
                "arrivals.warmup_jobs=0".into(),
            ];
            let m = bwsim::scenario::load(&path, &sets).expect("loads").model;
            let r =
                run_model_with(&m, RunOptions { ideal: false }, &mut NullObserver).expect("runs");
            println!("mean response {:.6} s", r.response_mean_s);
            r.engine_events
        }
        other => panic!("unknown workload {other} (mm16, mm16-metrics, c2, ps)"),
    };
    let wall = started.elapsed().as_secs_f64();
    println!(
        "{what} n={n}: {events} events in {wall:.3} s, {:.0} events/s",
        events as f64 / wall
    );
}
