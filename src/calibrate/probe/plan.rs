//! How long and how big one calibration's probes are: the mode (tiny, quick, full), the
//! plan derived from it and the core count, and the progress bar each probe shows.

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// How long and how big the probes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Seconds; small buffers (CI tests). Numbers are cache-bound, not DRAM.
    Tiny,
    /// About 3 minutes with a GPU (165 s on the H200 VM), under 2 without.
    Quick,
    /// Under 10 minutes.
    Full,
}

impl Mode {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tiny => "tiny",
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }
}

/// Sizes, durations and sweep points derived from a mode and the core count.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Bytes per array (three per streaming thread).
    pub array_bytes: usize,
    /// Pointer-chase buffer bytes.
    pub chase_bytes: usize,
    /// Thread counts of the bandwidth sweep.
    pub bw_threads: Vec<usize>,
    /// Streaming threads behind the pointer chase.
    pub lat_threads: Vec<usize>,
    /// Streaming threads for the DMA-vs-stream runs.
    pub dma_threads: Vec<usize>,
    /// Warm-up before each measurement.
    pub warm: Duration,
    /// Length of each measurement.
    pub dur: Duration,
    /// Seconds per PCIe copy loop.
    pub pcie_secs: f64,
    /// MiB per PCIe copy.
    pub pcie_mib: u64,
    /// NTT sizes (log2).
    pub ntt_lgs: Vec<u32>,
    /// MSM sizes (log2).
    pub msm_lgs: Vec<u32>,
    /// Timed repetitions per NTT size.
    pub ntt_reps: u32,
    /// Timed repetitions per MSM size.
    pub msm_reps: u32,
    /// Longest settling phase before measuring.
    pub settle_max: Duration,
    /// Passes over the contention probes (page size, DMA next to streams);
    /// interleaved, so spreads across passes can be computed.
    pub lat_passes: usize,
    /// Passes over the loaded-latency curve. Three in full mode: a VM's memory can
    /// switch state between passes (two passes of one point have read 168 and 219 ns),
    /// and the median of three is one pass's reading, not the mean of two states.
    pub curve_passes: usize,
    /// Length of each standalone-stream measurement (per worker and mix).
    pub standalone_dur: Duration,
    /// Streaming threads behind the loaded point of the page-size probe.
    pub page_loaded_threads: usize,
    /// Thread counts of the compute-bound probe.
    pub compute_threads: Vec<usize>,
    /// Length of each compute-bound measurement.
    pub compute_dur: Duration,
    /// Seconds per DMA loop next to streams.
    pub dma_secs: f64,
    /// Streaming threads next to pageable copies (0 is measured anyway).
    pub pageable_threads: Vec<usize>,
    /// More streaming thread counts next to pageable copies, for the memcpy's rate by its
    /// streaming neighbours (`Measurements::pageable_beside_streams`).
    pub pageable_neighbour_threads: Vec<usize>,
    /// Pageable copy sizes, MiB.
    pub pageable_mibs: Vec<u64>,
    /// Kernels timed next to busy CPU threads: (kind, log2 size, timed repetitions).
    pub cpu_load_kernels: Vec<(&'static str, u32, u32)>,
    /// Busy threads next to them, as shares of the CPUs (0 is always measured).
    pub cpu_load_shares: Vec<f64>,
    /// Passes over the kernels and busy levels (interleaved).
    pub cpu_load_passes: usize,
    /// Shares of the CPUs' worth of memory-streaming or pointer-chasing threads next to
    /// which the MSMs of `cpu_load_kernels` are also timed (empty: not at all).
    pub cpu_load_neighbour_shares: Vec<f64>,
}

fn upto(list: &[usize], max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = list.iter().copied().filter(|&k| k <= max).collect();
    if !v.contains(&max) {
        v.push(max);
    }
    v.sort_unstable();
    v.dedup();
    v
}

impl Plan {
    /// The plan for `mode` on a host with `cores` CPUs.
    pub fn new(mode: Mode, cores: usize) -> Self {
        let n = cores.max(1);
        let bg = n.saturating_sub(1); // the chase owns one CPU
        let dma = n.saturating_sub(2).max(1); // and the GPU harness another
        let half = (n / 2).max(1).min(dma);
        // A quarter and three quarters of the CPUs streaming, beside the half above.
        let neighbours: Vec<usize> = [(n / 4).max(1), (3 * n / 4).min(dma)]
            .into_iter()
            .filter(|&k| k != half && k > 0)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        match mode {
            Mode::Tiny => Plan {
                array_bytes: 2 << 20,
                chase_bytes: 8 << 20,
                bw_threads: upto(&[1], n),
                lat_threads: upto(&[0], bg),
                dma_threads: upto(&[], dma),
                warm: Duration::from_millis(5),
                dur: Duration::from_millis(40),
                pcie_secs: 0.2,
                pcie_mib: 64,
                ntt_lgs: vec![12, 14],
                msm_lgs: vec![12, 14],
                ntt_reps: 2,
                msm_reps: 2,
                settle_max: Duration::ZERO,
                lat_passes: 1,
                curve_passes: 1,
                standalone_dur: Duration::from_millis(20),
                page_loaded_threads: bg.min(1),
                compute_threads: upto(&[1], n),
                compute_dur: Duration::from_millis(20),
                dma_secs: 0.2,
                pageable_threads: vec![],
                pageable_neighbour_threads: vec![],
                pageable_mibs: vec![64],
                cpu_load_kernels: vec![("msm", 12, 2), ("ntt", 12, 2)],
                cpu_load_shares: vec![1.0],
                cpu_load_passes: 1,
                cpu_load_neighbour_shares: vec![1.0],
            },
            Mode::Quick => Plan {
                array_bytes: 256 << 20,
                chase_bytes: 1 << 30,
                bw_threads: upto(&[1, 2, 4, 8, 12], n),
                lat_threads: upto(&[0, 1, 2, 4, 6, 8, 11], bg),
                dma_threads: upto(&[half], dma),
                warm: Duration::from_millis(100),
                dur: Duration::from_millis(400),
                pcie_secs: 1.0,
                pcie_mib: 1024,
                ntt_lgs: (20..=27).collect(),
                msm_lgs: (20..=26).collect(),
                ntt_reps: 5,
                msm_reps: 3,
                settle_max: Duration::from_secs(15),
                lat_passes: 1,
                curve_passes: 1,
                standalone_dur: Duration::from_millis(150),
                page_loaded_threads: half.min(bg),
                compute_threads: upto(&[1, 2, 4, 8], n),
                compute_dur: Duration::from_millis(200),
                dma_secs: 0.6,
                pageable_threads: vec![half],
                pageable_neighbour_threads: neighbours.clone(),
                pageable_mibs: vec![64, 1024],
                cpu_load_kernels: CPU_LOAD_KERNELS.to_vec(),
                cpu_load_shares: CPU_LOAD_SHARES.to_vec(),
                cpu_load_passes: 2,
                cpu_load_neighbour_shares: CPU_LOAD_NEIGHBOUR_SHARES.to_vec(),
            },
            Mode::Full => Plan {
                array_bytes: 256 << 20,
                chase_bytes: 2 << 30,
                bw_threads: upto(&[1, 2, 3, 4, 6, 8, 10, 12, 14], n),
                lat_threads: upto(&[0, 1, 2, 3, 4, 6, 8, 10, 12, 14], bg),
                dma_threads: upto(&[2, 4, 8], dma),
                warm: Duration::from_millis(150),
                dur: Duration::from_millis(1000),
                pcie_secs: 2.0,
                pcie_mib: 2048,
                ntt_lgs: (20..=27).collect(),
                msm_lgs: (20..=27).collect(),
                ntt_reps: 10,
                msm_reps: 5,
                settle_max: Duration::from_secs(40),
                lat_passes: 2,
                curve_passes: 3,
                standalone_dur: Duration::from_millis(250),
                page_loaded_threads: half.min(bg),
                compute_threads: (1..=n).collect(),
                compute_dur: Duration::from_millis(300),
                dma_secs: 1.0,
                pageable_threads: vec![half],
                pageable_neighbour_threads: neighbours.clone(),
                pageable_mibs: vec![64, 1024],
                cpu_load_kernels: CPU_LOAD_KERNELS.to_vec(),
                cpu_load_shares: CPU_LOAD_SHARES.to_vec(),
                cpu_load_passes: 3,
                cpu_load_neighbour_shares: CPU_LOAD_NEIGHBOUR_SHARES.to_vec(),
            },
        }
    }
}

/// Kernels timed next to busy CPUs (kind, log2 size, repetitions): the MSM sizes of the
/// replay shapes and the mini C2, whose host phase is a large share at 2^20 and a small
/// one at 2^24, and two NTT sizes; each run about 0.1-0.5 s.
const CPU_LOAD_KERNELS: [(&str, u32, u32); 5] = [
    ("msm", 20, 12),
    ("msm", 22, 6),
    ("msm", 24, 3),
    ("ntt", 22, 20),
    ("ntt", 24, 8),
];

/// Busy threads per CPU next to the kernels: up to twice as many as CPUs (a prover's
/// synthesis threads often outnumber them; two-thread copy workers on every CPU reach 2).
const CPU_LOAD_SHARES: [f64; 6] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0];

/// Streaming or chasing threads next to the MSMs, as shares of the CPUs: a pipeline's
/// 4-16 one-thread workers on the 16-vCPU host (the stretch next to chasing threads
/// bends sharply between half and one thread per CPU, so four points).
const CPU_LOAD_NEIGHBOUR_SHARES: [f64; 4] = [0.25, 0.5, 0.75, 1.0];

/// A progress bar for one probe (hidden when stderr is not a terminal).
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:>14} [{bar:30}] {pos}/{len} {elapsed} {msg}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(what.to_string());
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_respect_core_count() {
        let p = Plan::new(Mode::Quick, 4);
        assert_eq!(p.bw_threads, vec![1, 2, 4]);
        assert_eq!(p.lat_threads, vec![0, 1, 2, 3]);
        let p = Plan::new(Mode::Full, 16);
        assert_eq!(p.bw_threads, vec![1, 2, 3, 4, 6, 8, 10, 12, 14, 16]);
        assert_eq!(p.dma_threads, vec![2, 4, 8, 14]);
        let p = Plan::new(Mode::Tiny, 1);
        assert_eq!(p.lat_threads, vec![0]);
    }

    #[test]
    fn pageable_copies_run_beside_a_quarter_half_and_three_quarters_of_the_cpus() {
        let p = Plan::new(Mode::Quick, 16);
        assert_eq!(
            (p.pageable_threads, p.pageable_neighbour_threads),
            (vec![8], vec![4, 12])
        );
        // Three quarters never take the CPUs the chase and the GPU harness need; a count
        // equal to half is not run twice.
        let p = Plan::new(Mode::Full, 4);
        assert_eq!(
            (p.pageable_threads, p.pageable_neighbour_threads),
            (vec![2], vec![1])
        );
        assert!(
            Plan::new(Mode::Tiny, 16)
                .pageable_neighbour_threads
                .is_empty()
        );
    }
}
