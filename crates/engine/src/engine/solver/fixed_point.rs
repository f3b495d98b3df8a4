//! The latency fixed point: DRAM utilisation sets the latency-dependent caps, the
//! filling at those caps sets the utilisation. [`Solver::solve`] searches for the
//! utilisation (or offered load) that reproduces itself, one filling per step.

use crate::model::LatencyCurve;

use super::{ClassDemand, ClassSpeed, Solver};

impl Solver {
    /// Solves speeds for `classes` over resources with `capacities`. `dram` is the index of
    /// the DRAM resource (its utilisation drives the latency curve). Results go to `out`
    /// (resized to `classes.len()`).
    pub fn solve(
        &mut self,
        capacities: &[f64],
        dram: usize,
        curve: &LatencyCurve,
        classes: &[ClassDemand],
        out: &mut Vec<ClassSpeed>,
    ) {
        self.prepare(capacities, dram, curve, classes);
        out.clear();
        out.extend_from_slice(&self.fixed_out);
        let latency_sensitive = classes.iter().any(|c| {
            c.count > 0 && (c.key.latency_frac > 0.0 || c.key.line_bound > 0.0 || c.key.paced())
        });
        if !latency_sensitive || capacities[dram] <= 0.0 {
            self.fill(capacities, dram, curve, 0.0, out);
            self.settle(capacities, dram, curve, out);
            return;
        }
        // Several fillings follow: the first records its rounds for the others.
        if self.priority.is_empty() {
            self.trace.record();
        }
        // Fixed point of u = g(u), g non-increasing: root of h(u) = g(u) - u on [0, 1]
        // (utilisation), or on [0, g(0)] (offered load, which may exceed 1).
        let offered = curve.by_offered_load();
        let h = |u: f64, s: &mut Self, out: &mut Vec<ClassSpeed>| {
            s.fill(capacities, dram, curve, u, out);
            let load = if offered { s.offered } else { s.dram_draw };
            load / capacities[dram] - u
        };
        let (a, mut b) = (0.0_f64, 1.0_f64);
        let ha = h(a, self, out);
        if ha <= 0.0 {
            self.settle(capacities, dram, curve, out);
            return;
        }
        if offered {
            b = ha;
        }
        let hb = h(b, self, out);
        if hb >= 0.0 {
            // Saturated even at the highest latency.
            self.settle(capacities, dram, curve, out);
            return;
        }
        illinois(a, b, ha, hb, |u| h(u, self, out));
        self.settle(capacities, dram, curve, out);
    }

    /// What does not depend on the DRAM utilisation: the write mix, each class's `phi`
    /// and cap terms, which classes take part, and each running class's weights
    /// flattened with their per-class factors.
    pub(super) fn prepare(
        &mut self,
        capacities: &[f64],
        dram: usize,
        curve: &LatencyCurve,
        classes: &[ClassDemand],
    ) {
        self.trace.clear();
        self.mix_writes(dram, curve, classes);
        self.set_phis(capacities, classes);
        self.set_cap_terms(capacities, dram, classes);
        self.match_proportional(dram, classes);
        self.flatten(dram, classes);
        self.bound_priority(capacities);
        self.set_fixed_caps(dram, classes);
    }

    /// Every resource's draw at the last filling's speeds (a filling sums only DRAM's,
    /// which is all the fixed point reads; these are the same sums in the same order),
    /// then the utilisation and latency the solve reports.
    fn settle(
        &mut self,
        capacities: &[f64],
        dram: usize,
        curve: &LatencyCurve,
        out: &[ClassSpeed],
    ) {
        self.usage.clear();
        self.usage.resize(capacities.len(), 0.0);
        for (&(a, b), o) in self.flat_range.iter().zip(out) {
            for w in &self.flat[a as usize..b as usize] {
                self.usage[w.r] += w.load * o.speed;
            }
        }
        self.finish(capacities, dram, curve);
    }

    pub(super) fn finish(&mut self, capacities: &[f64], dram: usize, curve: &LatencyCurve) {
        self.dram_utilisation = if capacities[dram] > 0.0 {
            (self.usage[dram] / capacities[dram]).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let load = if curve.by_offered_load() && capacities[dram] > 0.0 {
            self.offered / capacities[dram]
        } else {
            self.dram_utilisation
        };
        // `curve.slowdown_mix(load, ..)`, with the idle latency read once per solve.
        let at = if load.to_bits() == 0 {
            self.idle_ns
        } else {
            curve.latency_ns_mix(load, self.write_frac)
        };
        self.latency_slowdown = at / self.idle_ns;
    }
}

/// The Illinois method on `h` over the bracket [a, b] with h(a) > 0 > h(b): regula falsi,
/// halving the stale end's value when the same end moves twice. Stops when |h| or the
/// bracket is under 1e-10, or after 60 steps; the last `h` evaluated leaves its filling
/// behind, which is what the caller settles.
pub(super) fn illinois(
    mut a: f64,
    mut b: f64,
    mut ha: f64,
    mut hb: f64,
    mut h: impl FnMut(f64) -> f64,
) {
    let mut side = 0i8;
    for _ in 0..60 {
        let c = (a * hb - b * ha) / (hb - ha);
        let hc = h(c);
        if hc.abs() < 1e-10 || (b - a) < 1e-10 {
            break;
        }
        if hc > 0.0 {
            a = c;
            ha = hc;
            if side == 1 {
                hb *= 0.5;
            }
            side = 1;
        } else {
            b = c;
            hb = hc;
            if side == -1 {
                ha *= 0.5;
            }
            side = -1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{class, solve, with_policy};
    use crate::engine::observer::Limiter;
    use crate::model::{DramPolicy, LatencyCurve};

    #[test]
    fn latency_bound_work_slows_by_the_curve_ratio_at_the_fixed_point() {
        // A background stream draws 50 of 100 (u = 0.5, L = 2x); a victim entirely latency
        // bound (f = 1) with no bandwidth of its own runs at exactly 1/2.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
        let classes = [class(1, &[(0, 50.0)], 0.0), class(1, &[], 1.0)];
        let (out, s) = solve(&[100.0], &classes, &curve);
        assert!((s.dram_utilisation - 0.5).abs() < 1e-9);
        assert!((out[1].speed - 0.5).abs() < 1e-9);
        assert_eq!(out[1].limiter, Some(Limiter::DramLatency));
    }

    #[test]
    fn latency_fixed_point_is_self_consistent() {
        // A half latency-bound stream: its own draw moves u, which moves its cap.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (0.5, 150.0), (1.0, 400.0)]).unwrap();
        let classes = [class(4, &[(0, 40.0)], 0.5)];
        let (out, s) = solve(&[200.0], &classes, &curve);
        let u = s.usage[0] / 200.0;
        let cap = 1.0 / (0.5 + 0.5 * curve.slowdown(u));
        assert!((out[0].speed - cap.min(1.0)).abs() < 1e-6, "{out:?} u={u}");
        assert!((s.dram_utilisation - u).abs() < 1e-12);
    }

    #[test]
    fn offered_load_keeps_latency_rising_past_saturation() {
        // A stream offers 150 GB/s to a 100 GB/s DRAM: offered load 1.5. On an offered
        // curve through (0, 100) and (1, 200), past its last point latency grows in
        // proportion to the load (200 x 1.5 = 300; its last segment would give only 250),
        // and a fully latency-bound chase runs at 100/300. On a utilisation curve with
        // the same points latency stops at L(1) = 200 (speed 0.5).
        let stream = class(1, &[(0, 150.0)], 0.0);
        let chase = class(1, &[], 1.0);
        let offered = LatencyCurve::offered(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let (out, s) = solve(&[100.0], &[stream.clone(), chase.clone()], &offered);
        assert!((out[1].speed - 1.0 / 3.0).abs() < 1e-9, "{out:?}");
        assert!((s.latency_slowdown - 3.0).abs() < 1e-9);
        assert!((s.dram_utilisation - 1.0).abs() < 1e-12);
        let util = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let (out, _) = solve(&[100.0], &[stream, chase], &util);
        assert!((out[1].speed - 0.5).abs() < 1e-9, "{out:?}");
    }

    #[test]
    fn offered_load_fixed_point_converges_at_saturation() {
        // Fourteen latency-bound copy threads (18.7 GB/s each at the idle 146 ns) beside a
        // proportional H2D DMA (55 GB/s on the link, 68.4 of DRAM) on 169 GB/s: offered
        // load is above 1. The answer must be self-consistent: the latency read at the
        // offered load it produces, no speed above 1, DRAM not over capacity.
        let curve = LatencyCurve::offered(vec![
            (0.0, 146.0),
            (0.4, 163.0),
            (0.63, 210.0),
            (0.86, 278.0),
        ])
        .unwrap();
        let mut streams = class(14, &[(0, 18.7)], 0.0);
        streams.key.line_bound = 18.7 * 146.0;
        let dma = with_policy(
            class(1, &[(0, 68.4), (1, 55.0)], 0.0),
            DramPolicy::Proportional,
        );
        let caps = [169.0, 55.0];
        let (out, s) = solve(&caps, &[streams, dma], &curve);
        let x = s.offered / caps[0];
        assert!(x > 1.0, "offered load {x}");
        assert!(
            (s.latency_slowdown - curve.slowdown(x)).abs() < 1e-6,
            "{s:?}"
        );
        assert!(
            out.iter().all(|o| o.speed > 0.0 && o.speed <= 1.0),
            "{out:?}"
        );
        assert!(s.usage[0] <= caps[0] * (1.0 + 1e-9), "{s:?}");
        // Both slow, and the DMA by the streams' fraction of their latency-capped rate.
        assert!(out[1].speed < 1.0, "{out:?}");
    }

    #[test]
    fn run_write_fraction_picks_the_latency_curve_between_mixes() {
        // Read mix (write fraction 0): L = 100 + 100u; copy mix (1/3, the base curve):
        // L = 100 + 200u. A read-only stream draws 50 of 100 (u = 0.5) beside a chase
        // (latency bound, no bandwidth): the run's write fraction is 0, L = 150, the
        // chase runs at 100/150. Half the stream's bytes at the base mix (1/6): L = 175.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)])
            .unwrap()
            .with_write_mixes(
                1.0 / 3.0,
                vec![(
                    0.0,
                    LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap(),
                )],
            )
            .unwrap();
        let mut read = class(1, &[(0, 50.0)], 0.0);
        read.key.write_frac = 0.0;
        let chase = class(1, &[], 1.0);
        let (out, s) = solve(&[100.0], &[read.clone(), chase.clone()], &curve);
        assert!((out[1].speed - 100.0 / 150.0).abs() < 1e-9, "{out:?}");
        assert!((s.latency_slowdown - 1.5).abs() < 1e-9);
        let mut half = read.clone();
        half.key.weights = vec![(0, 25.0)];
        let mut base = class(1, &[(0, 25.0)], 0.0);
        base.key.write_frac = f64::NAN;
        let (out, _) = solve(&[100.0], &[half, base, chase], &curve);
        assert!((out[2].speed - 100.0 / 175.0).abs() < 1e-9, "{out:?}");
    }
}
