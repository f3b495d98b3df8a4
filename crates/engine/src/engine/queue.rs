//! The future event list: a 4-ary min-heap ordered by (time, insertion sequence), so
//! events at the same nanosecond pop in the order they were scheduled (deterministic).
//! Four children per node halve the depth of a binary heap: a pop (the hot operation)
//! moves an entry down half as many levels, comparing the children of each level, which
//! sit in one or two cache lines.

use crate::time::SimTime;

/// Time in the high 64 bits and insertion sequence in the low 64: one integer compare
/// orders by (time, seq), and no two entries have the same key.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// Children per node (`smallest_child` compares a full node's four without a loop).
const ARITY: usize = 4;
const _: () = assert!(ARITY == 4);

/// A min-queue of events by time, FIFO among equal times. Events are small `Copy` values:
/// a sift moves each entry it passes once, into the hole the sifted entry leaves, instead
/// of swapping it (half the copies of a swap).
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

impl<E: Copy> EventQueue<E> {
    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        self.seq += 1;
        let entry = Entry {
            key: ((time.0 as u128) << 64) | self.seq as u128,
            event,
        };
        // A hole rises from the end while its parent is later; the entry fills it.
        let mut at = self.heap.len();
        self.heap.push(entry);
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[at] = self.heap[parent];
            at = parent;
        }
        self.heap[at] = entry;
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let Some(&top) = self.heap.first() else {
            return Some((time_of(last.key), last.event));
        };
        // The root leaves a hole that sinks while its smallest child is earlier than the
        // last entry; the last entry fills it.
        let n = self.heap.len();
        let mut at = 0;
        loop {
            let first = at * ARITY + 1;
            if first >= n {
                break;
            }
            let (child, child_key) = self.smallest_child(first, n);
            if last.key <= child_key {
                break;
            }
            self.heap[at] = self.heap[child];
            at = child;
        }
        self.heap[at] = last;
        Some((time_of(top.key), top.event))
    }

    /// The earliest of the children starting at `first` (of `n` entries), and its key.
    #[inline]
    fn smallest_child(&self, first: usize, n: usize) -> (usize, u128) {
        let earlier = |a: (usize, u128), b: (usize, u128)| if b.1 < a.1 { b } else { a };
        if let Some(c) = self.heap.get(first..first + ARITY) {
            // A full node (most of them): a tournament of pairs, without a loop.
            let at = |i: usize| (first + i, c[i].key);
            return earlier(earlier(at(0), at(1)), earlier(at(2), at(3)));
        }
        (first + 1..n)
            .map(|i| (i, self.heap[i].key))
            .fold((first, self.heap[first].key), earlier)
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

/// The time half of a key.
fn time_of(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
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
