//! The caps' tests: each writes the system and the speeds it must give, then asserts.

use super::system::{ClassDemand, ClassSpeed, CpuLoadKey, PoolRule, System};
use super::test_support::{class, pool_rule, solve, solved, system};
use crate::engine::ids::{Limiter, RateId};
use crate::model::{CpuThroughput, LatencyCurve, MemcpyPace, StagedCopy};

/// The plain solve's speeds of `classes` on `caps` (DRAM first) with the pool rules
/// `pools`.
fn speeds(
    pools: &[PoolRule],
    caps: &[f64],
    curve: &LatencyCurve,
    classes: &[ClassDemand],
) -> Vec<ClassSpeed> {
    solved(&System {
        pools,
        ..system(caps, classes, curve)
    })
    .speeds
}

/// Pool (resource 1) of 16 CPUs, per thread: a kernel (GPU share on resource 2) with
/// the curve (0, 1) (0.5, 1.2) (1, 2.0) whose host side keeps `threads` CPUs busy,
/// 12 one-thread streams, and a driver whose host thread needs a CPU half its time.
fn kernel_streams_driver(threads: f64) -> [ClassDemand; 3] {
    let mut kernel = class(1, &[(2, 0.5)], 0.0);
    kernel.key.cpu_load = Some(CpuLoadKey {
        pools: vec![1],
        stretch: vec![(0.0, 1.0), (0.5, 1.2), (1.0, 2.0)],
        threads,
        by_neighbour: Default::default(),
    });
    let mut driver = class(1, &[(2, 0.1)], 0.0);
    driver.key.host_frac = 0.5;
    driver.key.host_pool = 1;
    [kernel, class(12, &[(1, 1.0)], 0.0), driver]
}

#[test]
fn a_kernel_stretches_by_its_cpu_load_curve_at_the_pools_runnable_threads() {
    // The pool holds 12.5 runnable threads, 0.78125 per CPU, so the kernel takes
    // 1.2 + 0.8 x (0.78125 - 0.5) / 0.5 = 1.65 its time.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 100.0)]).unwrap();
    let classes = kernel_streams_driver(0.0);
    let [kernel, streams, _] = classes.clone();
    let s = pool_rule(true, None);
    let mut out;
    out = speeds(&s, &[1000.0, 16.0, 1.0], &curve, &classes);
    assert!((out[0].speed - 1.0 / 1.65).abs() < 1e-12, "{out:?}");
    assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
    // Alone, or past the last point, it reads the curve's ends.
    out = speeds(
        &s,
        &[1000.0, 16.0, 1.0],
        &curve,
        std::slice::from_ref(&kernel),
    );
    assert_eq!(out[0].speed, 1.0);
    let mut many = streams;
    many.count = 40;
    out = speeds(&s, &[1000.0, 16.0, 1.0], &curve, &[kernel, many]);
    assert!((out[0].speed - 0.5).abs() < 1e-12, "{out:?}");
}

#[test]
fn a_kernels_stretch_scales_by_what_its_neighbours_do() {
    // As above, but the 12 workers are mostly latency bound (0.7) and draw on DRAM
    // (resource 0): 8.4 chasing and 3.6 streaming threads, beside the driver's 0.5
    // spinning. Ratios: chasing 0.5, streaming 2 (flat). The curve's excess 0.65 at
    // 0.78125 scales by (0.5 x 1 + 3.6 x 2 + 8.4 x 0.5) / 12.5 = 0.952: 1.6188.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 100.0)]).unwrap();
    let [mut kernel, _, driver] = kernel_streams_driver(0.0);
    let ratios = &mut kernel.key.cpu_load.as_mut().unwrap().by_neighbour;
    ratios.chasing = vec![(0.0, 0.5)];
    ratios.streaming = vec![(0.0, 2.0)];
    let workers = class(12, &[(0, 1.0), (1, 1.0)], 0.7);
    let s = pool_rule(true, None);
    let mut out;
    let caps = [1000.0, 16.0, 1.0];
    out = speeds(
        &s,
        &caps,
        &curve,
        &[kernel.clone(), workers.clone(), driver],
    );
    let want = 1.0 + 0.65 * (0.5 + 3.6 * 2.0 + 8.4 * 0.5) / 12.5;
    assert!((out[0].speed - 1.0 / want).abs() < 1e-12, "{out:?}");
    // Workers that draw no DRAM spin for their unbound share: 8.4 chasing, 3.6
    // spinning, ratio (4.1 + 4.2) / 12.5 = 0.664.
    let cpu_only = class(12, &[(1, 1.0)], 0.7);
    let driver = kernel_streams_driver(0.0)[2].clone();
    out = speeds(&s, &caps, &curve, &[kernel, cpu_only, driver]);
    let want = 1.0 + 0.65 * (0.5 + 3.6 + 8.4 * 0.5) / 12.5;
    assert!((out[0].speed - 1.0 / want).abs() < 1e-12, "{out:?}");
}

#[test]
fn the_cpus_a_kernels_host_side_keeps_busy_load_the_pool_for_the_others() {
    // The kernel's host side keeps 4 CPUs busy: the pool holds 12 + 4 + 0.5 = 16.5
    // runnable threads. The driver's host share waits 16.5/16: speed
    // 1 / (0.5 + 0.5 x 1.03125) = 0.984615. The kernel reads its curve without its
    // own 4: 12.5/16 = 0.78125, stretch 1.65 as without them.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 100.0)]).unwrap();
    let classes = kernel_streams_driver(4.0);
    let s = pool_rule(true, None);
    let mut out;
    out = speeds(&s, &[1000.0, 16.0, 1.0], &curve, &classes);
    assert!((out[0].speed - 1.0 / 1.65).abs() < 1e-12, "{out:?}");
    assert!(
        (out[2].speed - 1.0 / (0.5 + 0.5 * 16.5 / 16.0)).abs() < 1e-12,
        "{out:?}"
    );
    // Without the kernel the pool holds 12.5 threads and the driver never waits.
    let [_, streams, driver] = classes;
    out = speeds(&s, &[1000.0, 16.0, 1.0], &curve, &[streams, driver]);
    assert_eq!(out[1].speed, 1.0);
}

#[test]
fn little_law_bound_slows_a_stream_as_its_own_latency_rises() {
    // One thread keeps enough lines in flight for 20 GB/s at the idle 100 ns
    // (line bound 20 x 100). L(u) = 100 + 200u, capacity 100. At the fixed point
    // speed = 100 / L and u = 20 speed / 100, so 200u^2 + 100u - 20 = 0:
    // u = (-100 + sqrt(26000)) / 400 = 0.153113, speed = 100 / (100 + 200u) = 0.765564.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
    let mut c = class(1, &[(0, 20.0)], 0.0);
    c.key.line_bound = 20.0 * 100.0;
    let s = solve(&[100.0], &[c.clone()], &curve);
    let out = s.speeds.clone();
    let u = (-100.0 + 26000.0_f64.sqrt()) / 400.0;
    assert!((s.dram_utilisation - u).abs() < 1e-8, "{s:?}");
    assert!(
        (out[0].speed - 100.0 / (100.0 + 200.0 * u)).abs() < 1e-8,
        "{out:?}"
    );
    assert_eq!(out[0].limiter, Some(Limiter::DramLatency));
    // Twice the lines in flight: alone it streams half its time (its 20 GB/s of a
    // 40 GB/s bound at 100 ns), and that half waits on latency: speed
    // 1 / (0.5 + 0.5 L/100) = 1 / (1 + u) with u = 0.2 speed, so
    // 0.2 speed^2 + speed - 1 = 0: speed = (-1 + sqrt(1.8)) / 0.4 = 0.854102. (The
    // bound itself, 40 x 100 / (L x 20) = 1.49 at that load, does not bind.)
    c.key.line_bound = 40.0 * 100.0;
    let s = solve(&[100.0], &[c], &curve);
    let out = s.speeds.clone();
    let speed = (-1.0 + 1.8_f64.sqrt()) / 0.4;
    assert!((out[0].speed - speed).abs() < 1e-8, "{out:?}");
    assert!((s.dram_utilisation - 0.2 * speed).abs() < 1e-8, "{s:?}");
}

#[test]
fn staged_copy_is_capped_by_its_memcpy_at_the_loaded_latency() {
    // DRAM 100 (0), PCIe 50 (1), L = 100 + 100u. A stream wants 150: u = 1, latency
    // doubles. A staged copy streaming 10 GB/s (30 of DRAM), memcpy-bound (headroom 1),
    // setup a tenth of its time: streaming part at 1/2, speed 1 / (0.1 + 0.9 x 2) =
    // 0.526316; it draws 15.789 of DRAM and the stream the rest, 84.21 of 150.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
    let mut copy = class(1, &[(0, 30.0), (1, 10.0)], 0.0);
    copy.key.staging = Some(StagedCopy {
        setup_frac: 0.1,
        memcpy_headroom: 1.0,
        memcpy_pace: MemcpyPace::LatencyBound,
        latency_exponent: 1.0,
        beside_streams: None,
    });
    let stream = class(1, &[(0, 150.0)], 0.0);
    let s = solve(&[100.0, 50.0], &[copy.clone(), stream.clone()], &curve);
    let out = s.speeds.clone();
    let speed = 1.0 / (0.1 + 0.9 * 2.0);
    assert!((out[0].speed - speed).abs() < 1e-9, "{out:?}");
    assert_eq!(out[0].limiter, Some(Limiter::DramLatency));
    assert!(
        (out[1].speed * 150.0 - (100.0 - 30.0 * speed)).abs() < 1e-6,
        "{out:?}"
    );
    assert!((s.latency_slowdown - 2.0).abs() < 1e-9);
    // Posted stores do not wait on latency: the copy keeps its standalone speed.
    copy.key.staging.as_mut().unwrap().memcpy_pace = MemcpyPace::Posted;
    let out = solve(&[100.0, 50.0], &[copy, stream], &curve).speeds;
    assert_eq!(out[0].speed, 1.0);
}

#[test]
fn a_slowed_thread_on_an_oversubscribed_pool_also_waits_for_its_cpu() {
    // Pool of 16 CPUs, per thread (CFS), per-core throughput 1.0 alone falling to 0.8
    // with 16 cores active. 32 one-thread compute-bound activities: each runs at 0.8
    // of its speed alone while it has a CPU, and has one half the time: 0.4 (the pool
    // share alone gave 0.5, the cores alone 0.8). 12 of them fit on the CPUs and
    // wait for none: 12 active cores give each 1 - 0.2 x 11/15 = 0.853333.
    let cpu = CpuThroughput {
        physical_cores: 16,
        threads_per_core: 1,
        smt_yield: 1.0,
        per_core: vec![(1.0, 1.0), (16.0, 0.8)],
    };
    let mut busy = class(32, &[(1, 1.0)], 0.0);
    busy.key.compute_frac = 1.0;
    let s = pool_rule(true, Some(cpu));
    let mut out;
    let flat = LatencyCurve::flat();
    out = speeds(&s, &[100.0, 16.0], &flat, &[busy.clone()]);
    assert!((out[0].speed - 0.4).abs() < 1e-12, "{out:?}");
    assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
    busy.count = 12;
    out = speeds(&s, &[100.0, 16.0], &flat, &[busy]);
    let p12 = 1.0 - 0.2 * 11.0 / 15.0;
    assert!((out[0].speed - p12).abs() < 1e-12, "{out:?}");
    // Nothing slows it but the pool: the pool's share, as before.
    let plain = class(32, &[(1, 1.0)], 0.0);
    out = speeds(&s, &[100.0, 16.0], &flat, &[plain]);
    assert!((out[0].speed - 0.5).abs() < 1e-12, "{out:?}");
}

#[test]
fn compute_bound_share_slows_with_the_per_thread_throughput() {
    // Pool of 16 threads, no SMT, per-core throughput 1.0 with 1 core active falling
    // linearly to 0.8 with 16. A one-thread stage entirely compute bound beside a
    // 7-thread stage half compute bound: 8 threads active, per_thread(8) =
    // 1 - 0.2 x 7/15 = 0.906667. The one-thread stage ran alone at 1.0, so it runs
    // at 0.906667. The 7-thread one ran alone at per_thread(7) = 0.92: its compute
    // half is 0.92/0.906667 = 1.014706 slower, speed 1/(0.5 + 0.5 x 1.014706) = 0.992701.
    let cpu = CpuThroughput {
        physical_cores: 16,
        threads_per_core: 1,
        smt_yield: 1.0,
        per_core: vec![(1.0, 1.0), (16.0, 0.8)],
    };
    let mut one = class(1, &[(1, 1.0)], 0.0);
    one.key.compute_frac = 1.0;
    let mut seven = class(1, &[(1, 7.0)], 0.0);
    seven.key.compute_frac = 0.5;
    let mut out;
    let s = pool_rule(false, Some(cpu));
    out = speeds(
        &s,
        &[100.0, 16.0],
        &LatencyCurve::flat(),
        &[one.clone(), seven],
    );
    let p8 = 1.0 - 0.2 * 7.0 / 15.0;
    assert!((out[0].speed - p8).abs() < 1e-9, "{out:?}");
    let slow = (1.0 - 0.2 * 6.0 / 15.0) / p8;
    assert!(
        (out[1].speed - 1.0 / (0.5 + 0.5 * slow)).abs() < 1e-9,
        "{out:?}"
    );
    assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
    // Alone, it runs at standalone speed.
    out = speeds(&s, &[100.0, 16.0], &LatencyCurve::flat(), &[one]);
    assert_eq!(out[0].speed, 1.0);
}
