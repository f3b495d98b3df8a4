//! `bwsim log --fit`'s correction: scale each fittable duration by the log's median over
//! the model's until every model median is within a tolerance of the log's, then measure
//! how much each median moves per unit of its parameter (one step each, the others held).
//! The model is a closure, so the loop is tested without running one.

use super::fit::{FitTarget, Fitted};

/// Most model runs the correction makes.
pub const FIT_ROUNDS: usize = 12;
/// The correction stops when every fitted median is within this fraction of the log's.
pub const FIT_TOLERANCE: f64 = 0.002;
/// The sensitivity step: each fitted value moved by this fraction.
pub const SENSITIVITY_STEP: f64 = 0.05;

/// A parameter to fit: its target, its value in the scenario, and the log's median, ms.
pub type FitStart = (FitTarget, f64, f64);

/// Fits `targets`. `model_p50_ms(values)` runs the model with the parameters at `values`
/// (in `targets`' order) and returns each target's model median in ms (NaN where the
/// model does not observe it).
pub fn correct_durations<E>(
    targets: Vec<FitStart>,
    mut model_p50_ms: impl FnMut(&[f64]) -> Result<Vec<f64>, E>,
) -> Result<Vec<Fitted>, E> {
    let mut values: Vec<f64> = targets.iter().map(|t| t.1).collect();
    let mut model_p50 = vec![f64::NAN; targets.len()];
    for round in 0..FIT_ROUNDS {
        model_p50 = model_p50_ms(&values)?;
        let worst = targets
            .iter()
            .zip(&model_p50)
            .fold(0.0f64, |w, ((_, _, observed), m)| {
                w.max((observed / m - 1.0).abs())
            });
        // The last round's values stay the ones the model medians were measured with.
        if worst <= FIT_TOLERANCE || round + 1 == FIT_ROUNDS {
            break;
        }
        for (i, (_, _, observed)) in targets.iter().enumerate() {
            if model_p50[i].is_finite() && model_p50[i] > 0.0 {
                values[i] *= observed / model_p50[i];
            }
        }
    }
    let mut fitted = Vec::with_capacity(targets.len());
    for (i, (target, was, log_p50_ms)) in targets.into_iter().enumerate() {
        let mut moved = values.clone();
        moved[i] *= 1.0 + SENSITIVITY_STEP;
        let change = Some(model_p50_ms(&moved)?[i] - model_p50[i]).filter(|d| d.is_finite());
        fitted.push(Fitted {
            target,
            was,
            value: values[i],
            log_p50_ms,
            model_p50_ms: model_p50[i],
            sensitivity_ms: change.map(|d| d / (values[i] * SENSITIVITY_STEP)),
            elasticity: change
                .filter(|_| model_p50[i] > 0.0)
                .map(|d| d / model_p50[i] / SENSITIVITY_STEP),
        });
    }
    Ok(fitted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuzk_log::fit::Observable;

    fn target(p: &str) -> FitTarget {
        FitTarget {
            param: p.into(),
            stage: p.into(),
            observable: Observable::Bracket(p.into()),
        }
    }

    #[test]
    fn a_model_with_an_overhead_is_corrected_until_within_tolerance_and_its_slope_is_its_sensitivity()
     {
        // Model: median a = 1000 x value a + 50 ms (an overhead the scaling must iterate
        // over), median b = 2000 x value b. Log: a = 1250 ms, b = 800 ms.
        let model = |v: &[f64]| Ok::<_, ()>(vec![1000.0 * v[0] + 50.0, 2000.0 * v[1]]);
        let mut runs = 0;
        let fitted = correct_durations(
            vec![(target("a"), 1.0, 1250.0), (target("b"), 1.0, 800.0)],
            |v| {
                runs += 1;
                model(v)
            },
        )
        .unwrap();
        assert!((fitted[0].value - 1.2).abs() < 0.003, "{}", fitted[0].value);
        assert_eq!(fitted[1].value, 0.4);
        assert!((fitted[0].model_p50_ms / 1250.0 - 1.0).abs() <= FIT_TOLERANCE);
        assert!((fitted[0].sensitivity_ms.unwrap() - 1000.0).abs() < 1e-6);
        assert!((fitted[1].sensitivity_ms.unwrap() - 2000.0).abs() < 1e-6);
        // b = 800 x 1 / 800 is exact: elasticity 1 (a's overhead makes it less).
        assert!((fitted[1].elasticity.unwrap() - 1.0).abs() < 1e-9);
        assert!(fitted[0].elasticity.unwrap() < 1.0);
        // Rounds until within tolerance, then one sensitivity run per parameter.
        assert!(runs <= FIT_ROUNDS + 2, "{runs}");
        assert_eq!(fitted[0].was, 1.0);
    }

    #[test]
    fn an_unobserved_median_keeps_its_value_and_has_no_sensitivity() {
        let fitted = correct_durations(vec![(target("a"), 3.0, 100.0)], |_| {
            Ok::<_, ()>(vec![f64::NAN])
        })
        .unwrap();
        assert_eq!(fitted[0].value, 3.0);
        assert_eq!(fitted[0].sensitivity_ms, None);
        assert_eq!(fitted[0].elasticity, None);
    }

    #[test]
    fn a_failing_model_run_is_the_error() {
        let e = correct_durations(vec![(target("a"), 1.0, 100.0)], |_| Err("stalled"));
        assert_eq!(e.unwrap_err(), "stalled");
    }
}
