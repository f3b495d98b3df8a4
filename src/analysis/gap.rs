//! The instrumentation gap: what the time inside a GPU bracket (a `gpu_busy` span, e.g.
//! cuzk's GPU_START..GPU_END) is spent on. A bracket is cut into labelled pieces
//! (kernels, transfers, setup, lock wait, barrier wait); where pieces overlap the
//! earlier part in [`GapPart::ALL`] wins, and what no piece covers is `other`, so the
//! parts of a bracket add up to its length by construction.
//!
//! Simulated runs build the pieces from stage records ([`super::bracket_chain`]); a
//! reader of real logs builds them from whatever timers its records carry.

/// What a moment inside a GPU bracket is spent on, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GapPart {
    /// A GPU kernel runs (even one slowed by its PCIe stream).
    Kernels,
    /// A host-device copy runs with no kernel.
    Transfers,
    /// Host work on the GPU's thread: allocation, pinning, launches.
    Setup,
    /// Waiting for a lock (e.g. the per-GPU mutex another worker holds).
    LockWait,
    /// Waiting for another stage to finish (e.g. the GPU thread waiting for prep_msm).
    BarrierWait,
    /// Anything else: waits for memory, the time between the last piece and the marker.
    Other,
}

impl GapPart {
    /// Every part, in precedence order (where pieces overlap the first one listed counts).
    pub const ALL: [GapPart; 6] = [
        GapPart::Kernels,
        GapPart::Transfers,
        GapPart::Setup,
        GapPart::LockWait,
        GapPart::BarrierWait,
        GapPart::Other,
    ];

    /// Its key in JSON reports and sweep columns.
    pub fn key(self) -> &'static str {
        match self {
            GapPart::Kernels => "kernels",
            GapPart::Transfers => "transfers",
            GapPart::Setup => "setup",
            GapPart::LockWait => "lock_wait",
            GapPart::BarrierWait => "barrier_wait",
            GapPart::Other => "other",
        }
    }

    /// Its name in text reports.
    pub fn label(self) -> &'static str {
        match self {
            GapPart::Kernels => "kernels",
            GapPart::Transfers => "transfers",
            GapPart::Setup => "setup",
            GapPart::LockWait => "GPU-lock wait",
            GapPart::BarrierWait => "barrier wait",
            GapPart::Other => "other",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One labelled interval, seconds on any clock shared with its bracket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    /// What the interval is spent on.
    pub part: GapPart,
    /// Its start, seconds.
    pub start_s: f64,
    /// Its end, seconds.
    pub end_s: f64,
}

/// Brackets and their parts, summed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GapTotals {
    /// Brackets added.
    pub brackets: u64,
    /// Their summed length, seconds.
    pub bracket_s: f64,
    /// Seconds per part, indexed like [`GapPart::ALL`].
    pub parts_s: [f64; 6],
}

impl GapTotals {
    /// Adds the bracket [open_s, close_s] cut by `pieces` (clipped to it).
    pub fn add_bracket(&mut self, open_s: f64, close_s: f64, pieces: &[Piece]) {
        let close_s = close_s.max(open_s);
        let mut cuts: Vec<f64> = vec![open_s, close_s];
        for p in pieces {
            for t in [p.start_s, p.end_s] {
                if t > open_s && t < close_s {
                    cuts.push(t);
                }
            }
        }
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        for seg in cuts.windows(2) {
            let (a, b) = (seg[0], seg[1]);
            let mid = a + (b - a) / 2.0;
            let part = (pieces.iter())
                .filter(|p| p.start_s <= mid && mid < p.end_s)
                .map(|p| p.part)
                .min()
                .unwrap_or(GapPart::Other);
            self.parts_s[part.index()] += b - a;
        }
        self.brackets += 1;
        self.bracket_s += close_s - open_s;
    }

    /// Seconds spent on `part`.
    pub fn seconds(&self, part: GapPart) -> f64 {
        self.parts_s[part.index()]
    }

    /// Mean seconds of `part` in one bracket (0 without brackets).
    pub fn per_bracket_s(&self, part: GapPart) -> f64 {
        self.seconds(part) / self.brackets.max(1) as f64
    }

    /// Mean length of one bracket, seconds (0 without brackets).
    pub fn mean_bracket_s(&self) -> f64 {
        self.bracket_s / self.brackets.max(1) as f64
    }

    /// `part`'s share of the bracketed time (0 when nothing was bracketed).
    pub fn share(&self, part: GapPart) -> f64 {
        if self.bracket_s > 0.0 {
            self.seconds(part) / self.bracket_s
        } else {
            0.0
        }
    }

    /// The part other than kernels that takes the most time, if any takes some.
    pub fn main_gap(&self) -> Option<GapPart> {
        (GapPart::ALL.into_iter())
            .filter(|&p| p != GapPart::Kernels && self.seconds(p) > 0.0)
            .max_by(|a, b| self.seconds(*a).total_cmp(&self.seconds(*b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(part: GapPart, start_s: f64, end_s: f64) -> Piece {
        Piece {
            part,
            start_s,
            end_s,
        }
    }

    #[test]
    fn a_bracket_is_cut_into_parts_that_add_up_to_it() {
        // Bracket [10, 20]: lock wait 10-13, setup 13-14, kernels 14-16 and 17-18,
        // barrier 16-17; nothing after 18.
        let mut g = GapTotals::default();
        let pieces = [
            piece(GapPart::LockWait, 9.0, 13.0), // starts before the bracket: clipped
            piece(GapPart::Setup, 13.0, 14.0),
            piece(GapPart::Kernels, 14.0, 16.0),
            piece(GapPart::BarrierWait, 16.0, 17.0),
            piece(GapPart::Kernels, 17.0, 18.0),
        ];
        g.add_bracket(10.0, 20.0, &pieces);
        assert_eq!(g.brackets, 1);
        assert_eq!(g.bracket_s, 10.0);
        assert_eq!(g.seconds(GapPart::LockWait), 3.0);
        assert_eq!(g.seconds(GapPart::Setup), 1.0);
        assert_eq!(g.seconds(GapPart::Kernels), 3.0);
        assert_eq!(g.seconds(GapPart::BarrierWait), 1.0);
        assert_eq!(g.seconds(GapPart::Other), 2.0);
        assert_eq!(g.seconds(GapPart::Transfers), 0.0);
        assert_eq!(g.share(GapPart::Kernels), 0.3);
        assert_eq!(g.main_gap(), Some(GapPart::LockWait));
    }

    #[test]
    fn overlapping_pieces_count_once_for_the_part_first_in_precedence() {
        // A kernel inside a transfer inside a lock wait: the kernel's second counts as
        // kernels, the transfer's other second as transfers, the rest as lock wait.
        let mut g = GapTotals::default();
        let pieces = [
            piece(GapPart::LockWait, 0.0, 4.0),
            piece(GapPart::Transfers, 1.0, 3.0),
            piece(GapPart::Kernels, 2.0, 3.0),
        ];
        g.add_bracket(0.0, 4.0, &pieces);
        assert_eq!(g.seconds(GapPart::Kernels), 1.0);
        assert_eq!(g.seconds(GapPart::Transfers), 1.0);
        assert_eq!(g.seconds(GapPart::LockWait), 2.0);
        assert_eq!(g.seconds(GapPart::Other), 0.0);
        let sum: f64 = g.parts_s.iter().sum();
        assert_eq!(sum, g.bracket_s);
    }

    #[test]
    fn an_empty_or_uncovered_bracket_is_all_other() {
        let mut g = GapTotals::default();
        g.add_bracket(5.0, 5.0, &[]);
        g.add_bracket(0.0, 2.0, &[piece(GapPart::Kernels, 3.0, 4.0)]);
        assert_eq!(g.brackets, 2);
        assert_eq!(g.seconds(GapPart::Other), 2.0);
        assert_eq!(g.seconds(GapPart::Kernels), 0.0);
        assert_eq!(g.main_gap(), Some(GapPart::Other));
        assert_eq!(GapTotals::default().main_gap(), None);
        assert_eq!(GapTotals::default().share(GapPart::Other), 0.0);
    }
}
