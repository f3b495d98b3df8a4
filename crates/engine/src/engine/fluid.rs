//! The fluid classes: running activities that share rate resources, in SimGrid's LMM
//! vocabulary. Each class of identical running activities is a variable `x_i` in [0, 1],
//! its speed as a fraction of standalone; each rate resource `r` is a constraint
//! `sum_i n_i * w_ir * x_i <= C_r` (`n_i` members, each drawing `w_ir` at full speed); the
//! solver picks the max-min fair `x` with `x_i <= 1` (and below 1 for latency-bound
//! work under load). A class keeps a virtual clock of standalone progress, so its members
//! finish in order of virtual finish time without touching one another (DSLab's "total
//! work" idea): joining, completing, re-solving and rescheduling are the only operations.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::model::Dram;
use crate::time::SimTime;

use super::ids::{ClassId, KeyId, MemberId, RateId};
use super::observer::Loss;
use super::solver::{ClassDemand, ClassKey, ClassSpeed, PoolRule, Solver, System};
use super::virtual_clock::VirtualClock;

/// A virtual-time class of identical running activities (its key is in
/// `Fluid::slot_keys`, its demand in `Fluid::demands`).
struct Class {
    /// False once retired to the free list.
    live: bool,
    /// Members by virtual finish time.
    members: BinaryHeap<Reverse<(OrdF64, MemberId)>>,
    /// Speed, progress and lost time since the class was created.
    clock: VirtualClock,
    /// The time of the pending completion handed out last (NEVER: none pending).
    scheduled: SimTime,
}

/// A non-negative float as a heap key: for such floats (virtual finish times are never
/// negative) the bit patterns order exactly as the values, so one integer compare does.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct OrdF64(u64);

impl OrdF64 {
    fn new(x: f64) -> Self {
        debug_assert!(x >= 0.0, "virtual finish time {x} is negative");
        OrdF64(x.to_bits())
    }

    fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// A class's next completion, for the caller's event queue, where it replaces the
/// class's pending one: a class has at most one. A class empties only in
/// [`Fluid::complete_due`], which consumes its pending completion, so a retired class
/// (and a slot reused for a new one) never has one left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Due {
    pub at: SimTime,
    pub class: ClassId,
}

/// All fluid classes of a run, with the solver that sets their speeds. Every class is
/// of a key whose activities share something (see [`Fluid::key_shared`]).
pub(super) struct Fluid {
    keys: Vec<ClassKey>,
    /// The live class of each key.
    class_of_key: Vec<Option<ClassId>>,
    classes: Vec<Class>,
    /// Per class slot, same index: its key, and the solver's view of it.
    slot_keys: Vec<KeyId>,
    demands: Vec<ClassDemand>,
    free_classes: Vec<ClassId>,
    /// `C_r`, per rate resource (DRAM's moves with the number of streams).
    capacities: Vec<f64>,
    /// Streams drawing on DRAM at the last solve (counted only when DRAM loses
    /// efficiency per stream).
    dram_streams: u32,
    dram: RateId,
    pools: Vec<PoolRule>,
    solver: Solver,
    /// A class gained or lost members since the last solve.
    dirty: bool,
    /// Classes whose next completion may have moved.
    touched: Vec<ClassId>,
}

impl Fluid {
    pub fn new(
        keys: Vec<ClassKey>,
        capacities: Vec<f64>,
        dram: RateId,
        pools: Vec<PoolRule>,
    ) -> Self {
        Self {
            class_of_key: vec![None; keys.len()],
            keys,
            classes: Vec::new(),
            slot_keys: Vec::new(),
            demands: Vec::new(),
            free_classes: Vec::new(),
            capacities,
            dram_streams: 0,
            dram,
            pools,
            solver: Solver::default(),
            dirty: false,
            touched: Vec::new(),
        }
    }

    /// Whether activities of `key` can ever run slower than standalone (if not, they need
    /// no class: they end exactly their standalone time after they start).
    pub fn key_shared(&self, key: KeyId) -> bool {
        self.keys[key].shared()
    }

    /// Adds `member`, needing `standalone_s` of standalone work, to the class of `key`
    /// (creating it), which must be a shared key. `lost_at_start` receives the class's lost-time counters, for
    /// [`Fluid::lost_since`] when it finishes.
    pub fn join(
        &mut self,
        now: SimTime,
        key: KeyId,
        member: MemberId,
        standalone_s: f64,
        lost_at_start: &mut Loss,
    ) -> ClassId {
        debug_assert!(self.key_shared(key));
        let c = match self.class_of_key[key] {
            Some(c) => c,
            None => self.new_class(now, key),
        };
        self.advance(now, c);
        let class = &mut self.classes[c.index()];
        let finish = class.clock.virtual_now + standalone_s;
        lost_at_start.copy_from(&class.clock.lost);
        class.members.push(Reverse((OrdF64::new(finish), member)));
        self.demands[c.index()].count += 1;
        self.dirty = true;
        touch(&mut self.touched, c);
        c
    }

    fn new_class(&mut self, now: SimTime, key: KeyId) -> ClassId {
        let k = &self.keys[key];
        let nrate = self.capacities.len();
        let c = match self.free_classes.pop() {
            Some(c) => {
                let class = &mut self.classes[c.index()];
                debug_assert!(!class.live && class.members.is_empty());
                class.live = true;
                class.clock.restart(now, nrate);
                class.scheduled = SimTime::NEVER;
                self.slot_keys[c.index()] = key;
                let d = &mut self.demands[c.index()];
                d.count = 0;
                d.key.clone_from(k);
                c
            }
            None => {
                self.classes.push(Class {
                    live: true,
                    members: BinaryHeap::new(),
                    clock: VirtualClock::new(now, nrate),
                    scheduled: SimTime::NEVER,
                });
                self.slot_keys.push(key);
                self.demands.push(k.demand(0));
                ClassId::from_index(self.classes.len() - 1)
            }
        };
        self.class_of_key[key] = Some(c);
        c
    }

    /// Brings a class's virtual clock and lost-time counters up to `now`.
    fn advance(&mut self, now: SimTime, c: ClassId) {
        self.classes[c.index()].clock.advance(now);
    }

    /// The speed that put `class`'s next completion beyond the clock's range, when its
    /// sharing did (None: its own standalone time is beyond the range).
    pub fn starved(&self, now: SimTime, class: ClassId) -> Option<ClassSpeed> {
        let c = &self.classes[class.index()];
        let &Reverse((f, _)) = c.members.peek()?;
        c.clock
            .slowed_beyond_range(now, f.get())
            .then_some(ClassSpeed {
                speed: c.clock.speed,
                limiter: c.clock.limiter,
            })
    }

    /// The member of `class` that finishes next (to name it when its end is out of range).
    pub fn next_member(&self, class: ClassId) -> Option<MemberId> {
        self.classes[class.index()]
            .members
            .peek()
            .map(|&Reverse((_, m))| m)
    }

    /// Removes every member of `c` whose virtual finish time has been reached, handing
    /// each to `done` in order of virtual finish time. The caller calls it when `c`'s
    /// pending completion comes due, which consumes it.
    pub fn complete_due(&mut self, now: SimTime, c: ClassId, mut done: impl FnMut(MemberId)) {
        self.advance(now, c);
        let class = &mut self.classes[c.index()];
        class.scheduled = SimTime::NEVER;
        while let Some(&Reverse((f, a))) = class.members.peek() {
            if !class.clock.reached(f.get()) {
                break;
            }
            class.members.pop();
            self.demands[c.index()].count -= 1;
            done(a);
            self.dirty = true;
        }
        touch(&mut self.touched, c);
    }

    /// Wall seconds a member of `c` lost since it joined (`at_start` from
    /// [`Fluid::join`]), by cause, into `out`.
    pub fn lost_since(&self, c: ClassId, at_start: &Loss, out: &mut Loss) {
        out.set_difference(&self.classes[c.index()].clock.lost, at_start);
    }

    /// The all-zero lost time of an activity that never ran in a class, into `out`.
    pub fn no_loss(&self, out: &mut Loss) {
        out.reset(self.capacities.len());
    }

    /// Streams drawing on DRAM and its usable capacity, GB/s, at the last solve (the
    /// stream count is kept only when DRAM loses efficiency per stream).
    pub fn dram_usable(&self) -> (u32, f64) {
        (self.dram_streams, self.capacities[self.dram.index()])
    }

    /// Whether a class's membership changed since the last [`Fluid::resolve`].
    pub fn needs_resolve(&self) -> bool {
        self.dirty
    }

    /// Re-solves every class's speed at `now`. Returns the draw on each rate resource and
    /// the DRAM latency slowdown L(u)/L(0).
    pub fn resolve(&mut self, now: SimTime, dram: &Dram) -> (&[f64], f64) {
        self.dirty = false;
        for (class, d) in self.classes.iter_mut().zip(&self.demands) {
            if d.count > 0 {
                class.clock.advance(now);
            }
        }
        let d = self.dram.index();
        // DRAM loses efficiency as more streams interleave (0 loss: no change).
        if dram.efficiency_loss_per_stream > 0.0 {
            let streams: u32 = (self.demands.iter())
                .filter(|c| c.key.weights.iter().any(|&(r, _)| r == d))
                .map(|c| c.count)
                .sum();
            self.capacities[d] = dram.effective_capacity_gbps(streams);
            self.dram_streams = streams;
        }
        let system = System {
            capacities: &self.capacities,
            dram: d,
            curve: &dram.latency,
            pools: &self.pools,
            classes: &self.demands,
        };
        let solution = self.solver.solve(&system, &self.slot_keys);
        for (i, (c, &s)) in self.demands.iter().zip(&solution.speeds).enumerate() {
            if c.count > 0 && self.classes[i].clock.set_speed(s) {
                touch(&mut self.touched, ClassId::from_index(i));
            }
        }
        (&solution.usage, solution.latency_slowdown)
    }

    /// Hands each touched class's next completion to `schedule` (unless already pending
    /// for that time), to replace its pending one, and retires classes that emptied.
    pub fn reschedule(&mut self, now: SimTime, mut schedule: impl FnMut(Due)) {
        if self.touched.is_empty() {
            // The common case when only unshared activities started or ended.
            return;
        }
        let mut touched = std::mem::take(&mut self.touched);
        if touched.len() > 1 {
            touched.sort_unstable();
            touched.dedup();
        }
        for &c in &touched {
            self.advance(now, c);
            if self.demands[c.index()].count == 0 {
                // Retire the empty class so one-off demand vectors do not pile up (its
                // pending completion was consumed by `complete_due`, which emptied it).
                let class = &mut self.classes[c.index()];
                if class.live {
                    class.live = false;
                    class.scheduled = SimTime::NEVER;
                    self.class_of_key[self.slot_keys[c.index()]] = None;
                    self.free_classes.push(c);
                }
                continue;
            }
            let class = &mut self.classes[c.index()];
            let Some(&Reverse((f, _))) = class.members.peek() else {
                continue;
            };
            let next = class.clock.wall_time_of(now, f.get());
            // NEVER is not a time: an end beyond the clock's range goes to the caller,
            // which reports the overflow.
            if next == class.scheduled && next != SimTime::NEVER {
                continue;
            }
            class.scheduled = next;
            schedule(Due { at: next, class: c });
        }
        touched.clear();
        self.touched = touched;
    }
}

/// Marks `c` in `touched` for [`Fluid::reschedule`] (a repeat of the last mark is
/// dropped here, the rest there).
fn touch(touched: &mut Vec<ClassId>, c: ClassId) {
    if touched.last() != Some(&c) {
        touched.push(c);
    }
}
