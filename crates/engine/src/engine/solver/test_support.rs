//! Builders and a seeded generator shared by the solver's tests.

use super::{ClassDemand, ClassKey, ClassSpeed, PoolRule, Solver};
use crate::model::{CpuThroughput, DramPolicy, LatencyCurve};

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

pub(super) fn solve(
    caps: &[f64],
    classes: &[ClassDemand],
    curve: &LatencyCurve,
) -> (Vec<ClassSpeed>, Solver) {
    let mut s = Solver::default();
    let mut out = Vec::new();
    s.solve(caps, 0, curve, classes, &mut out);
    (out, s)
}

pub(super) fn with_policy(mut c: ClassDemand, p: DramPolicy) -> ClassDemand {
    c.key.dram_policy = p;
    c
}

pub(super) fn pool_solver(per_thread: bool, cpu: Option<CpuThroughput>) -> Solver {
    Solver::with_pools(vec![PoolRule {
        resource: 1,
        per_thread,
        cpu,
    }])
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
