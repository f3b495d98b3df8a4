//! Two readings of the same GPU brackets (cuzk's GPU_START..GPU_END, a `gpu_busy` span):
//!
//! - the **union**: the share of the window in which at least one bracket is open. cuzk's
//!   own analysis merges intervals this way ("GPU efficiency (merged intervals)"), and it
//!   is what `bracketed_busy_frac` has always meant;
//! - the brackets **added up** (the seed's formula): every bracket's length inside the
//!   window summed, over the window, and over the GPU's own span (its first bracket's
//!   start to its last bracket's end, within the window), with the mean gap between GPU
//!   operations: the idle time inside that span over the transitions from one bracket to
//!   the next (a bracket opened the instant the last one closed is a gap of zero). With
//!   one worker per GPU brackets never overlap and the two readings agree; with several,
//!   brackets overlap and the sum can pass 100%.
//!
//! `run` (from simulated markers), `log` (from a real TIMELINE log) and `replay` (from the
//! markers a replay recorded) all call [`measure`], so the three report the same numbers
//! for the same records. Times are on any one clock in any one unit (a run's seconds, a
//! log's milliseconds); lengths and gaps come back in that unit.

/// One bracket: opened at `start`, closed at `end`, on GPU `gpu`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    /// The GPU the bracket is on.
    pub gpu: u32,
    /// Opened.
    pub start: f64,
    /// Closed (or the end of the records when never closed).
    pub end: f64,
}

/// One GPU's brackets inside the window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuBrackets {
    /// Time of the window with at least one bracket open.
    pub union: f64,
    /// Bracket time inside the window, added up.
    pub summed: f64,
    /// From the first bracket's start to the last bracket's end, within the window.
    pub span: f64,
    /// Brackets that overlap the window.
    pub brackets: usize,
}

/// Both readings over a window, per GPU and averaged over GPUs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BracketMeasures {
    /// Each GPU, by index.
    pub per_gpu: Vec<GpuBrackets>,
    /// Length of the window.
    pub window: f64,
    /// Mean over GPUs of the union over the window.
    pub union_frac: f64,
    /// Mean over GPUs of the brackets added up over the window (the seed's formula on the
    /// wall clock).
    pub summed_frac: f64,
    /// Mean over the GPUs that have brackets of the brackets added up over the GPU's own
    /// span (the seed's formula on the TIMELINE span); None without brackets.
    pub summed_span_frac: Option<f64>,
    /// Idle gaps between one GPU's operations (the end of one run of overlapping or
    /// touching brackets to the start of the next, both inside the window), over all GPUs.
    pub gaps: Vec<f64>,
}

impl BracketMeasures {
    /// Mean gap between GPU operations, the seed's way: the idle time inside each GPU's
    /// span over the transitions between its brackets (brackets - 1), over all GPUs.
    /// None without a transition.
    pub fn mean_gap(&self) -> Option<f64> {
        let idle: f64 = self
            .per_gpu
            .iter()
            .map(|g| (g.span - g.union).max(0.0))
            .sum();
        let transitions: usize = self
            .per_gpu
            .iter()
            .map(|g| g.brackets.saturating_sub(1))
            .sum();
        (transitions > 0).then(|| idle / transitions as f64)
    }

    /// What a report carries.
    pub fn summary(&self) -> BracketSummary {
        BracketSummary {
            union_frac: self.union_frac,
            summed_frac: self.summed_frac,
            summed_span_frac: self.summed_span_frac,
            mean_gap: self.mean_gap(),
        }
    }
}

/// The readings a report prints: [`BracketMeasures`] without the per-GPU detail.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BracketSummary {
    /// Mean over GPUs of the union over the window.
    pub union_frac: f64,
    /// Mean over GPUs of the brackets added up over the window.
    pub summed_frac: f64,
    /// The brackets added up over each GPU's own span (None without brackets).
    pub summed_span_frac: Option<f64>,
    /// Mean gap between GPU operations, the seed's way (None without a transition).
    pub mean_gap: Option<f64>,
}

/// Both readings of `brackets` over the window `[lo, hi]` on `gpus` GPUs (at least one;
/// a bracket on a higher index counts on the last GPU).
pub fn measure(brackets: &[Bracket], (lo, hi): (f64, f64), gpus: usize) -> BracketMeasures {
    let gpus = gpus.max(1);
    let window = (hi - lo).max(0.0);
    let mut by_gpu: Vec<Vec<(f64, f64)>> = vec![Vec::new(); gpus];
    for b in brackets {
        by_gpu[(b.gpu as usize).min(gpus - 1)].push((b.start, b.end.max(b.start)));
    }
    let clip = |a: f64, b: f64| (b.min(hi) - a.max(lo)).max(0.0);
    let mut gaps = Vec::new();
    let per_gpu: Vec<GpuBrackets> = by_gpu
        .iter_mut()
        .map(|iv| {
            iv.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
            let inside: Vec<&(f64, f64)> =
                iv.iter().filter(|&&(a, b)| b >= lo && a <= hi).collect();
            let runs = merged(iv);
            for pair in runs.windows(2) {
                if pair[0].1 >= lo && pair[1].0 <= hi {
                    gaps.push(pair[1].0 - pair[0].1);
                }
            }
            let first = inside.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
            let last = inside.iter().map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
            GpuBrackets {
                union: runs.iter().map(|&(a, b)| clip(a, b)).sum(),
                summed: inside.iter().map(|&&(a, b)| clip(a, b)).sum(),
                span: if inside.is_empty() {
                    0.0
                } else {
                    clip(first, last)
                },
                brackets: inside.len(),
            }
        })
        .collect();
    let frac = |x: f64| if window > 0.0 { x / window } else { 0.0 };
    let mean = |xs: &mut dyn Iterator<Item = f64>| xs.sum::<f64>() / gpus as f64 + 0.0;
    let spans: Vec<f64> = per_gpu
        .iter()
        .filter(|g| g.span > 0.0)
        .map(|g| g.summed / g.span)
        .collect();
    BracketMeasures {
        union_frac: mean(&mut per_gpu.iter().map(|g| frac(g.union))),
        summed_frac: mean(&mut per_gpu.iter().map(|g| frac(g.summed))),
        summed_span_frac: (!spans.is_empty())
            .then(|| spans.iter().sum::<f64>() / spans.len() as f64),
        per_gpu,
        window,
        gaps,
    }
}

/// Sorted intervals merged where they overlap or touch.
fn merged(sorted: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &(a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(gpu: u32, start: f64, end: f64) -> Bracket {
        Bracket { gpu, start, end }
    }

    #[test]
    fn one_worker_brackets_give_the_same_union_and_sum_and_the_seeds_gap() {
        // 3.6 s brackets every 4 s: 90% either way, gaps of 0.4 s.
        let brackets: Vec<Bracket> = (0..10)
            .map(|i| b(0, 4.0 * i as f64, 4.0 * i as f64 + 3.6))
            .collect();
        let m = measure(&brackets, (0.0, 40.0), 1);
        assert!((m.union_frac - 0.9).abs() < 1e-12, "{m:?}");
        assert!((m.summed_frac - 0.9).abs() < 1e-12);
        // Span 0..39.6: 36 / 39.6.
        assert!((m.summed_span_frac.unwrap() - 36.0 / 39.6).abs() < 1e-12);
        assert_eq!(m.gaps.len(), 9);
        // 3.6 s of idle time in the span over 9 transitions.
        assert!((m.mean_gap().unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn overlapping_brackets_add_up_past_the_union() {
        // Two workers, brackets of 3 s starting every 2 s: the union is the whole 0..9,
        // the sum 4 x 3 = 12 s over a 10 s window.
        let brackets = [
            b(0, 0.0, 3.0),
            b(0, 2.0, 5.0),
            b(0, 4.0, 7.0),
            b(0, 6.0, 9.0),
        ];
        let m = measure(&brackets, (0.0, 10.0), 1);
        assert!((m.union_frac - 0.9).abs() < 1e-12, "{m:?}");
        assert!((m.summed_frac - 1.2).abs() < 1e-12);
        assert!((m.summed_span_frac.unwrap() - 12.0 / 9.0).abs() < 1e-12);
        assert!(m.gaps.is_empty());
    }

    #[test]
    fn the_window_clips_brackets_and_touching_ones_leave_no_idle_gap() {
        let brackets = [b(0, -1.0, 1.0), b(0, 1.0, 2.0), b(0, 5.0, 12.0)];
        let m = measure(&brackets, (0.0, 10.0), 1);
        // Inside 0..10: 1 + 1 + 5 s.
        assert!((m.per_gpu[0].summed - 7.0).abs() < 1e-12, "{m:?}");
        assert!((m.per_gpu[0].union - 7.0).abs() < 1e-12);
        assert!((m.per_gpu[0].span - 10.0).abs() < 1e-12);
        assert_eq!(m.gaps, vec![3.0]);
        // The seed's mean: 3 s idle over the 2 transitions between 3 brackets.
        assert_eq!(m.mean_gap(), Some(1.5));
    }

    #[test]
    fn gpus_are_averaged_and_a_gpu_without_brackets_counts_as_idle() {
        let brackets = [b(0, 0.0, 5.0), b(1, 0.0, 10.0)];
        let m = measure(&brackets, (0.0, 10.0), 3);
        assert!((m.union_frac - 0.5).abs() < 1e-12, "{m:?}");
        assert!((m.summed_frac - 0.5).abs() < 1e-12);
        // Only the GPUs with brackets have a span: 5/5 and 10/10.
        assert!((m.summed_span_frac.unwrap() - 1.0).abs() < 1e-12);
        let none = measure(&[], (0.0, 10.0), 2);
        assert_eq!(none.union_frac, 0.0);
        assert_eq!(none.summed_span_frac, None);
        assert_eq!(none.mean_gap(), None);
    }
}
