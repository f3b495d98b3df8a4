//! Synthetic CPU kernels that stand in for a CPU stage on replay: pointer chasing over a
//! large buffer (the latency-bound share), streaming reads over a buffer larger than L3
//! (the DRAM bytes) and a dependent arithmetic loop (the compute-bound rest).
//!
//! [`KernelHost::new`] measures this host first (ns per chase step, GB/s per streaming
//! thread with 1, 2, 4, ... threads streaming at once, arithmetic loop rate), so that
//! [`KernelHost::work_for`] can size a stage's work to take its standalone duration when
//! it runs alone. Under contention the same work takes longer, which is what replay
//! measures.

use std::hint::black_box;
use std::time::Instant;

/// Buffer sizes of the kernels, bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufferSizes {
    /// The pointer-chase buffer (one 64-byte line per step).
    pub chase_bytes: usize,
    /// The streaming buffer, shared read-only by every streaming thread.
    pub stream_bytes: usize,
}

impl BufferSizes {
    /// Sizes for a real replay: well beyond any server L3.
    pub const REPLAY: BufferSizes = BufferSizes {
        chase_bytes: 1 << 30,
        stream_bytes: 2 << 30,
    };
    /// Small sizes for tests (numbers are cache-bound, timings still self-consistent).
    pub const TEST: BufferSizes = BufferSizes {
        chase_bytes: 16 << 20,
        stream_bytes: 32 << 20,
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
}

/// One thread's share of a stage's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadWork {
    /// Dependent loads of the pointer chase.
    pub chase_steps: u64,
    /// Bytes to stream (read).
    pub stream_bytes: u64,
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
    /// host's streaming rate (0 when everything fits); the plan warns about it.
    pub dropped_dram_bytes: f64,
}

/// Pieces each thread's work is cut into, interleaving chase, stream and compute so
/// that the stage's DRAM load is spread over its whole duration.
const CHUNKS: u64 = 16;
/// Bytes per cache line (one chase step touches one line).
const LINE: usize = 64;

/// The kernels' buffers and this host's measured rates.
pub struct KernelHost {
    /// Chase buffer: line i's first u32 is the index of the next line (one cycle).
    chase: Vec<u32>,
    /// Streaming buffer.
    stream: Vec<u64>,
    /// Measured rates.
    pub rates: HostRates,
}

impl KernelHost {
    /// Allocates and fills the buffers, then measures this host (about half a second).
    /// `max_threads` bounds the streaming-thread counts measured.
    pub fn new(sizes: BufferSizes, max_threads: u32) -> KernelHost {
        let chase = chase_cycle(sizes.chase_bytes / LINE, 0x5eed);
        let stream: Vec<u64> = (0..sizes.stream_bytes / 8)
            .map(|i| i as u64 * 0x9e37_79b9)
            .collect();
        let mut host = KernelHost {
            chase,
            stream,
            rates: HostRates {
                chase_ns_per_step: 100.0,
                stream_gbps_per_thread: vec![(1, 10.0)],
                compute_iters_per_s: 1e9,
            },
        };
        host.rates = host.measure(max_threads.max(1));
        host
    }

    fn measure(&self, max_threads: u32) -> HostRates {
        // Chase: warm up, then time a fixed number of steps.
        let lines = self.lines();
        let steps = (lines as u64 * 2).clamp(200_000, 4_000_000);
        self.chase(0, steps / 4);
        // Best of three throughout: the least disturbed run is the host's own rate.
        let chase_ns_per_step = best_of(3, || self.chase(0, steps)) * 1e9 / steps as f64;

        // Stream with n = 1, 2, 4, ... threads at once.
        let mut counts = vec![1u32];
        while counts[counts.len() - 1] * 2 <= max_threads {
            counts.push(counts[counts.len() - 1] * 2);
        }
        if counts[counts.len() - 1] != max_threads {
            counts.push(max_threads);
        }
        let bytes = (self.stream.len() as u64 * 8).clamp(64 << 20, 512 << 20);
        self.stream_bytes(0, 1, bytes / 4);
        let mut stream_gbps_per_thread = Vec::new();
        for &n in &counts {
            let secs = best_of(2, || {
                std::thread::scope(|s| {
                    for i in 0..n {
                        s.spawn(move || self.stream_bytes(i, n, bytes));
                    }
                })
            });
            let gbps = bytes as f64 / secs / 1e9;
            stream_gbps_per_thread.push((n, gbps));
        }

        let iters = 20_000_000u64;
        compute(iters / 4);
        let compute_iters_per_s = iters as f64 / best_of(3, || compute(iters));
        HostRates {
            chase_ns_per_step,
            stream_gbps_per_thread,
            compute_iters_per_s,
        }
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
        let want_stream_s = shape.dram_bytes.max(0.0) / threads as f64 / (gbps * 1e9);
        let stream_s = want_stream_s.min(rest_s);
        let dropped_dram_bytes = (want_stream_s - stream_s) * gbps * 1e9 * threads as f64;
        let compute_s = rest_s - stream_s;
        CpuWork {
            threads,
            per_thread: ThreadWork {
                chase_steps: (latency_s * 1e9 / self.rates.chase_ns_per_step).round() as u64,
                stream_bytes: (stream_s * gbps * 1e9).round() as u64,
                compute_iters: (compute_s * self.rates.compute_iters_per_s).round() as u64,
            },
            dropped_dram_bytes,
        }
    }

    /// Runs a stage's work on `work.threads` new threads; returns the DRAM bytes
    /// streamed (all threads).
    pub fn run(&self, work: &CpuWork) -> u64 {
        let w = work.per_thread;
        std::thread::scope(|s| {
            for i in 0..work.threads {
                s.spawn(move || {
                    for _ in 0..CHUNKS {
                        self.chase(i as usize * 7919, w.chase_steps / CHUNKS);
                        self.stream_bytes(i, work.threads, w.stream_bytes / CHUNKS);
                        compute(w.compute_iters / CHUNKS);
                    }
                    self.chase(i as usize * 7919, w.chase_steps % CHUNKS);
                    self.stream_bytes(i, work.threads, w.stream_bytes % CHUNKS);
                    compute(w.compute_iters % CHUNKS);
                });
            }
        });
        w.stream_bytes * work.threads as u64
    }

    /// `steps` dependent loads starting near line `start`.
    fn chase(&self, start: usize, steps: u64) {
        let stride = LINE / 4;
        let mut at = start % self.lines();
        for _ in 0..steps {
            at = self.chase[at * stride] as usize;
        }
        black_box(at);
    }

    /// Reads `bytes` of the streaming buffer, thread `i` of `n` starting at its own
    /// offset and wrapping around.
    fn stream_bytes(&self, i: u32, n: u32, bytes: u64) {
        let len = self.stream.len();
        let mut left = (bytes / 8) as usize;
        let mut at = len / n.max(1) as usize * i as usize;
        let mut acc = [0u64; 8];
        while left > 0 {
            let end = (at + left).min(len);
            for c in self.stream[at..end].chunks_exact(8) {
                for k in 0..8 {
                    acc[k] = acc[k].wrapping_add(c[k]);
                }
            }
            left -= end - at;
            at = if end == len { 0 } else { end };
        }
        black_box(acc);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chase_cycle_visits_every_line_once() {
        let buf = chase_cycle(1000, 3);
        let mut seen = vec![false; 1000];
        let mut at = 0usize;
        for _ in 0..1000 {
            assert!(!seen[at]);
            seen[at] = true;
            at = buf[at * 16] as usize;
        }
        assert_eq!(at, 0);
    }

    #[test]
    fn work_fills_the_standalone_time_in_shares() {
        let host = KernelHost {
            chase: chase_cycle(16, 1),
            stream: vec![0; 1024],
            rates: HostRates {
                chase_ns_per_step: 100.0,
                stream_gbps_per_thread: vec![(1, 10.0), (4, 5.0)],
                compute_iters_per_s: 1e9,
            },
        };
        let w = host.work_for(&CpuStageShape {
            standalone_s: 1.0,
            threads: 4,
            dram_bytes: 4.0e9,
            latency_frac: 0.5,
        });
        // 0.5 s chasing at 100 ns, 1 GB per thread at 5 GB/s = 0.2 s, 0.3 s compute.
        assert_eq!(w.per_thread.chase_steps, 5_000_000);
        assert_eq!(w.per_thread.stream_bytes, 1_000_000_000);
        assert_eq!(w.per_thread.compute_iters, 300_000_000);
        assert_eq!(w.dropped_dram_bytes, 0.0);
        // More bytes than fit: the rest is dropped, no compute left.
        let w = host.work_for(&CpuStageShape {
            standalone_s: 1.0,
            threads: 1,
            dram_bytes: 20.0e9,
            latency_frac: 0.0,
        });
        assert_eq!(w.per_thread.stream_bytes, 10_000_000_000);
        assert_eq!(w.per_thread.compute_iters, 0);
        assert!((w.dropped_dram_bytes - 10.0e9).abs() < 1.0);
        assert_eq!(host.rates.stream_gbps(2), 10.0 - 5.0 / 3.0);
    }
}
