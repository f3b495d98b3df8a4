//! Mean and 95% confidence interval of a handful of replicate values (Student t).

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
}
