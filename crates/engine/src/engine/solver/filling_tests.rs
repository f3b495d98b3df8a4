//! Tests of progressive filling: water-filling on one resource, the DRAM policies, pools.

use super::system::System;
use super::test_support::{class, pool_rule, solve, solved, system, with_policy};
use crate::engine::ids::{Limiter, RateId};
use crate::model::{DramPolicy, LatencyCurve};

#[test]
fn equal_streams_split_capacity_evenly() {
    // 5 streams wanting 100 GB/s each on 200 GB/s: 40 GB/s each, speed 0.4.
    let s = solve(
        &[200.0],
        &[class(5, &[(0, 100.0)], 0.0)],
        &LatencyCurve::flat(),
    );
    let out = &s.speeds;
    assert!((out[0].speed - 0.4).abs() < 1e-12);
    assert!((s.usage[0] - 200.0).abs() < 1e-9);
    assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(0))));
}

#[test]
fn unequal_demands_water_fill() {
    // Demands 10, 50, 100 on capacity 100: 10 served fully, the rest split 45/45.
    let classes = [
        class(1, &[(0, 10.0)], 0.0),
        class(1, &[(0, 50.0)], 0.0),
        class(1, &[(0, 100.0)], 0.0),
    ];
    let s = solve(&[100.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    assert!((out[0].speed - 1.0).abs() < 1e-12);
    assert_eq!(out[0].limiter, None);
    assert!((out[1].speed * 50.0 - 45.0).abs() < 1e-9);
    assert!((out[2].speed * 100.0 - 45.0).abs() < 1e-9);
}

#[test]
fn flow_crossing_two_resources_is_held_to_the_tighter() {
    // Resource 0 (DRAM) 300, resource 1 (PCIe) 50. A copy wants 60 on both: PCIe
    // limits it to 50. A DRAM-only stream wanting 300 gets the remaining 250.
    let classes = [
        class(1, &[(0, 60.0), (1, 60.0)], 0.0),
        class(1, &[(0, 300.0)], 0.0),
    ];
    let s = solve(&[300.0, 50.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    assert!((out[0].speed * 60.0 - 50.0).abs() < 1e-9);
    assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
    assert!((out[1].speed * 300.0 - 250.0).abs() < 1e-9);
    assert!((s.usage[0] - 300.0).abs() < 1e-9);
}

#[test]
fn small_task_on_a_pool_is_not_starved_by_a_wide_one() {
    // Pool of 32 threads (resource 1) and DRAM (resource 0). A one-thread pre-pass that
    // streams 5 GB/s and a 32-thread MSM drawing 1 GB/s: thread-fair on the pool, the
    // pre-pass keeps its thread and the MSM gets the other 31.
    let classes = [
        class(1, &[(0, 5.0), (1, 1.0)], 0.0),
        class(1, &[(0, 1.0), (1, 32.0)], 0.0),
    ];
    let s = solve(&[250.0, 32.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    assert_eq!(out[0].speed, 1.0);
    assert!((out[1].speed - 31.0 / 32.0).abs() < 1e-9, "{out:?}");
}

#[test]
fn never_faster_than_standalone() {
    let s = solve(
        &[1000.0],
        &[class(3, &[(0, 10.0)], 0.0)],
        &LatencyCurve::flat(),
    );
    let out = &s.speeds;
    assert_eq!(out[0].speed, 1.0);
    assert!((s.usage[0] - 30.0).abs() < 1e-12);
}

#[test]
fn classes_without_demands_run_at_full_speed() {
    let s = solve(&[10.0], &[class(7, &[], 0.0)], &LatencyCurve::flat());
    let out = &s.speeds;
    assert_eq!(out[0].speed, 1.0);
}

#[test]
fn priority_dma_is_served_first_and_streams_share_the_rest() {
    // DRAM 100 (resource 0), PCIe D2H 50 (resource 1). A D2H DMA moving 50 GB/s
    // writes 60 GB/s of DRAM (factor 1.2) with priority; a stream wants 80. The DMA
    // is held only by its link (speed 1, 60 of DRAM); the stream gets the 40 left:
    // speed 40/80 = 0.5.
    let classes = [
        with_policy(class(1, &[(0, 60.0), (1, 50.0)], 0.0), DramPolicy::Priority),
        class(1, &[(0, 80.0)], 0.0),
    ];
    let s = solve(&[100.0, 50.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    assert!((out[0].speed - 1.0).abs() < 1e-9, "{out:?}");
    assert!((out[1].speed - 0.5).abs() < 1e-9, "{out:?}");
    assert_eq!(out[1].limiter, Some(Limiter::Rate(RateId::from_index(0))));
    assert!((s.usage[0] - 100.0).abs() < 1e-9);
    // Max-min instead: the DMA's rate level is in PCIe GB/s (phi 50), the
    // stream's in DRAM GB/s (phi 80); both rise to lambda with 60/50 + 80/80 per unit
    // on DRAM: lambda = 100 / 2.2, so the DMA slows to 45.45/50 = 0.909.
    let max_min = [class(1, &[(0, 60.0), (1, 50.0)], 0.0), classes[1].clone()];
    let s = solve(&[100.0, 50.0], &max_min, &LatencyCurve::flat());
    let out = &s.speeds;
    assert!(
        (out[0].speed - (100.0 / 2.2) / 50.0).abs() < 1e-9,
        "{out:?}"
    );
}

#[test]
fn priority_dmas_that_would_fill_dram_leave_the_streams_a_quarter() {
    // Two GPUs download at once: each D2H DMA moves 55 GB/s on its own link and
    // writes 1.96 x 55 = 107.8 GB/s of DRAM (216 of 199). A stream wants 120. Served
    // first without bound the DMAs would take all 199 and stop the stream; the
    // priority pass takes at most 3/4 (149.25, 74.6 each: speed 0.692) and the
    // stream gets the quarter left (49.75 of its 120).
    let dma = |link| {
        with_policy(
            class(1, &[(0, 107.8), (link, 55.0)], 0.0),
            DramPolicy::Priority,
        )
    };
    let classes = [dma(1), dma(2), class(1, &[(0, 120.0)], 0.0)];
    let s = solve(&[199.0, 55.0, 55.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    let dma_speed = 0.75 * 199.0 / 2.0 / 107.8;
    assert!((out[0].speed - dma_speed).abs() < 1e-9, "{out:?}");
    assert!((out[1].speed - dma_speed).abs() < 1e-9, "{out:?}");
    assert!(
        (out[2].speed * 120.0 - 0.25 * 199.0).abs() < 1e-9,
        "{out:?}"
    );
    assert!((s.usage[0] - 199.0).abs() < 1e-9);
    // A stream that wants less than the quarter leaves the rest to the DMAs: they
    // take it in the last pass (199 - 30 = 169, 84.5 each).
    let small = [dma(1), dma(2), class(1, &[(0, 30.0)], 0.0)];
    let s = solve(&[199.0, 55.0, 55.0], &small, &LatencyCurve::flat());
    let out = &s.speeds;
    assert_eq!(out[2].speed, 1.0, "{out:?}");
    assert!((out[0].speed * 107.8 - 84.5).abs() < 1e-9, "{out:?}");
    assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(0))));
}

#[test]
fn a_priority_dma_does_not_starve_a_copy_on_its_link() {
    // A pinned D2H DMA (priority) and a pageable copy paced by its memcpy (max-min)
    // on one 50 GB/s link, DRAM idle: the DMA takes 3/4 of the link first, the copy
    // the quarter it wants at most, and the DMA nothing more (the copy wants 20).
    let classes = [
        with_policy(class(1, &[(0, 50.0), (1, 50.0)], 0.0), DramPolicy::Priority),
        class(1, &[(0, 40.0), (1, 20.0)], 0.0),
    ];
    let s = solve(&[1000.0, 50.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    assert!((out[0].speed - 0.75).abs() < 1e-9, "{out:?}");
    assert!((out[1].speed - 12.5 / 20.0).abs() < 1e-9, "{out:?}");
}

#[test]
fn proportional_dma_slows_by_the_same_fraction_as_the_streams() {
    // DRAM 100, PCIe H2D 55. A pinned H2D DMA moving 55 GB/s reads 60 GB/s of DRAM;
    // a stream wants 90. Demand 150 on 100: both run at 100/150 = 2/3 (DMA 36.7 GB/s
    // on the link, 40 of DRAM; stream 60).
    let classes = [
        with_policy(
            class(1, &[(0, 60.0), (1, 55.0)], 0.0),
            DramPolicy::Proportional,
        ),
        class(1, &[(0, 90.0)], 0.0),
    ];
    let s = solve(&[100.0, 55.0], &classes, &LatencyCurve::flat());
    let out = &s.speeds;
    assert!((out[0].speed - 2.0 / 3.0).abs() < 1e-9, "{out:?}");
    assert!((out[1].speed - 2.0 / 3.0).abs() < 1e-9, "{out:?}");
    assert!((s.usage[0] - 100.0).abs() < 1e-9);
    // Without streams a proportional DMA runs as fast as its link allows.
    let s = solve(&[100.0, 55.0], &classes[..1], &LatencyCurve::flat());
    let out = &s.speeds;
    assert_eq!(out[0].speed, 1.0);
}

#[test]
fn per_thread_pool_slows_every_stage_by_the_same_fraction() {
    // DRAM (0) idle, a pool of 16 threads (1). A 16-thread, a 1-thread and a 4-thread
    // stage want 21 threads. Per thread (CFS): each thread gets 16/21, so every stage
    // runs at 16/21 = 0.761905. By activity: the 1- and 4-thread stages keep
    // their threads (rate level 4 < 11) and the wide one gets the 11 left: 11/16.
    let classes = [
        class(1, &[(1, 16.0)], 0.0),
        class(1, &[(1, 1.0)], 0.0),
        class(1, &[(1, 4.0)], 0.0),
    ];
    let (caps, flat) = ([100.0, 16.0], LatencyCurve::flat());
    let pools = pool_rule(true, None);
    let s = solved(&System {
        pools: &pools,
        ..system(&caps, &classes, &flat)
    });
    for o in &s.speeds {
        assert!((o.speed - 16.0 / 21.0).abs() < 1e-9, "{:?}", s.speeds);
    }
    assert!((s.usage[1] - 16.0).abs() < 1e-9);
    let s = solve(&caps, &classes, &flat);
    let out = &s.speeds;
    assert_eq!(out[1].speed, 1.0);
    assert_eq!(out[2].speed, 1.0);
    assert!((out[0].speed - 11.0 / 16.0).abs() < 1e-9, "{out:?}");
}
