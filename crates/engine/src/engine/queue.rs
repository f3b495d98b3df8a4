//! The future event list: a 4-ary min-heap ordered by (time, insertion sequence), so
//! events at the same nanosecond pop in the order they were scheduled (deterministic).
//! Four children per node halve the depth of a binary heap: a pop (the hot operation)
//! moves an entry down half as many levels, comparing the children of each level, which
//! sit in one or two cache lines.

use crate::time::SimTime;

/// Time in the high 64 bits and insertion sequence in the low 64: one integer compare
/// orders by (time, seq), and no two entries have the same key.
struct Entry<E> {
    key: u128,
    event: E,
}

/// Children per node.
const ARITY: usize = 4;

/// A min-queue of events by time, FIFO among equal times.
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: Vec::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: SimTime, event: E) {
        self.seq += 1;
        let key = ((time.0 as u128) << 64) | self.seq as u128;
        // Sift the new entry up from the end while its parent is later.
        let mut at = self.heap.len();
        self.heap.push(Entry { key, event });
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap.swap(parent, at);
            at = parent;
        }
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.len().checked_sub(1)?;
        self.heap.swap(0, last);
        let top = self.heap.pop().expect("not empty");
        let n = self.heap.len();
        if n > 1 {
            // Sift the moved entry down: swap with the smallest child while it is smaller.
            let key = self.heap[0].key;
            let mut at = 0;
            loop {
                let first = at * ARITY + 1;
                if first >= n {
                    break;
                }
                let end = (first + ARITY).min(n);
                let mut child = first;
                let mut child_key = self.heap[first].key;
                for c in first + 1..end {
                    let k = self.heap[c].key;
                    if k < child_key {
                        child = c;
                        child_key = k;
                    }
                }
                if key <= child_key {
                    break;
                }
                self.heap.swap(at, child);
                at = child;
            }
        }
        Some((SimTime((top.key >> 64) as u64), top.event))
    }

    /// Events scheduled (including stale ones not yet popped).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_then_fifo() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), 'a');
        q.push(SimTime(1), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn matches_a_sorted_order_on_random_interleavings() {
        // Against (time, seq) sorted order, with pushes and pops interleaved, many ties.
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut seq = 0u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) {
                seq += 1;
                let t = x % 50;
                q.push(SimTime(t), seq);
                reference.insert((t, seq));
            } else if let Some(first) = reference.pop_first() {
                assert_eq!(q.pop(), Some((SimTime(first.0), first.1)));
            } else {
                assert!(q.pop().is_none());
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(first) = reference.pop_first() {
            assert_eq!(q.pop(), Some((SimTime(first.0), first.1)));
        }
        assert!(q.is_empty());
    }
}
