//! The streaming and fill buffers' slots: every thread that streams or fills takes a slot
//! of its own and walks on through it (see [`KernelHost`]).

use super::{Backing, KernelHost};
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The free slots of the streaming buffer. When more threads stream at once than there
/// are slots, the extra ones share a slot (round robin) rather than wait.
pub(super) struct StreamSlots {
    pub(super) count: usize,
    free: Mutex<Vec<usize>>,
    next_shared: AtomicUsize,
}

impl StreamSlots {
    pub(super) fn new(count: usize) -> StreamSlots {
        let count = count.max(1);
        StreamSlots {
            count,
            free: Mutex::new((0..count).rev().collect()),
            next_shared: AtomicUsize::new(0),
        }
    }

    /// A slot for one thread's stream; `Err` holds a shared one when none is free.
    fn take(&self) -> Result<usize, usize> {
        match self.free.lock().expect("poisoned").pop() {
            Some(s) => Ok(s),
            None => Err(self.next_shared.fetch_add(1, Ordering::Relaxed) % self.count),
        }
    }

    fn give_back(&self, slot: Result<usize, usize>) {
        if let Ok(s) = slot {
            self.free.lock().expect("poisoned").push(s);
        }
    }
}

impl KernelHost {
    /// Words per slot of the streaming buffer.
    fn slot_words(&self) -> usize {
        (self.stream.len() / self.slots.count).max(1)
    }

    /// Reads `bytes` of the streaming buffer in a slot of its own, on from `cursor` (a
    /// word offset in the slot, wrapping around); returns where it stopped.
    pub(super) fn stream_bytes(&self, slot: usize, cursor: usize, bytes: u64) -> usize {
        let words = self.slot_words();
        let base = (slot * words).min(self.stream.len().saturating_sub(words));
        let slot_buf = &self.stream[base..base + words];
        let mut acc = [0u64; 8];
        let mut at = cursor % words;
        for (from, to) in slot_pieces(at, (bytes / 8) as usize, words) {
            for c in slot_buf[from..to].chunks_exact(8) {
                for k in 0..8 {
                    acc[k] = acc[k].wrapping_add(c[k]);
                }
            }
            at = to % words;
        }
        black_box(acc);
        at
    }

    /// Words per slot of the fill buffers.
    pub(super) fn fill_words(&self) -> usize {
        self.fills
            .first()
            .map_or(0, |f| f.lock().expect("poisoned").len())
    }

    /// Runs one thread's work `f` with a slot of its own: every read and fill it makes
    /// walks on through that slot. The slot is given back at the end.
    pub(super) fn with_slot<T>(&self, f: impl FnOnce(&mut SlotIo<'_>) -> T) -> T {
        let taken = self.slots.take();
        let slot = taken.unwrap_or_else(|shared| shared);
        // A thread sharing a slot whose fill buffer is in use reads instead (see SlotIo).
        let fill = self.fills[slot].try_lock().ok();
        let mut io = SlotIo {
            host: self,
            slot,
            read_at: 0,
            fill,
            fill_at: 0,
        };
        let out = f(&mut io);
        drop(io);
        self.slots.give_back(taken);
        out
    }
}

/// One thread's reads and fills in its slot.
pub(super) struct SlotIo<'a> {
    host: &'a KernelHost,
    slot: usize,
    read_at: usize,
    /// The slot's fill buffer; `None` for a thread sharing a slot whose buffer another
    /// thread holds: it reads twice the bytes instead (the same DRAM bytes, no writes).
    fill: Option<std::sync::MutexGuard<'a, Backing<u64>>>,
    fill_at: usize,
}

impl SlotIo<'_> {
    /// Reads `bytes` on from where this thread's last read stopped.
    pub(super) fn read(&mut self, bytes: u64) {
        self.read_at = self.host.stream_bytes(self.slot, self.read_at, bytes);
    }

    /// Writes `bytes` on from where this thread's last fill stopped, in 64 KiB pieces
    /// with ordinary stores (libc's memset turns non-temporal above a size, and a
    /// non-temporal store is not read for ownership).
    pub(super) fn fill(&mut self, bytes: u64) {
        let Some(buf) = self.fill.as_mut() else {
            self.read(2 * bytes);
            return;
        };
        let words = buf.len();
        let mut value = 0x1234_5678_9abc_def1u64.wrapping_add(self.fill_at as u64);
        for (from, to) in slot_pieces(self.fill_at, (bytes / 8) as usize, words) {
            for piece in buf[from..to].chunks_mut(8192) {
                piece.fill(value);
                value = value.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            }
            self.fill_at = to % words.max(1);
        }
        black_box(&buf[self.fill_at.min(words.saturating_sub(1))..]);
    }
}

/// The word ranges `[from, to)` a read of `len` words starting at `at` covers in a
/// slot of `words` words, wrapping at its end.
fn slot_pieces(mut at: usize, mut len: usize, words: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    while len > 0 && words > 0 {
        let to = (at + len).min(words);
        out.push((at, to));
        len -= to - at;
        at = if to == words { 0 } else { to };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{BufferSizes, CpuWork, ThreadWork};
    use super::*;

    #[test]
    fn a_read_walks_on_through_its_slot_and_wraps() {
        assert_eq!(slot_pieces(2, 5, 10), vec![(2, 7)]);
        assert_eq!(slot_pieces(8, 5, 10), vec![(8, 10), (0, 3)]);
        assert_eq!(slot_pieces(0, 25, 10), vec![(0, 10), (0, 10), (0, 5)]);
        assert!(slot_pieces(3, 0, 10).is_empty());
    }
    #[test]
    fn concurrent_streams_get_slots_of_their_own() {
        let slots = StreamSlots::new(3);
        let taken: Vec<_> = (0..3).map(|_| slots.take()).collect();
        let mut own: Vec<usize> = taken.iter().map(|s| s.unwrap()).collect();
        own.sort();
        assert_eq!(own, vec![0, 1, 2]);
        // A fourth thread shares one rather than waits; a slot given back is reused.
        assert!(slots.take().is_err());
        slots.give_back(taken[1]);
        assert_eq!(slots.take(), taken[1]);
    }
    #[test]
    fn successive_reads_of_one_thread_continue_where_the_last_stopped() {
        let host = KernelHost::new(BufferSizes::TEST, 2);
        let words = host.slot_words();
        let at = host.stream_bytes(1, 0, 800);
        assert_eq!(at, 100);
        assert_eq!(host.stream_bytes(1, at, 800), 200);
        // Past the slot's end it wraps to the slot's start.
        assert_eq!(host.stream_bytes(1, words - 10, 160), 10);
    }
    #[test]
    fn fills_walk_on_through_the_slot_and_count_twice() {
        let host = KernelHost::new(BufferSizes::TEST, 2);
        for f in &host.fills {
            f.lock().unwrap().fill(1);
        }
        let work = CpuWork {
            threads: 1,
            per_thread: ThreadWork {
                chase_steps: 0,
                stream_bytes: 1 << 20,
                fill_bytes: 3 << 20,
                compute_iters: 0,
            },
            dropped_dram_bytes: 0.0,
        };
        assert_eq!(host.run(&work), (1 << 20) + 2 * (3 << 20));
        // One thread, one slot: its first 3 MiB written, in 16 pieces one after another.
        let written: Vec<usize> = host
            .fills
            .iter()
            .map(|f| f.lock().unwrap().iter().filter(|&&w| w != 1).count())
            .collect();
        assert_eq!(written.iter().sum::<usize>(), (3 << 20) / 8, "{written:?}");
    }
}
