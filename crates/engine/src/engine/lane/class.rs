//! The lane's one fluid class: a lane run whose stage shares rate resources (a
//! processor-sharing pool, for instance) has all its running instances in one class, so
//! the general fluid table, its touched list and its memo come down to one virtual clock,
//! one member heap and one lone solution per member count. Every step (joining,
//! completing, re-solving, rescheduling) performs the general classes' float operations
//! in the same order, so the times and lost seconds are the same bits.

use crate::model::Dram;
use crate::time::SimTime;

use crate::engine::observer::Loss;

use crate::engine::solver::{
    ClassDemand, ClassKey, ClassSpeed, FixedPoint, PoolRule, Solution, System,
};
use crate::engine::virtual_clock::VirtualClock;

/// The one class of a lane run and the solver that sets its speed.
#[derive(Debug)]
pub(super) struct LaneClass {
    /// Its demand as the solver sees it (`count`: members now).
    demand: ClassDemand,
    solver: FixedPoint,
    pools: Vec<PoolRule>,
    /// `C_r` per rate resource (DRAM's moves with the number of streams when DRAM loses
    /// efficiency per stream).
    capacities: Vec<f64>,
    dram: usize,
    /// The class draws on DRAM (its members are DRAM streams).
    draws_dram: bool,
    /// Streams on DRAM at the last solve (kept only when DRAM loses efficiency).
    dram_streams: u32,
    /// Solutions of the class alone by member count (index 0: nothing running). The
    /// capacities are a function of the count, so the count alone determines a solution.
    solved: Vec<Option<Solution>>,
    /// The member count of the last solve (its entry of `solved` is set).
    current: usize,
    /// The class exists: it has members, or lost its last at this instant and is not
    /// yet retired (the general path retires an empty class when it reschedules).
    live: bool,
    /// Members by virtual finish time, then member (see [`member_key`]).
    members: MinHeap,
    /// Speed, progress and lost time since the class was last started.
    clock: VirtualClock,
    /// The time of the pending completion handed out last (NEVER: none pending).
    scheduled: SimTime,
    /// Members joined or left since the last solve.
    dirty: bool,
    /// The next completion may have moved since the last reschedule.
    touched: bool,
}

/// What [`LaneClass::reschedule`] asks of the event queue.
#[derive(Debug)]
pub(super) enum Reschedule {
    /// Nothing: the pending completion (if any) stands.
    Keep,
    /// Set the class's pending completion to this time.
    At(SimTime),
    /// The next completion falls beyond the clock's range (with the speed that put it
    /// there, when sharing did).
    Beyond(Option<ClassSpeed>),
}

impl LaneClass {
    /// Whether instances of `key` can share as a lane's one class: their speed comes from
    /// rate resources alone (a queueing model's servers or link), so one filling at
    /// each member count settles it.
    pub fn fits(key: &ClassKey) -> bool {
        key.latency_frac == 0.0
            && key.line_bound == 0.0
            && key.compute_frac == 0.0
            && key.host_frac == 0.0
            && key.staging.is_none()
            && key.cpu_load.is_none()
    }

    /// The class of instances of `key`, on rate resources of `capacities` (DRAM at
    /// `dram`) with the pool rules `pools`; nothing runs yet.
    pub fn new(key: &ClassKey, capacities: Vec<f64>, dram: usize, pools: Vec<PoolRule>) -> Self {
        let nrate = capacities.len();
        LaneClass {
            demand: key.demand(0),
            solver: FixedPoint::default(),
            pools,
            draws_dram: key.weights.iter().any(|&(r, _)| r == dram),
            capacities,
            dram,
            dram_streams: 0,
            solved: Vec::new(),
            current: 0,
            live: false,
            members: MinHeap::default(),
            clock: VirtualClock::new(SimTime::ZERO, nrate),
            scheduled: SimTime::NEVER,
            dirty: false,
            touched: false,
        }
    }

    /// Adds `member`, needing `standalone_s` of standalone work (creating the class when
    /// none is live); `lost_at_start` receives the class's lost-time counters.
    #[inline(always)]
    pub fn join(
        &mut self,
        now: SimTime,
        member: usize,
        standalone_s: f64,
        lost_at_start: &mut Loss,
    ) {
        if !self.live {
            self.live = true;
            self.clock.restart(now, self.capacities.len());
            self.scheduled = SimTime::NEVER;
        }
        self.advance(now);
        let finish = self.clock.virtual_now + standalone_s;
        lost_at_start.copy_from(&self.clock.lost);
        self.members.push(member_key(finish, member));
        self.demand.count += 1;
        self.dirty = true;
        self.touched = true;
    }

    /// Brings the virtual clock and lost-time counters up to `now`.
    #[inline]
    fn advance(&mut self, now: SimTime) {
        self.clock.advance(now);
    }

    /// Removes every member whose virtual finish time has been reached, handing each to
    /// `done` in order; called when the pending completion comes due, which consumes it.
    #[inline(always)]
    pub fn complete_due(&mut self, now: SimTime, mut done: impl FnMut(usize)) {
        self.advance(now);
        self.scheduled = SimTime::NEVER;
        while let Some(key) = self.members.peek() {
            let (f, a) = split_key(key);
            if !self.clock.reached(f) {
                break;
            }
            self.members.pop();
            self.demand.count -= 1;
            done(a);
            self.dirty = true;
        }
        self.touched = true;
    }

    /// Wall seconds a member lost since it joined (`at_start` from [`LaneClass::join`]),
    /// by cause, into `out`.
    #[inline]
    pub fn lost_since(&self, at_start: &Loss, out: &mut Loss) {
        out.set_difference(&self.clock.lost, at_start);
    }

    /// Whether membership changed since the last [`LaneClass::resolve`].
    #[inline]
    pub fn needs_resolve(&self) -> bool {
        self.dirty
    }

    /// Re-solves the class's speed at `now`; [`LaneClass::reported`] then gives what the
    /// solution draws.
    #[inline(always)]
    pub fn resolve(&mut self, now: SimTime, dram: &Dram) {
        self.dirty = false;
        let n = self.demand.count;
        if n > 0 {
            self.advance(now);
        }
        if dram.efficiency_loss_per_stream > 0.0 {
            let streams = if self.draws_dram { n } else { 0 };
            self.capacities[self.dram] = dram.effective_capacity_gbps(streams);
            self.dram_streams = streams;
        }
        let i = n as usize;
        let speed = match self.solved.get(i) {
            Some(Some(solved)) => solved.speeds.first().copied(),
            _ => self.solve_at(i, dram),
        };
        self.current = i;
        if let Some(speed) = speed
            && self.clock.set_speed(speed)
        {
            self.touched = true;
        }
    }

    /// Streams drawing on DRAM and its usable capacity, GB/s, at the last
    /// [`LaneClass::resolve`] (streams are counted only when DRAM loses efficiency).
    #[inline]
    pub fn dram_usable(&self) -> (u32, f64) {
        (self.dram_streams, self.capacities[self.dram])
    }

    /// The draw on each rate resource and the DRAM latency slowdown L(u)/L(0) of the
    /// last [`LaneClass::resolve`].
    #[inline]
    pub fn reported(&self) -> (&[f64], f64) {
        let solved = self.solved[self.current].as_ref().expect("resolved");
        (&solved.usage, solved.latency_slowdown)
    }

    /// Solves the class at `count` members (the first time that count is met): its
    /// system is the class alone. Returns its speed (None: nothing running).
    #[cold]
    #[inline(never)]
    fn solve_at(&mut self, count: usize, dram: &Dram) -> Option<ClassSpeed> {
        if self.solved.len() <= count {
            self.solved.resize_with(count + 1, || None);
        }
        let system = System {
            capacities: &self.capacities,
            dram: self.dram,
            curve: &dram.latency,
            pools: &self.pools,
            classes: if count > 0 {
                std::slice::from_ref(&self.demand)
            } else {
                &[]
            },
        };
        let mut solution = Solution::default();
        self.solver.solve(&system, &mut solution);
        let speed = solution.speeds.first().copied();
        self.solved[count] = Some(solution);
        speed
    }

    /// The class's next completion, when it moved since the last one handed out; retires
    /// the class when it emptied.
    #[inline(always)]
    pub fn reschedule(&mut self, now: SimTime) -> Reschedule {
        if !self.touched {
            return Reschedule::Keep;
        }
        self.touched = false;
        self.advance(now);
        if self.demand.count == 0 {
            // Its pending completion was consumed by `complete_due`, which emptied it.
            self.live = false;
            self.scheduled = SimTime::NEVER;
            return Reschedule::Keep;
        }
        let Some(key) = self.members.peek() else {
            return Reschedule::Keep;
        };
        let finish = split_key(key).0;
        let next = self.clock.wall_time_of(now, finish);
        if next == SimTime::NEVER {
            let slowed = self.clock.slowed_beyond_range(now, finish);
            return Reschedule::Beyond(slowed.then_some(ClassSpeed {
                speed: self.clock.speed,
                limiter: self.clock.limiter,
            }));
        }
        if next == self.scheduled {
            return Reschedule::Keep;
        }
        self.scheduled = next;
        Reschedule::At(next)
    }
}

/// A member's heap key: its virtual finish time's bits above its number, so one integer
/// compare orders by (finish time, member), as the general classes' heap of pairs does
/// (the bits of non-negative floats order as their values; finish times never go below
/// zero).
fn member_key(finish: f64, member: usize) -> u128 {
    debug_assert!(finish >= 0.0, "virtual finish time {finish} is negative");
    ((finish.to_bits() as u128) << 64) | member as u128
}

/// The (virtual finish time, member) of a key.
fn split_key(key: u128) -> (f64, usize) {
    (f64::from_bits((key >> 64) as u64), key as u64 as usize)
}

/// A binary min-heap of distinct keys whose sifts move a hole instead of swapping (a pop
/// returns the same key as any min-heap would: keys are distinct).
#[derive(Debug, Default)]
struct MinHeap(Vec<u128>);

impl MinHeap {
    #[inline]
    fn peek(&self) -> Option<u128> {
        self.0.first().copied()
    }

    #[inline]
    fn push(&mut self, key: u128) {
        let v = &mut self.0;
        let mut at = v.len();
        v.push(key);
        while at > 0 {
            let parent = (at - 1) / 2;
            if v[parent] <= key {
                break;
            }
            v[at] = v[parent];
            at = parent;
        }
        v[at] = key;
    }

    #[inline]
    fn pop(&mut self) -> Option<u128> {
        let v = &mut self.0;
        let last = v.pop()?;
        let Some(&top) = v.first() else {
            return Some(last);
        };
        let mut at = 0;
        loop {
            let left = 2 * at + 1;
            let Some(&l) = v.get(left) else {
                break;
            };
            let (child, key) = match v.get(left + 1) {
                Some(&r) if r < l => (left + 1, r),
                _ => (left, l),
            };
            if last <= key {
                break;
            }
            v[at] = key;
            at = child;
        }
        v[at] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use super::{MinHeap, member_key, split_key};

    #[test]
    fn the_member_heap_pops_as_a_heap_of_pairs() {
        let mut ours = MinHeap::default();
        let mut pairs = BinaryHeap::new();
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for member in 0..20_000usize {
            // Few distinct finish times, so ties fall to the member.
            let finish = next(50) as f64 * 0.25;
            ours.push(member_key(finish, member));
            pairs.push(Reverse((finish.to_bits(), member)));
            for _ in 0..next(3) {
                let want = pairs.pop().map(|Reverse((f, m))| (f64::from_bits(f), m));
                assert_eq!(ours.pop().map(split_key), want);
            }
            assert_eq!(
                ours.peek().map(split_key),
                pairs.peek().map(|&Reverse((f, m))| (f64::from_bits(f), m))
            );
        }
        while let Some(Reverse((f, m))) = pairs.pop() {
            assert_eq!(ours.pop().map(split_key), Some((f64::from_bits(f), m)));
        }
        assert_eq!(ours.pop(), None);
    }
}
