//! DRAM latency by pointer chasing: a random cyclic permutation of 64-byte lines over a
//! buffer far larger than the last-level cache, walked by one pinned thread. Each step
//! depends on the previous load, so the time per step is the loaded memory latency.

use super::sys::{Buf, PageAdvice, pin_to};
use crate::calibrate::error::{ProbeError, Result};
use rand::{Rng, SeedableRng};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub const LINE_WORDS: usize = 8; // 64 bytes of u64

enum Cmd {
    Chase(Duration),
    Exit,
}

/// A pinned pointer-chasing thread that owns its buffer.
pub struct Chaser {
    tx: mpsc::Sender<Cmd>,
    rx: mpsc::Receiver<f64>,
    handle: Option<JoinHandle<()>>,
    /// Buffer size in bytes.
    pub bytes: usize,
    /// Share of the buffer backed by huge pages once touched (None where unreadable).
    pub huge_coverage: Option<f64>,
}

impl Chaser {
    /// Starts the thread on `cpu`, maps `bytes` (huge pages advised when asked) and builds
    /// the permutation (Sattolo's algorithm: one cycle through every line).
    pub fn start(cpu: usize, bytes: usize, hugepages: bool, seed: u64) -> Result<Self> {
        let advice = if hugepages {
            PageAdvice::Huge
        } else {
            PageAdvice::Default
        };
        Self::start_with(cpu, bytes, advice, seed)
    }

    /// Like [`Chaser::start`] with an explicit page-size advice for the buffer.
    pub fn start_with(cpu: usize, bytes: usize, advice: PageAdvice, seed: u64) -> Result<Self> {
        let (tx, crx) = mpsc::channel::<Cmd>();
        let (ctx, rx) = mpsc::channel::<f64>();
        let (init_tx, init_rx) = mpsc::channel::<Result<(usize, Option<f64>)>>();
        let handle = std::thread::spawn(move || {
            pin_to(cpu);
            let mut buf = match Buf::with_advice(bytes, advice) {
                Ok(b) => b,
                Err(e) => {
                    let _ = init_tx.send(Err(e));
                    return;
                }
            };
            let len = buf.len();
            let coverage = buf.huge_coverage();
            let words = buf.as_u64_mut();
            build_cycle(words, seed);
            let _ = init_tx.send(Ok((len, coverage)));
            let mut idx = 0usize;
            while let Ok(cmd) = crx.recv() {
                match cmd {
                    Cmd::Exit => break,
                    Cmd::Chase(d) => {
                        let (ns, end) = chase(words, idx, d);
                        idx = end;
                        if ctx.send(ns).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let (bytes, huge_coverage) = match init_rx.recv() {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(ProbeError::ChaseBuffer(Box::new(e)).into()),
            Err(_) => return Err(ProbeError::ChaseThreadDied.into()),
        };
        Ok(Self {
            tx,
            rx,
            handle: Some(handle),
            bytes,
            huge_coverage,
        })
    }

    /// Starts a chase of `dur` in the background; collect it with [`Chaser::finish`].
    pub fn begin(&self, dur: Duration) -> Result<()> {
        self.tx
            .send(Cmd::Chase(dur))
            .map_err(|_| ProbeError::ChaseThreadGone.into())
    }

    /// Waits for the chase started by [`Chaser::begin`]: nanoseconds per access.
    pub fn finish(&self) -> Result<f64> {
        self.rx
            .recv()
            .map_err(|_| ProbeError::ChaseThreadGone.into())
    }

    /// Chases for `dur` and returns nanoseconds per access.
    pub fn measure(&self, dur: Duration) -> Result<f64> {
        self.begin(dur)?;
        self.finish()
    }
}

impl Drop for Chaser {
    fn drop(&mut self) {
        let _ = self.tx.send(Cmd::Exit);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Writes into the first word of each line the index of the next line, forming a single
/// random cycle through all lines.
pub fn build_cycle(words: &mut [u64], seed: u64) {
    let lines = words.len() / LINE_WORDS;
    if lines == 0 {
        return;
    }
    let mut perm: Vec<u32> = (0..lines as u32).collect();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    // Sattolo: a uniformly random cyclic permutation.
    for i in (1..lines).rev() {
        let j = rng.gen_range(0..i);
        perm.swap(i, j);
    }
    for (i, &next) in perm.iter().enumerate() {
        words[i * LINE_WORDS] = next as u64;
    }
}

fn chase(words: &[u64], start: usize, dur: Duration) -> (f64, usize) {
    let t0 = Instant::now();
    let mut idx = start;
    let mut steps = 0u64;
    loop {
        for _ in 0..4096 {
            // SAFETY-free: bounds-checked indexing; every stored index is < lines.
            idx = words[idx * LINE_WORDS] as usize;
        }
        steps += 4096;
        if t0.elapsed() >= dur {
            break;
        }
    }
    let ns = t0.elapsed().as_nanos() as f64 / steps as f64;
    (ns, std::hint::black_box(idx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_visits_every_line_once() {
        let mut w = vec![0u64; 64 * LINE_WORDS];
        build_cycle(&mut w, 3);
        let mut seen = [false; 64];
        let mut idx = 0usize;
        for _ in 0..64 {
            assert!(!seen[idx]);
            seen[idx] = true;
            idx = w[idx * LINE_WORDS] as usize;
        }
        assert_eq!(idx, 0);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn chaser_reports_positive_latency() {
        let _cpus = crate::calibrate::probe::sys::cpu_timing_lock();
        let cpu = super::super::sys::allowed_cpus()[0];
        let c = Chaser::start(cpu, 4 << 20, false, 1).unwrap();
        let ns = c.measure(Duration::from_millis(20)).unwrap();
        assert!(ns > 0.1 && ns < 10_000.0, "{ns}");
    }
}
