//! Builders and a seeded generator shared by the solver's tests.

use super::fixed_point::FixedPoint;
use super::system::{ClassDemand, ClassKey, PoolRule, Solution, System};
use crate::model::{CpuThroughput, DramPolicy, LatencyCurve, MemcpyPace, StagedCopy};

pub(super) fn class(count: u32, weights: &[(usize, f64)], latency_frac: f64) -> ClassDemand {
    ClassDemand {
        count,
        key: ClassKey {
            weights: weights.to_vec(),
            latency_frac,
            ..Default::default()
        },
    }
}

pub(super) fn with_policy(mut c: ClassDemand, p: DramPolicy) -> ClassDemand {
    c.key.dram_policy = p;
    c
}

/// The system of `classes` on resources of `capacities` (DRAM first), no pool rules.
pub(super) fn system<'a>(
    capacities: &'a [f64],
    classes: &'a [ClassDemand],
    curve: &'a LatencyCurve,
) -> System<'a> {
    System {
        capacities,
        dram: 0,
        curve,
        pools: &[],
        classes,
    }
}

/// The plain solve of `system`.
pub(super) fn solved(system: &System) -> Solution {
    let mut out = Solution::default();
    FixedPoint::<super::filling::Filling>::default().solve(system, &mut out);
    out
}

/// The plain solve of `classes` on `capacities` (DRAM first), no pool rules.
pub(super) fn solve(capacities: &[f64], classes: &[ClassDemand], curve: &LatencyCurve) -> Solution {
    solved(&system(capacities, classes, curve))
}

/// `got` is `want` to the bit: the speeds and limiters of every class, or of those of
/// `running` that run, the usage, DRAM's utilisation and the latency slowdown.
pub(super) fn assert_same_bits(
    got: &Solution,
    want: &Solution,
    running: Option<&[ClassDemand]>,
    why: &str,
) {
    let speeds = |s: &Solution| {
        (s.speeds.iter().enumerate())
            .filter(|(i, _)| running.is_none_or(|c| c[*i].count > 0))
            .map(|(_, s)| (s.speed.to_bits(), s.limiter))
            .collect::<Vec<_>>()
    };
    assert_eq!(speeds(got), speeds(want), "{why}");
    let usage = |s: &Solution| s.usage.iter().map(|u| u.to_bits()).collect::<Vec<_>>();
    assert_eq!(usage(got), usage(want), "{why}");
    assert_eq!(
        got.dram_utilisation.to_bits(),
        want.dram_utilisation.to_bits(),
        "{why}"
    );
    assert_eq!(
        got.latency_slowdown.to_bits(),
        want.latency_slowdown.to_bits(),
        "{why}"
    );
}

/// The rule of a pool at resource 1.
pub(super) fn pool_rule(per_thread: bool, cpu: Option<CpuThroughput>) -> Vec<PoolRule> {
    vec![PoolRule {
        resource: 1,
        per_thread,
        cpu,
    }]
}

/// A small deterministic generator for the randomised tests.
pub(super) struct XorShift(pub(super) u64);

impl XorShift {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub(super) fn random_curve(rng: &mut XorShift) -> LatencyCurve {
    let points = vec![
        (0.0, 80.0 + 60.0 * rng.unit()),
        (0.5, 150.0 + 50.0 * rng.unit()),
        (1.0, 300.0 + 300.0 * rng.unit()),
    ];
    let offered = match rng.below(3) {
        0 => return LatencyCurve::flat(),
        1 => false,
        _ => true,
    };
    let on_axis = |p| {
        if offered {
            LatencyCurve::offered(p).unwrap()
        } else {
            LatencyCurve::new(p).unwrap()
        }
    };
    let curve = on_axis(points);
    if rng.below(2) == 0 {
        return curve;
    }
    let read = on_axis(vec![(0.0, 90.0), (1.0, 200.0 + 100.0 * rng.unit())]);
    curve.with_write_mixes(0.3, vec![(0.0, read)]).unwrap()
}

pub(super) fn random_class(rng: &mut XorShift, nr: usize, simple: bool) -> ClassDemand {
    let mut weights = Vec::new();
    for r in 0..nr {
        if rng.below(2) == 0 {
            // Now and then a zero draw, and draws far above or below capacity.
            let w = match rng.below(6) {
                0 => 0.0,
                1 => 1000.0 * rng.unit(),
                _ => 60.0 * rng.unit(),
            };
            weights.push((r, w));
        }
    }
    let policy = match rng.below(3) {
        0 => DramPolicy::MaxMin,
        1 => DramPolicy::Priority,
        _ => DramPolicy::Proportional,
    };
    let mut c = ClassDemand {
        count: 1 + rng.below(40) as u32,
        key: ClassKey {
            weights,
            dram_policy: policy,
            write_frac: if rng.below(2) == 0 {
                f64::NAN
            } else {
                rng.unit()
            },
            ..Default::default()
        },
    };
    if !simple {
        c.count = rng.below(3) as u32;
        c.key.latency_frac = 0.5 * rng.unit();
        c.key.line_bound = if rng.below(2) == 0 { 3000.0 } else { 0.0 };
        c.key.compute_frac = 0.3 * rng.unit();
        c.key.host_frac = 0.5 * rng.unit();
        c.key.host_pool = nr - 1;
    }
    c
}

/// A random host (1-5 resources, DRAM first, a pool last with or without per-thread
/// sharing and core throughput), latency curve and 1-8 classes mixing latency-bound,
/// line-bound, compute-bound, host-thread and staged-copy demands.
pub(super) fn random_host(
    rng: &mut XorShift,
) -> (Vec<f64>, Vec<PoolRule>, LatencyCurve, Vec<ClassDemand>) {
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
            // Mostly max-min: a priority class fills in three phases, untraced.
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
