//! The latency fixed point: DRAM's load sets the latency the caps are read at, the
//! filling at those caps sets DRAM's load. [`FixedPoint::solve`] searches for the load
//! that reproduces itself by the Illinois method, one filling per step.

use super::cap_table::CapTable;
use super::filling::{DramLoad, Filling};
use super::system::{ClassSpeed, Solution, System};

/// A progressive filling as the fixed point runs it: [`Filling`] itself, or an
/// accelerator that gives its bits.
pub trait Fill: Default {
    /// The weights and phases of `system`'s classes; `several` when more than one
    /// filling of them follows, at different latencies.
    fn set(&mut self, system: &System, several: bool);
    /// One filling at the caps `caps` gives at DRAM load `u`, into `out`.
    fn fill(
        &mut self,
        system: &System,
        caps: &CapTable,
        u: f64,
        out: &mut [ClassSpeed],
    ) -> DramLoad;
    /// Every resource's draw at the speeds `out`.
    fn usage(&self, out: &[ClassSpeed], usage: &mut Vec<f64>);
}

impl Fill for Filling {
    fn set(&mut self, system: &System, _several: bool) {
        Filling::set(self, system);
    }

    fn fill(
        &mut self,
        system: &System,
        caps: &CapTable,
        u: f64,
        out: &mut [ClassSpeed],
    ) -> DramLoad {
        Filling::fill(self, caps, caps.latency_at(system.curve, u), out)
    }

    fn usage(&self, out: &[ClassSpeed], usage: &mut Vec<f64>) {
        Filling::usage(self, out, usage);
    }
}

/// The solve: the cap table, then fillings over it until DRAM's load is a fixed point.
#[derive(Debug, Default, Clone)]
pub struct FixedPoint<F = Filling> {
    caps: CapTable,
    filling: F,
}

impl<F: Fill> FixedPoint<F> {
    /// The speeds of `system`'s classes, the draw on each resource and DRAM's latency
    /// at the load they settle at.
    pub fn solve(&mut self, system: &System, solution: &mut Solution) {
        self.caps.set(system);
        let capacity = system.dram_capacity();
        let several = system.latency_sensitive() && capacity > 0.0;
        self.filling.set(system, several);
        let out = &mut solution.speeds;
        out.clear();
        out.resize(system.classes.len(), ClassSpeed::FULL);
        let last = if several {
            self.search(system, out)
        } else {
            self.filling.fill(system, &self.caps, 0.0, out)
        };
        // The answer is the last filling's.
        self.filling.usage(out, &mut solution.usage);
        let utilisation = if capacity > 0.0 {
            (solution.usage[system.dram] / capacity).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let load = if system.curve.by_offered_load() && capacity > 0.0 {
            last.offered / capacity
        } else {
            utilisation
        };
        solution.dram_utilisation = utilisation;
        solution.dram_offered = last.offered;
        solution.latency_slowdown = self.caps.slowdown_at(system.curve, load);
    }

    /// Its filling (to count what an accelerator shared).
    #[cfg(test)]
    pub(super) fn filling(&self) -> &F {
        &self.filling
    }

    /// The Illinois search for `u = g(u)`, `g` the DRAM load a filling at `u` gives
    /// (non-increasing in `u`): the root of `g(u) - u` on [0, 1] (utilisation) or on
    /// [0, g(0)] (offered load, which may exceed 1). Returns the last filling's load.
    fn search(&mut self, system: &System, out: &mut [ClassSpeed]) -> DramLoad {
        let capacity = system.dram_capacity();
        let offered = system.curve.by_offered_load();
        let mut last = DramLoad {
            draw: 0.0,
            offered: 0.0,
        };
        let mut h = |u: f64| {
            last = self.filling.fill(system, &self.caps, u, out);
            let load = if offered { last.offered } else { last.draw };
            load / capacity - u
        };
        let (a, mut b) = (0.0_f64, 1.0_f64);
        let ha = h(a);
        if ha <= 0.0 {
            return last;
        }
        if offered {
            b = ha;
        }
        let hb = h(b);
        if hb < 0.0 {
            illinois(a, b, ha, hb, &mut h);
        }
        // (hb >= 0: saturated even at the highest latency.)
        last
    }
}

/// The Illinois method on `h` over the bracket [a, b] with h(a) > 0 > h(b): regula falsi,
/// halving the stale end's value when the same end moves twice. Stops when |h| or the
/// bracket is under 1e-10, or after 60 steps.
fn illinois(mut a: f64, mut b: f64, mut ha: f64, mut hb: f64, mut h: impl FnMut(f64) -> f64) {
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
    use crate::engine::ids::Limiter;
    use crate::model::{DramPolicy, LatencyCurve};

    #[test]
    fn latency_bound_work_slows_by_the_curve_ratio_at_the_fixed_point() {
        // A background stream draws 50 of 100 (u = 0.5, L = 2x); a victim entirely latency
        // bound (f = 1) with no bandwidth of its own runs at exactly 1/2.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
        let classes = [class(1, &[(0, 50.0)], 0.0), class(1, &[], 1.0)];
        let s = solve(&[100.0], &classes, &curve);
        let out = &s.speeds;
        assert!((s.dram_utilisation - 0.5).abs() < 1e-9);
        assert!((out[1].speed - 0.5).abs() < 1e-9);
        assert_eq!(out[1].limiter, Some(Limiter::DramLatency));
    }

    #[test]
    fn latency_fixed_point_is_self_consistent() {
        // A half latency-bound stream: its own draw moves u, which moves its cap.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (0.5, 150.0), (1.0, 400.0)]).unwrap();
        let classes = [class(4, &[(0, 40.0)], 0.5)];
        let s = solve(&[200.0], &classes, &curve);
        let out = &s.speeds;
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
        let s = solve(&[100.0], &[stream.clone(), chase.clone()], &offered);
        let out = &s.speeds;
        assert!((out[1].speed - 1.0 / 3.0).abs() < 1e-9, "{out:?}");
        assert!((s.latency_slowdown - 3.0).abs() < 1e-9);
        assert!((s.dram_utilisation - 1.0).abs() < 1e-12);
        let util = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let s = solve(&[100.0], &[stream, chase], &util);
        let out = &s.speeds;
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
        let s = solve(&caps, &[streams, dma], &curve);
        let out = &s.speeds;
        let x = s.dram_offered / caps[0];
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
        let s = solve(&[100.0], &[read.clone(), chase.clone()], &curve);
        let out = &s.speeds;
        assert!((out[1].speed - 100.0 / 150.0).abs() < 1e-9, "{out:?}");
        assert!((s.latency_slowdown - 1.5).abs() < 1e-9);
        let mut half = read.clone();
        half.key.weights = vec![(0, 25.0)];
        let mut base = class(1, &[(0, 25.0)], 0.0);
        base.key.write_frac = f64::NAN;
        let s = solve(&[100.0], &[half, base, chase], &curve);
        let out = &s.speeds;
        assert!((out[2].speed - 100.0 / 175.0).abs() < 1e-9, "{out:?}");
    }
}
