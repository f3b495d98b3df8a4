//! The floor: the least an event loop can do for M/M/16 in Rust, to measure bwsim (and
//! the peers) against. A binary heap of (time, sequence) keys in u64 nanoseconds, a
//! VecDeque of waiting arrival times, the same random streams and statistics as the
//! nexosim peer, and nothing else: no model, no resources, no observers.
//!
//! Usage: `floor-mm16 <jobs> <warmup_jobs> <seed>`; prints one JSON line that
//! `report.py` reads (the same shape as the peers').

mod stats;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;

use stats::ResponseStats;

// The same parameters as the nexosim and SimPy peers and scenarios/mm16.toml.
const SERVERS: usize = 16;
const ARRIVAL_RATE: f64 = 14.4;
const MEAN_SERVICE_S: f64 = 1.0;

/// Seconds to whole nanoseconds (at least 1, as the nexosim peer).
fn nanos(s: f64) -> u64 {
    ((s * 1e9).round() as u64).max(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: floor-mm16 <jobs> <warmup_jobs> <seed>");
        std::process::exit(2);
    }
    let jobs: u64 = args[1].parse().expect("jobs");
    let warmup: u64 = args[2].parse().expect("warmup_jobs");
    let seed: u64 = args[3].parse().expect("seed");
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut stats = ResponseStats::new(jobs, warmup);
    let gap = Exp::new(ARRIVAL_RATE).unwrap();
    let service = Exp::new(1.0 / MEAN_SERVICE_S).unwrap();

    // Key: time in the high 64 bits, insertion sequence in the low 64 (FIFO among equal
    // times). Payload: 0 for an arrival, else the departing job's arrival time + 1 ns.
    let mut heap: BinaryHeap<Reverse<(u128, u64)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<Reverse<(u128, u64)>>, at: u64, what: u64| {
        seq += 1;
        heap.push(Reverse((((at as u128) << 64) | seq as u128, what)));
    };
    let mut waiting: VecDeque<u64> = VecDeque::new();
    let mut busy = 0usize;
    let mut arrivals_left = jobs;

    let t0 = Instant::now();
    arrivals_left -= 1;
    push(&mut heap, nanos(gap.sample(&mut rng)), 0);
    while let Some(Reverse((key, what))) = heap.pop() {
        let now = (key >> 64) as u64;
        if what == 0 {
            if busy < SERVERS {
                busy += 1;
                push(&mut heap, now + nanos(service.sample(&mut rng)), now + 1);
            } else {
                waiting.push_back(now);
            }
            if arrivals_left > 0 {
                arrivals_left -= 1;
                push(&mut heap, now + nanos(gap.sample(&mut rng)), 0);
            }
        } else {
            stats.record((now - (what - 1)) as f64 * 1e-9);
            match waiting.pop_front() {
                Some(arrived) => push(
                    &mut heap,
                    now + nanos(service.sample(&mut rng)),
                    arrived + 1,
                ),
                None => busy -= 1,
            }
        }
    }
    let wall_s = t0.elapsed().as_secs_f64();

    let (mean, se) = stats.mean_and_se();
    assert_eq!(stats.completed, jobs, "every job must leave");
    println!(
        "{{\"tool\":\"floor\",\"model\":\"mm16\",\"jobs\":{jobs},\"events\":{},\"wall_s\":{wall_s:.6},\"mean_response_s\":{mean:.6},\"se_s\":{se:.6}}}",
        2 * jobs
    );
}
