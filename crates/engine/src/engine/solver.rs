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
//! (usage is non-increasing in `u`, so the root is unique) by the Illinois method. From
//! one filling of that search to the next only the latency-dependent caps change, so the
//! fillings of a solve share their work, exactly: later ones replay the first one's
//! rounds that no such cap takes part in (see `Solver::replay`).
//!
//! Model v2 (each off by default, so v1 results stay bit-identical):
//! - DRAM policy per class: max-min (above); *priority* classes are filled first, the
//!   others share what they leave; a *proportional* class rises at the speed of the
//!   heaviest max-min DRAM class beside it (equal fractional slowdown).
//! - Little's law: a class whose threads keep `lines` cache lines in flight draws at most
//!   `threads x lines x 64 B / L` of DRAM, so its cap falls as latency `L` rises.
//! - A staged pageable copy ([`StagedCopy`]): its memcpy thread alone runs `headroom` x
//!   the copy's streaming rate; a latency-bound memcpy keeps the lines that rate implies
//!   in flight, so the streaming part runs at `min(1, headroom L(0)/L)` and the whole
//!   call, whose setup share `g` never slows, at `1 / (g + (1 - g) / that)`.
//! - A curve of offered load: the fixed point is on offered load (what the classes would
//!   draw at their caps, with DRAM unconstrained, over capacity), which may exceed 1;
//!   the latency keeps rising while queues build.
//! - A *per-thread* pool (Linux CFS): a class whose tightest resource is such a pool
//!   takes the pool's capacity as its `phi`, so every pool-bound class rises at the same
//!   speed and each runnable thread gets the same share.
//! - Compute throughput: the compute-bound share `c` of a class on a pool with a
//!   [`CpuThroughput`] runs at `per_thread(active) / per_thread(alone)`, where `active`
//!   is the threads the running classes want from the pool (capped at its size) and
//!   `alone` the class's own threads; with the latency share `f` the cap is
//!   `1 / ((1 - f - c) + f L(u)/L(0) + c per_thread(alone)/per_thread(active))`.
//! - A host thread (e.g. a GPU stage's launching thread) on a per-thread pool that wants
//!   `W` threads of `C`: its share `h` of the class's time stretches by `max(1, W / C)`,
//!   a term `h (W/C - 1)` in the same denominator.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::engine::observer::{Limiter, RateId};
use crate::model::{CpuThroughput, DramPolicy, LatencyCurve, MemcpyPace, StagedCopy};

/// One class of identical activities as the solver sees it.
#[derive(Debug, Clone, Default)]
pub struct ClassDemand {
    /// Running activities in the class.
    pub count: u32,
    /// (rate resource index, draw per activity at standalone speed).
    pub weights: Vec<(usize, f64)>,
    /// Fraction of standalone time that is DRAM-latency bound.
    pub latency_frac: f64,
    /// How it shares a saturated DRAM.
    pub dram_policy: DramPolicy,
    /// Little's-law bound of one activity: threads x lines in flight x 64 B, in GB/s x ns
    /// (its DRAM draw is at most `line_bound / L`); 0 when unbounded.
    pub line_bound: f64,
    /// Fraction of standalone time that is compute bound (slows with the pool's
    /// per-thread throughput), in [0, 1 - latency_frac].
    pub compute_frac: f64,
    /// Write share of its DRAM bytes (NaN: the latency curve's own mix).
    pub write_frac: f64,
    /// Share of standalone time its host thread must be on a CPU of `host_pool`.
    pub host_frac: f64,
    /// The pool its host thread runs on (resource index; unused when `host_frac` is 0).
    pub host_pool: usize,
    /// A staged pageable copy: its memcpy's Little's-law pace caps it (None: not one).
    pub staging: Option<StagedCopy>,
}

/// How one thread pool (a rate resource in threads) is shared and how fast its threads
/// compute; pools without a rule are shared by activity and compute at full speed.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolRule {
    /// The pool's rate resource index.
    pub resource: usize,
    /// Every runnable thread gets the same share (CFS) instead of every activity.
    pub per_thread: bool,
    /// Per-thread compute throughput vs active threads.
    pub cpu: Option<CpuThroughput>,
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
    /// Sharing and throughput rules of the thread pools (set once per run).
    pub pools: Vec<PoolRule>,
    /// Per class: the time its compute-bound share adds, `c (slowdown - 1)`, where the
    /// slowdown is how much slower that share runs than alone.
    compute_term: Vec<f64>,
    /// Per class: the pool whose compute throughput slows it, if any.
    compute_pool: Vec<Option<usize>>,
    /// Per class: the time its host thread's share adds, `h (slowdown - 1)`.
    host_term: Vec<f64>,
    /// Per class: its cap and limiter when they do not depend on DRAM utilisation.
    fixed_cap: Vec<Option<ClassSpeed>>,
    /// Per pool rule: what the running classes want of it, threads (None: not yet
    /// summed in this solve), and threads plus host threads.
    pool_wanted: Vec<Option<f64>>,
    host_wanted: Vec<Option<f64>>,
    /// Scratch for `prepare`'s per-thread throughputs.
    pool_paces: Vec<Option<(u64, f64)>>,
    /// L(0) at this solve's write mix (the divisor of every latency slowdown).
    idle_ns: f64,
    /// Per resource, in one filling round: the rate level at which it saturates.
    room: Vec<f64>,
    frozen_load: Vec<f64>,
    slope: Vec<f64>,
    active: Vec<usize>,
    still: Vec<usize>,
    /// Classes that take part in the filling (running, with some draw), set per solve.
    base_active: Vec<usize>,
    /// Of those, the DRAM-priority classes (filled first) and the others.
    priority: Vec<usize>,
    rest: Vec<usize>,
    scale: Vec<f64>,
    flat: Vec<Weight>,
    /// Each class's slice of `flat` (empty for classes not running).
    flat_range: Vec<(u32, u32)>,
    /// Per class, what a filling round reads of it (caps set per filling).
    rising: Vec<Rising>,
    /// The classes whose cap depends on DRAM utilisation (set per solve).
    varying: Vec<CapTerms>,
    /// The classes that take part in the filling with a fixed cap (set per solve).
    rising_fixed: Vec<usize>,
    /// Each class's cap and limiter where fixed (set per solve; the others are set by
    /// each filling).
    fixed_out: Vec<ClassSpeed>,
    /// Whether no class's cap depends on DRAM utilisation (set per solve).
    caps_fixed: bool,
    /// Each class's draw at speed 1 on DRAM (class, count x weight), in `flat` order.
    dram_loads: Vec<(usize, f64)>,
    /// DRAM draw after the last filling (`usage` is summed only when the solve ends).
    dram_draw: f64,
    /// The first filling's rounds that no latency-dependent cap takes part in.
    trace: Trace,
    /// Draw on each resource after the last solve.
    pub usage: Vec<f64>,
    /// DRAM utilisation (draw / capacity) after the last solve.
    pub dram_utilisation: f64,
    /// L(u)/L(0) after the last solve.
    pub latency_slowdown: f64,
    /// DRAM offered load after the last fill: what the classes would draw at their caps
    /// with DRAM unconstrained, GB/s.
    offered: f64,
    /// Write share of the running classes' DRAM demand (None: the curve's own mix).
    write_frac: Option<f64>,
    /// Rounds the fillings skipped by replaying recorded ones (for the tests).
    #[cfg(test)]
    rounds_repeated: u64,
}

/// Relative tolerance when comparing fill levels.
const EPS: f64 = 1e-12;

impl Solver {
    /// A solver for a host whose pools follow `pools`.
    pub fn with_pools(pools: Vec<PoolRule>) -> Self {
        Self {
            pools,
            ..Self::default()
        }
    }

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
        let latency_sensitive = classes
            .iter()
            .any(|c| c.count > 0 && (c.latency_frac > 0.0 || c.line_bound > 0.0 || paced(c)));
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
        let (mut a, mut b) = (0.0_f64, 1.0_f64);
        let mut ha = h(a, self, out);
        if ha <= 0.0 {
            self.settle(capacities, dram, curve, out);
            return;
        }
        if offered {
            b = ha;
        }
        let mut hb = h(b, self, out);
        if hb >= 0.0 {
            // Saturated even at the highest latency.
            self.settle(capacities, dram, curve, out);
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
        self.settle(capacities, dram, curve, out);
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

    /// A class's `phi`: its draw on the resource that is tightest for it (largest share
    /// of its capacity), in that resource's own unit; on a per-thread pool, the pool's
    /// capacity (every pool-bound class rises at the same speed).
    fn phi(&self, capacities: &[f64], c: &ClassDemand) -> f64 {
        let (_, dom, tightest) = c
            .weights
            .iter()
            .map(|&(r, w)| (w / capacities[r], w, r))
            .fold(
                (0.0, 0.0, usize::MAX),
                |best, x| {
                    if x.0 > best.0 { x } else { best }
                },
            );
        let per_thread = self
            .pools
            .iter()
            .any(|p| p.per_thread && p.resource == tightest);
        if per_thread {
            capacities[tightest]
        } else {
            dom
        }
    }

    /// Whether [`Solver::solve_lone`] may solve `c` when it is the only running class:
    /// nothing in it depends on DRAM latency, core throughput or a host thread, so one
    /// filling round at utilisation 0 settles it. (Its weights must name each resource
    /// once, in order, as interned class keys do.)
    pub fn lone_solvable(c: &ClassDemand) -> bool {
        c.latency_frac == 0.0
            && c.line_bound == 0.0
            && c.compute_frac == 0.0
            && c.host_frac == 0.0
            && c.staging.is_none()
            && c.weights.windows(2).all(|p| p[0].0 < p[1].0)
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
            && let Some(w) = dram_weight(c, dram)
        {
            let wf = if c.write_frac.is_nan() {
                base
            } else {
                c.write_frac
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
            for &(r, w) in &c.weights {
                if let Some(l) = room(r, w) {
                    lambda = lambda.min(l);
                }
            }
            lambda = lambda.min(1.0 * scale);
            let level = lambda * (1.0 + 1e-9);
            let at_cap = 1.0 * scale <= level;
            let saturated =
                (c.weights.iter()).find(|&&(r, w)| room(r, w).is_some_and(|l| l <= level));
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
        for &(r, w) in &c.weights {
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

    fn finish(&mut self, capacities: &[f64], dram: usize, curve: &LatencyCurve) {
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

    /// What does not depend on the DRAM utilisation: each class's `phi`, which classes
    /// take part, and each running class's weights flattened with their per-class factors.
    fn prepare(
        &mut self,
        capacities: &[f64],
        dram: usize,
        curve: &LatencyCurve,
        classes: &[ClassDemand],
    ) {
        self.scale.clear();
        self.base_active.clear();
        self.priority.clear();
        self.rest.clear();
        self.flat.clear();
        self.flat_range.clear();
        self.rising.clear();
        self.compute_term.clear();
        self.compute_pool.clear();
        self.host_term.clear();
        self.fixed_cap.clear();
        self.dram_loads.clear();
        self.trace.clear();
        self.write_frac = None;
        if let Some(base) = curve.base_write_frac() {
            // The run's mix: each class's write share, weighted by its DRAM demand.
            let (mut writes, mut total) = (0.0, 0.0);
            for c in classes.iter().filter(|c| c.count > 0) {
                if let Some(w) = dram_weight(c, dram) {
                    let wf = if c.write_frac.is_nan() {
                        base
                    } else {
                        c.write_frac
                    };
                    writes += c.count as f64 * w * wf;
                    total += c.count as f64 * w;
                }
            }
            self.write_frac = (total > 0.0).then(|| writes / total);
        }
        self.idle_ns = curve.latency_ns_mix(0.0, self.write_frac);
        for c in classes {
            // (An idle class's phi is never read: it takes no part in the filling.)
            let phi = if c.count > 0 {
                self.phi(capacities, c)
            } else {
                0.0
            };
            self.scale.push(phi);
        }
        // What the running classes want of each pool (the same sums, in the same order,
        // for every class that asks): threads, and threads plus host threads.
        self.pool_wanted.clear();
        self.pool_wanted.resize(self.pools.len(), None);
        self.host_wanted.clear();
        self.host_wanted.resize(self.pools.len(), None);
        // Per pool, the last per-thread throughput asked for (active threads' bits, the
        // throughput): most classes on a pool ask it for the same active threads.
        let mut paces: Vec<Option<(u64, f64)>> = std::mem::take(&mut self.pool_paces);
        paces.clear();
        paces.resize(self.pools.len(), None);
        for (i, c) in classes.iter().enumerate() {
            let (mut slow, mut pool) = (1.0, None);
            if c.compute_frac > 0.0 && c.count > 0 {
                for (k, p) in self.pools.iter().enumerate() {
                    let (Some(cpu), Some(own)) = (&p.cpu, weight_on(c, p.resource)) else {
                        continue;
                    };
                    let wanted = *self.pool_wanted[k].get_or_insert_with(|| {
                        classes
                            .iter()
                            .filter(|o| o.count > 0)
                            .filter_map(|o| Some(o.count as f64 * weight_on(o, p.resource)?))
                            .sum()
                    });
                    let active = wanted.min(capacities[p.resource]).max(own);
                    let at_active = match paces[k] {
                        Some((bits, pace)) if bits == active.to_bits() => pace,
                        _ => {
                            let pace = cpu.per_thread(active);
                            paces[k] = Some((active.to_bits(), pace));
                            pace
                        }
                    };
                    let s = (cpu.per_thread(own) / at_active).max(1.0);
                    if s > slow {
                        (slow, pool) = (s, Some(p.resource));
                    }
                }
            }
            let mut host = 1.0;
            if c.host_frac > 0.0 && c.count > 0 {
                let p = c.host_pool;
                if let Some(k) = (self.pools.iter()).position(|r| r.per_thread && r.resource == p) {
                    // Runnable threads: the pool's draws plus the host threads on it.
                    let wanted = *self.host_wanted[k].get_or_insert_with(|| {
                        (classes.iter().filter(|o| o.count > 0))
                            .map(|o| {
                                let pool = weight_on(o, p).unwrap_or(0.0);
                                let host = if o.host_frac > 0.0 && o.host_pool == p {
                                    o.host_frac
                                } else {
                                    0.0
                                };
                                o.count as f64 * (pool + host)
                            })
                            .sum()
                    });
                    host = (wanted / capacities[p]).max(1.0);
                }
            }
            self.compute_term.push(c.compute_frac * (slow - 1.0));
            self.compute_pool.push(pool);
            self.host_term.push(c.host_frac * (host - 1.0));
            // A class that is neither latency bound nor bounded by lines in flight has
            // the same cap at every utilisation: `0 * slowdown` is 0 for any (finite)
            // slowdown, so computing it once at slowdown 1 gives the same bits.
            let varies = c.latency_frac != 0.0
                || (c.line_bound > 0.0 && dram_weight(c, dram).is_some())
                || c.staging.is_some();
            let fixed = (!varies).then(|| self.cap_of(i, c, dram, 1.0, 0.0));
            self.fixed_cap.push(fixed);
        }
        self.pool_paces = paces;
        // A proportional class rises at the speed of the heaviest max-min DRAM class.
        if classes
            .iter()
            .any(|c| c.count > 0 && c.dram_policy == DramPolicy::Proportional)
        {
            let heaviest = classes
                .iter()
                .enumerate()
                .filter(|(_, c)| c.count > 0 && c.dram_policy == DramPolicy::MaxMin)
                .filter_map(|(i, c)| Some((i, dram_weight(c, dram)?)))
                .fold(None, |best: Option<(usize, f64)>, x| match best {
                    Some(b) if b.1 >= x.1 => Some(b),
                    _ => Some(x),
                });
            if let Some((j, _)) = heaviest {
                for (i, c) in classes.iter().enumerate() {
                    if c.dram_policy == DramPolicy::Proportional
                        && dram_weight(c, dram).is_some()
                        && self.scale[j] > 0.0
                    {
                        self.scale[i] = self.scale[j];
                    }
                }
            }
        }
        for (i, c) in classes.iter().enumerate() {
            let dom = self.scale[i];
            let start = self.flat.len() as u32;
            // The resources it draws on (all, as far as the mask can tell, past 64).
            let mut touches = 0u64;
            if c.count > 0 {
                for &(r, w) in &c.weights {
                    touches |= 1u64.checked_shl(r as u32).unwrap_or(u64::MAX);
                    // The same expressions, so the same bits, as computing them in place.
                    self.flat.push(Weight {
                        r,
                        load: c.count as f64 * w,
                        slope: c.count as f64 * w / dom,
                    });
                    if r == dram {
                        self.dram_loads.push((i, c.count as f64 * w));
                    }
                }
                if dom > 0.0 {
                    self.base_active.push(i);
                    if c.dram_policy == DramPolicy::Priority {
                        self.priority.push(i);
                    } else {
                        self.rest.push(i);
                    }
                }
            }
            self.flat_range.push((start, self.flat.len() as u32));
            self.rising.push(Rising {
                cap: f64::NAN,
                cap_level: f64::NAN,
                scale: dom,
                draws: (start, self.flat.len() as u32),
                touches,
            });
        }
        self.varying.clear();
        self.fixed_out.clear();
        for (i, c) in classes.iter().enumerate() {
            let s = self.fixed_cap[i].unwrap_or_else(|| {
                let terms = self.cap_terms(i, c, dram);
                self.varying.push(terms);
                ClassSpeed {
                    speed: f64::NAN,
                    limiter: None,
                }
            });
            let rising = &mut self.rising[i];
            rising.cap = s.speed;
            rising.cap_level = s.speed * rising.scale;
            self.fixed_out.push(s);
        }
        self.caps_fixed = self.varying.is_empty();
        self.rising_fixed.clear();
        let fixed = self
            .base_active
            .iter()
            .filter(|&&i| self.fixed_cap[i].is_some());
        self.rising_fixed.extend(fixed);
    }

    /// Class `i`'s cap (the highest speed latency, cores and its host thread allow) at a
    /// latency `slowdown` of L(u)/L(0) and `latency_ns` of L(u), and what holds it there.
    fn cap_of(
        &self,
        i: usize,
        c: &ClassDemand,
        dram: usize,
        slowdown: f64,
        latency_ns: f64,
    ) -> ClassSpeed {
        self.cap_terms(i, c, dram).at(slowdown, latency_ns)
    }

    /// The terms of class `i`'s cap that do not depend on DRAM latency.
    fn cap_terms(&self, i: usize, c: &ClassDemand, dram: usize) -> CapTerms {
        CapTerms {
            class: i,
            latency_frac: c.latency_frac,
            unbound_frac: 1.0 - c.latency_frac,
            compute: self.compute_term[i],
            compute_pool: self.compute_pool[i],
            host: self.host_term[i],
            host_pool: c.host_pool,
            lines: (c.line_bound > 0.0)
                .then(|| Some((c.line_bound, dram_weight(c, dram)?)))
                .flatten(),
            staging: c.staging,
        }
    }

    /// Progressive filling at a given DRAM utilisation `u` (which sets latency caps).
    /// [`Solver::prepare`] must have run for the same classes, and `out` start from its
    /// `fixed_out` (a filling rewrites only the entries fillings change). Sums only
    /// DRAM's draw (`dram_draw`, `offered`); [`Solver::settle`] sums every resource's.
    fn fill(
        &mut self,
        capacities: &[f64],
        dram: usize,
        curve: &LatencyCurve,
        u: f64,
        out: &mut [ClassSpeed],
    ) {
        let nr = capacities.len();
        // Only caps that vary with utilisation read the curve: L(u), and L(u)/L(0) as
        // `curve.slowdown_mix` computes it.
        let (slowdown, latency_ns) = if self.caps_fixed {
            (1.0, 0.0)
        } else {
            let at = curve.latency_ns_mix(u, self.write_frac);
            (at / self.idle_ns, at)
        };
        self.frozen_load.clear();
        self.frozen_load.resize(nr, 0.0);
        self.slope.resize(nr, 0.0);
        self.room.resize(nr, 0.0);
        // Fixed caps stay in place from `prepare` (in `out` from the solve) but for the
        // classes the last filling froze; only the varying ones are set.
        for &i in &self.rising_fixed {
            out[i] = self.fixed_out[i];
        }
        for terms in &self.varying {
            let (i, s) = (terms.class, terms.at(slowdown, latency_ns));
            let rising = &mut self.rising[i];
            rising.cap = s.speed;
            rising.cap_level = s.speed * rising.scale;
            out[i] = s;
        }
        let recording = self.trace.mode == TraceMode::Record;
        let phases = if self.priority.is_empty() { 1 } else { 2 };
        // Each round raises the common rate level `lambda` until a resource
        // saturates or a class reaches its cap; those classes freeze. Priority classes
        // (if any) are filled first, the others in a second phase on what is left.
        for phase in 0..phases {
            self.active.clear();
            // This filling's rounds so far, and those repeated from the trace.
            let (mut round, mut repeated) = (0, 0);
            if phases == 1 {
                if self.trace.mode == TraceMode::Replay {
                    repeated = self.replay(out);
                    round = repeated;
                    #[cfg(test)]
                    {
                        self.rounds_repeated += repeated as u64;
                    }
                } else {
                    self.active.extend_from_slice(&self.base_active);
                }
            } else if phase == 0 {
                self.active.extend_from_slice(&self.priority);
            } else {
                self.active.extend_from_slice(&self.rest);
            }
            // Recording stops at the first round a latency-dependent cap takes part in
            // (that round's rooms are still kept: later fillings enter it alike).
            let mut tracing = recording;
            while !self.active.is_empty() {
                let flat = &self.flat;
                let range = |i: usize| {
                    let (a, b) = self.rising[i].draws;
                    &flat[a as usize..b as usize]
                };
                // Each resource's saturation level, once per round (NaN where nothing
                // rising draws on it: never `<=` any level, so never saturated). The
                // first round after those repeated starts where the first filling's
                // did: the same rooms.
                let mut lambda;
                let room: &[f64] = if round == repeated && round < self.trace.roomed() {
                    lambda = self.trace.lambda_rooms[round];
                    &self.trace.rooms[round * nr..(round + 1) * nr]
                } else {
                    let slope = match self.trace.slopes(round, &self.active, nr) {
                        Some(s) => s,
                        None => {
                            self.slope.iter_mut().for_each(|s| *s = 0.0);
                            for &i in &self.active {
                                for w in range(i) {
                                    self.slope[w.r] += w.slope;
                                }
                            }
                            if recording && round == self.trace.summed() {
                                self.trace.sums(&self.active, &self.slope);
                            }
                            &self.slope
                        }
                    };
                    lambda = f64::INFINITY;
                    for ((room, &cap), (&load, &slope)) in (self.room.iter_mut())
                        .zip(capacities)
                        .zip(self.frozen_load.iter().zip(slope))
                    {
                        *room = if slope > 0.0 {
                            let l = (cap - load).max(0.0) / slope;
                            lambda = lambda.min(l);
                            l
                        } else {
                            f64::NAN
                        };
                    }
                    if tracing {
                        self.trace.rooms.extend_from_slice(&self.room);
                        self.trace.lambda_rooms.push(lambda);
                    }
                    &self.room
                };
                let least_room = lambda;
                for &i in &self.active {
                    lambda = lambda.min(self.rising[i].cap_level);
                }
                let level = lambda * (1.0 + 1e-9);
                // Freeze classes that reach their cap, and classes crossing saturated
                // resources: a mask of them where resources are few (none saturates
                // when even the least room is above the level).
                let saturated = if least_room > level {
                    0
                } else if nr <= 64 {
                    (room.iter().rev()).fold(0u64, |m, &l| (m << 1) | (l <= level) as u64)
                } else {
                    // (Past 64 resources every class checks its draws.)
                    u64::MAX
                };
                let mut still = std::mem::take(&mut self.still);
                still.clear();
                let frozen_from = self.trace.frozen.len();
                for &i in &self.active {
                    let c = &self.rising[i];
                    let at_cap = c.cap_level <= level;
                    let on_saturated = if c.touches & saturated != 0 {
                        flat[c.draws.0 as usize..c.draws.1 as usize]
                            .iter()
                            .find(|w| room[w.r] <= level)
                    } else {
                        None
                    };
                    if at_cap || on_saturated.is_some() {
                        let speed = if at_cap {
                            c.cap
                        } else {
                            (lambda / c.scale).min(c.cap)
                        };
                        let limiter = match on_saturated {
                            Some(w) if !at_cap => Some(Limiter::Rate(RateId::from_index(w.r))),
                            _ => out[i].limiter,
                        };
                        out[i] = ClassSpeed { speed, limiter };
                        for w in range(i) {
                            self.frozen_load[w.r] += w.load * speed;
                        }
                        if tracing {
                            self.trace.frozen.push((i, out[i]));
                        }
                    } else {
                        still.push(i);
                    }
                }
                let stuck = still.len() == self.active.len();
                if stuck {
                    // Numerical corner: nothing froze; freeze everything at this level.
                    for &i in &still {
                        let c = &self.rising[i];
                        let speed = (lambda / c.scale).min(c.cap);
                        out[i].speed = speed;
                        for w in range(i) {
                            self.frozen_load[w.r] += w.load * speed;
                        }
                    }
                    still.clear();
                }
                if tracing {
                    // A round the latency caps take no part in: every varying cap lies
                    // above the level, so none set lambda or froze at its cap.
                    let varies = |&i: &usize| self.fixed_cap[i].is_none();
                    tracing = !stuck
                        && level >= lambda
                        && (self.active.iter().filter(|i| varies(i)))
                            .all(|&i| self.rising[i].cap_level > level);
                    let t = &mut self.trace;
                    if tracing {
                        // Each varying class, with its speed if the round froze it.
                        let frozen = &t.frozen[frozen_from..];
                        let varying = (self.active.iter().copied().filter(varies)).map(|i| {
                            let froze = frozen.iter().find(|f| f.0 == i);
                            (i, froze.map(|f| f.1.speed))
                        });
                        t.varying.extend(varying);
                        t.still.extend_from_slice(&still);
                        t.load.extend_from_slice(&self.frozen_load);
                        t.rounds.push(TracedRound {
                            lambda,
                            level,
                            varying_end: t.varying.len() as u32,
                            frozen_end: t.frozen.len() as u32,
                            still_end: t.still.len() as u32,
                        });
                    } else {
                        t.frozen.truncate(frozen_from);
                    }
                }
                self.still = std::mem::replace(&mut self.active, still);
                round += 1;
            }
        }
        if recording {
            self.trace.mode = TraceMode::Replay;
        }
        // DRAM's draw and offered load, summed as `settle` sums every resource's.
        let (mut draw, mut offered) = (0.0, 0.0);
        for &(i, load) in &self.dram_loads {
            draw += load * out[i].speed;
            // Held back by DRAM itself: it offers what its cap allows.
            let at = if out[i].limiter == Some(Limiter::Rate(RateId::from_index(dram))) {
                self.rising[i].cap
            } else {
                out[i].speed
            };
            offered += load * at;
        }
        self.dram_draw = draw;
        self.offered = offered;
    }

    /// Skips the recorded rounds that this filling's caps leave unchanged: a round
    /// repeats when each latency-dependent cap among its rising classes still lies above
    /// its level (so lambda, the saturated resources and who freezes are the same) and
    /// each such class it froze on a resource gets the same speed. Leaves the state after
    /// the last repeated round (or the first round's) in `active`, `frozen_load`, `out`,
    /// and returns how many rounds repeated.
    fn replay(&mut self, out: &mut [ClassSpeed]) -> usize {
        let t = &self.trace;
        let (mut repeated, mut varying_from, mut frozen_from) = (0, 0, 0);
        for round in &t.rounds {
            let (v, f) = (round.varying_end as usize, round.frozen_end as usize);
            let repeats = t.varying[varying_from..v].iter().all(|&(i, froze)| {
                let c = &self.rising[i];
                c.cap_level > round.level
                    && froze.is_none_or(|speed| {
                        let again = (round.lambda / c.scale).min(c.cap);
                        again.to_bits() == speed.to_bits()
                    })
            });
            if !repeats {
                break;
            }
            (repeated, varying_from, frozen_from) = (repeated + 1, v, f);
        }
        if repeated == 0 {
            self.active.extend_from_slice(&self.base_active);
            return 0;
        }
        for &(i, s) in &t.frozen[..frozen_from] {
            out[i] = s;
        }
        let nr = self.frozen_load.len();
        let last = repeated - 1;
        let still_from = if last == 0 {
            0
        } else {
            t.rounds[last - 1].still_end as usize
        };
        self.active
            .extend_from_slice(&t.still[still_from..t.rounds[last].still_end as usize]);
        self.frozen_load
            .copy_from_slice(&t.load[last * nr..(last + 1) * nr]);
        repeated
    }
}

/// What a class's cap is made of, but for DRAM latency (see [`Solver::cap_of`]).
#[derive(Debug, Clone, Copy)]
struct CapTerms {
    class: usize,
    latency_frac: f64,
    /// `1 - latency_frac`.
    unbound_frac: f64,
    /// The time the compute-bound share adds, and the pool that slows it.
    compute: f64,
    compute_pool: Option<usize>,
    /// The time the host thread's share adds, and its pool.
    host: f64,
    host_pool: usize,
    /// Little's-law bound and the DRAM draw it divides, when bounded and on DRAM.
    lines: Option<(f64, f64)>,
    staging: Option<StagedCopy>,
}

impl CapTerms {
    /// The cap at a latency `slowdown` of L(u)/L(0) and `latency_ns` of L(u).
    #[inline]
    fn at(&self, slowdown: f64, latency_ns: f64) -> ClassSpeed {
        let (compute, host) = (self.compute, self.host);
        let latency = self.latency_frac * (slowdown - 1.0);
        // (Adding zero compute and host terms keeps the v1 expression's bits.)
        let mut cap = 1.0 / (self.unbound_frac + self.latency_frac * slowdown + compute + host);
        if let Some((line_bound, w)) = self.lines {
            cap = cap.min(line_bound / (latency_ns * w));
        }
        if let Some(st) = &self.staging {
            cap = cap.min(st.cap(slowdown));
        }
        // Slower cores are the pool's loss; latency the DRAM's.
        let limiter = match self.compute_pool {
            _ if host > latency && host >= compute => {
                Limiter::Rate(RateId::from_index(self.host_pool))
            }
            Some(p) if compute > latency => Limiter::Rate(RateId::from_index(p)),
            _ => Limiter::DramLatency,
        };
        ClassSpeed {
            speed: cap,
            limiter: (cap < 1.0 - EPS).then_some(limiter),
        }
    }
}

/// Whether a class is a staged copy whose memcpy slows as latency rises.
fn paced(c: &ClassDemand) -> bool {
    c.staging
        .is_some_and(|st| st.memcpy_pace == MemcpyPace::LatencyBound)
}

/// A class's DRAM draw per activity at standalone speed, if it draws on DRAM.
fn dram_weight(c: &ClassDemand, dram: usize) -> Option<f64> {
    weight_on(c, dram)
}

/// A class's draw per activity on resource `r` at standalone speed, if it draws on it.
fn weight_on(c: &ClassDemand, r: usize) -> Option<f64> {
    c.weights
        .iter()
        .find(|&&(x, w)| x == r && w > 0.0)
        .map(|&(_, w)| w)
}

/// The rounds of a solve's first filling that no latency-dependent cap took part in,
/// for the later fillings to skip (see [`Solver::replay`]).
#[derive(Debug, Default, Clone)]
struct Trace {
    mode: TraceMode,
    rounds: Vec<TracedRound>,
    /// Per round, its rising classes whose cap varies (ends in `TracedRound`), with the
    /// speed it froze them at on a saturated resource, if it did.
    varying: Vec<(usize, Option<f64>)>,
    /// Per round, the classes it froze and their speeds.
    frozen: Vec<(usize, ClassSpeed)>,
    /// Per round, the classes still rising after it.
    still: Vec<usize>,
    /// Per round, the frozen load on each resource after it.
    load: Vec<f64>,
    /// Per round up to the first one not repeatable, each resource's room (as the
    /// filling computes it) and the least of them.
    rooms: Vec<f64>,
    lambda_rooms: Vec<f64>,
    /// Per round of the first filling, its rising classes (ends in `active_end`) and
    /// the summed slope on each resource (they depend on nothing else).
    active: Vec<usize>,
    active_end: Vec<u32>,
    slopes: Vec<f64>,
}

/// Whether the next filling records its rounds, replays them, or neither.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum TraceMode {
    #[default]
    Off,
    Record,
    Replay,
}

/// One recorded round: its rate level and where its entries end in the trace lists.
#[derive(Debug, Clone, Copy)]
struct TracedRound {
    lambda: f64,
    level: f64,
    varying_end: u32,
    frozen_end: u32,
    still_end: u32,
}

impl Trace {
    /// Forgets the last solve's rounds; nothing is recorded or replayed.
    fn clear(&mut self) {
        self.mode = TraceMode::Off;
        self.rounds.clear();
        self.varying.clear();
        self.frozen.clear();
        self.still.clear();
        self.load.clear();
        self.rooms.clear();
        self.lambda_rooms.clear();
        self.active.clear();
        self.active_end.clear();
        self.slopes.clear();
    }

    /// Rounds whose rooms are recorded.
    fn roomed(&self) -> usize {
        self.lambda_rooms.len()
    }

    /// Rounds whose slopes are recorded.
    fn summed(&self) -> usize {
        self.active_end.len()
    }

    /// Records the next round's rising classes and summed slopes.
    fn sums(&mut self, active: &[usize], slope: &[f64]) {
        self.active.extend_from_slice(active);
        self.active_end.push(self.active.len() as u32);
        self.slopes.extend_from_slice(slope);
    }

    /// The slopes recorded for round `k` if it had the same rising classes.
    fn slopes(&self, k: usize, active: &[usize], nr: usize) -> Option<&[f64]> {
        let end = *self.active_end.get(k)? as usize;
        let start = if k == 0 {
            0
        } else {
            self.active_end[k - 1] as usize
        };
        let recorded = &self.active[start..end];
        let same =
            recorded.len() == active.len() && recorded.iter().zip(active).all(|(a, b)| a == b);
        same.then(|| &self.slopes[k * nr..(k + 1) * nr])
    }

    /// The next filling records its rounds.
    fn record(&mut self) {
        self.mode = TraceMode::Record;
    }
}

/// What a filling round reads of one class, together.
#[derive(Debug, Clone, Copy)]
struct Rising {
    /// Its cap (speed) and the rate level at which it reaches it, in this filling.
    cap: f64,
    cap_level: f64,
    /// Its `phi`: speed x scale is its rate level.
    scale: f64,
    /// Its slice of `flat`, and a mask of the resources it draws on (bits past 64 all
    /// set).
    draws: (u32, u32),
    touches: u64,
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
mod fill_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn class(count: u32, weights: &[(usize, f64)], latency_frac: f64) -> ClassDemand {
        ClassDemand {
            count,
            weights: weights.to_vec(),
            latency_frac,
            ..Default::default()
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
            weights,
            dram_policy: policy,
            write_frac: if rng.below(2) == 0 {
                f64::NAN
            } else {
                rng.unit()
            },
            ..Default::default()
        };
        if !simple {
            c.count = rng.below(3) as u32;
            c.latency_frac = 0.5 * rng.unit();
            c.line_bound = if rng.below(2) == 0 { 3000.0 } else { 0.0 };
            c.compute_frac = 0.3 * rng.unit();
            c.host_frac = 0.5 * rng.unit();
            c.host_pool = nr - 1;
        }
        c
    }

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

    #[test]
    fn classes_without_demands_run_at_full_speed() {
        let (out, _) = solve(&[10.0], &[class(7, &[], 0.0)], &LatencyCurve::flat());
        assert_eq!(out[0].speed, 1.0);
    }

    fn with_policy(mut c: ClassDemand, p: DramPolicy) -> ClassDemand {
        c.dram_policy = p;
        c
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
        let (out, s) = solve(&[100.0, 50.0], &classes, &LatencyCurve::flat());
        assert!((out[0].speed - 1.0).abs() < 1e-9, "{out:?}");
        assert!((out[1].speed - 0.5).abs() < 1e-9, "{out:?}");
        assert_eq!(out[1].limiter, Some(Limiter::Rate(RateId::from_index(0))));
        assert!((s.usage[0] - 100.0).abs() < 1e-9);
        // Max-min (v1) instead: the DMA's rate level is in PCIe GB/s (phi 50), the
        // stream's in DRAM GB/s (phi 80); both rise to lambda with 60/50 + 80/80 per unit
        // on DRAM: lambda = 100 / 2.2, so the DMA slows to 45.45/50 = 0.909.
        let v1 = [class(1, &[(0, 60.0), (1, 50.0)], 0.0), classes[1].clone()];
        let (out, _) = solve(&[100.0, 50.0], &v1, &LatencyCurve::flat());
        assert!(
            (out[0].speed - (100.0 / 2.2) / 50.0).abs() < 1e-9,
            "{out:?}"
        );
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
        let (out, s) = solve(&[100.0, 55.0], &classes, &LatencyCurve::flat());
        assert!((out[0].speed - 2.0 / 3.0).abs() < 1e-9, "{out:?}");
        assert!((out[1].speed - 2.0 / 3.0).abs() < 1e-9, "{out:?}");
        assert!((s.usage[0] - 100.0).abs() < 1e-9);
        // Without streams a proportional DMA runs as fast as its link allows.
        let (out, _) = solve(&[100.0, 55.0], &classes[..1], &LatencyCurve::flat());
        assert_eq!(out[0].speed, 1.0);
    }

    #[test]
    fn little_law_bound_slows_a_stream_as_its_own_latency_rises() {
        // One thread keeps enough lines in flight for 20 GB/s at the idle 100 ns
        // (line bound 20 x 100). L(u) = 100 + 200u, capacity 100. At the fixed point
        // speed = 100 / L and u = 20 speed / 100, so 200u^2 + 100u - 20 = 0:
        // u = (-100 + sqrt(26000)) / 400 = 0.153113, speed = 100 / (100 + 200u) = 0.765564.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
        let mut c = class(1, &[(0, 20.0)], 0.0);
        c.line_bound = 20.0 * 100.0;
        let (out, s) = solve(&[100.0], &[c.clone()], &curve);
        let u = (-100.0 + 26000.0_f64.sqrt()) / 400.0;
        assert!((s.dram_utilisation - u).abs() < 1e-8, "{s:?}");
        assert!(
            (out[0].speed - 100.0 / (100.0 + 200.0 * u)).abs() < 1e-8,
            "{out:?}"
        );
        assert_eq!(out[0].limiter, Some(Limiter::DramLatency));
        // Twice the lines in flight: the bound (40 GB/s at 100 ns, 20 GB/s only at 200 ns)
        // never binds at this load, so it runs at standalone speed.
        c.line_bound = 40.0 * 100.0;
        let (out, s) = solve(&[100.0], &[c], &curve);
        assert_eq!(out[0].speed, 1.0);
        assert!((s.dram_utilisation - 0.2).abs() < 1e-12);
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
        streams.line_bound = 18.7 * 146.0;
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
    fn staged_copy_is_capped_by_its_memcpy_at_the_loaded_latency() {
        // DRAM 100 (0), PCIe 50 (1), L = 100 + 100u. A stream wants 150: u = 1, latency
        // doubles. A staged copy streaming 10 GB/s (30 of DRAM), memcpy-bound (headroom 1),
        // setup a tenth of its time: streaming part at 1/2, speed 1 / (0.1 + 0.9 x 2) =
        // 0.526316; it draws 15.789 of DRAM and the stream the rest, 84.21 of 150.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let mut copy = class(1, &[(0, 30.0), (1, 10.0)], 0.0);
        copy.staging = Some(StagedCopy {
            setup_frac: 0.1,
            memcpy_headroom: 1.0,
            memcpy_pace: MemcpyPace::LatencyBound,
        });
        let stream = class(1, &[(0, 150.0)], 0.0);
        let (out, s) = solve(&[100.0, 50.0], &[copy.clone(), stream.clone()], &curve);
        let speed = 1.0 / (0.1 + 0.9 * 2.0);
        assert!((out[0].speed - speed).abs() < 1e-9, "{out:?}");
        assert_eq!(out[0].limiter, Some(Limiter::DramLatency));
        assert!(
            (out[1].speed * 150.0 - (100.0 - 30.0 * speed)).abs() < 1e-6,
            "{out:?}"
        );
        assert!((s.latency_slowdown - 2.0).abs() < 1e-9);
        // Posted stores do not wait on latency: the copy keeps its standalone speed.
        copy.staging.as_mut().unwrap().memcpy_pace = MemcpyPace::Posted;
        let (out, _) = solve(&[100.0, 50.0], &[copy, stream], &curve);
        assert_eq!(out[0].speed, 1.0);
    }

    fn pool_solver(per_thread: bool, cpu: Option<CpuThroughput>) -> Solver {
        Solver::with_pools(vec![PoolRule {
            resource: 1,
            per_thread,
            cpu,
        }])
    }

    #[test]
    fn per_thread_pool_slows_every_stage_by_the_same_fraction() {
        // DRAM (0) idle, a pool of 16 threads (1). A 16-thread, a 1-thread and a 4-thread
        // stage want 21 threads. Per thread (CFS): each thread gets 16/21, so every stage
        // runs at 16/21 = 0.761905. By activity (v1): the 1- and 4-thread stages keep
        // their threads (rate level 4 < 11) and the wide one gets the 11 left: 11/16.
        let classes = [
            class(1, &[(1, 16.0)], 0.0),
            class(1, &[(1, 1.0)], 0.0),
            class(1, &[(1, 4.0)], 0.0),
        ];
        let caps = [100.0, 16.0];
        let mut out = Vec::new();
        let mut s = pool_solver(true, None);
        s.solve(&caps, 0, &LatencyCurve::flat(), &classes, &mut out);
        for o in &out {
            assert!((o.speed - 16.0 / 21.0).abs() < 1e-9, "{out:?}");
        }
        assert!((s.usage[1] - 16.0).abs() < 1e-9);
        let (out, _) = solve(&caps, &classes, &LatencyCurve::flat());
        assert_eq!(out[1].speed, 1.0);
        assert_eq!(out[2].speed, 1.0);
        assert!((out[0].speed - 11.0 / 16.0).abs() < 1e-9, "{out:?}");
    }

    #[test]
    fn compute_bound_share_slows_with_the_per_thread_throughput() {
        // Pool of 16 threads, no SMT, per-core throughput 1.0 with 1 core active falling
        // linearly to 0.8 with 16. A one-thread stage entirely compute bound beside a
        // 7-thread stage half compute bound: 8 threads active, per_thread(8) =
        // 1 - 0.2 x 7/15 = 0.906667. The one-thread stage ran alone at 1.0, so it runs
        // at 0.906667. The 7-thread one ran alone at per_thread(7) = 0.92: its compute
        // half is 0.92/0.906667 = 1.014706 slower, speed 1/(0.5 + 0.5 x 1.014706) = 0.992701.
        let cpu = CpuThroughput {
            physical_cores: 16,
            threads_per_core: 1,
            smt_yield: 1.0,
            per_core: vec![(1.0, 1.0), (16.0, 0.8)],
        };
        let mut one = class(1, &[(1, 1.0)], 0.0);
        one.compute_frac = 1.0;
        let mut seven = class(1, &[(1, 7.0)], 0.0);
        seven.compute_frac = 0.5;
        let mut out = Vec::new();
        let mut s = pool_solver(false, Some(cpu));
        s.solve(
            &[100.0, 16.0],
            0,
            &LatencyCurve::flat(),
            &[one.clone(), seven],
            &mut out,
        );
        let p8 = 1.0 - 0.2 * 7.0 / 15.0;
        assert!((out[0].speed - p8).abs() < 1e-9, "{out:?}");
        let slow = (1.0 - 0.2 * 6.0 / 15.0) / p8;
        assert!(
            (out[1].speed - 1.0 / (0.5 + 0.5 * slow)).abs() < 1e-9,
            "{out:?}"
        );
        assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
        // Alone, it runs at standalone speed.
        s.solve(&[100.0, 16.0], 0, &LatencyCurve::flat(), &[one], &mut out);
        assert_eq!(out[0].speed, 1.0);
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
        read.write_frac = 0.0;
        let chase = class(1, &[], 1.0);
        let (out, s) = solve(&[100.0], &[read.clone(), chase.clone()], &curve);
        assert!((out[1].speed - 100.0 / 150.0).abs() < 1e-9, "{out:?}");
        assert!((s.latency_slowdown - 1.5).abs() < 1e-9);
        let mut half = read.clone();
        half.weights = vec![(0, 25.0)];
        let mut base = class(1, &[(0, 25.0)], 0.0);
        base.write_frac = f64::NAN;
        let (out, _) = solve(&[100.0], &[half, base, chase], &curve);
        assert!((out[2].speed - 100.0 / 175.0).abs() < 1e-9, "{out:?}");
    }
}
