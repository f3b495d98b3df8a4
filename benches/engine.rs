//! Engine benchmarks (issue 6): the bare event loop, the fluid solver as the number of
//! concurrent activities grows, the C2 reference scenario, and a parallel sweep.
//!
//! `cargo bench --bench engine` runs them all in a few minutes on two cores; pass a
//! filter (`cargo bench --bench engine -- solver`) to run one group. Throughputs are in
//! engine events (arrivals and completions, as `engine.events` counts them) per second.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration as StdDuration;

use bwsim::engine::solver::{ClassDemand, ClassKey, FixedPoint, SharedRounds, Solution, System};
use bwsim::engine::{NullObserver, simulate};
use bwsim::model::*;
use bwsim::run::{RunOptions, run_model_with};
use bwsim::sweep::{
    Grid, Progress, ProgressMode, RunOptions as SweepRunOptions, ScenarioSimulator, Simulator,
    parse_param, run_sweep,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// A host with plenty of cores and RAM, DRAM of `dram_gbps` and no GPU.
fn host(dram_gbps: f64) -> Hardware {
    Hardware {
        cpu_cores: 1024,
        host_ram_bytes: 1 << 40,
        dram: Dram {
            capacity_gbps: dram_gbps,
            latency: LatencyCurve::flat(),
            efficiency_loss_per_stream: 0.0,
            sharing: Default::default(),
        },
        gpus: vec![],
        locks: vec![],
        pools: vec![],
    }
}

fn stage(name: &str, duration: Duration) -> Stage {
    Stage {
        name: name.into(),
        per_partition: false,
        after: vec![],
        duration,
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

fn model(name: &str, hardware: Hardware, stages: Vec<Stage>, arrivals: Arrivals) -> Model {
    Model {
        name: name.into(),
        seed: 1,
        hardware,
        workload: Workload {
            job_name: "job".into(),
            partitions: 1,
            stages,
        },
        arrivals,
        instrumentation: Instrumentation::default(),
    }
}

/// M/M/16 at rho = 0.9: a lock of 16 servers held by one exponential stage (mean 1 s),
/// Poisson arrivals at 14.4/s.
fn mm16(jobs: u64) -> Model {
    let mut hw = host(100.0);
    hw.locks.push(Lock {
        name: "server".into(),
        capacity: 16,
        per_gpu: false,
    });
    let mut s = stage("service", Duration::Exponential { mean_s: 1.0 });
    s.holds.push(Hold {
        resource: HoldResource::Lock(0),
        amount: 1,
        until: 0,
    });
    let arrivals = Arrivals {
        kind: ArrivalKind::Poisson { rate_per_s: 14.4 },
        jobs,
        warmup_jobs: jobs / 10,
    };
    model("mm16", hw, vec![s], arrivals)
}

/// A host with one GPU on a 50 GB/s link and 250 GB/s of DRAM with a loaded-latency curve.
fn gpu_host() -> Hardware {
    let mut hw = host(250.0);
    hw.dram.latency =
        LatencyCurve::new(vec![(0.0, 100.0), (0.7, 140.0), (0.9, 250.0), (1.0, 500.0)])
            .expect("valid curve");
    hw.gpus.push(Gpu {
        name: "gpu0".into(),
        vram_bytes: 16 << 30,
        link: PcieLink {
            h2d_gbps: 50.0,
            d2h_gbps: 50.0,
            duplex_gbps: None,
            pageable_h2d_gbps: 6.0,
            pageable_d2h_gbps: 6.0,
            h2d_dram_factor: 1.0,
            d2h_dram_factor: 1.0,
            pageable_copy_dram_factor: 2.0,
            pageable_h2d_staging: None,
            pageable_d2h_staging: None,
            latency_frac: Default::default(),
        },
    });
    hw
}

/// k activities in flight sharing DRAM and PCIe: a closed loop of k jobs, each one stage
/// drawing 20 GB/s of DRAM and 2 GB/s of PCIe H2D, 30% latency bound, with uniformly
/// random standalone times, so they start and finish at random moments. Identical
/// activities form one class in the engine.
fn solver_same(k: u32) -> Model {
    let mut s = stage(
        "copy",
        Duration::Uniform {
            min_s: 0.5,
            max_s: 1.5,
        },
    );
    s.demands = vec![
        Demand {
            target: RateTarget::Dram,
            amount: 20.0,
        },
        Demand {
            target: RateTarget::PcieH2d,
            amount: 2.0,
        },
    ];
    s.latency_bound_frac = 0.3;
    let jobs = 20_000u64.max(4 * k as u64);
    let arrivals = Arrivals {
        kind: ArrivalKind::Closed { concurrency: k },
        jobs,
        warmup_jobs: 0,
    };
    model("solver_same", gpu_host(), vec![s], arrivals)
}

/// As [`solver_same`] but heterogeneous: each job is a chain of 64 stages with different
/// DRAM, PCIe and latency shares, so up to min(k, 64) distinct classes run at once and
/// the solver really has that many variables.
fn solver_mixed(k: u32) -> Model {
    let stages = (0..64)
        .map(|i| {
            let mut s = stage(
                &format!("s{i}"),
                Duration::Exponential {
                    mean_s: 0.05 + 0.001 * i as f64,
                },
            );
            s.demands.push(Demand {
                target: RateTarget::Dram,
                amount: 4.0 + i as f64,
            });
            if i % 2 == 0 {
                s.demands.push(Demand {
                    target: RateTarget::PcieH2d,
                    amount: 1.0 + (i % 7) as f64,
                });
            }
            s.latency_bound_frac = (i % 5) as f64 * 0.1;
            if i > 0 {
                s.after = vec![i - 1];
            }
            s
        })
        .collect();
    let jobs = (2 * k as u64).max(400);
    let arrivals = Arrivals {
        kind: ArrivalKind::Closed { concurrency: k },
        jobs,
        warmup_jobs: 0,
    };
    model("solver_mixed", gpu_host(), stages, arrivals)
}

fn events(m: &Model) -> u64 {
    simulate(m, &mut NullObserver).expect("runs").events
}

fn event_loop(c: &mut Criterion) {
    let m = mm16(1_000_000);
    let n = events(&m);
    let mut g = c.benchmark_group("event_loop");
    g.sample_size(10)
        .warm_up_time(StdDuration::from_secs(1))
        .measurement_time(StdDuration::from_secs(5))
        .throughput(Throughput::Elements(n));
    // The bare engine, no observer.
    g.bench_function("mm16_1e6_jobs", |b| {
        b.iter(|| simulate(black_box(&m), &mut NullObserver).expect("runs"))
    });
    // What `bwsim run --no-ideal` does: engine + streaming metrics + report.
    g.bench_function("mm16_1e6_jobs_with_metrics", |b| {
        b.iter(|| {
            run_model_with(
                black_box(&m),
                RunOptions { ideal: false },
                &mut NullObserver,
            )
            .expect("runs")
        })
    });
    g.finish();
}

fn solver(c: &mut Criterion) {
    for (name, build) in [
        ("solver_same", solver_same as fn(u32) -> Model),
        ("solver_mixed64", solver_mixed),
    ] {
        let mut g = c.benchmark_group(name);
        g.sample_size(10)
            .warm_up_time(StdDuration::from_millis(500))
            .measurement_time(StdDuration::from_secs(2));
        for k in [1u32, 8, 32, 128, 512] {
            let m = build(k);
            g.throughput(Throughput::Elements(events(&m)));
            g.bench_with_input(BenchmarkId::from_parameter(k), &m, |b, m| {
                b.iter(|| simulate(m, &mut NullObserver).expect("runs"))
            });
        }
        g.finish();
    }
}

/// The sharing solver alone: one solve (progressive filling inside the latency fixed
/// point, its fillings sharing rounds) over k distinct running classes on DRAM (250 GB/s) and PCIe (50 GB/s), with no
/// memo and no event loop around it: how the raw cost grows with the number of variables.
fn solver_raw(c: &mut Criterion) {
    let curve = gpu_host().dram.latency;
    let capacities = [250.0, 50.0];
    let mut g = c.benchmark_group("solver_raw");
    g.sample_size(20)
        .warm_up_time(StdDuration::from_millis(300))
        .measurement_time(StdDuration::from_secs(1));
    for k in [1usize, 8, 32, 128, 512] {
        let classes: Vec<ClassDemand> = (0..k)
            .map(|i| {
                let mut weights = vec![(0, 4.0 + (i % 50) as f64)];
                if i % 2 == 0 {
                    weights.push((1, 1.0 + (i % 7) as f64));
                }
                ClassKey {
                    weights,
                    latency_frac: (i % 5) as f64 * 0.1,
                    ..Default::default()
                }
                .demand(1)
            })
            .collect();
        let mut solver = FixedPoint::<SharedRounds>::default();
        let mut out = Solution::default();
        g.bench_with_input(BenchmarkId::from_parameter(k), &classes, |b, classes| {
            b.iter(|| {
                let system = System {
                    capacities: &capacities,
                    dram: 0,
                    curve: &curve,
                    pools: &[],
                    classes: black_box(classes),
                };
                solver.solve(&system, &mut out);
                out.speeds[0].speed
            })
        });
    }
    g.finish();
}

fn c2_model(sets: &[String]) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/c2-32g-cuzk.toml");
    bwsim::scenario::load(&path, sets)
        .expect("C2 scenario loads")
        .model
}

fn c2(c: &mut Criterion) {
    let m = c2_model(&[
        "arrivals.jobs=1000".into(),
        "params.synthesis_concurrency=30".into(),
    ]);
    let mut g = c.benchmark_group("c2");
    g.sample_size(10)
        .warm_up_time(StdDuration::from_secs(1))
        .measurement_time(StdDuration::from_secs(5))
        .throughput(Throughput::Elements(events(&m)));
    g.bench_function("1000_proofs_c30", |b| {
        b.iter(|| {
            run_model_with(
                black_box(&m),
                RunOptions { ideal: false },
                &mut NullObserver,
            )
            .expect("runs")
        })
    });
    g.finish();
}

/// `bwsim sweep` in miniature: the sweep module's runner over 32 points
/// (synthesis_concurrency 1..=32) x 3 seeds of the C2 scenario, 100 proofs each, each
/// run with its contention-free ideal as the CLI does, on 1 and on 2 worker threads.
/// Models are loaded once (the simulator caches them per point), so this times the runs.
fn sweep(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/c2-32g-cuzk.toml");
    let sim = ScenarioSimulator::new(&path);
    let grid = Grid::new(vec![
        parse_param("params.synthesis_concurrency=1..32").expect("valid spec"),
    ])
    .expect("valid grid");
    assert_eq!(grid.len(), 32);
    let mut g = c.benchmark_group("sweep_c2_32x3");
    g.sample_size(10)
        .warm_up_time(StdDuration::from_secs(1))
        .measurement_time(StdDuration::from_secs(10));
    for threads in [1usize, 2] {
        let opts = SweepRunOptions {
            seeds: 3,
            base_seed: 1,
            jobs: threads,
            base_sets: vec!["arrivals.jobs=100".into()],
        };
        g.bench_with_input(BenchmarkId::new("threads", threads), &opts, |b, opts| {
            b.iter(|| {
                let progress = Progress::new(grid.len(), ProgressMode::Hidden);
                run_sweep(
                    &grid,
                    opts,
                    &|sets: &[String], seed| sim.run(sets, seed),
                    &progress,
                    &[],
                    &|_| Ok(()),
                )
                .expect("sweep runs")
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    // No plots: the report's PDF backend needs fonts that headless machines lack.
    config = Criterion::default().without_plots();
    targets = event_loop, solver, solver_raw, c2, sweep
}
criterion_main!(benches);
