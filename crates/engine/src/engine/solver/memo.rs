//! An accelerator: whole solutions remembered by a key that determines them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::system::Solution;

/// Remembers solutions by a key that determines them (the caller's job: e.g. each class
/// slot's demand identity and count, and the capacities that vary). The solver is a pure
/// function of its inputs, so a hit returns exactly what solving again would: a closed
/// system cycles through a limited set of states, and most events revisit one.
#[derive(Debug, Default)]
pub struct SolveMemo {
    /// Solutions remembered since the last turnover, and those of the generation before
    /// (a hit there moves to `young`): a run's working set of states outlives any one
    /// generation, where emptying a single full map would forget all of it at once.
    young: Map,
    old: Map,
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

type Map = HashMap<Box<[u64]>, Solution, BuildHasherDefault<FoldHasher>>;

/// Entries of one generation (bounds memory: a C2 run at 1,000 proofs peaks near
/// 18 MiB). One map of 2^12 emptied when full forgot the states the run kept revisiting:
/// at 1,000 proofs it solved 95,600 times at c = 30 and 108,000 at c = 15, against
/// 65,300 and 54,900 with these generations.
const GENERATION: usize = 1 << 14;
/// Lookups per trial window, and the solves the memo rests when fewer than one in
/// `MEMO_MIN_HIT_RATIO` of a window's lookups hit. A lookup and an insert cost about a
/// twentieth of a C2 solve; with one in 8, C2 at c = 30 rested through windows just
/// after a turnover and solved 85,600 times at 1,000 proofs instead of 65,300.
const MEMO_WINDOW: u32 = 2048;
const MEMO_REST: u32 = 1 << 15;
const MEMO_MIN_HIT_RATIO: u32 = 16;

impl SolveMemo {
    /// Puts the remembered solution for `key` into `out`; false if none.
    pub fn recall(&mut self, key: &[u64], out: &mut Solution) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return false;
        }
        self.window.0 += 1;
        if self.window.0 >= MEMO_WINDOW {
            if self.window.1 * MEMO_MIN_HIT_RATIO < self.window.0 {
                self.resting = MEMO_REST;
                self.young.clear();
                self.old.clear();
            }
            self.window = (0, 0);
        }
        let found = match self.young.get(key) {
            Some(s) => Some(s),
            None => match self.old.remove_entry(key) {
                Some((k, s)) => {
                    self.turn_over_if_full();
                    Some(&*self.young.entry(k).or_insert(s))
                }
                None => None,
            },
        };
        match found {
            Some(s) => {
                out.copy_from(s);
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

    /// Remembers `solution` for `key`.
    pub fn remember(&mut self, key: &[u64], solution: &Solution) {
        if self.resting > 0 {
            return;
        }
        self.turn_over_if_full();
        self.young.insert(key.into(), solution.clone());
    }

    /// When the young generation is full, it becomes the old one and the old is dropped.
    fn turn_over_if_full(&mut self) {
        if self.young.len() >= GENERATION {
            std::mem::swap(&mut self.young, &mut self.old);
            self.young.clear();
        }
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
    use super::super::FixedPoint;
    use super::super::system::Solution;
    use super::super::test_support::{class, system};
    use super::{GENERATION, SolveMemo};
    use crate::model::LatencyCurve;

    /// The system the tests remember: a half latency-bound class beside a stream, on
    /// DRAM (200 GB/s) and a link (8 GB/s), and its plain solution.
    fn solved() -> Solution {
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (0.5, 150.0), (1.0, 400.0)]).unwrap();
        let classes = [
            class(4, &[(0, 40.0), (1, 5.0)], 0.5),
            class(2, &[(0, 60.0)], 0.0),
        ];
        let mut plain = Solution::default();
        FixedPoint::<super::super::Filling>::default()
            .solve(&system(&[200.0, 8.0], &classes, &curve), &mut plain);
        plain
    }

    #[test]
    fn memo_recalls_exactly_what_was_solved() {
        let plain = solved();
        let mut memo = SolveMemo::default();
        let mut recalled = Solution::default();
        assert!(!memo.recall(&[1, 2, 3], &mut recalled));
        memo.remember(&[1, 2, 3], &plain);
        assert!(memo.recall(&[1, 2, 3], &mut recalled));
        assert_eq!(recalled, plain);
        assert!(!memo.recall(&[1, 2, 4], &mut recalled));
    }

    #[test]
    fn a_solution_outlives_one_full_generation_not_two() {
        let plain = solved();
        let mut memo = SolveMemo::default();
        let mut recalled = Solution::default();
        memo.remember(&[0], &plain);
        // A whole generation of other states: the first is still recalled, exactly.
        for k in 1..=GENERATION as u64 {
            memo.remember(&[k], &plain);
        }
        assert!(memo.recall(&[0], &mut recalled));
        assert_eq!(recalled, plain);
        // Two more generations without it: forgotten.
        for k in 1..=2 * GENERATION as u64 {
            memo.remember(&[k << 20], &plain);
        }
        assert!(!memo.recall(&[0], &mut recalled));
    }
}
