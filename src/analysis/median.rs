//! The median of a handful of values: the one every median in bwsim is (calibrate's fits
//! and spreads, validate's error summary, a replay's repeats and errors).

/// The middle value, or the mean of the two middle ones; None for no values. Values are
/// ordered by `f64::total_cmp` (a NaN sorts to an end instead of failing); a caller that
/// must skip non-finite values drops them first.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn odd_counts_take_the_middle_and_even_counts_the_mean_of_the_two() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[-1.5]), Some(-1.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn a_nan_sorts_to_an_end_instead_of_failing() {
        assert_eq!(median(&[f64::NAN, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 3.0, f64::INFINITY, 4.0]), Some(3.0));
    }
}
