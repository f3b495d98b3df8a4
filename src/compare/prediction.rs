//! Whether two hosts are told apart by their prediction intervals. Each host's interval
//! is the one `run` would print at its named setting ([`crate::sweep::prediction::at_row`]):
//! a host profile is a spec sheet, its keys typical values unless it names a calibration,
//! and the scenario's stage times measured on another host unless it says otherwise.

use std::path::Path;

use crate::analysis::prediction::PredictionInterval;
use crate::engine::EngineLimits;
use crate::prediction::sensitivity::{SteppedRunError, central_log_sd, stepped_seconds_per_job};

/// One standard deviation of log seconds per job from a GPU kernel speed known to
/// `rel_sd` (the host file's `gpu.kernel_speed_rel_sd`): the scenario with `sets` run on
/// its seed with the speed one `rel_sd` below and above `speed`, half their log
/// difference. 0 when the speed is exact (the GPU the stages were timed on).
pub fn kernel_speed_log_sd(
    scenario: &Path,
    sets: &[String],
    speed: f64,
    rel_sd: f64,
) -> Result<f64, String> {
    if rel_sd <= 0.0 {
        return Ok(0.0);
    }
    let reload = |extra: &[String]| crate::scenario::load(scenario, &[sets, extra].concat());
    let seconds = |k: f64| -> Result<f64, String> {
        let step = [format!("hardware.gpu.kernel_speed={k}")];
        stepped_seconds_per_job(&reload, &step, EngineLimits::default()).map_err(|e| match e {
            SteppedRunError::Load(e) => e.to_string(),
            SteppedRunError::Run(e) => format!("with the GPU kernel speed at {k}: {e}"),
        })
    };
    let (down, up) = (
        seconds(speed * (1.0 - rel_sd))?,
        seconds(speed * (1.0 + rel_sd))?,
    );
    Ok(central_log_sd(down, up))
}

/// Whether two hosts' answers are told apart by their prediction intervals: the log
/// ratio of their centres exceeds the root of the sum of their log half-widths' squares.
/// Two hosts share the engine but not the error of carrying stage times to each (the
/// evidence measures it per boot), so the two intervals are treated as independent.
pub fn resolved(a: &PredictionInterval, b: &PredictionInterval) -> bool {
    let gap = (a.seconds_per_job / b.seconds_per_job).ln().abs();
    gap > a.log_half_width().hypot(b.log_half_width())
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
    fn a_gpu_speed_known_to_10_percent_moves_a_gpu_bound_answer_and_an_exact_one_not_at_all() {
        let scenario = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/c2-32g-cuzk.toml"
        ));
        let sets = ["params.synthesis_concurrency=19".to_string()];
        // Half the GPU speed costs 31% here (37.8 -> 49.7 s/proof): kernels matter.
        let sd = kernel_speed_log_sd(scenario, &sets, 0.5, 0.1).unwrap();
        assert!(sd > 0.02 && sd < 0.15, "{sd}");
        assert_eq!(kernel_speed_log_sd(scenario, &sets, 0.5, 0.0).unwrap(), 0.0);
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
