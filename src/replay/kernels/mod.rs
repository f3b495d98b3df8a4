//! Synthetic CPU kernels that stand in for a CPU stage on replay: pointer chasing over a
//! large buffer (the latency-bound share), streaming reads over a buffer larger than L3
//! (the DRAM bytes) and a dependent arithmetic loop (the compute-bound rest).
//!
//! [`KernelHost::new`] measures this host first (ns per chase step, GB/s per streaming
//! thread with 1, 2, 4, ... threads streaming at once, arithmetic loop rate), so that
//! [`KernelHost::work_for`] can size a stage's work to take its standalone duration when
//! it runs alone. Under contention the same work takes longer, which is what replay
//! measures. Before the points run, [`KernelHost::size_stage`] runs each stage alone once
//! and corrects its sizing by what it measured (see `sizing.rs`).

mod sizing;
mod slots;
#[cfg(test)]
mod tests;

pub use sizing::{SizingTrial, StageSizing};

use super::memory::Backing;
use crate::model::CACHE_LINE_BYTES;
use slots::StreamSlots;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Buffer sizes of the kernels, bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferSizes {
    /// The pointer-chase buffer (one 64-byte line per step).
    pub chase_bytes: usize,
    /// The streaming buffer, cut into one private slot per streaming thread (see
    /// [`KernelHost`]).
    pub stream_bytes: usize,
    /// The buffer that stages writing memory fill, cut into slots the same way.
    pub fill_bytes: usize,
    /// Map the buffers on huge pages, as `bwsim calibrate` measures DRAM on them.
    pub huge_pages: bool,
}

impl BufferSizes {
    /// Sizes for a real replay: each of 16 streaming threads gets 512 MiB, several
    /// times any server L3.
    pub const REPLAY: BufferSizes = BufferSizes {
        chase_bytes: 1 << 30,
        stream_bytes: 8 << 30,
        fill_bytes: 4 << 30,
        huge_pages: true,
    };
    /// Small sizes for tests (numbers are cache-bound, timings still self-consistent).
    pub const TEST: BufferSizes = BufferSizes {
        chase_bytes: 16 << 20,
        stream_bytes: 32 << 20,
        fill_bytes: 8 << 20,
        huge_pages: false,
    };
}

/// This host's rates, as measured by [`KernelHost::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct HostRates {
    /// Nanoseconds per dependent load of the pointer chase, one thread alone.
    pub chase_ns_per_step: f64,
    /// Per-thread streaming GB/s with `n` threads streaming at once: `(n, GB/s per thread)`,
    /// n ascending, first n = 1.
    pub stream_gbps_per_thread: Vec<(u32, f64)>,
    /// DRAM GB/s of one thread filling memory alone (its reads for ownership and its
    /// writes).
    pub fill_dram_gbps: f64,
    /// Arithmetic loop iterations per second, one thread.
    pub compute_iters_per_s: f64,
}

impl HostRates {
    /// Per-thread streaming rate with `threads` streaming at once (linear between the
    /// measured counts, the last one held beyond).
    pub fn stream_gbps(&self, threads: u32) -> f64 {
        let p = &self.stream_gbps_per_thread;
        let t = threads.max(1) as f64;
        if t <= p[0].0 as f64 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((a, ga), (b, gb)) = ((w[0].0 as f64, w[0].1), (w[1].0 as f64, w[1].1));
            if t <= b {
                return ga + (gb - ga) * (t - a) / (b - a);
            }
        }
        p[p.len() - 1].1
    }
}

/// The host's memory as one short look sees it just before a run (see
/// [`KernelHost::probe_now`]): set beside [`HostRates`], measured once at the start, it
/// shows how far the host moved between the replay's sizing and each run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostNow {
    /// Nanoseconds per dependent load of the pointer chase, one thread alone.
    pub chase_ns_per_step: f64,
    /// GB/s of one thread streaming alone.
    pub stream_gbps_one_thread: f64,
}

/// What a CPU stage must reproduce when it runs alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuStageShape {
    /// Standalone duration, seconds.
    pub standalone_s: f64,
    /// Threads it runs on.
    pub threads: u32,
    /// DRAM bytes it moves in total (all threads).
    pub dram_bytes: f64,
    /// Share of the standalone time bound by DRAM latency, 0..=1.
    pub latency_frac: f64,
    /// Share of the DRAM bytes that are writes (the stage's `dram_write_frac`; 0 for a
    /// stage that does not say). Ordinary stores write-allocate, so a written line is
    /// read once and written once: at most half the bytes can be writes.
    pub write_frac: f64,
}

/// One thread's share of a stage's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadWork {
    /// Dependent loads of the pointer chase.
    pub chase_steps: u64,
    /// Bytes to stream (read).
    pub stream_bytes: u64,
    /// Bytes to fill (write-allocated: twice as many DRAM bytes).
    pub fill_bytes: u64,
    /// Arithmetic loop iterations.
    pub compute_iters: u64,
}

/// A stage's work: every thread does the same [`ThreadWork`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuWork {
    /// Threads.
    pub threads: u32,
    /// Work per thread.
    pub per_thread: ThreadWork,
    /// DRAM bytes the stage asked for that do not fit in its standalone time at this
    /// host's streaming rate (0 when everything fits); see
    /// [`KernelHost::shortfall_warnings`].
    pub dropped_dram_bytes: f64,
}

/// Pieces each thread's work is cut into, interleaving chase, stream and compute so
/// that the stage's DRAM load is spread over its whole duration.
const CHUNKS: u64 = 16;
/// Bytes per cache line (one chase step touches one line).
const LINE: usize = CACHE_LINE_BYTES as usize;

/// The kernels' buffers and this host's measured rates.
///
/// Every streaming thread reads a slot of the streaming buffer that no other thread
/// reads at the same time, and walks on through it from piece to piece. Threads that
/// read the same lines would share them through the L3 (a follower hits what its leader
/// fetched, catches up and convoys behind it), so the host's DRAM would carry fewer bytes
/// than the stage counts.
pub struct KernelHost {
    /// Chase buffer: line i's first u32 is the index of the next line (one cycle).
    chase: Backing<u32>,
    /// Streaming buffer, `slots.count` slots of `slot_words` words.
    stream: Backing<u64>,
    /// One fill buffer per slot, written only by the thread holding the slot.
    fills: Vec<Mutex<Backing<u64>>>,
    /// How many chases have started (see [`KernelHost::chase_start`]).
    chase_starts: AtomicUsize,
    /// Which slots are free.
    slots: StreamSlots,
    /// Measured rates.
    pub rates: HostRates,
    /// Per-stage corrections from the stages' trials, by stage name (see
    /// [`KernelHost::sizing_of`]).
    sizings: HashMap<String, StageSizing>,
}

impl KernelHost {
    /// Allocates and fills the buffers, then measures this host (about half a second).
    /// `max_threads` bounds the streaming-thread counts measured.
    pub fn new(sizes: BufferSizes, max_threads: u32) -> KernelHost {
        let huge = sizes.huge_pages;
        let cycle = chase_cycle(sizes.chase_bytes / LINE, 0x5eed);
        let chase = Backing::new(cycle.len(), huge, |i| cycle[i]);
        drop(cycle);
        let stream = Backing::new(sizes.stream_bytes / 8, huge, |i| i as u64 * 0x9e37_79b9);
        let slots = StreamSlots::new(max_threads as usize);
        // Written once now, so that no page is first touched during a run.
        let fills = (0..slots.count)
            .map(|_| {
                Mutex::new(Backing::new(
                    sizes.fill_bytes / 8 / slots.count,
                    huge,
                    |_| 1u64,
                ))
            })
            .collect();
        let mut host = KernelHost {
            chase,
            stream,
            fills,
            chase_starts: AtomicUsize::new(0),
            slots,
            rates: HostRates {
                chase_ns_per_step: 100.0,
                stream_gbps_per_thread: vec![(1, 10.0)],
                fill_dram_gbps: 10.0,
                compute_iters_per_s: 1e9,
            },
            sizings: HashMap::new(),
        };
        host.rates = host.measure(max_threads.max(1));
        host
    }

    fn measure(&self, max_threads: u32) -> HostRates {
        // Chase: warm up, then time a fixed number of steps.
        let steps = self.probe_chase_steps();
        self.chase(0, steps / 4);
        // Best of three throughout: the least disturbed run is the host's own rate.
        let chase_ns_per_step = best_of(3, || {
            self.chase(self.chase_start(), steps);
        }) * 1e9
            / steps as f64;

        // Stream with n = 1, 2, 4, ... threads at once.
        let mut counts = vec![1u32];
        while counts[counts.len() - 1] * 2 <= max_threads {
            counts.push(counts[counts.len() - 1] * 2);
        }
        if counts[counts.len() - 1] != max_threads {
            counts.push(max_threads);
        }
        let bytes = self.probe_stream_bytes();
        self.with_slot(|io| io.read(bytes / 4));
        let mut stream_gbps_per_thread = Vec::new();
        for &n in &counts {
            let secs = best_of(2, || {
                std::thread::scope(|s| {
                    for _ in 0..n {
                        s.spawn(move || self.with_slot(|io| io.read(bytes)));
                    }
                })
            });
            let gbps = bytes as f64 / secs / 1e9;
            stream_gbps_per_thread.push((n, gbps));
        }

        // Fill: one thread, DRAM bytes (its reads for ownership and writes).
        let fill = (self.fill_words() as u64 * 8).clamp(1 << 20, 256 << 20);
        self.with_slot(|io| io.fill(fill / 4));
        let fill_dram_gbps =
            2.0 * fill as f64 / best_of(2, || self.with_slot(|io| io.fill(fill))) / 1e9;

        let iters = 20_000_000u64;
        compute(iters / 4);
        let compute_iters_per_s = iters as f64 / best_of(3, || compute(iters));
        HostRates {
            chase_ns_per_step,
            stream_gbps_per_thread,
            fill_dram_gbps,
            compute_iters_per_s,
        }
    }

    /// One pass of the start's chase and one-thread stream, now (a fraction of a second on
    /// a replay's buffers). One pass, not the best of several: it reads the host as a run
    /// would meet it.
    pub fn probe_now(&self) -> HostNow {
        let steps = self.probe_chase_steps() / 2;
        let t = best_of(1, || {
            self.chase(self.chase_start(), steps);
        });
        let bytes = self.probe_stream_bytes();
        let secs = best_of(1, || self.with_slot(|io| io.read(bytes)));
        HostNow {
            chase_ns_per_step: t * 1e9 / steps as f64,
            stream_gbps_one_thread: bytes as f64 / secs / 1e9,
        }
    }

    /// Chase steps a probe pass times: twice the buffer's lines, within bounds that keep a
    /// pass long enough to time and short enough to repeat.
    fn probe_chase_steps(&self) -> u64 {
        (self.lines() as u64 * 2).clamp(200_000, 4_000_000)
    }

    /// Bytes one streaming thread reads in a probe pass.
    fn probe_stream_bytes(&self) -> u64 {
        (self.stream.len() as u64 * 8).clamp(64 << 20, 512 << 20)
    }

    fn lines(&self) -> usize {
        self.chase.len() / (LINE / 4)
    }

    /// Sizes a stage's work so that alone it takes `shape.standalone_s`: the latency
    /// share chases, the DRAM bytes stream at this host's rate for that many threads,
    /// and arithmetic fills the rest. DRAM bytes that would not fit in the time left are
    /// dropped (and reported in [`CpuWork::dropped_dram_bytes`]).
    pub fn work_for(&self, shape: &CpuStageShape) -> CpuWork {
        let threads = shape.threads.max(1);
        let t = shape.standalone_s.max(0.0);
        let latency_s = t * shape.latency_frac.clamp(0.0, 1.0);
        let rest_s = t - latency_s;
        let gbps = self.rates.stream_gbps(threads);
        // The fill rate with this many threads: one thread's, slowed as the streams are.
        let fill_gbps = self.rates.fill_dram_gbps * gbps / self.rates.stream_gbps(1);
        let dram_per_thread = shape.dram_bytes.max(0.0) / threads as f64;
        let write_frac = shape.write_frac.clamp(0.0, 0.5);
        // Per DRAM byte: (1 - 2w) read by the stream, 2w moved by fills.
        let s_per_byte =
            (1.0 - 2.0 * write_frac) / (gbps * 1e9) + 2.0 * write_frac / (fill_gbps * 1e9);
        let want_stream_s = dram_per_thread * s_per_byte;
        let stream_s = want_stream_s.min(rest_s);
        let done = if want_stream_s > 0.0 {
            stream_s / want_stream_s
        } else {
            1.0
        };
        let dropped_dram_bytes = (1.0 - done) * dram_per_thread * threads as f64;
        let compute_s = rest_s - stream_s;
        let kept = dram_per_thread * done;
        CpuWork {
            threads,
            per_thread: ThreadWork {
                chase_steps: (latency_s * 1e9 / self.rates.chase_ns_per_step).round() as u64,
                stream_bytes: (kept * (1.0 - 2.0 * write_frac)).round() as u64,
                fill_bytes: (kept * write_frac).round() as u64,
                compute_iters: (compute_s * self.rates.compute_iters_per_s).round() as u64,
            },
            dropped_dram_bytes,
        }
    }

    /// One warning per stage whose DRAM bytes do not fit in its standalone time at this
    /// host's streaming rate: the replay would stream fewer bytes than the prediction
    /// assumes, so the two would not describe the same work. A stage met again with the
    /// same shape (at another point of the replay) is warned about once.
    pub fn shortfall_warnings<'a>(
        &self,
        stages: impl IntoIterator<Item = (&'a str, &'a CpuStageShape)>,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (name, shape) in stages {
            let dropped = self.work_for(shape).dropped_dram_bytes;
            if dropped > 0.005 * shape.dram_bytes && dropped > 0.0 {
                let stream_s = shape.standalone_s * (1.0 - shape.latency_frac.clamp(0.0, 1.0));
                let warning = format!(
                    "stage {name}: {:.2} of its {:.2} GB would not be streamed: it asks {:.1} GB/s per thread for the {:.3} s outside its latency share, and this host streams {:.1} alone on {} thread(s); the measured run does less DRAM work than the prediction. Lower its dram_gb or lengthen it",
                    dropped / 1e9,
                    shape.dram_bytes / 1e9,
                    shape.dram_bytes / shape.threads.max(1) as f64 / stream_s.max(1e-12) / 1e9,
                    stream_s,
                    self.rates.stream_gbps(shape.threads),
                    shape.threads
                );
                if !out.contains(&warning) {
                    out.push(warning);
                }
            }
        }
        out
    }

    /// Runs a stage's work on `work.threads` new threads; returns the DRAM bytes
    /// streamed (all threads).
    pub fn run(&self, work: &CpuWork) -> u64 {
        let w = work.per_thread;
        std::thread::scope(|s| {
            for _ in 0..work.threads {
                s.spawn(move || {
                    self.with_slot(|io| {
                        let mut at = self.chase_start();
                        for _ in 0..CHUNKS {
                            at = self.chase(at, w.chase_steps / CHUNKS);
                            io.read(w.stream_bytes / CHUNKS);
                            io.fill(w.fill_bytes / CHUNKS);
                            compute(w.compute_iters / CHUNKS);
                        }
                        self.chase(at, w.chase_steps % CHUNKS);
                        io.read(w.stream_bytes % CHUNKS);
                        io.fill(w.fill_bytes % CHUNKS);
                        compute(w.compute_iters % CHUNKS);
                    })
                });
            }
        });
        (w.stream_bytes + 2 * w.fill_bytes) * work.threads as u64
    }

    /// `steps` dependent loads from line `start`; returns the line it stopped at, where
    /// the thread's next piece goes on (walking the same lines again would find them in
    /// the cache).
    fn chase(&self, start: usize, steps: u64) -> usize {
        let stride = LINE / 4;
        let mut at = start % self.lines();
        for _ in 0..steps {
            at = self.chase[at * stride] as usize;
        }
        black_box(at)
    }

    /// Where a thread's chase starts: a new spot on the cycle for every thread, so that
    /// concurrent chases do not follow one another through lines the leader just
    /// brought into the cache.
    fn chase_start(&self) -> usize {
        let n = self.chase_starts.fetch_add(1, Ordering::Relaxed) as u64;
        (n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16) as usize % self.lines()
    }

    /// The share of the buffers' bytes on huge pages (None where unknown).
    pub fn huge_page_share(&self) -> Option<f64> {
        let mut parts = vec![
            (self.chase.len() * 4, self.chase.huge_coverage()?),
            (self.stream.len() * 8, self.stream.huge_coverage()?),
        ];
        for f in &self.fills {
            let f = f.lock().expect("poisoned");
            parts.push((f.len() * 8, f.huge_coverage()?));
        }
        let bytes: usize = parts.iter().map(|p| p.0).sum();
        Some(parts.iter().map(|(b, c)| *b as f64 * c).sum::<f64>() / bytes.max(1) as f64)
    }
}

/// Shortest wall time of `n` runs of `f`, seconds.
fn best_of(n: u32, mut f: impl FnMut()) -> f64 {
    (0..n.max(1))
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// A dependent arithmetic loop (no memory traffic).
fn compute(iters: u64) {
    let mut x = 0x1234_5678_9abc_def1u64;
    for _ in 0..iters {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x);
}

/// A single random cycle over `lines` cache lines (Sattolo's algorithm), stored as the
/// next line's index in the first u32 of each line.
fn chase_cycle(lines: usize, seed: u64) -> Vec<u32> {
    let lines = lines.max(2);
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut s = seed | 1;
    for i in (1..lines).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let j = (s % i as u64) as usize;
        order.swap(i, j);
    }
    let stride = LINE / 4;
    let mut buf = vec![0u32; lines * stride];
    for k in 0..lines {
        let from = order[k] as usize;
        let to = order[(k + 1) % lines];
        buf[from * stride] = to;
    }
    buf
}
