//! Compute-bound CPU probe: an integer multiply-and-mix hash loop that touches no memory,
//! run on a set of pinned threads at once, to measure throughput per thread against the
//! number of active threads (core scaling, turbo, SMT sharing) with no DRAM traffic.

use super::sys::pin_to;
use std::sync::Arc;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Hash rounds between two looks at the clock.
const BATCH: u64 = 1 << 16;

/// Runs the hash loop on every CPU in `cpus` at the same time for `dur`; returns each
/// thread's throughput in millions of hash rounds per second (same order as `cpus`).
pub fn hash_rates(cpus: &[usize], dur: Duration) -> Vec<f64> {
    let start = Arc::new(Barrier::new(cpus.len()));
    let handles: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                pin_to(cpu);
                start.wait();
                let t0 = Instant::now();
                let mut rounds = 0u64;
                let mut state = [
                    0x9e37_79b9_7f4a_7c15u64 ^ cpu as u64,
                    0xbf58_476d_1ce4_e5b9,
                    0x94d0_49bb_1331_11eb,
                    0x2545_f491_4f6c_dd1d,
                ];
                loop {
                    for _ in 0..BATCH {
                        // Four independent multiply chains keep the multiplier busy
                        // (latency-bound single chains would understate SMT sharing).
                        for s in &mut state {
                            *s = (*s ^ (*s >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                        }
                    }
                    rounds += BATCH;
                    if t0.elapsed() >= dur {
                        break;
                    }
                }
                std::hint::black_box(state);
                rounds as f64 / t0.elapsed().as_secs_f64() / 1e6
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or(0.0))
        .collect()
}

/// CPUs ordered one per core first (the first sibling of each core), then the second
/// siblings, and so on: the first k of them are k threads on as many cores as possible.
pub fn spread_order(groups: &[Vec<usize>]) -> Vec<usize> {
    let depth = groups.iter().map(Vec::len).max().unwrap_or(0);
    (0..depth)
        .flat_map(|i| groups.iter().filter_map(move |g| g.get(i).copied()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_order_takes_one_per_core_first() {
        let g = vec![vec![0, 8], vec![1, 9], vec![2]];
        assert_eq!(spread_order(&g), vec![0, 1, 2, 8, 9]);
    }

    #[test]
    fn hash_rates_are_positive_per_thread() {
        let _cpus = crate::calibrate::probe::sys::cpu_timing_lock();
        let cpus = super::super::sys::allowed_cpus();
        let r = hash_rates(&cpus[..1], Duration::from_millis(20));
        assert_eq!(r.len(), 1);
        assert!(r[0] > 1.0, "{r:?}");
    }
}
