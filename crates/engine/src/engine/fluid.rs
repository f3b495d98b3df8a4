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

use super::observer::Loss;
use super::plan::KeyId;
use super::resources::RateId;
use super::solver::{ClassDemand, ClassKey, ClassSpeed, PoolRule, SolveMemo, Solver};
use super::virtual_clock::VirtualClock;

/// A class slot (slots are reused, under another key, once a class empties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct ClassId(usize);

impl ClassId {
    /// The first class slot: the one a lane run's only class takes.
    pub const FIRST: ClassId = ClassId(0);

    /// The slot's index (classes are few and slots are reused: a dense small index).
    pub fn index(self) -> usize {
        self.0
    }
}

/// A member of a class, as the caller numbers it (the engine's activity slot).
pub(super) type MemberId = usize;

/// A virtual-time class of identical running activities.
struct Class {
    key: KeyId,
    /// False once retired to the free list.
    live: bool,
    shared: bool,
    /// Its demand can be solved by `Solver::solve_lone` when it runs alone (a property
    /// of the key, kept here to spare the check on every re-solve).
    lone_solvable: bool,
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

/// All fluid classes of a run, with the solver that sets their speeds.
pub(super) struct Fluid {
    keys: Vec<ClassKey>,
    /// The live class of each key.
    class_of_key: Vec<Option<ClassId>>,
    classes: Vec<Class>,
    /// The solver's view of each class slot, same index.
    demands: Vec<ClassDemand>,
    free_classes: Vec<ClassId>,
    /// `C_r`, per rate resource (DRAM's moves with the number of streams).
    capacities: Vec<f64>,
    /// Streams drawing on DRAM at the last solve (counted only when DRAM loses
    /// efficiency per stream).
    dram_streams: u32,
    dram: RateId,
    solver: Solver,
    memo: SolveMemo,
    memo_key: Vec<u64>,
    lone: LoneMemo,
    speeds: Vec<ClassSpeed>,
    /// A shared class gained or lost members since the last solve.
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
            demands: Vec::new(),
            free_classes: Vec::new(),
            capacities,
            dram_streams: 0,
            dram,
            solver: Solver::with_pools(pools),
            memo: SolveMemo::default(),
            memo_key: Vec::new(),
            lone: LoneMemo::default(),
            speeds: Vec::new(),
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
    /// (creating it). `lost_at_start` receives the class's lost-time counters, for
    /// [`Fluid::lost_since`] when it finishes.
    pub fn join(
        &mut self,
        now: SimTime,
        key: KeyId,
        member: MemberId,
        standalone_s: f64,
        lost_at_start: &mut Loss,
    ) -> ClassId {
        let c = match self.class_of_key[key] {
            Some(c) => c,
            None => self.new_class(now, key),
        };
        self.advance(now, c);
        let class = &mut self.classes[c.0];
        let finish = class.clock.virtual_now + standalone_s;
        lost_at_start.copy_from(&class.clock.lost);
        class.members.push(Reverse((OrdF64::new(finish), member)));
        self.demands[c.0].count += 1;
        if class.shared {
            self.dirty = true;
        }
        self.touch(c);
        c
    }

    fn new_class(&mut self, now: SimTime, key: KeyId) -> ClassId {
        let k = &self.keys[key];
        let shared = k.shared();
        let nrate = self.capacities.len();
        let c = match self.free_classes.pop() {
            Some(c) => {
                let class = &mut self.classes[c.0];
                debug_assert!(!class.live && class.members.is_empty());
                class.key = key;
                class.live = true;
                class.shared = shared;
                class.clock.restart(now, nrate);
                class.scheduled = SimTime::NEVER;
                let d = &mut self.demands[c.0];
                d.count = 0;
                d.key.clone_from(k);
                c
            }
            None => {
                self.classes.push(Class {
                    key,
                    live: true,
                    shared,
                    lone_solvable: false,
                    members: BinaryHeap::new(),
                    clock: VirtualClock::new(now, nrate),
                    scheduled: SimTime::NEVER,
                });
                self.demands.push(k.demand(0));
                ClassId(self.classes.len() - 1)
            }
        };
        self.classes[c.0].lone_solvable = Solver::lone_solvable(&self.demands[c.0]);
        self.class_of_key[key] = Some(c);
        c
    }

    /// Brings a class's virtual clock and lost-time counters up to `now`.
    fn advance(&mut self, now: SimTime, c: ClassId) {
        self.classes[c.0].clock.advance(now);
    }

    /// The speed that put `class`'s next completion beyond the clock's range, when its
    /// sharing did (None: its own standalone time is beyond the range).
    pub fn starved(&self, now: SimTime, class: ClassId) -> Option<ClassSpeed> {
        let c = &self.classes[class.0];
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
        self.classes[class.0]
            .members
            .peek()
            .map(|&Reverse((_, m))| m)
    }

    /// Removes every member of `c` whose virtual finish time has been reached, handing
    /// each to `done` in order of virtual finish time. The caller calls it when `c`'s
    /// pending completion comes due, which consumes it.
    pub fn complete_due(&mut self, now: SimTime, c: ClassId, mut done: impl FnMut(MemberId)) {
        self.advance(now, c);
        let class = &mut self.classes[c.0];
        class.scheduled = SimTime::NEVER;
        while let Some(&Reverse((f, a))) = class.members.peek() {
            if !class.clock.reached(f.get()) {
                break;
            }
            class.members.pop();
            self.demands[c.0].count -= 1;
            done(a);
            if class.shared {
                self.dirty = true;
            }
        }
        self.touch(c);
    }

    /// Wall seconds a member of `c` lost since it joined (`at_start` from
    /// [`Fluid::join`]), by cause, into `out`.
    pub fn lost_since(&self, c: ClassId, at_start: &Loss, out: &mut Loss) {
        out.set_difference(&self.classes[c.0].clock.lost, at_start);
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

    /// Whether membership of a shared class changed since the last [`Fluid::resolve`].
    pub fn needs_resolve(&self) -> bool {
        self.dirty
    }

    /// Re-solves every class's speed at `now`. Returns the draw on each rate resource and
    /// the DRAM latency slowdown L(u)/L(0).
    pub fn resolve(&mut self, now: SimTime, dram: &Dram) -> (&[f64], f64) {
        self.dirty = false;
        // The running sharing classes: when at most one runs and it depends on nothing
        // but its rates, it is solved directly (see `Solver::solve_lone`).
        let (mut running, mut lone) = (0usize, None);
        for i in 0..self.classes.len() {
            if self.classes[i].shared && self.demands[i].count > 0 {
                self.advance(now, ClassId(i));
                running += 1;
                lone = Some(i);
            }
        }
        let d = self.dram.index();
        // DRAM loses efficiency as more streams interleave (0 loss: no change).
        if dram.efficiency_loss_per_stream > 0.0 {
            let streams: u32 = self
                .demands
                .iter()
                .filter(|c| c.key.weights.iter().any(|&(r, _)| r == d))
                .map(|c| c.count)
                .sum();
            self.capacities[d] = dram.effective_capacity_gbps(streams);
            self.dram_streams = streams;
        }
        if running <= 1 && lone.is_none_or(|i| self.classes[i].lone_solvable) {
            // A key's demand never changes during a run and only DRAM's capacity moves,
            // so (key, count, DRAM capacity) determines the solution.
            let state = lone.map(|i| (self.classes[i].key, self.demands[i].count));
            let capacity = self.capacities[d].to_bits();
            let slot = self.lone.slot(state);
            let remembered = |m: &LoneMemo, s: usize| {
                (m.solutions[s].as_ref()).is_some_and(|x| x.dram_capacity == capacity)
            };
            if !slot.is_some_and(|s| remembered(&self.lone, s)) {
                let speed = self.solver.solve_lone(
                    &self.capacities,
                    d,
                    &dram.latency,
                    lone.map(|i| &self.demands[i]),
                );
                let Some(s) = slot else {
                    if let Some(i) = lone {
                        self.set_speed(ClassId(i), speed);
                    }
                    return (&self.solver.usage, self.solver.latency_slowdown);
                };
                self.lone.solutions[s] = Some(LoneSolution {
                    dram_capacity: capacity,
                    speed,
                    usage: self.solver.usage.as_slice().into(),
                    latency_slowdown: self.solver.latency_slowdown,
                });
            }
            let s = slot.expect("solved above when none");
            let speed = self.lone.solutions[s].as_ref().expect("remembered").speed;
            if let Some(i) = lone {
                self.set_speed(ClassId(i), speed);
            }
            let solved = self.lone.solutions[s].as_ref().expect("remembered");
            return (&solved.usage, solved.latency_slowdown);
        }
        // The solution depends only on the DRAM capacity (the others never change during
        // a run) and on each sharing class's demand identity and count: classes that are
        // empty or draw on nothing take no part.
        let mut key = std::mem::take(&mut self.memo_key);
        key.clear();
        key.push(self.capacities[d].to_bits());
        for (class, c) in self.classes.iter().zip(&self.demands) {
            key.push(if class.shared && c.count > 0 {
                ((class.key as u64) << 32) | c.count as u64
            } else {
                u64::MAX
            });
        }
        let mut speeds = std::mem::take(&mut self.speeds);
        if !self.memo.recall(&key, &mut self.solver, &mut speeds) {
            self.solver.solve(
                &self.capacities,
                d,
                &dram.latency,
                &self.demands,
                &mut speeds,
            );
            self.memo.remember(&key, &self.solver, &speeds);
        }
        self.memo_key = key;
        for (i, &s) in speeds.iter().enumerate() {
            if self.classes[i].shared && self.demands[i].count > 0 {
                self.set_speed(ClassId(i), s);
            }
        }
        self.speeds = speeds;
        (&self.solver.usage, self.solver.latency_slowdown)
    }

    /// Gives running class `c` its solved speed (marking it touched if that moved).
    fn set_speed(&mut self, c: ClassId, s: ClassSpeed) {
        if self.classes[c.0].clock.set_speed(s) {
            self.touch(c);
        }
    }

    /// Marks `c` for [`Fluid::reschedule`] (a repeat of the last mark is dropped here, the
    /// rest there).
    fn touch(&mut self, c: ClassId) {
        if self.touched.last() != Some(&c) {
            self.touched.push(c);
        }
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
            if self.demands[c.0].count == 0 {
                // Retire the empty class so one-off demand vectors do not pile up (its
                // pending completion was consumed by `complete_due`, which emptied it).
                let class = &mut self.classes[c.0];
                if class.live {
                    class.live = false;
                    class.scheduled = SimTime::NEVER;
                    self.class_of_key[class.key] = None;
                    self.free_classes.push(c);
                }
                continue;
            }
            let class = &mut self.classes[c.0];
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

/// Solutions of the lone-class case (at most one sharing class running, solved by
/// `Solver::solve_lone`) for one key, by member count: a processor-sharing pool
/// revisits the same few counts all run long, and a lookup is cheaper than even the
/// direct solve. A key's demand never changes during a run and only DRAM's capacity
/// moves, so (key, count, DRAM capacity) determines a solution; another key starts over.
#[derive(Default)]
struct LoneMemo {
    /// The key the entries are for (None: only "nothing running" held).
    key: Option<KeyId>,
    /// By member count (index 0: nothing running, the same for every key).
    solutions: Vec<Option<LoneSolution>>,
}

struct LoneSolution {
    /// The DRAM capacity (bits) it was solved at.
    dram_capacity: u64,
    speed: ClassSpeed,
    usage: Box<[f64]>,
    latency_slowdown: f64,
}

/// Member counts remembered (a bound on memory; larger counts are solved each time).
const LONE_MEMO_COUNTS: u32 = 1 << 12;

impl LoneMemo {
    /// The entry index for `state` (key and count; None: nothing running), starting
    /// over when the key differs from the entries'; None beyond the bound on counts.
    fn slot(&mut self, state: Option<(KeyId, u32)>) -> Option<usize> {
        let n = match state {
            Some((key, n)) => {
                if n >= LONE_MEMO_COUNTS {
                    return None;
                }
                if self.key != Some(key) {
                    self.key = Some(key);
                    self.solutions.truncate(1);
                }
                n as usize
            }
            None => 0,
        };
        if self.solutions.len() <= n {
            self.solutions.resize_with(n + 1, || None);
        }
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::{LONE_MEMO_COUNTS, LoneMemo, LoneSolution};
    use crate::engine::solver::ClassSpeed;

    #[test]
    fn lone_memo_keeps_counts_of_one_key_and_idle_across_keys() {
        let solved = |capacity| LoneSolution {
            dram_capacity: capacity,
            speed: ClassSpeed {
                speed: 0.5,
                limiter: None,
            },
            usage: vec![1.0].into(),
            latency_slowdown: 1.0,
        };
        let mut m = LoneMemo::default();
        assert_eq!(m.slot(Some((3, 2))), Some(2));
        m.solutions[2] = Some(solved(7));
        assert_eq!(m.slot(None), Some(0));
        m.solutions[0] = Some(solved(7));
        // Same key: entries stay; nothing running is key-independent.
        assert_eq!(m.slot(Some((3, 2))), Some(2));
        assert!(m.solutions[2].is_some());
        // Another key starts over, but keeps the idle entry.
        assert_eq!(m.slot(Some((4, 1))), Some(1));
        assert!(m.solutions[0].is_some());
        assert!(m.solutions.iter().skip(1).all(Option::is_none));
        // Counts beyond the bound are not remembered.
        assert_eq!(m.slot(Some((4, LONE_MEMO_COUNTS))), None);
    }
}
