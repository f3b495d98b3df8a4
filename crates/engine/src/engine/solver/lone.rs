//! One class running alone: [`Solver::solve_lone`] gives exactly the bits a full solve
//! would, without the classes that take no part.

use crate::engine::observer::{Limiter, RateId};
use crate::model::LatencyCurve;

use super::{ClassDemand, ClassSpeed, Solver};

impl Solver {
    /// Whether [`Solver::solve_lone`] may solve `c` when it is the only running class:
    /// nothing in it depends on DRAM latency, core throughput or a host thread, so one
    /// filling round at utilisation 0 settles it. (Its weights must name each resource
    /// once, in order, as interned class keys do.)
    pub fn lone_solvable(c: &ClassDemand) -> bool {
        c.key.latency_frac == 0.0
            && c.key.line_bound == 0.0
            && c.key.compute_frac == 0.0
            && c.key.host_frac == 0.0
            && c.key.staging.is_none()
            && c.key.cpu_load.is_none()
            && c.key.weights.windows(2).all(|p| p[0].0 < p[1].0)
    }

    /// [`Solver::solve`] when `lone` is the only running class (or none runs) and
    /// [`Solver::lone_solvable`]: the same arithmetic, step for step, as the general
    /// path performs for one class (so the same bits: a processor-sharing pool is just
    /// this), without the classes that take no part. Returns the class's speed; sets
    /// `usage`, `dram_utilisation` and `latency_slowdown` as `solve` does.
    pub fn solve_lone(
        &mut self,
        capacities: &[f64],
        dram: usize,
        curve: &LatencyCurve,
        lone: Option<&ClassDemand>,
    ) -> ClassSpeed {
        debug_assert!(lone.is_none_or(|c| c.count > 0 && Self::lone_solvable(c)));
        let nr = capacities.len();
        self.usage.clear();
        self.usage.resize(nr, 0.0);
        self.offered = 0.0;
        self.write_frac = None;
        let mut out = ClassSpeed {
            speed: 1.0,
            limiter: None,
        };
        let Some(c) = lone else {
            self.idle_ns = curve.latency_ns_mix(0.0, None);
            self.finish(capacities, dram, curve);
            return out;
        };
        let n = c.count as f64;
        if let Some(base) = curve.base_write_frac()
            && let Some(w) = c.dram_weight(dram)
        {
            let wf = if c.key.write_frac.is_nan() {
                base
            } else {
                c.key.write_frac
            };
            // (0.0 + x: the general path's sums start from zero.)
            let (writes, total) = (0.0 + n * w * wf, 0.0 + n * w);
            self.write_frac = (total > 0.0).then(|| writes / total);
        }
        self.idle_ns = curve.latency_ns_mix(0.0, self.write_frac);
        // Its cap is 1 (no latency, compute or host term), so its level at cap is phi.
        let scale = self.phi(capacities, c);
        if scale > 0.0 {
            // One filling round with this class alone active and nothing frozen: each
            // resource's slope is its one weight's (0.0 + x is x), its free room all of it.
            let room = |r: usize, w: f64| {
                let slope = n * w / scale;
                (slope > 0.0).then(|| capacities[r].max(0.0) / slope)
            };
            let mut lambda = f64::INFINITY;
            for &(r, w) in &c.key.weights {
                if let Some(l) = room(r, w) {
                    lambda = lambda.min(l);
                }
            }
            lambda = lambda.min(1.0 * scale);
            let level = lambda * (1.0 + 1e-9);
            let at_cap = 1.0 * scale <= level;
            let saturated =
                (c.key.weights.iter()).find(|&&(r, w)| room(r, w).is_some_and(|l| l <= level));
            out.speed = if at_cap {
                1.0
            } else {
                (lambda / scale).min(1.0)
            };
            if let Some(&(r, _)) = saturated
                && !at_cap
            {
                out.limiter = Some(Limiter::Rate(RateId::from_index(r)));
            }
        }
        for &(r, w) in &c.key.weights {
            let load = n * w;
            self.usage[r] += load * out.speed;
            if r == dram {
                let offered = if out.limiter == Some(Limiter::Rate(RateId::from_index(dram))) {
                    1.0
                } else {
                    out.speed
                };
                self.offered += load * offered;
            }
        }
        self.finish(capacities, dram, curve);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{XorShift, random_class, random_curve};
    use super::super::*;

    #[test]
    fn lone_class_solve_gives_the_general_solvers_bits() {
        // One running class among empty ones (whose demands take no part): solve_lone
        // must give exactly the bits of the general solver, speed, limiter, usage,
        // utilisation and latency slowdown, on random rates, pools and curves.
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for case in 0..20_000 {
            let nr = 1 + rng.below(4) as usize;
            let caps: Vec<f64> = (0..nr)
                .map(|_| match rng.below(8) {
                    0 => 0.0,
                    _ => 1.0 + 300.0 * rng.unit(),
                })
                .collect();
            let pools = (rng.below(2) == 0)
                .then(|| PoolRule {
                    resource: nr - 1,
                    per_thread: rng.below(2) == 0,
                    cpu: None,
                })
                .into_iter()
                .collect();
            let curve = random_curve(&mut rng);
            let empties = rng.below(4) as usize;
            let at = rng.below(empties as u64 + 1) as usize;
            let mut classes: Vec<ClassDemand> = (0..empties)
                .map(|_| {
                    let mut c = random_class(&mut rng, nr, false);
                    c.count = 0;
                    c
                })
                .collect();
            let lone = random_class(&mut rng, nr, true);
            assert!(Solver::lone_solvable(&lone));
            classes.insert(at, lone.clone());
            let mut general = Solver::with_pools(pools);
            let mut direct = general.clone();
            let mut out = Vec::new();
            general.solve(&caps, 0, &curve, &classes, &mut out);
            let s = direct.solve_lone(&caps, 0, &curve, Some(&lone));
            let why = format!("case {case}: {caps:?} {classes:?} {curve:?}");
            assert_eq!(s.speed.to_bits(), out[at].speed.to_bits(), "{why}");
            assert_eq!(s.limiter, out[at].limiter, "{why}");
            assert_eq!(bits(&direct.usage), bits(&general.usage), "{why}");
            assert_eq!(
                direct.dram_utilisation.to_bits(),
                general.dram_utilisation.to_bits(),
                "{why}"
            );
            assert_eq!(
                direct.latency_slowdown.to_bits(),
                general.latency_slowdown.to_bits(),
                "{why}"
            );
            // Nothing running: all idle.
            classes[at].count = 0;
            general.solve(&caps, 0, &curve, &classes, &mut out);
            direct.solve_lone(&caps, 0, &curve, None);
            assert_eq!(bits(&direct.usage), bits(&general.usage), "{why}");
            assert_eq!(
                direct.latency_slowdown.to_bits(),
                general.latency_slowdown.to_bits(),
                "{why}"
            );
        }
    }
}
