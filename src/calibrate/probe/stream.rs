//! STREAM-like memory traffic generators: a pool of pinned worker threads, each owning
//! three arrays it first-touched, that run a read, copy or triad kernel on command.
//!
//! **How bytes are counted.** Every counter holds *DRAM bytes*, write-allocate included:
//! the kernels use ordinary (not non-temporal) stores, so each written line is first read
//! into the cache. Per element of 8 bytes:
//!
//! | kernel | STREAM counts | DRAM traffic counted here | read:write at DRAM |
//! |---|---|---|---|
//! | read (`s += a[i]`) | 8 | 8 | 1:0 |
//! | copy (`b[i] = a[i]`) | 16 | 24 | 2:1 |
//! | triad (`a[i] = b[i] + s*c[i]`) | 24 | 32 | 3:1 |
//! | write (`b[i] = s`) | 8 | 16 | 1:1 |
//!
//! [`Kernel::stream_fraction`] converts back to STREAM's convention.

use super::sys::{Buf, pin_to};
use crate::calibrate::error::{ProbeError, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use crate::calibrate::measurements::Kernel;

impl Kernel {
    /// All kernels.
    pub const ALL: [Kernel; 4] = [Kernel::Read, Kernel::Copy, Kernel::Triad, Kernel::Write];

    /// The background mixes of the loaded-latency sweep, by rising write fraction.
    pub const LATENCY_MIXES: [Kernel; 3] = [Kernel::Read, Kernel::Copy, Kernel::Write];

    /// Name as used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Copy => "copy",
            Kernel::Triad => "triad",
            Kernel::Write => "write",
        }
    }

    /// Fraction of the DRAM bytes counted here that are writes.
    pub fn write_fraction(self) -> f64 {
        match self {
            Kernel::Read => 0.0,
            Kernel::Copy => 1.0 / 3.0,
            Kernel::Triad => 0.25,
            Kernel::Write => 0.5,
        }
    }

    /// STREAM-counted bytes per DRAM byte counted here.
    pub fn stream_fraction(self) -> f64 {
        match self {
            Kernel::Read => 1.0,
            Kernel::Copy => 16.0 / 24.0,
            Kernel::Triad => 24.0 / 32.0,
            Kernel::Write => 0.5,
        }
    }

    fn code(self) -> u8 {
        match self {
            Kernel::Read => 1,
            Kernel::Copy => 2,
            Kernel::Triad => 3,
            Kernel::Write => 4,
        }
    }

    fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(Kernel::Read),
            2 => Some(Kernel::Copy),
            3 => Some(Kernel::Triad),
            4 => Some(Kernel::Write),
            _ => None,
        }
    }
}

const IDLE: u8 = 0;
const EXIT: u8 = 255;
/// Elements processed between two looks at the command word (1 MiB of f64).
const CHUNK: usize = 1 << 17;

struct Shared {
    cmd: Vec<AtomicU8>,
    bytes: Vec<AtomicU64>,
    ready: AtomicU64,
    failed: AtomicU64,
}

/// A pool of pinned streaming threads, one per CPU given.
pub struct Workers {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
    cpus: Vec<usize>,
    /// Bytes of each of the three arrays per worker.
    pub array_bytes: usize,
}

/// A point-in-time reading of the DRAM byte counters.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    at: Instant,
    bytes: u64,
}

impl Snapshot {
    /// GB/s (10^9 bytes/s) between an earlier snapshot and this one.
    pub fn gbps_since(&self, earlier: &Snapshot) -> f64 {
        let dt = self.at.duration_since(earlier.at).as_secs_f64();
        if dt <= 0.0 {
            return 0.0;
        }
        (self.bytes.saturating_sub(earlier.bytes)) as f64 / dt / 1e9
    }
}

impl Workers {
    /// Starts one worker per CPU in `cpus`; each maps and first-touches three arrays of
    /// `array_bytes` (huge pages advised when `hugepages`). Returns once all are ready.
    pub fn start(cpus: &[usize], array_bytes: usize, hugepages: bool) -> Result<Self> {
        let n = cpus.len();
        let shared = Arc::new(Shared {
            cmd: (0..n).map(|_| AtomicU8::new(IDLE)).collect(),
            bytes: (0..n).map(|_| AtomicU64::new(0)).collect(),
            ready: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        });
        let mut handles = Vec::with_capacity(n);
        for (i, &cpu) in cpus.iter().enumerate() {
            let sh = Arc::clone(&shared);
            handles.push(std::thread::spawn(move || {
                pin_to(cpu);
                let bufs: Result<Vec<Buf>> =
                    (0..3).map(|_| Buf::new(array_bytes, hugepages)).collect();
                let Ok(mut bufs) = bufs else {
                    sh.failed.fetch_add(1, Ordering::SeqCst);
                    sh.ready.fetch_add(1, Ordering::SeqCst);
                    return;
                };
                sh.ready.fetch_add(1, Ordering::SeqCst);
                worker_loop(&sh, i, &mut bufs);
            }));
        }
        let w = Self {
            shared,
            handles,
            cpus: cpus.to_vec(),
            array_bytes,
        };
        while w.shared.ready.load(Ordering::SeqCst) < n as u64 {
            std::thread::sleep(Duration::from_millis(2));
        }
        if w.shared.failed.load(Ordering::SeqCst) > 0 {
            return Err(ProbeError::StreamArrays {
                failed: w.shared.failed.load(Ordering::SeqCst),
                threads: n,
                mib: array_bytes >> 20,
            }
            .into());
        }
        Ok(w)
    }

    /// Number of workers.
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// True when the pool has no workers.
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// The CPUs the workers are pinned to.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// Sets workers with index in `active` to run `kernel`, all others to idle.
    pub fn run(&self, active: std::ops::Range<usize>, kernel: Option<Kernel>) {
        for (i, c) in self.shared.cmd.iter().enumerate() {
            let code = match kernel {
                Some(k) if active.contains(&i) => k.code(),
                _ => IDLE,
            };
            c.store(code, Ordering::SeqCst);
        }
    }

    /// Stops all streaming.
    pub fn idle(&self) {
        self.run(0..0, None);
    }

    /// Reads the total DRAM byte counter.
    pub fn snapshot(&self) -> Snapshot {
        let bytes = self
            .shared
            .bytes
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .sum();
        Snapshot {
            at: Instant::now(),
            bytes,
        }
    }

    /// Reads each worker's DRAM byte counter (index = worker).
    pub fn snapshot_each(&self) -> Vec<Snapshot> {
        let at = Instant::now();
        self.shared
            .bytes
            .iter()
            .map(|b| Snapshot {
                at,
                bytes: b.load(Ordering::Relaxed),
            })
            .collect()
    }

    /// Runs `kernel` on the first `k` workers for `warm` then `dur`, returns GB/s.
    pub fn measure(&self, k: usize, kernel: Kernel, warm: Duration, dur: Duration) -> f64 {
        self.run(0..k, Some(kernel));
        std::thread::sleep(warm);
        let s0 = self.snapshot();
        std::thread::sleep(dur);
        let s1 = self.snapshot();
        self.idle();
        s1.gbps_since(&s0)
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for c in &self.shared.cmd {
            c.store(EXIT, Ordering::SeqCst);
        }
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

fn worker_loop(sh: &Shared, i: usize, bufs: &mut [Buf]) {
    let mut sink = 0.0f64;
    let mut rot = 0usize;
    loop {
        let cmd = sh.cmd[i].load(Ordering::Relaxed);
        if cmd == EXIT {
            break;
        }
        let Some(kernel) = Kernel::from_code(cmd) else {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        };
        // One pass over the rotation's arrays, chunk by chunk, checking the command.
        let (x, rest) = bufs.split_at_mut(1);
        let (y, z) = rest.split_at_mut(1);
        let mut arrs = [x[0].as_f64_mut(), y[0].as_f64_mut(), z[0].as_f64_mut()];
        arrs.rotate_left(rot % 3);
        rot += 1;
        let [a, b, c] = arrs;
        let n = a.len();
        let mut off = 0;
        while off < n {
            let end = (off + CHUNK).min(n);
            let counted = match kernel {
                Kernel::Read => {
                    // Integer sum of the bit patterns: associative, so the compiler
                    // vectorises it with several accumulators (a float sum would be
                    // bound by the add latency, not by memory).
                    let s = a[off..end]
                        .iter()
                        .fold(0u64, |s, x| s.wrapping_add(x.to_bits()));
                    sink += s as f64;
                    (end - off) * 8
                }
                Kernel::Copy => {
                    // 64 KiB copies stay below libc's non-temporal threshold, so every
                    // written line is write-allocated (counted).
                    for (d, s) in b[off..end].chunks_mut(8192).zip(a[off..end].chunks(8192)) {
                        d.copy_from_slice(s);
                    }
                    (end - off) * 24
                }
                Kernel::Triad => {
                    let s = 1.000_001f64;
                    for ((ai, bi), ci) in a[off..end].iter_mut().zip(&b[off..end]).zip(&c[off..end])
                    {
                        *ai = bi + s * ci;
                    }
                    (end - off) * 32
                }
                Kernel::Write => {
                    // 64 KiB fills stay below libc's non-temporal threshold: every
                    // written line is write-allocated (counted).
                    for d in b[off..end].chunks_mut(8192) {
                        d.fill(1.5);
                    }
                    (end - off) * 16
                }
            };
            sh.bytes[i].fetch_add(counted as u64, Ordering::Relaxed);
            off = end;
            if sh.cmd[i].load(Ordering::Relaxed) != cmd {
                break;
            }
        }
    }
    std::hint::black_box(sink);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_count_bytes_for_each_kernel() {
        let _cpus = crate::calibrate::probe::sys::cpu_timing_lock();
        let cpus = super::super::sys::allowed_cpus();
        let w = Workers::start(&cpus[..1], 4 << 20, false).unwrap();
        for k in Kernel::ALL {
            let gbps = w.measure(1, k, Duration::from_millis(5), Duration::from_millis(30));
            assert!(gbps > 0.05, "{k:?}: {gbps}");
        }
        let idle = w.snapshot();
        std::thread::sleep(Duration::from_millis(20));
        assert!(w.snapshot().gbps_since(&idle) < 1.0);
    }

    #[test]
    fn stream_fraction_matches_table() {
        assert_eq!(Kernel::Read.stream_fraction(), 1.0);
        assert!((Kernel::Copy.stream_fraction() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Kernel::Triad.stream_fraction(), 0.75);
    }
}
