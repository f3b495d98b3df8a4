//! Progressive filling: all rising classes' rates go up together until a resource
//! saturates or a class reaches its cap; those classes freeze at that level and the
//! others keep rising on what is left. The DRAM policies are orders of phases:
//! max-min classes rise together in one phase; priority classes rise first (bounded on
//! what the others draw on too), then the others, then the bounded priority classes
//! again; a proportional class rises at the speed of the heaviest max-min DRAM class.

use crate::engine::ids::{Limiter, RateId};
use crate::model::DramPolicy;

use super::cap_table::{CapTable, Latency};
use super::system::{ClassDemand, ClassSpeed, System};

/// The most of a resource's capacity that priority classes take before the others are
/// served, on each resource the others draw on too. An estimate: calibrate saw one D2H
/// DMA's posted writes take up to 0.54 of DRAM's capacity (d2h_dram_factor 1.96 on an
/// H200 boot; 0.51 in accuracy run 6) while the streams absorbed the whole loss, and
/// never measured what a controller does when the writes alone would fill the
/// channels (two or more GPUs downloading at once). Three quarters keeps every
/// measured case as it was and leaves the cores' loads at least a quarter, so they
/// always progress.
pub const PRIORITY_SHARE: f64 = 0.75;

/// Which classes rise in a phase of the filling, against which capacities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Every running class (no priority class runs).
    All,
    /// The priority classes, on [`PRIORITY_SHARE`] of each resource the others draw on.
    Priority,
    /// The others, on what the priority classes left.
    Rest,
    /// The priority classes that bound held, again from nothing, on what is left.
    PriorityAgain,
}

/// One progressive filling's weights, phases and state.
#[derive(Debug, Default, Clone)]
pub struct Filling {
    /// `C_r`, per resource.
    pub(super) capacities: Vec<f64>,
    /// The capacities of the [`Phase::Priority`] pass, and which resources it bounds.
    priority_caps: Vec<f64>,
    bounded: Vec<bool>,
    /// The classes that run (have members).
    running: Vec<usize>,
    /// The classes that rise (running, with some draw): all, the priority ones, the rest.
    pub(super) rising_classes: Vec<usize>,
    priority: Vec<usize>,
    rest: Vec<usize>,
    /// Every running class's draws, class after class.
    pub(super) draws: Vec<Draw>,
    /// Per class, what a round reads of it.
    pub(super) rising: Vec<Rising>,
    /// Each class's draw at speed 1 on DRAM (class, count x weight), in class order.
    dram_loads: Vec<(usize, f64)>,
    dram: usize,

    // One filling's state.
    /// The rising classes of this round, and those still rising after it.
    pub(super) active: Vec<usize>,
    pub(super) still: Vec<usize>,
    /// Per resource: the load of the frozen classes, each round's summed slope of the
    /// rising ones and the rate level at which it saturates.
    pub(super) frozen_load: Vec<f64>,
    pub(super) slope: Vec<f64>,
    pub(super) room: Vec<f64>,
    /// Priority classes the bounded pass held on a bounded resource: they rise again.
    again: Vec<usize>,
    /// Scratch for each class's `phi` while the weights are set.
    phis: Vec<f64>,
}

/// What a filling round reads of one class, together.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rising {
    /// Its cap (speed) and the rate level at which it reaches it, in this filling.
    pub cap: f64,
    pub cap_level: f64,
    /// Its `phi`: speed x phi is its rate level.
    pub phi: f64,
    /// Its slice of `draws`, and a mask of the resources it draws on (bits past 64 all
    /// set).
    pub draws: (u32, u32),
    pub touches: u64,
}

/// One class's draw on one resource.
#[derive(Debug, Clone, Copy)]
pub(super) struct Draw {
    pub r: usize,
    /// count x w: the class's draw at speed 1.
    pub load: f64,
    /// count x w / phi: how fast the draw grows with the common rate level.
    pub slope: f64,
}

/// DRAM's load after a filling: what the fixed point reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DramLoad {
    /// Its draw, GB/s.
    pub draw: f64,
    /// What the classes would draw at their caps with DRAM unconstrained, GB/s.
    pub offered: f64,
}

/// How one round ended.
#[derive(Debug, Clone, Copy)]
pub(super) struct RoundEnd {
    /// The rate level the rising classes reached, and the level (a hair above) at or
    /// below which a cap or a resource counts as reached.
    pub lambda: f64,
    pub level: f64,
    /// Nothing froze by the rules, so everything did at `lambda`.
    pub stuck: bool,
}

impl Filling {
    /// The weights of `system`'s classes, each class's `phi`, and the phases.
    pub fn set(&mut self, system: &System) {
        let (capacities, classes) = (system.capacities, system.classes);
        self.capacities.clear();
        self.capacities.extend_from_slice(capacities);
        self.dram = system.dram;
        let mut phis = std::mem::take(&mut self.phis);
        phis.clear();
        phis.extend((classes.iter()).map(|c| if c.count > 0 { phi(system, c) } else { 0.0 }));
        match_proportional(system, &mut phis);
        self.running.clear();
        self.rising_classes.clear();
        self.priority.clear();
        self.rest.clear();
        self.draws.clear();
        self.rising.clear();
        self.dram_loads.clear();
        for (i, c) in classes.iter().enumerate() {
            let phi = phis[i];
            let start = self.draws.len() as u32;
            let mut touches = 0u64;
            if c.count > 0 {
                self.running.push(i);
                for &(r, w) in &c.key.weights {
                    touches |= 1u64.checked_shl(r as u32).unwrap_or(u64::MAX);
                    let load = c.count as f64 * w;
                    self.draws.push(Draw {
                        r,
                        load,
                        slope: load / phi,
                    });
                    if r == system.dram {
                        self.dram_loads.push((i, load));
                    }
                }
                if phi > 0.0 {
                    self.rising_classes.push(i);
                    if c.key.dram_policy == DramPolicy::Priority {
                        self.priority.push(i);
                    } else {
                        self.rest.push(i);
                    }
                }
            }
            self.rising.push(Rising {
                cap: f64::NAN,
                cap_level: f64::NAN,
                phi,
                draws: (start, self.draws.len() as u32),
                touches,
            });
        }
        self.phis = phis;
        self.bound_priority();
    }

    /// The phases, in order.
    pub fn order(&self) -> &'static [Phase] {
        if self.priority.is_empty() {
            &[Phase::All]
        } else {
            &[Phase::Priority, Phase::Rest, Phase::PriorityAgain]
        }
    }

    /// One filling with the caps `caps` gives at `latency`: each running class's speed
    /// and what held it, into `out`.
    pub fn fill(&mut self, caps: &CapTable, latency: Latency, out: &mut [ClassSpeed]) -> DramLoad {
        self.start(caps, latency, out);
        for &phase in self.order() {
            self.enter(phase, out);
            while !self.active.is_empty() {
                self.sum_slopes();
                let least_room = self.rooms(phase);
                self.freeze(phase, least_room, out);
            }
        }
        self.dram_load(out)
    }

    /// Every running class at its cap, nothing frozen.
    #[inline(always)]
    pub(super) fn start(&mut self, caps: &CapTable, latency: Latency, out: &mut [ClassSpeed]) {
        for &i in &self.running {
            let cap = caps.at(i, latency);
            out[i] = cap;
            let rising = &mut self.rising[i];
            rising.cap = cap.speed;
            rising.cap_level = cap.speed * rising.phi;
        }
        let nr = self.capacities.len();
        for v in [&mut self.frozen_load, &mut self.slope, &mut self.room] {
            v.resize(nr, 0.0);
        }
        self.frozen_load.fill(0.0);
        self.again.clear();
    }

    /// The classes of `phase` start rising.
    pub(super) fn enter(&mut self, phase: Phase, out: &[ClassSpeed]) {
        self.active.clear();
        match phase {
            Phase::All => self.active.extend_from_slice(&self.rising_classes),
            Phase::Priority => self.active.extend_from_slice(&self.priority),
            Phase::Rest => self.active.extend_from_slice(&self.rest),
            Phase::PriorityAgain => {
                // They rise again from nothing: the room they left is at least what
                // they had.
                for &i in &self.again {
                    let (a, b) = self.rising[i].draws;
                    for w in &self.draws[a as usize..b as usize] {
                        self.frozen_load[w.r] -= w.load * out[i].speed;
                    }
                }
                self.active.extend_from_slice(&self.again);
            }
        }
    }

    /// Each resource's slope: how fast the rising classes' draw on it grows with the
    /// common rate level.
    pub(super) fn sum_slopes(&mut self) {
        self.slope.fill(0.0);
        sum_slopes(&self.active, &self.rising, &self.draws, &mut self.slope);
    }

    /// Each resource's room at this round's slopes (see [`room_levels`]); returns the
    /// least.
    pub(super) fn rooms(&mut self, phase: Phase) -> f64 {
        let capacities = match phase {
            Phase::Priority => &self.priority_caps,
            _ => &self.capacities,
        };
        room_levels(capacities, &self.frozen_load, &self.slope, &mut self.room)
    }

    /// [`Filling::rooms`] at the slopes `slope`.
    pub(super) fn rooms_at(&mut self, phase: Phase, slope: &[f64]) -> f64 {
        let capacities = match phase {
            Phase::Priority => &self.priority_caps,
            _ => &self.capacities,
        };
        room_levels(capacities, &self.frozen_load, slope, &mut self.room)
    }

    /// One round: the rising classes rise to the least of the resources' rooms and
    /// their cap levels; those at their cap or on a resource that saturated there
    /// freeze (held by that resource), and the others rise on in the next round.
    #[inline(always)]
    pub(super) fn freeze(
        &mut self,
        phase: Phase,
        least_room: f64,
        out: &mut [ClassSpeed],
    ) -> RoundEnd {
        let (draws, rising, room) = (&self.draws[..], &self.rising[..], &self.room[..]);
        let mut lambda = least_room;
        for &i in &self.active {
            lambda = lambda.min(rising[i].cap_level);
        }
        let level = lambda * (1.0 + 1e-9);
        // The saturated resources as a mask where resources are few (none saturates
        // when even the least room is above the level; past 64, every class looks).
        let saturated = if least_room > level {
            0
        } else if room.len() <= 64 {
            (room.iter().rev()).fold(0u64, |m, &l| (m << 1) | (l <= level) as u64)
        } else {
            u64::MAX
        };
        self.still.clear();
        for &i in &self.active {
            let c = &rising[i];
            let my_draws = &draws[c.draws.0 as usize..c.draws.1 as usize];
            let at_cap = c.cap_level <= level;
            let on_saturated = if c.touches & saturated != 0 {
                my_draws.iter().find(|w| room[w.r] <= level)
            } else {
                None
            };
            if !at_cap && on_saturated.is_none() {
                self.still.push(i);
                continue;
            }
            let speed = if at_cap {
                c.cap
            } else {
                (lambda / c.phi).min(c.cap)
            };
            let limiter = match on_saturated {
                Some(w) if !at_cap => Some(Limiter::Rate(RateId::from_index(w.r))),
                _ => out[i].limiter,
            };
            out[i] = ClassSpeed { speed, limiter };
            for w in my_draws {
                self.frozen_load[w.r] += w.load * speed;
            }
            let bounded = |w: &Draw| self.bounded[w.r];
            if phase == Phase::Priority && !at_cap && on_saturated.is_some_and(bounded) {
                self.again.push(i);
            }
        }
        let stuck = self.still.len() == self.active.len();
        if stuck {
            // Numerical corner: nothing froze; freeze everything at this level.
            for &i in &self.still {
                let c = &rising[i];
                let speed = (lambda / c.phi).min(c.cap);
                out[i].speed = speed;
                for w in &draws[c.draws.0 as usize..c.draws.1 as usize] {
                    self.frozen_load[w.r] += w.load * speed;
                }
            }
            self.still.clear();
        }
        std::mem::swap(&mut self.active, &mut self.still);
        RoundEnd {
            lambda,
            level,
            stuck,
        }
    }

    /// DRAM's draw and offered load at the speeds `out`.
    pub(super) fn dram_load(&self, out: &[ClassSpeed]) -> DramLoad {
        let held = Some(Limiter::Rate(RateId::from_index(self.dram)));
        let (mut draw, mut offered) = (0.0, 0.0);
        for &(i, load) in &self.dram_loads {
            draw += load * out[i].speed;
            // Held back by DRAM itself: it offers what its cap allows.
            let at = if out[i].limiter == held {
                self.rising[i].cap
            } else {
                out[i].speed
            };
            offered += load * at;
        }
        DramLoad { draw, offered }
    }

    /// Every resource's draw at the speeds `out`, into `usage`.
    pub fn usage(&self, out: &[ClassSpeed], usage: &mut Vec<f64>) {
        usage.clear();
        usage.resize(self.capacities.len(), 0.0);
        for (rising, o) in self.rising.iter().zip(out) {
            for w in &self.draws[rising.draws.0 as usize..rising.draws.1 as usize] {
                usage[w.r] += w.load * o.speed;
            }
        }
    }

    /// The capacities of the priority pass: [`PRIORITY_SHARE`] of each resource a
    /// running non-priority class draws on.
    fn bound_priority(&mut self) {
        self.priority_caps.clear();
        self.priority_caps.extend_from_slice(&self.capacities);
        self.bounded.clear();
        self.bounded.resize(self.capacities.len(), false);
        if self.priority.is_empty() {
            return;
        }
        for &i in &self.rest {
            let (a, b) = self.rising[i].draws;
            for w in &self.draws[a as usize..b as usize] {
                self.priority_caps[w.r] = self.capacities[w.r] * PRIORITY_SHARE;
                self.bounded[w.r] = true;
            }
        }
    }
}

/// Adds each `active` class's slopes to `slope`, per resource.
pub(super) fn sum_slopes(active: &[usize], rising: &[Rising], draws: &[Draw], slope: &mut [f64]) {
    for &i in active {
        let (a, b) = rising[i].draws;
        for w in &draws[a as usize..b as usize] {
            slope[w.r] += w.slope;
        }
    }
}

/// Each resource's room: the rate level at which it saturates, NaN where nothing rising
/// draws on it (never `<=` any level, so never saturated). Returns the least room.
fn room_levels(capacities: &[f64], frozen_load: &[f64], slope: &[f64], room: &mut [f64]) -> f64 {
    let mut least = f64::INFINITY;
    for ((room, &cap), (&load, &slope)) in (room.iter_mut())
        .zip(capacities)
        .zip(frozen_load.iter().zip(slope))
    {
        *room = if slope > 0.0 {
            let l = (cap - load).max(0.0) / slope;
            least = least.min(l);
            l
        } else {
            f64::NAN
        };
    }
    least
}

/// A class's `phi`: its draw on the resource that is tightest for it (largest share of
/// its capacity), in that resource's own unit; on a per-thread pool, the pool's capacity
/// (every pool-bound class rises at the same speed).
fn phi(system: &System, c: &ClassDemand) -> f64 {
    let capacities = system.capacities;
    let (_, dom, tightest) = (c.key.weights.iter())
        .map(|&(r, w)| (w / capacities[r], w, r))
        .fold(
            (0.0, 0.0, usize::MAX),
            |best, x| {
                if x.0 > best.0 { x } else { best }
            },
        );
    if system.per_thread_pool(tightest) {
        capacities[tightest]
    } else {
        dom
    }
}

/// A proportional class rises at the speed of the heaviest max-min DRAM class: it takes
/// that class's `phi`.
fn match_proportional(system: &System, phis: &mut [f64]) {
    let (classes, dram) = (system.classes, system.dram);
    let running = |p: DramPolicy| {
        (classes.iter().enumerate()).filter(move |(_, c)| c.count > 0 && c.key.dram_policy == p)
    };
    if running(DramPolicy::Proportional).next().is_none() {
        return;
    }
    let heaviest = running(DramPolicy::MaxMin)
        .filter_map(|(i, c)| Some((i, c.dram_weight(dram)?)))
        .fold(None, |best: Option<(usize, f64)>, x| match best {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        });
    if let Some((j, _)) = heaviest {
        for (i, c) in classes.iter().enumerate() {
            if c.key.dram_policy == DramPolicy::Proportional
                && c.dram_weight(dram).is_some()
                && phis[j] > 0.0
            {
                phis[i] = phis[j];
            }
        }
    }
}
