//! Whether two hosts are told apart by their prediction intervals. Each host's interval
//! is the one `run` would print at its named setting ([`crate::sweep::prediction::at_row`]):
//! a host profile is a spec sheet, its keys typical values unless it names a calibration,
//! and the scenario's stage times measured on another host unless it says otherwise.

use crate::analysis::prediction::PredictionInterval;

/// Whether two hosts' answers are told apart by their prediction intervals: the log
/// ratio of their centres exceeds the root of the sum of their log half-widths' squares.
/// Two hosts share the engine but not the error of carrying stage times to each (the
/// evidence measures it per boot), so the two intervals are treated as independent.
pub fn resolved(a: &PredictionInterval, b: &PredictionInterval) -> bool {
    let half = |p: &PredictionInterval| (p.high_s / p.seconds_per_job).ln();
    let gap = (a.seconds_per_job / b.seconds_per_job).ln().abs();
    gap > half(a).hypot(half(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::prediction::{ErrorModel, HostKnowledge};

    fn pi(s: f64, log_half: f64) -> PredictionInterval {
        let err = ErrorModel {
            floor: log_half,
            contention: 0.0,
            weight: 0.0,
            quantile: 1.0,
            bias: 0.0,
        };
        PredictionInterval::new(s, 1.0, 0.0, 0.0, &err, HostKnowledge::Typical, None)
    }

    #[test]
    fn two_hosts_are_told_apart_only_beyond_both_intervals_together() {
        // ±20% each (log): the pair needs a log gap above 0.2 x sqrt 2 = 0.283.
        assert!(!resolved(&pi(10.0, 0.2), &pi(13.0, 0.2)), "ln 1.3 = 0.262");
        assert!(resolved(&pi(10.0, 0.2), &pi(13.5, 0.2)), "ln 1.35 = 0.300");
        assert!(resolved(&pi(13.5, 0.2), &pi(10.0, 0.2)), "either order");
        // Narrow intervals tell small gaps apart.
        assert!(resolved(&pi(10.0, 0.02), &pi(10.5, 0.02)));
    }
}
