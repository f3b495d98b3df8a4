//! An accelerator of the fixed point: the fillings of one solve share their rounds.
//! From one filling to the next only the latency-dependent caps change, so
//! [`SharedRounds`] records the first filling's rounds and later fillings replay those
//! that no such cap takes part in, then go on from there with [`Filling`]'s own steps.
//!
//! Why replaying gives [`Filling`]'s bits: a recorded round repeats when each
//! latency-dependent cap among its rising classes still lies above the round's level
//! (a smaller cap level is fine as long as it stays above: a min over values above the
//! minimum never changes which value wins, so lambda, the saturated resources and who
//! freezes are the same) and each such class it froze on a resource gets the same speed
//! bits. The first round after those replayed is entered in the state the first
//! filling entered it in, so its rooms are the recorded ones. A round whose rising
//! classes are, in the same order, those of a round of the same number summed earlier
//! in the solve has the same slopes, summed in the same order. `tests` holds it to
//! [`Filling`], bit for bit.

use super::cap_table::CapTable;
use super::filling::{DramLoad, Filling, Phase, RoundEnd, sum_slopes};
use super::fixed_point::Fill;
use super::system::{ClassSpeed, System};

/// [`Filling`], with the rounds of a solve's first filling recorded for its later ones.
#[derive(Debug, Default, Clone)]
pub struct SharedRounds {
    filling: Filling,
    trace: Trace,
    /// Rounds the fillings skipped by replaying recorded ones (for the tests).
    #[cfg(test)]
    pub(super) rounds_repeated: u64,
}

impl Fill for SharedRounds {
    fn set(&mut self, system: &System, several: bool) {
        self.filling.set(system);
        self.trace.clear();
        // Recorded rounds are replayed in a one-phase filling only.
        if several && self.filling.order() == [Phase::All] {
            self.trace.mode = Mode::Record;
        }
    }

    fn fill(
        &mut self,
        system: &System,
        caps: &CapTable,
        u: f64,
        out: &mut [ClassSpeed],
    ) -> DramLoad {
        let f = &mut self.filling;
        f.start(caps, caps.latency_at(system.curve, u), out);
        let recording = self.trace.mode == Mode::Record;
        let phases = f.order();
        for (k, &phase) in phases.iter().enumerate() {
            // This filling's rounds so far, and those repeated from the trace.
            let (mut round, mut repeated) = (0, 0);
            if self.trace.mode == Mode::Replay {
                repeated = self.trace.replay(f, out);
                round = repeated;
                #[cfg(test)]
                {
                    self.rounds_repeated += repeated as u64;
                }
            } else {
                f.enter(phase, out);
            }
            // Recording stops at the first round a latency-dependent cap takes part in
            // (that round's rooms are still kept: later fillings enter it alike).
            let mut tracing = recording;
            while !f.active.is_empty() {
                let least_room = if round == repeated && round < self.trace.roomed() {
                    let nr = f.room.len();
                    f.room
                        .copy_from_slice(&self.trace.rooms[round * nr..(round + 1) * nr]);
                    self.trace.least_rooms[round]
                } else {
                    let slope = self.trace.slopes(round * phases.len() + k, f);
                    let least_room = f.rooms_at(phase, slope);
                    if tracing {
                        self.trace.rooms.extend_from_slice(&f.room);
                        self.trace.least_rooms.push(least_room);
                    }
                    least_room
                };
                let end = f.freeze(phase, least_room, out);
                if tracing {
                    tracing = self.trace.record_round(f, caps, end, out);
                }
                round += 1;
            }
        }
        if recording {
            self.trace.mode = Mode::Replay;
        }
        f.dram_load(out)
    }

    fn usage(&self, out: &[ClassSpeed], usage: &mut Vec<f64>) {
        self.filling.usage(out, usage);
    }
}

/// The rounds of a solve's first filling that no latency-dependent cap took part in,
/// for the later fillings to skip.
#[derive(Debug, Default, Clone)]
struct Trace {
    mode: Mode,
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
    least_rooms: Vec<f64>,
    /// Per round (and phase), the rising classes of the last filling of this solve that
    /// summed that round's slopes, and each resource's summed slope: they depend on
    /// nothing else, and the fillings of one solve mostly repeat each other's rounds.
    sums: Vec<RoundSums>,
    /// How many entries of `sums` this solve has written.
    sums_len: usize,
}

/// One round's rising classes and each resource's summed slope over them.
#[derive(Debug, Default, Clone)]
struct RoundSums {
    active: Vec<usize>,
    slope: Vec<f64>,
}

/// Whether the next filling records its rounds, replays them, or neither.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Mode {
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
        self.mode = Mode::Off;
        self.rounds.clear();
        self.varying.clear();
        self.frozen.clear();
        self.still.clear();
        self.load.clear();
        self.rooms.clear();
        self.least_rooms.clear();
        self.sums_len = 0;
    }

    /// Rounds whose rooms are recorded.
    fn roomed(&self) -> usize {
        self.least_rooms.len()
    }

    /// The slopes of `f`'s rising classes in entry `k` of `sums`: summed by an earlier
    /// filling of this solve for the same classes in the same order, or now.
    fn slopes(&mut self, k: usize, f: &Filling) -> &[f64] {
        let same = (self.sums[..self.sums_len].get(k)).is_some_and(|s| s.active == f.active);
        if !same {
            while self.sums_len <= k {
                if self.sums.len() == self.sums_len {
                    self.sums.push(RoundSums::default());
                }
                self.sums[self.sums_len].active.clear();
                self.sums_len += 1;
            }
            let s = &mut self.sums[k];
            s.active.clear();
            s.active.extend_from_slice(&f.active);
            s.slope.clear();
            s.slope.resize(f.capacities.len(), 0.0);
            sum_slopes(&f.active, &f.rising, &f.draws, &mut s.slope);
        }
        &self.sums[k].slope
    }

    /// Skips the recorded rounds that this filling's caps leave unchanged (see the
    /// module's notes). Leaves `f` in the state after the last repeated round (or
    /// before the first round) and returns how many rounds repeated.
    fn replay(&mut self, f: &mut Filling, out: &mut [ClassSpeed]) -> usize {
        let (mut repeated, mut varying_from, mut frozen_from) = (0, 0, 0);
        for round in &self.rounds {
            let (v, fr) = (round.varying_end as usize, round.frozen_end as usize);
            let repeats = self.varying[varying_from..v].iter().all(|&(i, froze)| {
                let c = &f.rising[i];
                c.cap_level > round.level
                    && froze.is_none_or(|speed| {
                        let again = (round.lambda / c.phi).min(c.cap);
                        again.to_bits() == speed.to_bits()
                    })
            });
            if !repeats {
                break;
            }
            (repeated, varying_from, frozen_from) = (repeated + 1, v, fr);
        }
        if repeated == 0 {
            f.enter(Phase::All, out);
            return 0;
        }
        for &(i, s) in &self.frozen[..frozen_from] {
            out[i] = s;
        }
        let nr = f.frozen_load.len();
        let last = repeated - 1;
        let still_from = if last == 0 {
            0
        } else {
            self.rounds[last - 1].still_end as usize
        };
        f.active.clear();
        f.active
            .extend_from_slice(&self.still[still_from..self.rounds[last].still_end as usize]);
        f.frozen_load
            .copy_from_slice(&self.load[last * nr..(last + 1) * nr]);
        repeated
    }

    /// Records the round of the first filling that just ended, if no latency-dependent
    /// cap took part in it (every varying cap lies above the level, so none set lambda
    /// or froze at its cap); returns whether it did (recording stops at the first round
    /// that is not such a round).
    fn record_round(
        &mut self,
        f: &Filling,
        caps: &CapTable,
        end: RoundEnd,
        out: &[ClassSpeed],
    ) -> bool {
        // The round's rising classes are now `f.still`, those still rising `f.active`.
        let (rose, still) = (&f.still, &f.active);
        let varies = |i: usize| !caps.is_fixed(i);
        let traced = !end.stuck
            && end.level >= end.lambda
            && (rose.iter().filter(|&&i| varies(i))).all(|&i| f.rising[i].cap_level > end.level);
        if !traced {
            return false;
        }
        // Both lists keep the rising order: the round froze those of `rose` not in `still`.
        let mut left = still.iter().peekable();
        for &i in rose {
            let froze = left.next_if_eq(&&i).is_none();
            if froze {
                self.frozen.push((i, out[i]));
            }
            if varies(i) {
                self.varying.push((i, froze.then_some(out[i].speed)));
            }
        }
        self.still.extend_from_slice(still);
        self.load.extend_from_slice(&f.frozen_load);
        self.rounds.push(TracedRound {
            lambda: end.lambda,
            level: end.level,
            varying_end: self.varying.len() as u32,
            frozen_end: self.frozen.len() as u32,
            still_end: self.still.len() as u32,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::cap_table::CapTable;
    use super::super::filling::Filling;
    use super::super::fixed_point::{Fill, FixedPoint};
    use super::super::system::{ClassSpeed, Solution, System};
    use super::super::test_support::{XorShift, assert_same_bits, class, random_host, system};
    use super::SharedRounds;
    use crate::model::LatencyCurve;

    /// Speeds and limiters as bits, to compare exactly.
    fn bits(s: &[ClassSpeed]) -> Vec<(u64, String)> {
        (s.iter())
            .map(|s| (s.speed.to_bits(), format!("{:?}", s.limiter)))
            .collect()
    }

    /// The plain solve and the one whose fillings share rounds, on `system`; also the
    /// rounds the second replayed.
    fn both(system: &System) -> (Solution, Solution, u64) {
        let (mut plain, mut shared) = (Solution::default(), Solution::default());
        FixedPoint::<Filling>::default().solve(system, &mut plain);
        let mut fast = FixedPoint::<SharedRounds>::default();
        fast.solve(system, &mut shared);
        (plain, shared, fast.filling().rounds_repeated)
    }

    #[test]
    fn a_chase_beside_streams_replays_the_streams_round() {
        // DRAM 100 GB/s, L = 100 + 200u; a link (resource 1) of 10 GB/s. Six streams
        // want 40 GB/s each, four copies 5 GB/s of the link and 5 of DRAM, and a
        // chase is entirely latency bound. The first filling's first round freezes the
        // copies on the link, at a level no latency-dependent cap reaches: every later
        // filling of the fixed point replays it. Expected: the plain solve's bits.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
        let classes = [
            class(6, &[(0, 40.0)], 0.0),
            class(4, &[(0, 5.0), (1, 5.0)], 0.0),
            class(1, &[], 1.0),
        ];
        let (plain, shared, repeated) = both(&system(&[100.0, 10.0], &classes, &curve));
        assert_same_bits(&shared, &plain, None, "chase beside streams");
        assert!(repeated > 0, "no round replayed");
    }

    #[test]
    fn shared_rounds_give_the_plain_solves_bits() {
        // Random hosts and classes (latency, line, compute, host-thread and staged-copy
        // demands; per-thread pools; offered-load and write-mix curves). Expected: the
        // plain solve's speeds, limiters, usage, utilisation and slowdown, bit for bit.
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut cases_repeating = 0;
        for case in 0..20_000 {
            let (caps, pools, curve, classes) = random_host(&mut rng);
            let system = System {
                pools: &pools,
                ..system(&caps, &classes, &curve)
            };
            let (plain, shared, repeated) = both(&system);
            assert_same_bits(&shared, &plain, None, &format!("case {case}: {system:?}"));
            cases_repeating += (repeated > 0) as u32;
        }
        // The cases exercise the sharing: many solves repeat recorded rounds.
        assert!(
            cases_repeating > 2_000,
            "{cases_repeating} cases repeated rounds"
        );
    }

    #[test]
    fn replayed_rounds_give_the_plain_fillings_bits_at_any_load() {
        // Past the first filling, each filling skips the recorded rounds its caps leave
        // unchanged. Sweeping the load moves every latency-dependent cap across the
        // recorded levels. Expected: each filling's speeds, limiters and DRAM load are
        // the plain filling's, bit for bit.
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let mut repeated = 0;
        for case in 0..4_000 {
            let (caps, pools, curve, classes) = random_host(&mut rng);
            let system = System {
                pools: &pools,
                ..system(&caps, &classes, &curve)
            };
            let mut table = CapTable::default();
            table.set(&system);
            let (mut plain, mut shared) = (Filling::default(), SharedRounds::default());
            Fill::set(&mut plain, &system, true);
            Fill::set(&mut shared, &system, true);
            let n = classes.len();
            let (mut want, mut got) = (vec![ClassSpeed::FULL; n], vec![ClassSpeed::FULL; n]);
            for step in 0..40 {
                let u = if step == 0 { 0.0 } else { 1.5 * rng.unit() };
                let expected = Fill::fill(&mut plain, &system, &table, u, &mut want);
                let load = Fill::fill(&mut shared, &system, &table, u, &mut got);
                let why = format!("case {case}, u = {u}: {system:?}");
                assert_eq!(bits(&got), bits(&want), "{why}");
                assert_eq!(load.draw.to_bits(), expected.draw.to_bits(), "{why}");
                assert_eq!(load.offered.to_bits(), expected.offered.to_bits(), "{why}");
            }
            repeated += shared.rounds_repeated;
        }
        assert!(repeated > 20_000, "{repeated} rounds repeated");
    }
}
