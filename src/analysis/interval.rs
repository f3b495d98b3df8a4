//! Mean and 95% confidence interval of a handful of replicate values (Student t), the
//! one statistic every replicated answer uses (`run`, its what-if, `sweep`, `compare`):
//! the interval, a paired difference, whether a difference is resolved, and the mean
//! written at the precision its interval allows.

/// Two-sided 95% Student t critical values t(0.975, df) for df = 1..=30.
const T975: [f64; 30] = [
    12.706_205, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
    2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
    2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
    2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
];

/// t(0.975, df): a table up to 30 degrees of freedom, then the Cornish-Fisher expansion
/// around the normal quantile (error below 1e-4 there).
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if df <= T975.len() {
        return T975[df - 1];
    }
    let z = 1.959_963_984_540_054_f64;
    let n = df as f64;
    z + (z.powi(3) + z) / (4.0 * n)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * n * n)
}

/// Summary of replicate values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean; None for fewer than 2 values.
    pub ci95: Option<f64>,
}

/// Mean and 95% CI half-width (t * s / sqrt(n)). `None` for no values.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ci95 = (n >= 2).then(|| {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * (var / n as f64).sqrt()
    });
    Some(Summary { n, mean, ci95 })
}

impl Summary {
    /// The interval's bounds, `None` without an interval.
    pub fn bounds(&self) -> Option<(f64, f64)> {
        self.ci95.map(|h| (self.mean - h, self.mean + h))
    }

    /// The same summary scaled by `k` (a unit change: jobs/hour to jobs/day).
    pub fn scaled(&self, k: f64) -> Summary {
        Summary {
            n: self.n,
            mean: self.mean * k,
            ci95: self.ci95.map(|h| h * k.abs()),
        }
    }

    /// True when the interval excludes 0: a difference whose sign the replications
    /// settle. Without an interval (one value) nothing is resolved.
    pub fn excludes_zero(&self) -> bool {
        self.bounds().is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
    }

    /// `mean ± half-width`, both rounded to the second significant digit of the
    /// half-width (41.0 ± 1.5, not 40.951 ± 1.473). Without an interval, or a zero or
    /// negligible one (a scenario with no randomness), the mean with `decimals` decimals.
    pub fn display(&self, decimals: usize) -> String {
        self.render(decimals, false)
    }

    /// As [`Summary::display`], the mean with its sign (a difference: +2.1 ± 0.9).
    pub fn display_signed(&self, decimals: usize) -> String {
        self.render(decimals, true)
    }

    fn render(&self, decimals: usize, signed: bool) -> String {
        // An interval below a millionth of the mean is float noise of a deterministic run.
        let negligible = |h: f64| h <= 1e-6 * self.mean.abs();
        let (mean, half) = match self.ci95.filter(|h| h.is_finite() && *h > 0.0) {
            Some(h) if !negligible(h) => {
                let step = 10f64.powi(h.log10().floor() as i32 - 1);
                let round = |x: f64| {
                    if step >= 1.0 {
                        (x / step).round() * step
                    } else {
                        x
                    }
                };
                (
                    round(self.mean),
                    format!(" ± {:.1$}", round(h), interval_decimals(h)),
                )
            }
            Some(_) => (self.mean, " ± 0".to_string()),
            None if self.ci95 == Some(0.0) => (self.mean, " ± 0".to_string()),
            None => (self.mean, String::new()),
        };
        let places = match self.ci95 {
            Some(h) if h.is_finite() && h > 0.0 && !negligible(h) => interval_decimals(h),
            _ => decimals,
        };
        if signed {
            format!("{mean:+.places$}{half}")
        } else {
            format!("{mean:.places$}{half}")
        }
    }
}

/// A half-width (or any margin) at two significant digits: 61, 0.22, 1500.
pub fn half_width_text(h: f64) -> String {
    if !(h.is_finite() && h > 0.0) {
        return "0".into();
    }
    let step = 10f64.powi(h.log10().floor() as i32 - 1);
    let rounded = if step >= 1.0 {
        (h / step).round() * step
    } else {
        h
    };
    format!("{rounded:.0$}", interval_decimals(h))
}

/// Decimal places that keep two significant digits of a half-width `h` > 0 (none for
/// h >= 10: larger values are rounded to their second significant digit instead).
pub fn interval_decimals(h: f64) -> usize {
    let first_digit = h.log10().floor() as i32;
    (1 - first_digit).max(0) as usize
}

/// The mean and interval of `after[i] - before[i]`: a change measured on the same seeds
/// (common random numbers), so the noise both runs share cancels. `None` when the
/// lengths differ or there are no values.
pub fn paired_difference(before: &[f64], after: &[f64]) -> Option<Summary> {
    if before.len() != after.len() {
        return None;
    }
    let diffs: Vec<f64> = before.iter().zip(after).map(|(b, a)| a - b).collect();
    summarize(&diffs)
}

/// Whether two independent summaries differ beyond their noise: the difference of
/// means against the half-width of the difference, sqrt(h1^2 + h2^2) (each half-width
/// already carries its own t). `false` when either has no interval.
pub fn distinct(a: &Summary, b: &Summary) -> bool {
    match (a.ci95, b.ci95) {
        (Some(ha), Some(hb)) => (a.mean - b.mean).abs() > (ha * ha + hb * hb).sqrt(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_of_three_values() {
        // 1, 2, 3: mean 2, s = 1, t(2) = 4.3027 -> 4.3027 / sqrt(3).
        let s = summarize(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.mean, 2.0);
        assert!((s.ci95.unwrap() - 4.302_653 / 3f64.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn one_value_has_no_interval_and_equal_values_zero() {
        assert_eq!(summarize(&[5.0]).unwrap().ci95, None);
        assert_eq!(summarize(&[5.0, 5.0]).unwrap().ci95, Some(0.0));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn large_df_approaches_normal() {
        assert!((t975(31) - 2.039_513).abs() < 1e-4);
        assert!((t975(120) - 1.979_930).abs() < 1e-4);
        assert!((t975(100_000) - 1.959_964).abs() < 1e-4);
    }

    #[test]
    fn the_display_keeps_two_significant_digits_of_the_interval() {
        let s = |mean, h| Summary {
            n: 5,
            mean,
            ci95: Some(h),
        };
        assert_eq!(s(40.951, 1.473).display(3), "41.0 ± 1.5");
        assert_eq!(s(0.03612, 0.00049).display(3), "0.03612 ± 0.00049");
        assert_eq!(s(2109.7, 80.3).display(1), "2110 ± 80");
        assert_eq!(s(2_494_148.0, 93_258.0).display(1), "2494000 ± 93000");
        assert_eq!(s(0.030_000_000_9, 3.8e-12).display(3), "0.030 ± 0");
        assert_eq!(s(7.25, 0.0).display(3), "7.250 ± 0");
        let one = Summary {
            n: 1,
            mean: 7.25,
            ci95: None,
        };
        assert_eq!(one.display(3), "7.250");
        assert_eq!(s(-2.844, 0.91).display_signed(3), "-2.84 ± 0.91");
        assert_eq!(s(150.2, 48.0).display_signed(1), "+150 ± 48");
        assert_eq!(half_width_text(61.19), "61");
        assert_eq!(half_width_text(1473.0), "1500");
        assert_eq!(half_width_text(0.2213), "0.22");
    }

    #[test]
    fn a_paired_difference_cancels_shared_noise() {
        // Each seed moves both runs alike; the change is +1 on every seed.
        let before = [10.0, 14.0, 9.0, 12.0];
        let after = [11.0, 15.0, 10.0, 13.0];
        let d = paired_difference(&before, &after).unwrap();
        assert_eq!((d.mean, d.ci95), (1.0, Some(0.0)));
        assert!(d.excludes_zero());
        // Unpaired, the same values are noise: the intervals overlap.
        let (b, a) = (summarize(&before).unwrap(), summarize(&after).unwrap());
        assert!(!distinct(&b, &a));
        assert!(paired_difference(&before, &after[..3]).is_none());
    }

    #[test]
    fn a_difference_inside_its_interval_is_not_resolved() {
        let d = summarize(&[-1.0, 2.0, 0.5]).unwrap(); // mean 0.5, interval about ±3.7
        assert!(!d.excludes_zero());
        assert!(!summarize(&[3.0]).unwrap().excludes_zero());
        let far = Summary {
            n: 3,
            mean: 10.0,
            ci95: Some(1.0),
        };
        let near = Summary { mean: 7.0, ..far };
        assert!(distinct(&far, &near)); // 3 > sqrt(2)
        assert!(!distinct(&far, &Summary { mean: 8.8, ..far })); // 1.2 < 1.41
    }
}
