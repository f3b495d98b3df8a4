//! The future event list: a 4-ary min-heap ordered by (time, insertion sequence), so
//! events at the same nanosecond pop in the order they were scheduled (deterministic).
//! Four children per node halve the depth of a binary heap: a pop (the hot operation)
//! moves an entry down half as many levels, comparing the children of each level, which
//! sit in one or two cache lines. Entries past the last event are padding that sorts
//! after every event, so every node with a child has four to compare, without a loop.
//! A pop leaves the root empty: the next push fills it from the top (one sift down, no
//! sift up: an event loop pops, then schedules), and a pop that finds it empty first
//! fills it with the last entry, as a plain heap's pop would have done.
//!
//! A *slot* holds at most one pending event that later scheduling replaces (a fluid
//! class's next completion moves every time the class is re-rated). Slot events live in
//! a small indexed heap beside the main one and take their sequence number when set, so
//! the pop order is exactly that of pushing each replacement into the main heap and
//! skipping the superseded entries, without holding or popping them.

use crate::time::SimTime;

/// Time in the high 64 bits and insertion sequence in the low 64: one integer compare
/// orders by (time, seq), and no two entries have the same key.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

/// The key of the main heap's padding: after every event's (an event's sequence number
/// is below `u64::MAX`).
const PADDING_KEY: u128 = u128::MAX;

/// A slot's pending event.
struct SlotEntry<E> {
    key: u128,
    slot: usize,
    event: E,
}

/// Children per node (`earliest_child` compares a node's four without a loop).
const ARITY: usize = 4;
const _: () = assert!(ARITY == 4);

/// Padding entries kept past the last event: the last event's parent has its first child
/// at or after the last event, so its four children end at most `ARITY - 1` past it.
const PADDING: usize = ARITY - 1;

/// `slot_at` of a slot with no pending event.
const NO_EVENT: usize = usize::MAX;

/// A min-queue of events by time, FIFO among equal times. Events are small `Copy` values:
/// a sift moves each entry it passes once, into the hole the sifted entry leaves, instead
/// of swapping it (half the copies of a swap).
pub struct EventQueue<E> {
    /// The events (`heap[..heap_len]`), then at least [`PADDING`] entries keyed
    /// [`PADDING_KEY`] (the vector keeps its longest length).
    heap: Vec<Entry<E>>,
    /// Entries in the main heap, an empty root included.
    heap_len: usize,
    /// The root's event was popped and its place not refilled yet (its entry is stale).
    root_empty: bool,
    /// Slots' pending events: a binary min-heap by key (slots are few).
    slotted: Vec<SlotEntry<E>>,
    /// Each slot's position in `slotted` ([`NO_EVENT`]: nothing pending).
    slot_at: Vec<usize>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self {
            heap: Vec::new(),
            heap_len: 0,
            root_empty: false,
            slotted: Vec::new(),
            slot_at: Vec::new(),
            seq: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// The key of an event scheduled now at `time`: after every event scheduled so far.
    #[inline]
    fn next_key(&mut self, time: SimTime) -> u128 {
        self.seq += 1;
        ((time.0 as u128) << 64) | self.seq as u128
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let entry = Entry {
            key: self.next_key(time),
            event,
        };
        if self.root_empty {
            self.root_empty = false;
            if self.heap_len == 1 {
                // The root alone (the next arrival on a processor-sharing pool): no sift.
                self.heap[0] = entry;
            } else {
                self.sift_down_from_root(entry, self.heap_len);
            }
            return;
        }
        // A hole rises from the end while its parent is later; the entry fills it.
        let mut at = self.heap_len;
        self.heap_len += 1;
        if self.heap.len() < self.heap_len + PADDING {
            // Longer than ever: one more padding entry (any event: it is never popped).
            let padding = Entry {
                key: PADDING_KEY,
                event,
            };
            self.heap.resize(self.heap_len + PADDING, padding);
        }
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

    /// Schedules `event` at `time` as the one pending event of `slot` (a small index,
    /// the caller's), dropping the slot's previous event if it has not been popped. The
    /// event is ordered as if pushed now.
    #[inline(always)]
    pub fn set_slot(&mut self, slot: usize, time: SimTime, event: E) {
        if let [only] = &self.slotted[..]
            && only.slot == slot
        {
            // The slot's event pending alone (one class running, as on a processor-sharing
            // pool): replaced in place, nothing to reorder.
            let key = self.next_key(time);
            self.slotted[0] = SlotEntry { key, slot, event };
            return;
        }
        if self.slotted.is_empty() && slot < self.slot_at.len() {
            // No slot event pending (the lone class's last one was just consumed): this
            // one is the slot heap's root.
            let key = self.next_key(time);
            self.slotted.push(SlotEntry { key, slot, event });
            self.slot_at[slot] = 0;
            return;
        }
        self.set_slot_sorted(slot, time, event);
    }

    /// [`EventQueue::set_slot`] where the slot heap may need reordering.
    fn set_slot_sorted(&mut self, slot: usize, time: SimTime, event: E) {
        let key = self.next_key(time);
        if slot >= self.slot_at.len() {
            self.slot_at.resize(slot + 1, NO_EVENT);
        }
        let at = self.slot_at[slot];
        if at == NO_EVENT {
            let at = self.slotted.len();
            self.slotted.push(SlotEntry { key, slot, event });
            self.slot_at[slot] = at;
            if at > 0 {
                self.slot_sift_up(at);
            }
        } else {
            let entry = &mut self.slotted[at];
            let earlier = key < entry.key;
            entry.key = key;
            entry.event = event;
            if self.slotted.len() == 1 {
                // Alone (one class running, as on a processor-sharing pool): in order.
            } else if earlier {
                self.slot_sift_up(at);
            } else {
                self.slot_sift_down(at);
            }
        }
    }

    /// Drops `slot`'s pending event, if any.
    pub fn clear_slot(&mut self, slot: usize) {
        let Some(&at) = self.slot_at.get(slot) else {
            return;
        };
        if at != NO_EVENT {
            self.remove_slotted(at);
        }
    }

    /// Removes and returns the earliest event.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.root_empty {
            self.fill_root_with_last();
        }
        // An empty main heap's root is padding, later than any slot event.
        let slot_first = match (self.heap.first(), self.slotted.first()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(h), Some(s)) => s.key < h.key,
        };
        if slot_first {
            let top = self.remove_slotted(0);
            return Some((time_of(top.key), top.event));
        }
        if self.heap_len == 0 {
            return None;
        }
        // The root's place stays taken until a push or the next pop refills it.
        self.root_empty = true;
        let top = self.heap[0];
        Some((time_of(top.key), top.event))
    }

    /// Refills the empty root with the last entry, which leaves the end to padding.
    #[inline(never)]
    fn fill_root_with_last(&mut self) {
        self.root_empty = false;
        let n = self.heap_len - 1;
        self.heap_len = n;
        let last = self.heap[n];
        // The last entry's own place is never earlier than itself, so the sift stops
        // above it unless the root was the last.
        self.sift_down_from_root(last, n);
        self.heap[n].key = PADDING_KEY;
    }

    /// Fills the empty root with `entry`: the hole sinks while its smallest child (of
    /// the first `n` entries, padding after) is earlier than `entry`, which fills it.
    #[inline]
    fn sift_down_from_root(&mut self, entry: Entry<E>, n: usize) {
        // The events and the padding their last parent's children reach: every child
        // read below is in it.
        let heap = &mut self.heap[..n + PADDING];
        let mut at = 0;
        loop {
            let first = at * ARITY + 1;
            if first >= n {
                break;
            }
            let (child, earliest) = earliest_child(heap, first);
            if entry.key <= earliest.key {
                break;
            }
            heap[at] = earliest;
            at = child;
        }
        heap[at] = entry;
    }

    /// Removes the slot event at position `at` of `slotted`, keeping the heap order.
    fn remove_slotted(&mut self, at: usize) -> SlotEntry<E> {
        let last = self.slotted.len() - 1;
        let removed = self.slotted.swap_remove(at);
        self.slot_at[removed.slot] = NO_EVENT;
        if at < last {
            // The entry moved in from the end may belong above or below `at`.
            self.slot_at[self.slotted[at].slot] = at;
            if at > 0 && self.slotted[at].key < self.slotted[(at - 1) / 2].key {
                self.slot_sift_up(at);
            } else {
                self.slot_sift_down(at);
            }
        }
        removed
    }

    /// Moves the slot event at `at` up while its parent is later.
    fn slot_sift_up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.slotted[parent].key <= self.slotted[at].key {
                break;
            }
            self.swap_slotted(parent, at);
            at = parent;
        }
    }

    /// Moves the slot event at `at` down while a child is earlier.
    fn slot_sift_down(&mut self, mut at: usize) {
        let n = self.slotted.len();
        loop {
            let left = 2 * at + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.slotted[right].key < self.slotted[left].key {
                right
            } else {
                left
            };
            if self.slotted[at].key <= self.slotted[child].key {
                break;
            }
            self.swap_slotted(at, child);
            at = child;
        }
    }

    fn swap_slotted(&mut self, a: usize, b: usize) {
        self.slotted.swap(a, b);
        self.slot_at[self.slotted[a].slot] = a;
        self.slot_at[self.slotted[b].slot] = b;
    }

    /// Events scheduled and not yet popped (a slot's replaced events are gone).
    pub fn len(&self) -> usize {
        self.heap_len - usize::from(self.root_empty) + self.slotted.len()
    }

    /// True when nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap_len == usize::from(self.root_empty) && self.slotted.is_empty()
    }
}

/// The earliest of the four children starting at `first` in `heap` (padding included):
/// its index and a copy.
#[inline]
fn earliest_child<E: Copy>(heap: &[Entry<E>], first: usize) -> (usize, Entry<E>) {
    let c: &[Entry<E>; ARITY] = heap[first..first + ARITY]
        .try_into()
        .expect("a slice of ARITY entries");
    // A tournament of pairs, by position among the four.
    let earlier = |a: usize, b: usize| if c[b].key < c[a].key { b } else { a };
    let i = earlier(earlier(0, 1), earlier(2, 3));
    (first + i, c[i])
}

/// The time half of a key.
fn time_of(key: u128) -> SimTime {
    SimTime((key >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Advances a xorshift64 stream in place (the tests' cheap, repeatable randomness).
    fn xorshift(x: &mut u64) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
    }

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
            xorshift(&mut x);
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

    #[test]
    fn grows_drains_and_grows_again_in_order() {
        // Bursts of pushes and of pops, so the heap grows past its longest length, drains
        // to empty (only padding left) and grows again; pops follow pops (the empty root
        // refilled by the last entry) and pushes follow pops (refilled from the top).
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut x = 0x1234_5678_9ABC_DEF1_u64;
        let mut seq = 0u64;
        for round in 0..40u64 {
            let pushes = (round * 37) % 300;
            for _ in 0..pushes {
                xorshift(&mut x);
                seq += 1;
                let t = x % 1_000;
                q.push(SimTime(t), seq);
                reference.insert((t, seq));
            }
            let pops = if round % 5 == 4 {
                usize::MAX
            } else {
                (x % 250) as usize
            };
            for _ in 0..pops {
                let Some(first) = reference.pop_first() else {
                    break;
                };
                assert_eq!(q.pop(), Some((SimTime(first.0), first.1)));
                assert_eq!(q.len(), reference.len());
            }
            assert_eq!(q.is_empty(), reference.is_empty());
        }
        while let Some(first) = reference.pop_first() {
            assert_eq!(q.pop(), Some((SimTime(first.0), first.1)));
        }
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
        assert!(q.pop().is_none());
    }

    /// Where an event comes from: a plain push (its number) or a slot (slot, generation).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Source {
        Plain(u64),
        Slot(usize, u64),
    }

    #[test]
    fn slots_pop_as_a_plain_queue_that_skips_superseded_entries() {
        // One random schedule into a queue with slots and into a plain queue that holds
        // every slot event ever set and skips, when popped, those set again or cleared
        // since (the engine's generation check): both must pop the same events.
        const SLOTS: usize = 6;
        let mut slotted = EventQueue::default();
        let mut plain = EventQueue::default();
        // The generation of each slot's pending event, if one is pending.
        let mut pending: [Option<u64>; SLOTS] = [None; SLOTS];
        let mut generation = 0u64;
        let mut number = 0u64;
        let mut x = 0x2545_F491_4F6C_DD1D_u64;
        let pop_both = |slotted: &mut EventQueue<Source>,
                        plain: &mut EventQueue<Source>,
                        pending: &mut [Option<u64>; SLOTS]| {
            let expected = loop {
                match plain.pop() {
                    Some((_, Source::Slot(s, g))) if pending[s] != Some(g) => continue,
                    Some((t, Source::Slot(s, g))) => {
                        pending[s] = None;
                        break Some((t, Source::Slot(s, g)));
                    }
                    other => break other,
                }
            };
            assert_eq!(slotted.pop(), expected);
        };
        for _ in 0..50_000 {
            xorshift(&mut x);
            let t = SimTime((x >> 8) % 40);
            let slot = (x >> 20) as usize % SLOTS;
            match x % 7 {
                0 | 1 => {
                    number += 1;
                    slotted.push(t, Source::Plain(number));
                    plain.push(t, Source::Plain(number));
                }
                2 | 3 => {
                    generation += 1;
                    slotted.set_slot(slot, t, Source::Slot(slot, generation));
                    plain.push(t, Source::Slot(slot, generation));
                    pending[slot] = Some(generation);
                }
                4 => {
                    slotted.clear_slot(slot);
                    pending[slot] = None;
                }
                _ => pop_both(&mut slotted, &mut plain, &mut pending),
            }
            let live_slots = pending.iter().flatten().count();
            assert!(slotted.len() >= live_slots);
        }
        while !slotted.is_empty() {
            pop_both(&mut slotted, &mut plain, &mut pending);
        }
        assert!(pending.iter().all(Option::is_none));
        pop_both(&mut slotted, &mut plain, &mut pending);
    }
}
