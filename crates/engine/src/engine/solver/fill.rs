//! Progressive filling: all rising classes' rates go up together until a resource
//! saturates or a class reaches its cap; those classes freeze at that level and the
//! others keep rising on what is left. The weights it reads are flattened once per solve.

use crate::engine::observer::{Limiter, RateId};
use crate::model::{DramPolicy, LatencyCurve};

use super::trace::TraceMode;
use super::{ClassDemand, ClassSpeed, PRIORITY_SHARE, Solver};

impl Solver {
    /// A class's `phi`: its draw on the resource that is tightest for it (largest share
    /// of its capacity), in that resource's own unit; on a per-thread pool, the pool's
    /// capacity (every pool-bound class rises at the same speed).
    pub(super) fn phi(&self, capacities: &[f64], c: &ClassDemand) -> f64 {
        let (_, dom, tightest) = c
            .key
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

    /// Each class's `phi` (its `scale`: speed x scale is its rate level).
    pub(super) fn set_phis(&mut self, capacities: &[f64], classes: &[ClassDemand]) {
        self.scale.clear();
        for c in classes {
            // (An idle class's phi is never read: it takes no part in the filling.)
            let phi = if c.count > 0 {
                self.phi(capacities, c)
            } else {
                0.0
            };
            self.scale.push(phi);
        }
    }

    /// A proportional class rises at the speed of the heaviest max-min DRAM class: it
    /// takes that class's `phi`.
    pub(super) fn match_proportional(&mut self, dram: usize, classes: &[ClassDemand]) {
        if classes
            .iter()
            .any(|c| c.count > 0 && c.key.dram_policy == DramPolicy::Proportional)
        {
            let heaviest = classes
                .iter()
                .enumerate()
                .filter(|(_, c)| c.count > 0 && c.key.dram_policy == DramPolicy::MaxMin)
                .filter_map(|(i, c)| Some((i, c.dram_weight(dram)?)))
                .fold(None, |best: Option<(usize, f64)>, x| match best {
                    Some(b) if b.1 >= x.1 => Some(b),
                    _ => Some(x),
                });
            if let Some((j, _)) = heaviest {
                for (i, c) in classes.iter().enumerate() {
                    if c.key.dram_policy == DramPolicy::Proportional
                        && c.dram_weight(dram).is_some()
                        && self.scale[j] > 0.0
                    {
                        self.scale[i] = self.scale[j];
                    }
                }
            }
        }
    }

    /// Each running class's weights flattened with their per-class factors, which
    /// classes take part (and in which phase), and each class's view for the rounds
    /// (caps not yet set).
    pub(super) fn flatten(&mut self, dram: usize, classes: &[ClassDemand]) {
        self.base_active.clear();
        self.priority.clear();
        self.rest.clear();
        self.flat.clear();
        self.flat_range.clear();
        self.rising.clear();
        self.dram_loads.clear();
        for (i, c) in classes.iter().enumerate() {
            let dom = self.scale[i];
            let start = self.flat.len() as u32;
            // The resources it draws on (all, as far as the mask can tell, past 64).
            let mut touches = 0u64;
            if c.count > 0 {
                for &(r, w) in &c.key.weights {
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
                    if c.key.dram_policy == DramPolicy::Priority {
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
    }

    /// The capacities of the priority classes' first pass: [`PRIORITY_SHARE`] of each
    /// resource a running non-priority class draws on (see `fill`).
    pub(super) fn bound_priority(&mut self, capacities: &[f64]) {
        self.priority_caps.clear();
        self.priority_caps.extend_from_slice(capacities);
        self.priority_bounded.clear();
        self.priority_bounded.resize(capacities.len(), false);
        if self.priority.is_empty() {
            return;
        }
        for &i in &self.rest {
            let (a, b) = self.flat_range[i];
            for w in &self.flat[a as usize..b as usize] {
                self.priority_caps[w.r] = capacities[w.r] * PRIORITY_SHARE;
                self.priority_bounded[w.r] = true;
            }
        }
    }

    /// Progressive filling at a given DRAM utilisation `u` (which sets latency caps).
    /// [`Solver::prepare`] must have run for the same classes, and `out` start from its
    /// `fixed_out` (a filling rewrites only the entries fillings change). Sums only
    /// DRAM's draw (`dram_draw`, `offered`); [`Solver::settle`] sums every resource's.
    pub(super) fn fill(
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
        let phases = if self.priority.is_empty() { 1 } else { 3 };
        // The priority pass's capacities, moved out for the loop (put back below).
        let priority_caps = std::mem::take(&mut self.priority_caps);
        self.priority_again.clear();
        // Each round raises the common rate level `lambda` until a resource
        // saturates or a class reaches its cap; those classes freeze. Priority classes
        // (if any) are filled first, up to their share of what the others draw on too;
        // the others in a second phase on what is left; last, the priority classes
        // that their share held rise again on what the others left.
        for phase in 0..phases {
            self.active.clear();
            let phase_caps = if phases > 1 && phase == 0 {
                &priority_caps[..]
            } else {
                capacities
            };
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
            } else if phase == 1 {
                self.active.extend_from_slice(&self.rest);
            } else {
                // Unfreeze them: they rise again from nothing, and the room they left
                // is at least what they had.
                for &i in &self.priority_again {
                    let (speed, (a, b)) = (out[i].speed, self.rising[i].draws);
                    for w in &self.flat[a as usize..b as usize] {
                        self.frozen_load[w.r] -= w.load * speed;
                    }
                }
                self.active.extend_from_slice(&self.priority_again);
            }
            // Recording stops at the first round a latency-dependent cap takes part in
            // (that round's rooms are still kept: later fillings enter it alike).
            let mut tracing = recording;
            while !self.active.is_empty() {
                // What the round reads and writes of the solver, borrowed apart from the
                // trace (which it writes too).
                let flat = &self.flat[..];
                let rising = &self.rising[..];
                let active = &self.active[..];
                let frozen_load = &mut self.frozen_load[..nr];
                // Each resource's saturation level, once per round (NaN where nothing
                // rising draws on it: never `<=` any level, so never saturated). The
                // first round after those repeated starts where the first filling's
                // did: the same rooms.
                let mut lambda;
                let room: &[f64] = if round == repeated && round < self.trace.roomed() {
                    lambda = self.trace.lambda_rooms[round];
                    &self.trace.rooms[round * nr..(round + 1) * nr]
                } else {
                    // Summed once per solve for each round's rising classes.
                    let sums = round * phases + phase;
                    let slope: &[f64] = match self.trace.slopes(sums, active) {
                        Some(s) => s,
                        None => {
                            let slope = self.trace.sum_into(sums, active, nr);
                            for &i in active {
                                let (a, b) = rising[i].draws;
                                for w in &flat[a as usize..b as usize] {
                                    slope[w.r] += w.slope;
                                }
                            }
                            slope
                        }
                    };
                    let room = &mut self.room[..nr];
                    lambda = f64::INFINITY;
                    for ((room, &cap), (&load, &slope)) in (room.iter_mut())
                        .zip(phase_caps)
                        .zip(frozen_load.iter().zip(slope))
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
                        self.trace.rooms.extend_from_slice(room);
                        self.trace.lambda_rooms.push(lambda);
                    }
                    room
                };
                let least_room = lambda;
                for &i in active {
                    lambda = lambda.min(rising[i].cap_level);
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
                for &i in active {
                    let c = &rising[i];
                    let at_cap = c.cap_level <= level;
                    let on_saturated = if c.touches & saturated != 0 {
                        c.draws(flat).iter().find(|w| room[w.r] <= level)
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
                        for w in c.draws(flat) {
                            frozen_load[w.r] += w.load * speed;
                        }
                        let bounded = |w: &Weight| self.priority_bounded[w.r];
                        if phase == 0 && phases > 1 && !at_cap && on_saturated.is_some_and(bounded)
                        {
                            self.priority_again.push(i);
                        }
                        if tracing {
                            self.trace.frozen.push((i, out[i]));
                        }
                    } else {
                        still.push(i);
                    }
                }
                let stuck = still.len() == active.len();
                if stuck {
                    // Numerical corner: nothing froze; freeze everything at this level.
                    for &i in &still {
                        let c = &rising[i];
                        let speed = (lambda / c.scale).min(c.cap);
                        out[i].speed = speed;
                        for w in c.draws(flat) {
                            frozen_load[w.r] += w.load * speed;
                        }
                    }
                    still.clear();
                }
                if tracing {
                    tracing = self.trace_round(stuck, lambda, level, frozen_from, &still);
                }
                self.still = std::mem::replace(&mut self.active, still);
                round += 1;
            }
        }
        self.priority_caps = priority_caps;
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
}

/// What a filling round reads of one class, together.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rising {
    /// Its cap (speed) and the rate level at which it reaches it, in this filling.
    pub(super) cap: f64,
    pub(super) cap_level: f64,
    /// Its `phi`: speed x scale is its rate level.
    pub(super) scale: f64,
    /// Its slice of `flat`, and a mask of the resources it draws on (bits past 64 all
    /// set).
    pub(super) draws: (u32, u32),
    pub(super) touches: u64,
}

impl Rising {
    /// Its draws, in `flat`.
    fn draws<'a>(&self, flat: &'a [Weight]) -> &'a [Weight] {
        &flat[self.draws.0 as usize..self.draws.1 as usize]
    }
}

/// One class's draw on one resource, with the factors the filling needs.
#[derive(Debug, Clone, Copy)]
pub(super) struct Weight {
    pub(super) r: usize,
    /// count * w: the class's draw at speed 1.
    pub(super) load: f64,
    /// count * w / phi: how fast the draw grows with the common rate level.
    pub(super) slope: f64,
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{class, pool_solver, solve, with_policy};
    use crate::engine::observer::{Limiter, RateId};
    use crate::model::{DramPolicy, LatencyCurve};

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
    fn classes_without_demands_run_at_full_speed() {
        let (out, _) = solve(&[10.0], &[class(7, &[], 0.0)], &LatencyCurve::flat());
        assert_eq!(out[0].speed, 1.0);
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
        // Max-min instead: the DMA's rate level is in PCIe GB/s (phi 50), the
        // stream's in DRAM GB/s (phi 80); both rise to lambda with 60/50 + 80/80 per unit
        // on DRAM: lambda = 100 / 2.2, so the DMA slows to 45.45/50 = 0.909.
        let max_min = [class(1, &[(0, 60.0), (1, 50.0)], 0.0), classes[1].clone()];
        let (out, _) = solve(&[100.0, 50.0], &max_min, &LatencyCurve::flat());
        assert!(
            (out[0].speed - (100.0 / 2.2) / 50.0).abs() < 1e-9,
            "{out:?}"
        );
    }

    #[test]
    fn priority_dmas_that_would_fill_dram_leave_the_streams_a_quarter() {
        // Two GPUs download at once: each D2H DMA moves 55 GB/s on its own link and
        // writes 1.96 x 55 = 107.8 GB/s of DRAM (216 of 199). A stream wants 120. Served
        // first without bound the DMAs would take all 199 and stop the stream; the
        // priority pass takes at most 3/4 (149.25, 74.6 each: speed 0.692) and the
        // stream gets the quarter left (49.75 of its 120).
        let dma = |link| {
            with_policy(
                class(1, &[(0, 107.8), (link, 55.0)], 0.0),
                DramPolicy::Priority,
            )
        };
        let classes = [dma(1), dma(2), class(1, &[(0, 120.0)], 0.0)];
        let (out, s) = solve(&[199.0, 55.0, 55.0], &classes, &LatencyCurve::flat());
        let dma_speed = 0.75 * 199.0 / 2.0 / 107.8;
        assert!((out[0].speed - dma_speed).abs() < 1e-9, "{out:?}");
        assert!((out[1].speed - dma_speed).abs() < 1e-9, "{out:?}");
        assert!(
            (out[2].speed * 120.0 - 0.25 * 199.0).abs() < 1e-9,
            "{out:?}"
        );
        assert!((s.usage[0] - 199.0).abs() < 1e-9);
        // A stream that wants less than the quarter leaves the rest to the DMAs: they
        // take it in the last pass (199 - 30 = 169, 84.5 each).
        let small = [dma(1), dma(2), class(1, &[(0, 30.0)], 0.0)];
        let (out, _) = solve(&[199.0, 55.0, 55.0], &small, &LatencyCurve::flat());
        assert_eq!(out[2].speed, 1.0, "{out:?}");
        assert!((out[0].speed * 107.8 - 84.5).abs() < 1e-9, "{out:?}");
        assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(0))));
    }

    #[test]
    fn a_priority_dma_does_not_starve_a_copy_on_its_link() {
        // A pinned D2H DMA (priority) and a pageable copy paced by its memcpy (max-min)
        // on one 50 GB/s link, DRAM idle: the DMA takes 3/4 of the link first, the copy
        // the quarter it wants at most, and the DMA nothing more (the copy wants 20).
        let classes = [
            with_policy(class(1, &[(0, 50.0), (1, 50.0)], 0.0), DramPolicy::Priority),
            class(1, &[(0, 40.0), (1, 20.0)], 0.0),
        ];
        let (out, _) = solve(&[1000.0, 50.0], &classes, &LatencyCurve::flat());
        assert!((out[0].speed - 0.75).abs() < 1e-9, "{out:?}");
        assert!((out[1].speed - 12.5 / 20.0).abs() < 1e-9, "{out:?}");
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
    fn per_thread_pool_slows_every_stage_by_the_same_fraction() {
        // DRAM (0) idle, a pool of 16 threads (1). A 16-thread, a 1-thread and a 4-thread
        // stage want 21 threads. Per thread (CFS): each thread gets 16/21, so every stage
        // runs at 16/21 = 0.761905. By activity: the 1- and 4-thread stages keep
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
}
