//! The indices of a table whose current value is not zero, as a bit set: time integrals
//! visit only those entries (adding zero times an interval changes no sum, so skipping
//! them leaves every total bit for bit the same) instead of the whole table per event.

/// A set of indices below a fixed length, iterated in increasing order.
#[derive(Debug, Clone, Default)]
pub struct NonZero {
    /// Indices 0..64 (every table of most runs fits here, so a visit reads one word).
    first: u64,
    /// Indices from 64 on, 64 a word.
    rest: Vec<u64>,
}

impl NonZero {
    /// The empty set over `len` indices.
    pub fn new(len: usize) -> Self {
        Self {
            first: 0,
            rest: vec![0; len.div_ceil(64).saturating_sub(1)],
        }
    }

    /// Marks `i` as non-zero (`nonzero`) or zero.
    #[inline]
    pub fn set(&mut self, i: usize, nonzero: bool) {
        let bit = 1u64 << (i % 64);
        let word = match i / 64 {
            0 => &mut self.first,
            w => &mut self.rest[w - 1],
        };
        if nonzero {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// Calls `f` with each non-zero index, in increasing order.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        let mut visit = |base: usize, word: u64| {
            let mut rest = word;
            while rest != 0 {
                f(base + rest.trailing_zeros() as usize);
                rest &= rest - 1;
            }
        };
        visit(0, self.first);
        for (k, &word) in self.rest.iter().enumerate() {
            visit((k + 1) * 64, word);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_indices_across_words_in_order() {
        let mut s = NonZero::new(130);
        for i in [129, 0, 64, 63, 7] {
            s.set(i, true);
        }
        s.set(7, false);
        s.set(5, false);
        let collect = |s: &NonZero| {
            let mut v = Vec::new();
            s.for_each(|i| v.push(i));
            v
        };
        assert_eq!(collect(&s), vec![0, 63, 64, 129]);
        assert!(collect(&NonZero::new(0)).is_empty());
    }
}
