//! The solver against a plain progressive filling that shares no work between the
//! fillings of a solve (every round computed, every resource's draw summed in every
//! filling): the same bits on random hosts and classes.

use super::test_support::{XorShift, random_class, random_curve};
use super::*;
use crate::engine::observer::{Limiter, RateId};
use crate::model::{CpuThroughput, DramPolicy, LatencyCurve, MemcpyPace, StagedCopy};

/// The plain filling: every round from the start, all draws summed.
fn plain_fill(
    s: &mut Solver,
    capacities: &[f64],
    dram: usize,
    classes: &[ClassDemand],
    curve: &LatencyCurve,
    u: f64,
    out: &mut Vec<ClassSpeed>,
) {
    let nr = capacities.len();
    let (slowdown, latency_ns) = if s.fixed_cap.iter().all(Option::is_some) {
        (1.0, 0.0)
    } else {
        let at = curve.latency_ns_mix(u, s.write_frac);
        (at / s.idle_ns, at)
    };
    let mut frozen_load = vec![0.0; nr];
    s.usage.clear();
    s.usage.resize(nr, 0.0);
    let (mut caps, mut cap_level) = (Vec::new(), Vec::new());
    out.clear();
    for (i, c) in classes.iter().enumerate() {
        let cap = match s.fixed_cap[i] {
            Some(cap) => cap,
            None => s.cap_of(i, c, dram, slowdown, latency_ns),
        };
        caps.push(cap.speed);
        cap_level.push(cap.speed * s.scale[i]);
        out.push(cap);
    }
    let phases = if s.priority.is_empty() { 1 } else { 3 };
    let range = |s: &Solver, i: usize| {
        let (a, b) = s.flat_range[i];
        s.flat[a as usize..b as usize].to_vec()
    };
    // The priority pass sees PRIORITY_SHARE of what the others draw on too.
    let mut bounded = vec![false; nr];
    for &i in &s.rest {
        for w in range(s, i) {
            bounded[w.r] = true;
        }
    }
    let mut again = Vec::new();
    for phase in 0..phases {
        let mut active = if phases == 1 {
            s.base_active.clone()
        } else if phase == 0 {
            s.priority.clone()
        } else if phase == 1 {
            s.rest.clone()
        } else {
            for &i in &again {
                for w in range(s, i) {
                    frozen_load[w.r] -= w.load * out[i].speed;
                }
            }
            std::mem::take(&mut again)
        };
        let phase_caps: Vec<f64> = (capacities.iter().zip(&bounded))
            .map(|(&c, &b)| {
                if phases > 1 && phase == 0 && b {
                    c * PRIORITY_SHARE
                } else {
                    c
                }
            })
            .collect();
        while !active.is_empty() {
            let mut slope = vec![0.0; nr];
            for &i in &active {
                for w in range(s, i) {
                    slope[w.r] += w.slope;
                }
            }
            let mut lambda = f64::INFINITY;
            let mut room = Vec::new();
            for ((&cap, &load), &slope) in phase_caps.iter().zip(&frozen_load).zip(&slope) {
                let l = if slope > 0.0 {
                    let l = (cap - load).max(0.0) / slope;
                    lambda = lambda.min(l);
                    l
                } else {
                    f64::INFINITY
                };
                room.push(l);
            }
            for &i in &active {
                lambda = lambda.min(cap_level[i]);
            }
            let level = lambda * (1.0 + 1e-9);
            let saturated: Vec<bool> = (slope.iter().zip(&room))
                .map(|(&slope, &room)| slope > 0.0 && room <= level)
                .collect();
            let mut still = Vec::new();
            for &i in &active {
                let at_cap = cap_level[i] <= level;
                let draws = range(s, i);
                let on_saturated = draws.iter().find(|w| saturated[w.r]);
                if at_cap || on_saturated.is_some() {
                    let speed = if at_cap {
                        caps[i]
                    } else {
                        (lambda / s.scale[i]).min(caps[i])
                    };
                    let limiter = match on_saturated {
                        Some(w) if !at_cap => Some(Limiter::Rate(RateId::from_index(w.r))),
                        _ => out[i].limiter,
                    };
                    out[i] = ClassSpeed { speed, limiter };
                    for w in &draws {
                        frozen_load[w.r] += w.load * speed;
                    }
                    if phases > 1
                        && phase == 0
                        && !at_cap
                        && on_saturated.is_some_and(|w| bounded[w.r])
                    {
                        again.push(i);
                    }
                } else {
                    still.push(i);
                }
            }
            if still.len() == active.len() {
                for &i in &still {
                    let speed = (lambda / s.scale[i]).min(caps[i]);
                    out[i].speed = speed;
                    for w in range(s, i) {
                        frozen_load[w.r] += w.load * speed;
                    }
                }
                still.clear();
            }
            active = still;
        }
    }
    s.offered = 0.0;
    for (i, c) in classes.iter().enumerate() {
        if c.count == 0 {
            continue;
        }
        for w in range(s, i) {
            s.usage[w.r] += w.load * out[i].speed;
            if w.r == dram {
                let offered = if out[i].limiter == Some(Limiter::Rate(RateId::from_index(dram))) {
                    caps[i]
                } else {
                    out[i].speed
                };
                s.offered += w.load * offered;
            }
        }
    }
}

/// The plain solve, over [`plain_fill`].
fn plain_solve(
    s: &mut Solver,
    capacities: &[f64],
    dram: usize,
    curve: &LatencyCurve,
    classes: &[ClassDemand],
    out: &mut Vec<ClassSpeed>,
) {
    s.prepare(capacities, dram, curve, classes);
    let latency_sensitive = classes.iter().any(|c| {
        c.count > 0 && (c.key.latency_frac > 0.0 || c.key.line_bound > 0.0 || c.key.paced())
    });
    if !latency_sensitive || capacities[dram] <= 0.0 {
        plain_fill(s, capacities, dram, classes, curve, 0.0, out);
        s.finish(capacities, dram, curve);
        return;
    }
    let offered = curve.by_offered_load();
    let h = |u: f64, s: &mut Solver, out: &mut Vec<ClassSpeed>| {
        plain_fill(s, capacities, dram, classes, curve, u, out);
        let load = if offered { s.offered } else { s.usage[dram] };
        load / capacities[dram] - u
    };
    let (a, mut b) = (0.0_f64, 1.0_f64);
    let ha = h(a, s, out);
    if ha <= 0.0 {
        s.finish(capacities, dram, curve);
        return;
    }
    if offered {
        b = ha;
    }
    let hb = h(b, s, out);
    if hb >= 0.0 {
        s.finish(capacities, dram, curve);
        return;
    }
    super::fixed_point::illinois(a, b, ha, hb, |u| h(u, s, out));
    s.finish(capacities, dram, curve);
}

/// A random host (1-5 resources, DRAM first, a pool last with or without per-thread
/// sharing and core throughput), latency curve and 1-8 classes mixing latency-bound,
/// line-bound, compute-bound, host-thread and staged-copy demands.
fn random_host(rng: &mut XorShift) -> (Vec<f64>, Vec<PoolRule>, LatencyCurve, Vec<ClassDemand>) {
    let nr = 1 + rng.below(5) as usize;
    let caps: Vec<f64> = (0..nr)
        .map(|_| match rng.below(10) {
            0 => 0.0,
            _ => 1.0 + 300.0 * rng.unit(),
        })
        .collect();
    let cpu = CpuThroughput {
        physical_cores: 1 + rng.below(16) as u32,
        threads_per_core: 1 + rng.below(2) as u32,
        smt_yield: 1.0 + 0.3 * rng.unit(),
        per_core: vec![(1.0, 1.0), (16.0, 0.5 + 0.5 * rng.unit())],
    };
    let pools = vec![PoolRule {
        resource: nr - 1,
        per_thread: rng.below(2) == 0,
        cpu: (rng.below(2) == 0).then_some(cpu),
    }];
    let curve = random_curve(rng);
    let n = 1 + rng.below(8) as usize;
    let classes: Vec<ClassDemand> = (0..n)
        .map(|_| {
            let simple = rng.below(3) == 0;
            let mut c = random_class(rng, nr, simple);
            c.count = rng.below(5) as u32;
            // Mostly max-min: a priority class fills in two phases, untraced.
            if rng.below(4) != 0 {
                c.key.dram_policy = DramPolicy::MaxMin;
            }
            if rng.below(6) == 0 {
                c.key.staging = Some(StagedCopy {
                    setup_frac: 0.3 * rng.unit(),
                    memcpy_headroom: 1.0 + rng.unit(),
                    memcpy_pace: MemcpyPace::LatencyBound,
                    latency_exponent: 1.0,
                    beside_streams: None,
                });
            }
            c
        })
        .collect();
    (caps, pools, curve, classes)
}

#[test]
fn shared_fillings_give_the_plain_fillings_bits() {
    // On random hosts and classes, whole solves: speed, limiter, usage, utilisation and
    // latency slowdown must be the plain solve's, bit for bit.
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let speeds = |x: &[ClassSpeed]| {
        (x.iter())
            .map(|s| (s.speed.to_bits(), s.limiter))
            .collect::<Vec<_>>()
    };
    let (mut solver, mut plain) = (Solver::default(), Solver::default());
    let (mut out, mut expected) = (Vec::new(), Vec::new());
    let mut repeated_before = 0;
    let mut cases_repeating = 0;
    for case in 0..20_000 {
        let (caps, pools, curve, classes) = random_host(&mut rng);
        solver.pools.clone_from(&pools);
        plain.pools = pools;
        solver.solve(&caps, 0, &curve, &classes, &mut out);
        plain_solve(&mut plain, &caps, 0, &curve, &classes, &mut expected);
        let why = format!("case {case}: {caps:?} {classes:?} {curve:?}");
        assert_eq!(speeds(&out), speeds(&expected), "{why}");
        assert_eq!(bits(&solver.usage), bits(&plain.usage), "{why}");
        assert_eq!(
            solver.dram_utilisation.to_bits(),
            plain.dram_utilisation.to_bits(),
            "{why}"
        );
        assert_eq!(
            solver.latency_slowdown.to_bits(),
            plain.latency_slowdown.to_bits(),
            "{why}"
        );
        if solver.rounds_repeated > repeated_before {
            cases_repeating += 1;
        }
        repeated_before = solver.rounds_repeated;
    }
    // The cases exercise the sharing: many solves repeat recorded rounds.
    assert!(
        cases_repeating > 2_000,
        "{cases_repeating} cases repeated rounds"
    );
}

#[test]
fn replayed_rounds_give_the_plain_fillings_bits_at_any_utilisation() {
    // Past the first filling, each filling skips the recorded rounds its caps leave
    // unchanged. Sweeping the utilisation moves every latency-dependent cap across the
    // recorded levels: each filling must match the plain one, bit for bit.
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let (mut solver, mut plain) = (Solver::default(), Solver::default());
    let (mut out, mut expected) = (Vec::new(), Vec::new());
    let mut repeated = 0;
    for case in 0..4_000 {
        let (caps, pools, curve, classes) = random_host(&mut rng);
        solver.pools.clone_from(&pools);
        plain.pools = pools;
        solver.prepare(&caps, 0, &curve, &classes);
        plain.prepare(&caps, 0, &curve, &classes);
        out.clear();
        out.extend_from_slice(&solver.fixed_out);
        if solver.priority.is_empty() {
            solver.trace.record();
        }
        for step in 0..40 {
            let u = if step == 0 { 0.0 } else { 1.5 * rng.unit() };
            solver.fill(&caps, 0, &curve, u, &mut out);
            plain_fill(&mut plain, &caps, 0, &classes, &curve, u, &mut expected);
            let why = format!("case {case}, u = {u}: {caps:?} {classes:?} {curve:?}");
            for (got, want) in out.iter().zip(&expected) {
                assert_eq!(got.speed.to_bits(), want.speed.to_bits(), "{why}");
                assert_eq!(got.limiter, want.limiter, "{why}");
            }
            assert_eq!(
                solver.dram_draw.to_bits(),
                plain.usage[0].to_bits(),
                "{why}"
            );
            assert_eq!(solver.offered.to_bits(), plain.offered.to_bits(), "{why}");
        }
        repeated += solver.rounds_repeated;
        solver.rounds_repeated = 0;
    }
    assert!(repeated > 20_000, "{repeated} rounds repeated");
}
