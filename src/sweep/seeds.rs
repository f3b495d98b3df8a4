//! Per-point seeds. Each (point, replicate) gets its own seed, a pure function of the
//! scenario's seed and the indices, so results never depend on thread scheduling or
//! `--jobs`; sweep.json lists them so any run can be replayed with `bwsim run --seed`.

/// SplitMix64's finaliser: a bijective 64-bit mix with good avalanche.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of replicate `replicate` at sweep point `point` for a scenario seeded `base`.
pub fn derive_seed(base: u64, point: usize, replicate: usize) -> u64 {
    mix(mix(base ^ mix(point as u64)) ^ (replicate as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// The seeds of one point.
pub fn point_seeds(base: u64, point: usize, n: usize) -> Vec<u64> {
    (0..n).map(|r| derive_seed(base, point, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn seeds_are_stable_and_distinct() {
        assert_eq!(point_seeds(1, 3, 3), point_seeds(1, 3, 3));
        let all: HashSet<u64> = (0..100)
            .flat_map(|p| point_seeds(1, p, 5))
            .chain(point_seeds(2, 0, 5))
            .collect();
        assert_eq!(all.len(), 505);
    }
}
