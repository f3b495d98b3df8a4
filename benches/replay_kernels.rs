//! Replay's synthetic CPU kernels against the clock: a stage's work, sized from this host's
//! measured rates, should take its standalone time when it runs alone. A wall-clock check,
//! so it lives here and not in the unit tests (a loaded machine makes it fail there).
//!
//! `cargo bench --bench replay_kernels` prints, per shape, the best of three runs and its
//! error against the standalone time; the process exits 1 when any error reaches 25%.

use std::time::Instant;

use bwsim::replay::kernels::{BufferSizes, CpuStageShape, KernelHost};

fn main() {
    let host = KernelHost::new(BufferSizes::TEST, 2);
    println!("host rates: {:?}", host.rates);
    let mut worst: f64 = 0.0;
    for (latency_frac, dram_bytes, threads) in [(0.0, 0.0, 1), (0.6, 0.3e9, 1), (0.2, 0.5e9, 2)] {
        let shape = CpuStageShape {
            standalone_s: 0.12,
            threads,
            dram_bytes,
            latency_frac,
            write_frac: 0.0,
        };
        let work = host.work_for(&shape);
        let best = (0..3)
            .map(|_| {
                let t0 = Instant::now();
                host.run(&work);
                t0.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        let err = best / shape.standalone_s - 1.0;
        worst = worst.max(err.abs());
        println!("{shape:?}: {best:.4} s ({:+.1}%)", err * 100.0);
    }
    if worst >= 0.25 {
        eprintln!(
            "a kernel missed its standalone time by {:.0}%",
            worst * 100.0
        );
        std::process::exit(1);
    }
}
