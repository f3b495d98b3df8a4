//! Staged pageable copies through the whole engine, with hand-computed times: alone
//! (setup + bytes at the slower of memcpy and DMA, at two sizes), next to streams that
//! saturate DRAM (the memcpy slows with loaded latency and the copy follows it), DMA
//! bound (a memcpy faster than the link leaves the copy at the link's rate), and the
//! one-rate rule unchanged when staging is off.

use crate::engine::test_model::{host_model, stage};
use crate::engine::{Observer, StageRecord, simulate};
use crate::model::*;

/// (stage, start s, end s) of every finished instance.
#[derive(Default)]
struct Ends(Vec<(usize, f64, f64)>);

impl Observer for Ends {
    fn stage_finished(&mut self, r: &StageRecord) {
        self.0
            .push((r.stage_ref.stage, r.start.as_secs(), r.end.as_secs()));
    }
}

/// A link of 50 GB/s each way, DMA factor 1, memcpy factor 2, pageable H2D staged with
/// a 10 ms setup and a memcpy of `memcpy_gbps`.
fn link(memcpy_gbps: f64) -> PcieLink {
    PcieLink {
        h2d_gbps: 50.0,
        d2h_gbps: 50.0,
        duplex_gbps: None,
        pageable_h2d_gbps: 5.0,
        pageable_d2h_gbps: 5.0,
        h2d_dram_factor: 1.0,
        d2h_dram_factor: 1.0,
        pageable_copy_dram_factor: 2.0,
        pageable_h2d_staging: Some(PageableStaging {
            setup_s: 0.01,
            memcpy_gbps,
            memcpy_pace: MemcpyPace::LatencyBound,
            latency_exponent: 1.0,
            beside_streams: None,
        }),
        pageable_d2h_staging: None,
        latency_frac: Default::default(),
    }
}

const PAGEABLE_H2D: LinkCopy = LinkCopy {
    dir: CopyDir::H2d,
    pinned: false,
};

/// A copy stage of `gb` GB as the scenario layer builds a `transfer`.
fn copy_stage(l: &PcieLink, c: LinkCopy, gb: f64) -> Stage {
    let secs = l.copy_seconds(c, gb);
    let d = l.copy_demand(c, gb / secs);
    let mut s = stage("copy", false, vec![], secs);
    s.demands = d.demands();
    s.staged_copy = l.staged_copy(c, gb, secs);
    s
}

/// Runs `stages` once on a host with `l` and DRAM latency `curve`; the copy's elapsed s.
fn copy_time(l: &PcieLink, stages: Vec<Stage>, curve: LatencyCurve) -> f64 {
    copy_time_on_pools(l, stages, curve, vec![])
}

/// [`copy_time`] on a host with thread `pools`.
fn copy_time_on_pools(
    l: &PcieLink,
    stages: Vec<Stage>,
    curve: LatencyCurve,
    pools: Vec<Pool>,
) -> f64 {
    let mut m = host_model(1, stages, 1, 1);
    m.hardware.dram.latency = curve;
    m.hardware.pools = pools;
    m.hardware.gpus = vec![Gpu {
        name: "gpu0".into(),
        vram_bytes: 1 << 30,
        link: l.clone(),
    }];
    let mut ends = Ends::default();
    simulate(&m, &mut ends).unwrap();
    let copy = m.stage_id("copy").unwrap();
    let (_, a, b) = ends.0.iter().find(|e| e.0 == copy).copied().unwrap();
    b - a
}

/// A stream wanting 150 GB/s of the 100 GB/s DRAM for far longer than the copy.
fn streams() -> Stage {
    let mut s = stage("streams", false, vec![], 100.0);
    s.demands = vec![Demand {
        target: RateTarget::Dram,
        amount: 150.0,
    }];
    s
}

#[test]
fn alone_a_staged_copy_takes_setup_plus_bytes_at_the_slower_half() {
    // Memcpy 10 GB/s behind a 50 GB/s link: 10 GB/s. 1 GB: 0.01 + 0.1 = 0.11 s
    // (9.09 GB/s); 0.1 GB: 0.01 + 0.01 = 0.02 s (5 GB/s): small copies are slower per byte.
    let l = link(10.0);
    assert_eq!(l.copy_gbps(PAGEABLE_H2D), 10.0);
    for (gb, secs) in [(1.0, 0.11), (0.1, 0.02)] {
        let t = copy_time(
            &l,
            vec![copy_stage(&l, PAGEABLE_H2D, gb)],
            LatencyCurve::flat(),
        );
        assert!((t - secs).abs() < 1e-6, "{gb} GB: {t} s");
    }
}

#[test]
fn next_to_saturating_streams_the_memcpy_slows_with_latency_and_the_copy_follows() {
    // L = 100 + 100u: the stream saturates DRAM (u = 1), latency doubles, so the
    // latency-bound memcpy keeps its lines in flight and moves half as fast: 5 GB/s.
    // The 1 GB copy takes its unshared setup plus the bytes at 5 GB/s: 0.01 + 0.2 s.
    // (Its 15 GB/s of DRAM is below the max-min share, so latency, not bandwidth, binds.)
    let l = link(10.0);
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
    let t = copy_time(
        &l,
        vec![streams(), copy_stage(&l, PAGEABLE_H2D, 1.0)],
        curve.clone(),
    );
    assert!((t - 0.21).abs() < 1e-6, "{t} s");
    // A posted memcpy (D2H-like) does not wait on latency: its max-min share of DRAM
    // (27.3 GB/s asked of the 50 it could get beside one stream) leaves it at full speed.
    let mut posted = l.clone();
    posted.pageable_h2d_staging.as_mut().unwrap().memcpy_pace = MemcpyPace::Posted;
    let t = copy_time(
        &posted,
        vec![streams(), copy_stage(&posted, PAGEABLE_H2D, 1.0)],
        curve,
    );
    assert!((t - 0.11).abs() < 1e-6, "{t} s");
}

#[test]
fn a_steeper_memcpy_slows_as_the_latency_ratio_to_its_exponent() {
    // As above, latency doubles next to the saturating stream. With exponent 2 the
    // memcpy runs at 10 / 2^2 = 2.5 GB/s: 0.01 + 1 GB / 2.5 = 0.41 s. (Its DRAM draw,
    // 7.5 GB/s, stays below its share, so latency still binds.)
    let mut l = link(10.0);
    l.pageable_h2d_staging.as_mut().unwrap().latency_exponent = 2.0;
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
    let t = copy_time(
        &l,
        vec![streams(), copy_stage(&l, PAGEABLE_H2D, 1.0)],
        curve,
    );
    assert!((t - 0.41).abs() < 1e-6, "{t} s");
    // Alone on a flat curve it is the same copy as with exponent 1.
    let t = copy_time(
        &l,
        vec![copy_stage(&l, PAGEABLE_H2D, 1.0)],
        LatencyCurve::flat(),
    );
    assert!((t - 0.11).abs() < 1e-6, "{t} s");
}

#[test]
fn next_to_many_streams_a_staged_copy_gets_its_max_min_share() {
    // Flat latency; three streams wanting 150 GB/s each and the copy (1 GB over 0.11 s:
    // 27.27 GB/s of DRAM at 3 bytes per byte) share 100 GB/s max-min: 25 each. The copy
    // runs at 25 / 27.27 = 0.9167 of standalone: 0.11 / 0.9167 = 0.12 s. (The filling
    // spreads the setup over the call, so the bytes alone set the time: 3 GB / 25.)
    let l = link(10.0);
    let t = copy_time(
        &l,
        vec![
            streams(),
            streams(),
            streams(),
            copy_stage(&l, PAGEABLE_H2D, 1.0),
        ],
        LatencyCurve::flat(),
    );
    assert!((t - 0.12).abs() < 1e-6, "{t} s");
}

#[test]
fn a_memcpy_faster_than_the_link_leaves_the_copy_dma_bound() {
    // Memcpy 80 GB/s behind a 50 GB/s link: the copy streams at 50 (1 GB: 0.01 + 0.02 s).
    // Its DRAM factors are set to 0 so that only the pace is at play, not the DRAM share.
    // Next to the saturating stream latency doubles; the memcpy can still do 40 GB/s,
    // below the link's 50, so the copy streams at 40: 0.01 + 1/40 = 0.035 s. A memcpy of
    // 120 GB/s still does 60 at double latency: the copy keeps the link's rate, 0.03 s.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
    for (memcpy, loaded) in [(80.0, 0.035), (120.0, 0.03)] {
        let mut l = link(memcpy);
        l.h2d_dram_factor = 0.0;
        l.pageable_copy_dram_factor = 0.0;
        assert_eq!(l.copy_gbps(PAGEABLE_H2D), 50.0);
        let c = copy_stage(&l, PAGEABLE_H2D, 1.0);
        let t = copy_time(&l, vec![c.clone()], LatencyCurve::flat());
        assert!((t - 0.03).abs() < 1e-6, "{memcpy}: {t} s alone");
        let t = copy_time(&l, vec![streams(), c], curve.clone());
        assert!((t - loaded).abs() < 1e-6, "{memcpy}: {t} s loaded");
    }
}

#[test]
fn without_staging_a_pageable_copy_keeps_the_one_rate_rule() {
    // Staging off: the pageable rate (5 GB/s), no setup, no pacing: 1 GB in 0.2 s,
    // drawing 5 GB/s of the link and 15 of DRAM (DMA 1 + memcpy 2 bytes per byte).
    let mut l = link(10.0);
    l.pageable_h2d_staging = None;
    assert_eq!(l.copy_gbps(PAGEABLE_H2D), 5.0);
    assert_eq!(l.copy_seconds(PAGEABLE_H2D, 1.0), 1.0 / 5.0);
    assert_eq!(l.staged_copy(PAGEABLE_H2D, 1.0, 0.2), None);
    let d = l.copy_demand(PAGEABLE_H2D, 5.0);
    assert_eq!((d.link_gbps, d.dram_gbps), (5.0, 15.0));
    let t = copy_time(
        &l,
        vec![copy_stage(&l, PAGEABLE_H2D, 1.0)],
        LatencyCurve::flat(),
    );
    assert!((t - 0.2).abs() < 1e-6, "{t} s");
    // A pinned copy never stages, whatever the link says.
    let pinned = LinkCopy {
        pinned: true,
        ..PAGEABLE_H2D
    };
    assert_eq!(link(10.0).staged_copy(pinned, 1.0, 0.02), None);
    assert_eq!(link(10.0).copy_gbps(pinned), 50.0);
}

const PAGEABLE_D2H: LinkCopy = LinkCopy {
    dir: CopyDir::D2h,
    pinned: false,
};

/// `n` one-thread streams on pool 0, each drawing 5 GB/s of DRAM for far longer than
/// the copy.
fn pool_streams(n: usize) -> Vec<Stage> {
    (0..n)
        .map(|i| {
            let mut s = stage(&format!("stream{i}"), false, vec![], 100.0);
            s.demands = vec![
                Demand {
                    target: RateTarget::Pool(0),
                    amount: 1.0,
                },
                Demand {
                    target: RateTarget::Dram,
                    amount: 5.0,
                },
            ];
            s
        })
        .collect()
}

#[test]
fn a_memcpy_paced_by_its_neighbours_slows_by_the_streams_beside_it_not_by_latency() {
    // D2H staged: 10 ms setup, memcpy 10 GB/s, its rate 0.8 of alone with half a
    // streaming thread per CPU beside it (linear from 1 at none, flat beyond). On a
    // 4-CPU pool: 1 GB alone 0.01 + 0.1 = 0.11 s; next to one stream (0.25 per CPU,
    // ratio 0.9) 0.01 + 1 / 9 = 0.12111 s; next to two (0.5, 0.8) 0.01 + 1 / 8 =
    // 0.135 s; next to three (0.75, flat 0.8) the same. The curve L = 100 + 100u would
    // slow a latency-bound memcpy at these loads (15-45 GB/s of 100); this one ignores it.
    let mut l = link(10.0);
    l.pageable_d2h_staging = Some(PageableStaging {
        setup_s: 0.01,
        memcpy_gbps: 10.0,
        memcpy_pace: MemcpyPace::BesideStreams,
        latency_exponent: 1.0,
        beside_streams: StreamNeighbourCurve::new(&[(0.5, 0.8)]),
    });
    // Whichever way the pool is shared, its streaming threads count.
    let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
    let cases = [(0, 0.11), (1, 0.01 + 1.0 / 9.0), (2, 0.135), (3, 0.135)];
    for ((n, secs), sharing) in (cases.into_iter())
        .flat_map(|c| [(c, PoolSharing::PerThread), (c, PoolSharing::ByActivity)])
    {
        let mut stages = pool_streams(n);
        stages.push(copy_stage(&l, PAGEABLE_D2H, 1.0));
        let pool = Pool {
            name: "cpu".into(),
            threads: 4.0,
            sharing,
            cpu: None,
        };
        let t = copy_time_on_pools(&l, stages, curve.clone(), vec![pool]);
        assert!((t - secs).abs() < 1e-6, "{n} streams, {sharing:?}: {t} s");
    }
}

#[test]
fn a_neighbour_curve_is_linear_from_one_and_flat_past_its_last_point() {
    let c = StreamNeighbourCurve::new(&[(0.25, 0.9), (0.75, 0.7)]).unwrap();
    for (x, r) in [
        (0.0, 1.0),
        (0.125, 0.95),
        (0.5, 0.8),
        (0.75, 0.7),
        (2.0, 0.7),
    ] {
        assert!((c.ratio_at(x) - r).abs() < 1e-12, "{x}: {}", c.ratio_at(x));
    }
    assert_eq!(StreamNeighbourCurve::new(&[]), None);
    assert_eq!(StreamNeighbourCurve::new(&[(0.5, 0.8), (0.25, 0.9)]), None);
    assert_eq!(StreamNeighbourCurve::new(&[(0.5, 1.2)]), None);
    assert_eq!(StreamNeighbourCurve::new(&[(0.0, 0.9)]), None);
    assert_eq!(StreamNeighbourCurve::new(&[(0.1, 0.9); 9]), None);
}
