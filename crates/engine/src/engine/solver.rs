//! The fluid sharing solver: max-min fair speeds for activities that draw on shared
//! rate resources (DRAM, PCIe directions, thread pools, GPU compute).
//!
//! Vocabulary (after SimGrid's LMM): each *class* of identical running activities is a
//! variable `s` in [0, cap], its speed as a fraction of standalone; each rate resource is
//! a constraint `sum_c n_c * w_cr * s_c <= C_r`, where `w_cr` is what one activity of the
//! class draws from `r` running alone. Fairness is max-min on each activity's *rate*
//! `s * phi`, where `phi` is its draw on the resource that is tightest for it (largest
//! `w_r / C_r`), in that resource's own unit: progressive filling raises all rates
//! equally, as SimGrid does for flows. On one resource that is water-filling (n equal
//! streams get C/n, small demands are served in full, bytes-fair on DRAM, threads-fair
//! on a pool), and a flow crossing two resources is held to the tighter one. Activities
//! whose tightest resources differ in unit meet on a shared resource with a heuristic
//! normalisation; it avoids starving a one-thread task beside a 32-thread one.
//!
//! Latency-bound work: a class whose standalone time is a fraction `f` latency bound runs
//! at most at `cap = 1 / ((1 - f) + f * L(u)/L(0))`, where `u` is DRAM utilisation. Since
//! `u` depends on the speeds, the solver finds the fixed point `u = usage(u) / C_dram`
//! (usage is non-increasing in `u`, so the root is unique) by the Illinois method.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::engine::observer::Limiter;
use crate::model::LatencyCurve;

/// One class of identical activities as the solver sees it.
#[derive(Debug, Clone, Default)]
pub struct ClassDemand {
    /// Running activities in the class.
    pub count: u32,
    /// (rate resource index, draw per activity at standalone speed).
    pub weights: Vec<(usize, f64)>,
    /// Fraction of standalone time that is DRAM-latency bound.
    pub latency_frac: f64,
}

/// The solver's answer for one class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassSpeed {
    /// Speed as a fraction of standalone, in (0, 1].
    pub speed: f64,
    /// What held it below 1, if anything.
    pub limiter: Option<Limiter>,
}

/// Reusable solver state (scratch buffers kept between calls to avoid allocation).
#[derive(Debug, Default, Clone)]
pub struct Solver {
    frozen_load: Vec<f64>,
    slope: Vec<f64>,
    active: Vec<usize>,
    still: Vec<usize>,
    /// Classes that take part in the filling (running, with some draw), set per solve.
    base_active: Vec<usize>,
    scale: Vec<f64>,
    flat: Vec<Weight>,
    /// Each class's slice of `flat` (empty for classes not running).
    flat_range: Vec<(u32, u32)>,
    caps: Vec<f64>,
    saturated: Vec<bool>,
    /// Draw on each resource after the last solve.
    pub usage: Vec<f64>,
    /// DRAM utilisation (draw / capacity) after the last solve.
    pub dram_utilisation: f64,
    /// L(u)/L(0) after the last solve.
    pub latency_slowdown: f64,
}

/// Relative tolerance when comparing fill levels.
const EPS: f64 = 1e-12;

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
        self.prepare(capacities, classes);
        let latency_sensitive = classes.iter().any(|c| c.count > 0 && c.latency_frac > 0.0);
        if !latency_sensitive || capacities[dram] <= 0.0 {
            self.fill(capacities, classes, curve, 0.0, out);
            self.finish(capacities, dram, curve);
            return;
        }
        // Fixed point of u = g(u), g non-increasing: root of h(u) = g(u) - u on [0, 1].
        let h = |u: f64, s: &mut Self, out: &mut Vec<ClassSpeed>| {
            s.fill(capacities, classes, curve, u, out);
            s.usage[dram] / capacities[dram] - u
        };
        let (mut a, mut b) = (0.0_f64, 1.0_f64);
        let mut ha = h(a, self, out);
        if ha <= 0.0 {
            self.finish(capacities, dram, curve);
            return;
        }
        let mut hb = h(b, self, out);
        if hb >= 0.0 {
            // Saturated even at the highest latency.
            self.finish(capacities, dram, curve);
            return;
        }
        let mut side = 0i8;
        for _ in 0..60 {
            let c = (a * hb - b * ha) / (hb - ha);
            let hc = h(c, self, out);
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
        self.finish(capacities, dram, curve);
    }

    fn finish(&mut self, capacities: &[f64], dram: usize, curve: &LatencyCurve) {
        self.dram_utilisation = if capacities[dram] > 0.0 {
            (self.usage[dram] / capacities[dram]).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.latency_slowdown = curve.slowdown(self.dram_utilisation);
    }

    /// What does not depend on the DRAM utilisation: each class's `phi`, which classes
    /// take part, and each running class's weights flattened with their per-class factors.
    fn prepare(&mut self, capacities: &[f64], classes: &[ClassDemand]) {
        self.scale.clear();
        self.base_active.clear();
        self.flat.clear();
        self.flat_range.clear();
        for (i, c) in classes.iter().enumerate() {
            // phi: the draw on the resource that is tightest for this activity (largest
            // share of its capacity), in that resource's own unit.
            let dom = c
                .weights
                .iter()
                .map(|&(r, w)| (w / capacities[r], w))
                .fold((0.0, 0.0), |best, x| if x.0 > best.0 { x } else { best })
                .1;
            self.scale.push(dom);
            let start = self.flat.len() as u32;
            if c.count > 0 {
                for &(r, w) in &c.weights {
                    // The same expressions, so the same bits, as computing them in place.
                    self.flat.push(Weight {
                        r,
                        load: c.count as f64 * w,
                        slope: c.count as f64 * w / dom,
                    });
                }
                if dom > 0.0 {
                    self.base_active.push(i);
                }
            }
            self.flat_range.push((start, self.flat.len() as u32));
        }
    }

    /// Progressive filling at a given DRAM utilisation `u` (which sets latency caps).
    /// [`Solver::prepare`] must have run for the same classes.
    fn fill(
        &mut self,
        capacities: &[f64],
        classes: &[ClassDemand],
        curve: &LatencyCurve,
        u: f64,
        out: &mut Vec<ClassSpeed>,
    ) {
        let nr = capacities.len();
        let slowdown = curve.slowdown(u);
        self.frozen_load.clear();
        self.frozen_load.resize(nr, 0.0);
        self.usage.clear();
        self.usage.resize(nr, 0.0);
        self.slope.resize(nr, 0.0);
        self.caps.clear();
        out.clear();
        for c in classes {
            let cap = 1.0 / ((1.0 - c.latency_frac) + c.latency_frac * slowdown);
            self.caps.push(cap);
            let limiter = (cap < 1.0 - EPS).then_some(Limiter::DramLatency);
            out.push(ClassSpeed {
                speed: cap,
                limiter,
            });
        }
        self.active.clear();
        self.active.extend_from_slice(&self.base_active);
        let flat = &self.flat;
        let range = |i: usize| {
            let (a, b) = self.flat_range[i];
            &flat[a as usize..b as usize]
        };
        // Each round raises the common rate level `lambda` until a resource
        // saturates or a class reaches its cap; those classes freeze.
        while !self.active.is_empty() {
            self.slope.iter_mut().for_each(|s| *s = 0.0);
            for &i in &self.active {
                for w in range(i) {
                    self.slope[w.r] += w.slope;
                }
            }
            let mut lambda = f64::INFINITY;
            for ((&cap, &load), &slope) in capacities.iter().zip(&self.frozen_load).zip(&self.slope)
            {
                if slope > 0.0 {
                    let l = (cap - load).max(0.0) / slope;
                    lambda = lambda.min(l);
                }
            }
            for &i in &self.active {
                let l = self.caps[i] * self.scale[i];
                lambda = lambda.min(l);
            }
            let level = lambda * (1.0 + 1e-9);
            // Freeze classes that reach their cap, and classes crossing saturated resources.
            self.saturated.clear();
            for ((&cap, &load), &slope) in capacities.iter().zip(&self.frozen_load).zip(&self.slope)
            {
                let remaining = (cap - load).max(0.0);
                self.saturated
                    .push(slope > 0.0 && remaining / slope <= level);
            }
            let mut still = std::mem::take(&mut self.still);
            still.clear();
            for &i in &self.active {
                let at_cap = self.caps[i] * self.scale[i] <= level;
                let on_saturated = range(i).iter().find(|w| self.saturated[w.r]);
                if at_cap || on_saturated.is_some() {
                    let speed = if at_cap {
                        self.caps[i]
                    } else {
                        (lambda / self.scale[i]).min(self.caps[i])
                    };
                    let limiter = match on_saturated {
                        Some(w) if !at_cap => Some(Limiter::Rate(w.r)),
                        _ => out[i].limiter,
                    };
                    out[i] = ClassSpeed { speed, limiter };
                    for w in range(i) {
                        self.frozen_load[w.r] += w.load * speed;
                    }
                } else {
                    still.push(i);
                }
            }
            if still.len() == self.active.len() {
                // Numerical corner: nothing froze; freeze everything at this level.
                for &i in &still {
                    let speed = (lambda / self.scale[i]).min(self.caps[i]);
                    out[i].speed = speed;
                    for w in range(i) {
                        self.frozen_load[w.r] += w.load * speed;
                    }
                }
                still.clear();
            }
            self.still = std::mem::replace(&mut self.active, still);
        }
        for (i, c) in classes.iter().enumerate() {
            if c.count == 0 {
                continue;
            }
            for w in range(i) {
                self.usage[w.r] += w.load * out[i].speed;
            }
        }
    }
}

/// One class's draw on one resource, with the factors the filling needs.
#[derive(Debug, Clone, Copy)]
struct Weight {
    r: usize,
    /// count * w: the class's draw at speed 1.
    load: f64,
    /// count * w / phi: how fast the draw grows with the common rate level.
    slope: f64,
}

/// Remembers solutions by a key that determines them (the caller's job: e.g. each class
/// slot's demand identity and count, and the capacities that vary). The solver is a pure
/// function of its inputs, so a hit returns exactly what solving again would: a closed
/// system cycles through a limited set of states, and most events revisit one.
#[derive(Debug, Default)]
pub struct SolveMemo {
    map: HashMap<Box<[u64]>, Solution, BuildHasherDefault<FoldHasher>>,
    /// Hits and misses so far (for profiling).
    pub hits: u64,
    /// Solves that were not remembered.
    pub misses: u64,
    /// Lookups and hits in the current trial window.
    window: (u32, u32),
    /// Solves left to run without the memo after a window with too few hits (a system
    /// with many distinct classes rarely revisits a state; hashing would only cost).
    resting: u32,
}

#[derive(Debug)]
struct Solution {
    speeds: Box<[ClassSpeed]>,
    usage: Box<[f64]>,
    dram_utilisation: f64,
    latency_slowdown: f64,
}

/// Entries kept before the memo starts over (bounds memory: about 1 KiB each at most
/// for ten classes and resources).
const MEMO_CAPACITY: usize = 1 << 12;
/// Lookups per trial window, and the solves the memo rests when fewer than one in
/// `MEMO_MIN_HIT_RATIO` of a window's lookups hit.
const MEMO_WINDOW: u32 = 2048;
const MEMO_REST: u32 = 1 << 15;
const MEMO_MIN_HIT_RATIO: u32 = 8;

impl SolveMemo {
    /// Puts the remembered solution for `key` into `solver` and `out`; false if none.
    pub fn recall(&mut self, key: &[u64], solver: &mut Solver, out: &mut Vec<ClassSpeed>) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return false;
        }
        self.window.0 += 1;
        if self.window.0 >= MEMO_WINDOW {
            if self.window.1 * MEMO_MIN_HIT_RATIO < self.window.0 {
                self.resting = MEMO_REST;
                self.map.clear();
            }
            self.window = (0, 0);
        }
        match self.map.get(key) {
            Some(s) => {
                out.clear();
                out.extend_from_slice(&s.speeds);
                solver.usage.clear();
                solver.usage.extend_from_slice(&s.usage);
                solver.dram_utilisation = s.dram_utilisation;
                solver.latency_slowdown = s.latency_slowdown;
                self.hits += 1;
                self.window.1 += 1;
                true
            }
            None => {
                self.misses += 1;
                false
            }
        }
    }

    /// Remembers the solution `solver` and `out` hold for `key`.
    pub fn remember(&mut self, key: &[u64], solver: &Solver, out: &[ClassSpeed]) {
        if self.resting > 0 {
            return;
        }
        if self.map.len() >= MEMO_CAPACITY {
            self.map.clear();
        }
        self.map.insert(
            key.into(),
            Solution {
                speeds: out.into(),
                usage: solver.usage.as_slice().into(),
                dram_utilisation: solver.dram_utilisation,
                latency_slowdown: solver.latency_slowdown,
            },
        );
    }
}

/// A small fast hasher for word keys (multiply and rotate per word, as rustc's FxHasher):
/// the keys are not attacker-chosen, so SipHash's protection buys nothing here.
#[derive(Debug, Default, Clone, Copy)]
pub struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(count: u32, weights: &[(usize, f64)], latency_frac: f64) -> ClassDemand {
        ClassDemand {
            count,
            weights: weights.to_vec(),
            latency_frac,
        }
    }

    fn solve(
        caps: &[f64],
        classes: &[ClassDemand],
        curve: &LatencyCurve,
    ) -> (Vec<ClassSpeed>, Solver) {
        let mut s = Solver::default();
        let mut out = Vec::new();
        s.solve(caps, 0, curve, classes, &mut out);
        (out, s)
    }

    #[test]
    fn equal_streams_split_capacity_evenly() {
        // 5 streams wanting 100 GB/s each on 200 GB/s: 40 GB/s each, speed 0.4.
        let (out, s) = solve(
            &[200.0],
            &[class(5, &[(0, 100.0)], 0.0)],
            &LatencyCurve::flat(),
        );
        assert!((out[0].speed - 0.4).abs() < 1e-12);
        assert!((s.usage[0] - 200.0).abs() < 1e-9);
        assert_eq!(out[0].limiter, Some(Limiter::Rate(0)));
    }

    #[test]
    fn unequal_demands_water_fill() {
        // Demands 10, 50, 100 on capacity 100: 10 served fully, the rest split 45/45.
        let classes = [
            class(1, &[(0, 10.0)], 0.0),
            class(1, &[(0, 50.0)], 0.0),
            class(1, &[(0, 100.0)], 0.0),
        ];
        let (out, _) = solve(&[100.0], &classes, &LatencyCurve::flat());
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
        let (out, s) = solve(&[300.0, 50.0], &classes, &LatencyCurve::flat());
        assert!((out[0].speed * 60.0 - 50.0).abs() < 1e-9);
        assert_eq!(out[0].limiter, Some(Limiter::Rate(1)));
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
        let (out, _) = solve(&[250.0, 32.0], &classes, &LatencyCurve::flat());
        assert_eq!(out[0].speed, 1.0);
        assert!((out[1].speed - 31.0 / 32.0).abs() < 1e-9, "{out:?}");
    }

    #[test]
    fn never_faster_than_standalone() {
        let (out, s) = solve(
            &[1000.0],
            &[class(3, &[(0, 10.0)], 0.0)],
            &LatencyCurve::flat(),
        );
        assert_eq!(out[0].speed, 1.0);
        assert!((s.usage[0] - 30.0).abs() < 1e-12);
    }

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
    fn memo_recalls_exactly_what_was_solved() {
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (0.5, 150.0), (1.0, 400.0)]).unwrap();
        let classes = [
            class(4, &[(0, 40.0), (1, 5.0)], 0.5),
            class(2, &[(0, 60.0)], 0.0),
        ];
        let (out, solved) = solve(&[200.0, 8.0], &classes, &curve);
        let mut memo = SolveMemo::default();
        let key = [1, 2, 3];
        let mut fresh = Solver::default();
        let mut recalled = Vec::new();
        assert!(!memo.recall(&key, &mut fresh, &mut recalled));
        memo.remember(&key, &solved, &out);
        assert!(memo.recall(&key, &mut fresh, &mut recalled));
        assert_eq!(recalled, out);
        assert_eq!(fresh.usage, solved.usage);
        assert_eq!(fresh.latency_slowdown, solved.latency_slowdown);
        assert_eq!(fresh.dram_utilisation, solved.dram_utilisation);
        assert!(!memo.recall(&[1, 2, 4], &mut fresh, &mut recalled));
    }

    #[test]
    fn classes_without_demands_run_at_full_speed() {
        let (out, _) = solve(&[10.0], &[class(7, &[], 0.0)], &LatencyCurve::flat());
        assert_eq!(out[0].speed, 1.0);
    }
}
