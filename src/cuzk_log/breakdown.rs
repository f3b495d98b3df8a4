//! What a real log's GPU brackets (GPU_START..GPU_END) are spent on, from the CUZK_TIMING
//! timers attributed to each: the same parts as a simulated run's breakdown
//! ([`crate::analysis::gap`]), as far as the timers tell them apart.
//!
//! SupraSeal's GPU call (groth16_cuda.cu) times, in order: CPU work before the per-GPU
//! mutex (`pre_lock_cpu_ms`), the wait for it (`mutex_wait_ms`), then under it the NTTs
//! and H MSM with the a/b/c upload (`ntt_msm_h_ms`), the wait for the CPU pre-pass
//! (`barrier_wait_ms`), the batch additions (`batch_add_ms`) and the tail MSMs
//! (`tail_msm_ms`); `gpu_total_ms` spans those four and `mutex_held_ms` the whole time
//! under the mutex, so their difference is host work (thread start, allocation, the
//! epilogue). Kernel timers include the PCIe streams they overlap, so transfers are not
//! told apart; what no timer covers is `other`.

use super::analyse::GpuBracket;
use crate::analysis::gap::{GapPart, GapTotals, Piece};

/// The brackets that close inside `window_ms` and carry at least one of these timers,
/// cut into parts; None when no bracket does.
pub fn of(brackets: &[GpuBracket], window_ms: (f64, f64)) -> Option<GapTotals> {
    let mut totals = GapTotals::default();
    for b in brackets {
        let Some(end_ms) = b.end_ms.filter(|e| *e >= window_ms.0 && *e <= window_ms.1) else {
            continue;
        };
        let pieces = pieces(b);
        if pieces.is_empty() {
            continue;
        }
        totals.add_bracket(b.start_ms / 1e3, end_ms / 1e3, &pieces);
    }
    (totals.brackets > 0).then_some(totals)
}

/// A timer's total in the bracket (a name logged twice counts twice), ms.
fn timer(b: &GpuBracket, name: &str) -> Option<f64> {
    let values: Vec<f64> = (b.timers.iter())
        .filter(|(n, v)| n == name && v.is_finite() && *v >= 0.0)
        .map(|(_, v)| *v)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// The bracket's timers laid end to end from its start, in the call's order: the host
/// work under the mutex right after the lock, the tail MSMs after the batch additions.
/// None of them (or all zero): no pieces.
fn pieces(b: &GpuBracket) -> Vec<Piece> {
    let held_setup = match (timer(b, "mutex_held_ms"), timer(b, "gpu_total_ms")) {
        (Some(held), Some(total)) => Some((held - total).max(0.0)),
        _ => None,
    };
    let steps = [
        (timer(b, "pre_lock_cpu_ms"), GapPart::Setup),
        (timer(b, "mutex_wait_ms"), GapPart::LockWait),
        (held_setup, GapPart::Setup),
        (timer(b, "ntt_msm_h_ms"), GapPart::Kernels),
        (timer(b, "barrier_wait_ms"), GapPart::BarrierWait),
        (timer(b, "batch_add_ms"), GapPart::Kernels),
        (timer(b, "tail_msm_ms"), GapPart::Kernels),
    ];
    let mut t = b.start_ms / 1e3;
    let mut out = Vec::new();
    for (ms, part) in steps {
        let Some(ms) = ms else { continue };
        let end = t + ms / 1e3;
        out.push(Piece {
            part,
            start_s: t,
            end_s: end,
        });
        t = end;
    }
    if out.iter().all(|p| p.end_s == p.start_s) {
        return Vec::new();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bracket(start_ms: f64, end_ms: f64, timers: &[(&str, f64)]) -> GpuBracket {
        GpuBracket {
            job: "j".into(),
            partition: Some(0),
            gpu: 0,
            start_ms,
            end_ms: Some(end_ms),
            gpu_ms: None,
            timers: timers.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        }
    }

    #[test]
    fn the_timers_cut_a_bracket_into_parts_that_add_up() {
        // A 3 s bracket: 100 ms before the lock, 900 ms waiting for it, 1,650 ms held of
        // which 1,500 ms of GPU work (600 NTT + H, 200 barrier, 600 batch add, 100 tail),
        // so 150 ms of host work under the lock; 250 ms no timer covers.
        let b = bracket(
            10_000.0,
            13_000.0,
            &[
                ("pre_lock_cpu_ms", 100.0),
                ("mutex_wait_ms", 900.0),
                ("ntt_msm_h_ms", 600.0),
                ("barrier_wait_ms", 200.0),
                ("batch_add_ms", 600.0),
                ("tail_msm_ms", 100.0),
                ("gpu_total_ms", 1500.0),
                ("mutex_held_ms", 1650.0),
                ("b_g2_msm_ms", 480.0),
            ],
        );
        let t = of(&[b], (0.0, 20_000.0)).unwrap();
        assert_eq!(t.brackets, 1);
        let near = |part, want: f64| {
            let got = t.seconds(part);
            assert!((got - want).abs() < 1e-9, "{part:?}: {got} s, want {want}");
        };
        near(GapPart::Kernels, 1.3);
        near(GapPart::LockWait, 0.9);
        near(GapPart::BarrierWait, 0.2);
        near(GapPart::Setup, 0.25);
        near(GapPart::Other, 0.35);
        let sum: f64 = GapPart::ALL.iter().map(|&p| t.seconds(p)).sum();
        assert!((sum - 3.0).abs() < 1e-9);
    }

    #[test]
    fn timers_longer_than_their_bracket_are_clipped_and_brackets_without_timers_skipped() {
        let long = bracket(
            0.0,
            1_000.0,
            &[("mutex_wait_ms", 700.0), ("ntt_msm_h_ms", 900.0)],
        );
        let bare = bracket(0.0, 1_000.0, &[("prep_msm_ms", 1900.0)]);
        let outside = bracket(50_000.0, 51_000.0, &[("ntt_msm_h_ms", 500.0)]);
        let t = of(&[long, bare, outside], (0.0, 20_000.0)).unwrap();
        assert_eq!(t.brackets, 1);
        assert!((t.seconds(GapPart::LockWait) - 0.7).abs() < 1e-9);
        assert!((t.seconds(GapPart::Kernels) - 0.3).abs() < 1e-9);
        assert!(of(&[bracket(0.0, 1.0, &[])], (0.0, 2.0)).is_none());
    }
}
