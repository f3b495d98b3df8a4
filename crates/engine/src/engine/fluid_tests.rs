//! The fluid classes checked event by event against a slow, obviously-correct reference:
//! every activity its own LMM variable, every rate recomputed from scratch at every event,
//! every activity's remaining work integrated explicitly. Random activities arrive with
//! random demands on one to three resources and a random latency-bound share; each must
//! finish at the same time under both.

use proptest::prelude::*;

use crate::model::{Dram, DramPolicy, LatencyCurve};
use crate::time::SimTime;

use super::fluid::{Due, Fluid};
use super::observer::Loss;

use super::queue::EventQueue;
use super::resources::Resources;
use super::solver::{ClassDemand, ClassKey, FixedPoint, Solution, System};

/// One activity: arrival (ns), its class key, standalone seconds.
#[derive(Debug, Clone)]
struct Arrival {
    at_ns: u64,
    key: usize,
    standalone_s: f64,
}

#[derive(Debug, Clone)]
struct Case {
    capacities: Vec<f64>,
    dram: Dram,
    keys: Vec<ClassKey>,
    arrivals: Vec<Arrival>,
}

const RESOURCES: usize = 3;

fn key() -> impl Strategy<Value = ClassKey> {
    (
        proptest::sample::subsequence((0..RESOURCES).collect::<Vec<_>>(), 1..=RESOURCES),
        proptest::collection::vec(0.5f64..50.0, RESOURCES),
        prop_oneof![Just(0.0), 0.0f64..0.6],
    )
        .prop_map(|(rs, ws, latency_frac)| ClassKey {
            weights: rs.into_iter().map(|r| (r, ws[r])).collect(),
            latency_frac,
            dram_policy: DramPolicy::MaxMin,
            line_bound: 0.0,
            compute_frac: 0.0,
            write_frac: f64::NAN,
            host_frac: 0.0,
            host_pool: usize::MAX,
            staging: None,
            cpu_load: None,
            memcpy_pools: Vec::new(),
        })
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(5.0f64..100.0, RESOURCES),
        prop_oneof![Just(0.0), 0.0f64..0.05],
        proptest::collection::vec(key(), 1..4),
        proptest::collection::vec(
            (
                0u64..3_000_000_000,
                any::<prop::sample::Index>(),
                0.05f64..2.0,
            ),
            1..14,
        ),
    )
        .prop_map(|(capacities, loss, keys, raw)| {
            let mut arrivals: Vec<Arrival> = raw
                .into_iter()
                .map(|(at_ns, k, standalone_s)| Arrival {
                    at_ns,
                    key: k.index(keys.len()),
                    standalone_s,
                })
                .collect();
            arrivals.sort_by_key(|a| a.at_ns);
            Case {
                dram: Dram {
                    capacity_gbps: capacities[0],
                    latency: LatencyCurve::new(vec![(0.0, 100.0), (0.5, 140.0), (1.0, 300.0)])
                        .unwrap(),
                    efficiency_loss_per_stream: loss,
                    sharing: Default::default(),
                },
                capacities,
                keys,
                arrivals,
            }
        })
}

/// DRAM is rate resource 0 of a host with no pools and no GPUs.
fn dram_id() -> super::resources::RateId {
    Resources::from_hardware(&crate::model::Hardware {
        cpu_cores: 1,
        host_ram_bytes: 1,
        dram: Dram {
            capacity_gbps: 1.0,
            latency: LatencyCurve::flat(),
            efficiency_loss_per_stream: 0.0,
            sharing: Default::default(),
        },
        gpus: vec![],
        locks: vec![],
        pools: vec![],
    })
    .dram
}

#[derive(Clone, Copy)]
enum Ev {
    Arrive(usize),
    Due(Due),
}

/// Finish time of each activity (seconds) under the fluid classes, driven as the engine
/// drives them: after each event, re-solve when membership changed, then reschedule.
fn with_fluid(c: &Case) -> Vec<f64> {
    let mut fluid = Fluid::new(c.keys.clone(), c.capacities.clone(), dram_id(), Vec::new());
    let mut queue = EventQueue::default();
    for (i, a) in c.arrivals.iter().enumerate() {
        queue.push(SimTime(a.at_ns), Ev::Arrive(i));
    }
    let mut finished = vec![f64::NAN; c.arrivals.len()];
    let mut lost = Loss::default();
    while let Some((t, ev)) = queue.pop() {
        match ev {
            Ev::Arrive(i) => {
                let a = &c.arrivals[i];
                fluid.join(t, a.key, i, a.standalone_s, &mut lost);
            }
            Ev::Due(due) => {
                fluid.complete_due(t, due.class, |i| finished[i] = t.as_secs());
            }
        }
        if fluid.needs_resolve() {
            fluid.resolve(t, &c.dram);
        }
        fluid.reschedule(t, |due| {
            queue.set_slot(due.class.index(), due.at, Ev::Due(due))
        });
    }
    finished
}

/// Finish time of each activity (seconds) by brute force.
fn reference(c: &Case) -> Vec<f64> {
    let mut solver: FixedPoint = FixedPoint::default();
    let mut solution = Solution::default();
    let mut remaining: Vec<Option<f64>> = vec![None; c.arrivals.len()];
    let mut finished = vec![f64::NAN; c.arrivals.len()];
    let mut next_arrival = 0;
    let mut now = 0.0_f64;
    loop {
        // Arrivals due now.
        while next_arrival < c.arrivals.len()
            && SimTime(c.arrivals[next_arrival].at_ns).as_secs() <= now
        {
            remaining[next_arrival] = Some(c.arrivals[next_arrival].standalone_s);
            next_arrival += 1;
        }
        let active: Vec<usize> = (0..remaining.len())
            .filter(|&i| remaining[i].is_some())
            .collect();
        if active.is_empty() && next_arrival == c.arrivals.len() {
            return finished;
        }
        // Every activity its own variable, rates from scratch.
        let demands: Vec<ClassDemand> = active
            .iter()
            .map(|&i| c.keys[c.arrivals[i].key].demand(1))
            .collect();
        let streams = demands
            .iter()
            .filter(|d| d.key.weights.iter().any(|&(r, _)| r == 0))
            .count();
        let mut caps = c.capacities.clone();
        caps[0] = c.dram.effective_capacity_gbps(streams as u32);
        let system = System {
            capacities: &caps,
            dram: 0,
            curve: &c.dram.latency,
            pools: &[],
            classes: &demands,
        };
        solver.solve(&system, &mut solution);
        let speeds = &solution.speeds;
        let mut dt = f64::INFINITY;
        if next_arrival < c.arrivals.len() {
            dt = SimTime(c.arrivals[next_arrival].at_ns).as_secs() - now;
        }
        for (j, &i) in active.iter().enumerate() {
            dt = dt.min(remaining[i].unwrap() / speeds[j].speed);
        }
        now += dt;
        for (j, &i) in active.iter().enumerate() {
            let r = remaining[i].as_mut().unwrap();
            *r -= speeds[j].speed * dt;
            if *r <= 1e-9 {
                remaining[i] = None;
                finished[i] = now;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fluid_classes_match_the_from_scratch_reference(c in case()) {
        let fluid = with_fluid(&c);
        let slow = reference(&c);
        for (i, (f, r)) in fluid.iter().zip(&slow).enumerate() {
            prop_assert!(
                (f - r).abs() <= 1e-6 * (1.0 + r),
                "activity {i}: fluid {f} s, reference {r} s\nfluid {fluid:?}\nreference {slow:?}"
            );
        }
    }
}

#[test]
fn two_equal_streams_share_dram_and_finish_together() {
    let c = Case {
        capacities: vec![100.0, 10.0, 10.0],
        dram: Dram {
            capacity_gbps: 100.0,
            latency: LatencyCurve::flat(),
            efficiency_loss_per_stream: 0.0,
            sharing: Default::default(),
        },
        keys: vec![ClassKey {
            weights: vec![(0, 100.0)],
            latency_frac: 0.0,
            dram_policy: DramPolicy::MaxMin,
            line_bound: 0.0,
            compute_frac: 0.0,
            write_frac: f64::NAN,
            host_frac: 0.0,
            host_pool: usize::MAX,
            staging: None,
            cpu_load: None,
            memcpy_pools: Vec::new(),
        }],
        arrivals: vec![
            Arrival {
                at_ns: 0,
                key: 0,
                standalone_s: 1.0,
            },
            Arrival {
                at_ns: 0,
                key: 0,
                standalone_s: 1.0,
            },
            // Joins at 1 s, alone after the first two finish at 2 s: 1 s of work left.
            Arrival {
                at_ns: 1_000_000_000,
                key: 0,
                standalone_s: 2.0,
            },
        ],
    };
    let f = with_fluid(&c);
    // 0-1 s: two at 1/2 each (0.5 done each); 1 s on: three at 1/3: the first two need
    // 0.5 more: 1.5 s, so they end at 2.5 s; the third has 0.5 done, 1.5 left alone: 4 s.
    let want = [2.5, 2.5, 4.0];
    let r = reference(&c);
    for ((f_i, r_i), want_i) in f.iter().zip(&r).zip(want) {
        assert!((f_i - want_i).abs() < 1e-8, "fluid {f:?}");
        assert!((r_i - want_i).abs() < 1e-8, "reference {r:?}");
    }
}
