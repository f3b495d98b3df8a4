//! An accelerator: solutions of a system where at most one class runs, remembered by
//! its member count. A processor-sharing pool revisits the same few counts all run
//! long, and a lookup is cheaper than any solve.

use crate::engine::ids::KeyId;

use super::system::Solution;

/// Solutions of one key alone, by member count. With one class running, the solution
/// depends only on its key, its count and the capacities; while a key's demand and
/// every capacity but DRAM's stay the same, (key, count, DRAM capacity) determines it.
/// Another key starts over.
#[derive(Debug, Default)]
pub struct LoneMemo {
    /// The key the entries are for (None: only "nothing running" held).
    key: Option<KeyId>,
    /// By member count (index 0: nothing running, the same for every key): the DRAM
    /// capacity's bits it was solved at, and the solution of the class alone.
    solutions: Vec<Option<(u64, Solution)>>,
}

/// Member counts remembered (a bound on memory; larger counts are solved each time).
const LONE_MEMO_COUNTS: u32 = 1 << 12;

impl LoneMemo {
    /// The entry index for `state` (key and count; None: nothing running), starting
    /// over when the key differs from the entries'; None beyond the bound on counts.
    pub fn slot(&mut self, state: Option<(KeyId, u32)>) -> Option<usize> {
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

    /// The solution remembered in `slot` at DRAM capacity `capacity` (its bits).
    pub fn get(&self, slot: usize, capacity: u64) -> Option<&Solution> {
        match &self.solutions[slot] {
            Some((c, s)) if *c == capacity => Some(s),
            _ => None,
        }
    }

    /// Remembers `solution` in `slot`, solved at DRAM capacity `capacity` (its bits).
    pub fn set(&mut self, slot: usize, capacity: u64, solution: &Solution) {
        self.solutions[slot] = Some((capacity, solution.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::super::system::Solution;
    use super::{LONE_MEMO_COUNTS, LoneMemo};

    #[test]
    fn lone_memo_keeps_counts_of_one_key_and_idle_across_keys() {
        let solved = Solution {
            usage: vec![1.0],
            ..Default::default()
        };
        let mut m = LoneMemo::default();
        // Key 3 with 2 members, then nothing running, at DRAM capacity (bits) 7.
        assert_eq!(m.slot(Some((3, 2))), Some(2));
        m.set(2, 7, &solved);
        assert_eq!(m.slot(None), Some(0));
        m.set(0, 7, &solved);
        // Same key: entries stay, at their capacity only; nothing running is
        // key-independent.
        assert_eq!(m.slot(Some((3, 2))), Some(2));
        assert_eq!(m.get(2, 7), Some(&solved));
        assert_eq!(m.get(2, 8), None);
        // Another key starts over, but keeps the idle entry.
        assert_eq!(m.slot(Some((4, 1))), Some(1));
        assert!(m.get(0, 7).is_some());
        assert!(m.solutions.iter().skip(1).all(Option::is_none));
        // Counts beyond the bound are not remembered.
        assert_eq!(m.slot(Some((4, LONE_MEMO_COUNTS))), None);
    }
}
