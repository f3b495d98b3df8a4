//! Sharing work between the fillings of one solve, exactly. From one filling of the
//! fixed-point search to the next only the latency-dependent caps change, so the first
//! filling records its rounds and later ones replay those that no such cap takes part
//! in, then go on from there.

use super::{ClassSpeed, Solver};

impl Solver {
    /// Skips the recorded rounds that this filling's caps leave unchanged: a round
    /// repeats when each latency-dependent cap among its rising classes still lies above
    /// its level (so lambda, the saturated resources and who freezes are the same) and
    /// each such class it froze on a resource gets the same speed. Leaves the state after
    /// the last repeated round (or the first round's) in `active`, `frozen_load`, `out`,
    /// and returns how many rounds repeated.
    pub(super) fn replay(&mut self, out: &mut [ClassSpeed]) -> usize {
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

    /// Records a round of the first filling while no latency-dependent cap takes part
    /// (every varying cap lies above the level, so none set lambda or froze at its cap);
    /// returns whether this round was such a round (recording stops at the first that is
    /// not, and the frozen classes it noted are dropped).
    pub(super) fn trace_round(
        &mut self,
        stuck: bool,
        lambda: f64,
        level: f64,
        frozen_from: usize,
        still: &[usize],
    ) -> bool {
        let varies = |&i: &usize| self.fixed_cap[i].is_none();
        let tracing = !stuck
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
            t.still.extend_from_slice(still);
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
        tracing
    }
}

/// The rounds of a solve's first filling that no latency-dependent cap took part in,
/// for the later fillings to skip (see [`Solver::replay`]).
#[derive(Debug, Default, Clone)]
pub(super) struct Trace {
    pub(super) mode: TraceMode,
    pub(super) rounds: Vec<TracedRound>,
    /// Per round, its rising classes whose cap varies (ends in `TracedRound`), with the
    /// speed it froze them at on a saturated resource, if it did.
    pub(super) varying: Vec<(usize, Option<f64>)>,
    /// Per round, the classes it froze and their speeds.
    pub(super) frozen: Vec<(usize, ClassSpeed)>,
    /// Per round, the classes still rising after it.
    pub(super) still: Vec<usize>,
    /// Per round, the frozen load on each resource after it.
    pub(super) load: Vec<f64>,
    /// Per round up to the first one not repeatable, each resource's room (as the
    /// filling computes it) and the least of them.
    pub(super) rooms: Vec<f64>,
    pub(super) lambda_rooms: Vec<f64>,
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
pub(super) enum TraceMode {
    #[default]
    Off,
    Record,
    Replay,
}

/// One recorded round: its rate level and where its entries end in the trace lists.
#[derive(Debug, Clone, Copy)]
pub(super) struct TracedRound {
    pub(super) lambda: f64,
    pub(super) level: f64,
    pub(super) varying_end: u32,
    pub(super) frozen_end: u32,
    pub(super) still_end: u32,
}

impl Trace {
    /// Forgets the last solve's rounds; nothing is recorded or replayed.
    pub(super) fn clear(&mut self) {
        self.mode = TraceMode::Off;
        self.rounds.clear();
        self.varying.clear();
        self.frozen.clear();
        self.still.clear();
        self.load.clear();
        self.rooms.clear();
        self.lambda_rooms.clear();
        self.sums_len = 0;
    }

    /// Rounds whose rooms are recorded.
    pub(super) fn roomed(&self) -> usize {
        self.lambda_rooms.len()
    }

    /// The summed slopes in entry `k` of `sums` if a filling of this solve summed them
    /// for the same rising classes, in the same order (so the same bits).
    pub(super) fn slopes(&self, k: usize, active: &[usize]) -> Option<&[f64]> {
        let s = self.sums[..self.sums_len].get(k)?;
        (s.active == active).then_some(&s.slope[..])
    }

    /// Entry `k` of `sums`, set to `active` with `nr` zero slopes, for the caller to sum.
    pub(super) fn sum_into(&mut self, k: usize, active: &[usize], nr: usize) -> &mut [f64] {
        while self.sums_len <= k {
            if self.sums.len() == self.sums_len {
                self.sums.push(RoundSums::default());
            }
            self.sums[self.sums_len].active.clear();
            self.sums_len += 1;
        }
        let s = &mut self.sums[k];
        s.active.clear();
        s.active.extend_from_slice(active);
        s.slope.clear();
        s.slope.resize(nr, 0.0);
        &mut s.slope
    }

    /// The next filling records its rounds.
    pub(super) fn record(&mut self) {
        self.mode = TraceMode::Record;
    }
}
