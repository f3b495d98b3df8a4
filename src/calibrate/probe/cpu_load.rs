//! GPU kernels next to busy CPU threads. A kernel's host side shares the CPUs with
//! everything else that runs: the thread that launches and waits for it, and for an
//! MSM sppark's host thread pool (one thread per CPU) that sums the bucket rows. When
//! other threads keep the CPUs busy the kernel takes longer, by far more than its
//! share of the runnable threads once the pool's parallel phase has stragglers. This
//! probe times each kernel alone and next to k spinning threads (k a share of the
//! CPUs), with the harness unpinned as a prover's threads are; the fit reads the
//! curve of time over time alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::harness::{GpuProbe, num};
use super::plan::{Plan, bar};
use crate::calibrate::error::{ProbeError, Result};
use crate::calibrate::measurements::{CpuLoadPoint, Measurements};

/// Unpinned threads that keep busy until dropped, each running `work` (its index, the
/// stop flag): the scheduler places them and the kernel's host threads as it would a
/// prover's.
struct Neighbours {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Neighbours {
    fn start(k: usize, work: fn(usize, &AtomicBool)) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..k)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || work(i, &stop))
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Neighbours {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Spins on an integer hash: CPU time, no memory traffic.
fn spin(i: usize, stop: &AtomicBool) {
    let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..4096 {
            s = (s ^ (s >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        }
    }
    std::hint::black_box(s);
}

/// Bytes each streaming thread copies between: far beyond any last-level cache.
const STREAM_BUFFER_BYTES: usize = 64 << 20;

/// Copies one half of its own 64 MiB buffer onto the other, over and over: DRAM reads
/// and writes, as a pipeline's streaming stages.
fn stream(i: usize, stop: &AtomicBool) {
    let mut buf = vec![i as u8; STREAM_BUFFER_BYTES];
    let half = STREAM_BUFFER_BYTES / 2;
    while !stop.load(Ordering::Relaxed) {
        buf.copy_within(..half, half);
        buf.copy_within(half.., 0);
    }
    std::hint::black_box(&buf);
}

/// Bytes of the cycle the chasing threads follow: far beyond any last-level cache (small
/// in unit tests, where building it would dominate).
const CHASE_BUFFER_BYTES: usize = if cfg!(test) { 1 << 20 } else { 256 << 20 };

/// One random cycle through [`CHASE_BUFFER_BYTES`], built once and shared read-only, so
/// that chasing threads are chasing from their first moment (building it per thread
/// would stream memory inside the timed window).
fn chase_cycle() -> &'static [u64] {
    static CYCLE: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    CYCLE.get_or_init(|| {
        let mut words = vec![0u64; CHASE_BUFFER_BYTES / 8];
        super::latency::build_cycle(&mut words, 0x5eed);
        words
    })
}

/// Follows the shared cycle from its own starting line, one dependent load at a time:
/// a thread stalled on DRAM latency, with little bandwidth, as a pipeline's
/// pointer-chasing stages (witness generation).
fn chase(i: usize, stop: &AtomicBool) {
    use super::latency::LINE_WORDS;
    let words = chase_cycle();
    let lines = words.len() / LINE_WORDS;
    let mut idx = (i * 104_729) % lines.max(1);
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..4096 {
            idx = words[idx * LINE_WORDS] as usize;
        }
    }
    std::hint::black_box(idx);
}

/// What the MSMs are also timed next to, beside spinning threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeighbourKind {
    /// Threads that copy memory (DRAM bandwidth).
    Streaming,
    /// Threads that chase pointers (DRAM latency, little bandwidth).
    Chasing,
}

impl NeighbourKind {
    fn work(self) -> fn(usize, &AtomicBool) {
        match self {
            Self::Streaming => stream,
            Self::Chasing => chase,
        }
    }

    /// The word in progress bars and skip notes.
    pub fn label(self) -> &'static str {
        match self {
            Self::Streaming => "streaming",
            Self::Chasing => "chasing",
        }
    }
}

/// Busy threads for each share of `cpus` CPUs (rounded, repeats dropped, 0 first).
pub fn busy_levels(shares: &[f64], cpus: usize) -> Vec<usize> {
    let mut out: Vec<usize> = vec![0];
    for &s in shares {
        let k = (s * cpus as f64).round() as usize;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out.sort_unstable();
    out
}

/// Times every kernel of `plan.cpu_load_kernels` at every busy level, per pass (odd
/// passes walk the levels from the top, so drift does not line up with load).
pub fn cpu_load_probe(m: &mut Measurements, plan: &Plan, probe: &mut GpuProbe) -> Result<()> {
    let kernels: Vec<_> = plan.cpu_load_kernels.iter().collect();
    let points = next_to(plan, probe, &kernels, &plan.cpu_load_shares, spin, "busy")?;
    m.cpu_load.extend(points);
    Ok(())
}

/// The MSMs of `plan.cpu_load_kernels` next to 0, half and all of the CPUs' worth of
/// threads of `kind`, per pass: the spinning curve's neighbours take CPU time only, a
/// pipeline's also stream memory or stall on it. Switched on, the model reads each as a
/// ratio to the spinning curve, for the share of the runnable threads that do so.
pub fn msms_next_to(
    m: &mut Measurements,
    plan: &Plan,
    probe: &mut GpuProbe,
    kind: NeighbourKind,
) -> Result<()> {
    let msms: Vec<_> = (plan.cpu_load_kernels.iter())
        .filter(|(kind, _, _)| *kind == "msm")
        .collect();
    let shares = &plan.cpu_load_neighbour_shares;
    if kind == NeighbourKind::Chasing && !msms.is_empty() && !shares.is_empty() {
        chase_cycle();
    }
    let points = next_to(plan, probe, &msms, shares, kind.work(), kind.label())?;
    match kind {
        NeighbourKind::Streaming => m.cpu_load_streaming.extend(points),
        NeighbourKind::Chasing => m.cpu_load_chasing.extend(points),
    }
    Ok(())
}

/// Each of `kernels` alone and next to each share of the CPUs' worth of threads running
/// `work`, per pass (odd passes walk the levels from the top); none when there is
/// nothing to time.
fn next_to(
    plan: &Plan,
    probe: &mut GpuProbe,
    kernels: &[&(&'static str, u32, u32)],
    shares: &[f64],
    work: fn(usize, &AtomicBool),
    what: &str,
) -> Result<Vec<CpuLoadPoint>> {
    let cpus = super::sys::allowed_cpus();
    if cpus.is_empty() || kernels.is_empty() || shares.is_empty() {
        return Ok(Vec::new());
    }
    probe.pin(&cpus)?;
    let levels = busy_levels(shares, cpus.len());
    let runs = plan.cpu_load_passes * kernels.len() * levels.len();
    let pb = bar(runs as u64, &format!("kernels+{what} CPUs"));
    let mut out = Vec::with_capacity(runs);
    for pass in 0..plan.cpu_load_passes {
        let mut order = levels.clone();
        if pass % 2 == 1 {
            order.reverse();
        }
        for &&(kind, lg, reps) in kernels {
            for &k in &order {
                pb.set_message(format!("{kind}:{lg} next to {k} {what}"));
                let busy = Neighbours::start(k, work);
                std::thread::sleep(plan.warm);
                let v = probe.request(&format!("{kind} {lg} {reps}"));
                drop(busy);
                let v = v?;
                out.push(CpuLoadPoint {
                    kernel: format!("{kind}:{lg}"),
                    busy_threads: k,
                    cpus: cpus.len(),
                    pass,
                    ms: kernel_ms(&v, kind)?,
                    cpu_threads: v.get("cpu_threads").and_then(|x| x.as_f64()),
                });
                pb.inc(1);
            }
        }
    }
    pb.finish_with_message("done");
    Ok(out)
}

/// The kernel time of a harness reply: an MSM's median, an NTT's mean over variants.
fn kernel_ms(v: &serde_json::Value, kind: &str) -> Result<f64> {
    if kind == "msm" {
        return num(v, "ms");
    }
    let times: Vec<f64> = (v.get("ms").and_then(|x| x.as_object()))
        .map(|o| o.values().filter_map(|t| t.as_f64()).collect())
        .unwrap_or_default();
    if times.is_empty() {
        return Err(ProbeError::NoKernelTimes {
            kind: kind.to_string(),
            reply: v.clone(),
        }
        .into());
    }
    Ok(times.iter().sum::<f64>() / times.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_levels_are_whole_threads_from_zero_without_repeats() {
        assert_eq!(
            busy_levels(&[0.25, 0.5, 0.75, 1.0, 1.5], 16),
            vec![0, 4, 8, 12, 16, 24]
        );
        assert_eq!(busy_levels(&[0.25, 0.5, 1.0], 2), vec![0, 1, 2]);
    }

    #[test]
    fn spinning_streaming_and_chasing_neighbours_stop_when_dropped() {
        for work in [spin, stream, chase] {
            let s = Neighbours::start(2, work);
            assert_eq!(s.threads.len(), 2);
            drop(s);
        }
    }

    #[test]
    fn an_ntt_reply_gives_the_mean_over_variants_and_an_msm_its_median() {
        let ntt = serde_json::json!({"ok": true, "ms": {"fwd_nr": 1.0, "inv_nr": 3.0}});
        assert_eq!(kernel_ms(&ntt, "ntt").unwrap(), 2.0);
        let msm = serde_json::json!({"ok": true, "ms": 24.5});
        assert_eq!(kernel_ms(&msm, "msm").unwrap(), 24.5);
        assert!(kernel_ms(&serde_json::json!({"ok": true}), "ntt").is_err());
    }
}
