//! Arrival processes: when the next job arrives under Poisson or trace arrivals (closed
//! arrivals start a job whenever one finishes, which the run's steps handle). Arrivals
//! draw from their own random stream so that service sampling never shifts them.

use rand::SeedableRng;
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64;

use crate::model::ArrivalKind;
use crate::time::{SimTime, secs_to_nanos};

/// Offset of the arrival stream's seed from the run's seed.
const ARRIVAL_SEED_OFFSET: u64 = 0x9E37_79B9_7F4A_7C15;

/// The open arrival process of a run, on its own random stream (a replay of the same
/// model draws the same arrivals from it).
pub struct Arrivals {
    rng: Pcg64,
    /// Poisson inter-arrival gaps (None: no Poisson arrivals, or an invalid rate).
    gap: Option<Exp<f64>>,
}

impl Arrivals {
    /// The arrivals of a run seeded with `seed` (the model's seed).
    pub fn new(kind: &ArrivalKind, seed: u64) -> Self {
        Self {
            rng: Pcg64::seed_from_u64(seed ^ ARRIVAL_SEED_OFFSET),
            gap: match kind {
                ArrivalKind::Poisson { rate_per_s } => Exp::new(*rate_per_s).ok(),
                _ => None,
            },
        }
    }

    /// When job number `started` (0-based) arrives, given the time is `now` and the
    /// previous job arrived now; None when no further arrival will come by itself.
    pub fn next(&mut self, kind: &ArrivalKind, now: SimTime, started: u64) -> Option<SimTime> {
        if let Some(gap) = &self.gap {
            // Poisson arrivals, the only kind with gaps (tested first: the hot case).
            return Some(now + secs_to_nanos(gap.sample(&mut self.rng)));
        }
        match kind {
            // An invalid rate: no gap distribution, so never.
            ArrivalKind::Poisson { .. } => Some(now + secs_to_nanos(f64::INFINITY)),
            ArrivalKind::Trace { times_s } => times_s
                .get(started as usize)
                .map(|&s| SimTime::from_secs(s).max(now)),
            ArrivalKind::Closed { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_arrivals_never_schedule() {
        let kind = ArrivalKind::Closed { concurrency: 2 };
        let mut a = Arrivals::new(&kind, 1);
        assert_eq!(a.next(&kind, SimTime::ZERO, 0), None);
    }

    #[test]
    fn trace_arrivals_follow_the_times_and_never_go_back() {
        let kind = ArrivalKind::Trace {
            times_s: vec![0.5, 1.0, 0.2],
        };
        let mut a = Arrivals::new(&kind, 1);
        assert_eq!(
            a.next(&kind, SimTime::ZERO, 0),
            Some(SimTime::from_secs(0.5))
        );
        assert_eq!(
            a.next(&kind, SimTime::from_secs(0.5), 1),
            Some(SimTime::from_secs(1.0))
        );
        // An earlier time than now arrives now.
        assert_eq!(
            a.next(&kind, SimTime::from_secs(1.0), 2),
            Some(SimTime::from_secs(1.0))
        );
        assert_eq!(a.next(&kind, SimTime::from_secs(1.0), 3), None);
    }

    #[test]
    fn poisson_gaps_have_the_right_mean_and_are_seeded() {
        let kind = ArrivalKind::Poisson { rate_per_s: 4.0 };
        let gaps = |seed| {
            let mut a = Arrivals::new(&kind, seed);
            (0..50_000)
                .map(|i| a.next(&kind, SimTime::ZERO, i).unwrap().as_secs())
                .collect::<Vec<_>>()
        };
        let g = gaps(9);
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        assert!((mean - 0.25).abs() < 0.01, "mean gap {mean}");
        assert_eq!(g, gaps(9));
        assert_ne!(g, gaps(10));
    }

    #[test]
    fn an_invalid_poisson_rate_never_arrives_in_finite_time() {
        let kind = ArrivalKind::Poisson { rate_per_s: -1.0 };
        let mut a = Arrivals::new(&kind, 1);
        assert_eq!(
            a.next(&kind, SimTime::ZERO, 0),
            Some(SimTime::ZERO + secs_to_nanos(f64::INFINITY))
        );
    }
}
