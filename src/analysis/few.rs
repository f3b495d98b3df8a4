//! Entry-by-entry work on the per-rate-resource tables the metrics keep (a run has one to
//! a few rate resources): explicit arms for up to four entries, so a report or a record
//! costs a handful of instructions instead of a loop's set-up. Every arm does the same
//! operations on the same entries as the loop it stands for.

/// Whether `a` and `b` hold the same floats, bit for bit (so 0.0 and -0.0 differ, and a
/// NaN equals itself).
#[inline]
pub fn same_bits(a: &[f64], b: &[f64]) -> bool {
    let same = |x: &f64, y: &f64| x.to_bits() == y.to_bits();
    match (a, b) {
        ([a0], [b0]) => same(a0, b0),
        ([a0, a1], [b0, b1]) => same(a0, b0) && same(a1, b1),
        ([a0, a1, a2], [b0, b1, b2]) => same(a0, b0) && same(a1, b1) && same(a2, b2),
        _ => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y)),
    }
}

/// Adds each entry of `add` to the entry of `acc` at the same index (over the shorter
/// of the two, as a zip does).
#[inline]
pub fn add_each(acc: &mut [f64], add: &[f64]) {
    match (acc, add) {
        ([a0], [b0]) => *a0 += b0,
        ([a0, a1], [b0, b1]) => {
            *a0 += b0;
            *a1 += b1;
        }
        ([a0, a1, a2], [b0, b1, b2]) => {
            *a0 += b0;
            *a1 += b1;
            *a2 += b2;
        }
        (acc, add) => {
            for (a, b) in acc.iter_mut().zip(add) {
                *a += b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bits_compares_every_length_bit_for_bit() {
        for len in 0..7 {
            let a: Vec<f64> = (0..len).map(|i| i as f64 * 0.5).collect();
            assert!(same_bits(&a, &a.clone()), "len {len}");
            for i in 0..len {
                let mut b = a.clone();
                b[i] = f64::from_bits(b[i].to_bits() ^ 1);
                assert!(!same_bits(&a, &b), "len {len}, entry {i}");
            }
            let mut longer = a.clone();
            longer.push(0.0);
            assert!(!same_bits(&a, &longer) && !same_bits(&longer, &a));
        }
        assert!(!same_bits(&[0.0], &[-0.0]));
        assert!(same_bits(&[f64::NAN], &[f64::NAN]));
    }

    #[test]
    fn add_each_matches_a_zip_for_every_pair_of_lengths() {
        for n in 0..6 {
            for m in 0..6 {
                let add: Vec<f64> = (0..m).map(|i| 0.1 * (i + 1) as f64).collect();
                let mut ours: Vec<f64> = (0..n).map(|i| 1.0 / (i + 3) as f64).collect();
                let mut zipped = ours.clone();
                add_each(&mut ours, &add);
                for (a, b) in zipped.iter_mut().zip(&add) {
                    *a += b;
                }
                assert_eq!(ours, zipped, "lengths {n} and {m}");
            }
        }
    }
}
