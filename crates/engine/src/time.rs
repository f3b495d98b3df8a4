//! Simulated time: integer nanoseconds, so event order never depends on float rounding.

use std::fmt;
use std::ops::{Add, Sub};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The far future (never reached).
    pub const NEVER: SimTime = SimTime(u64::MAX);

    /// From seconds, rounded to the nearest nanosecond (negative clamps to zero).
    pub fn from_secs(s: f64) -> SimTime {
        SimTime(secs_to_nanos(s))
    }

    /// As seconds.
    pub fn as_secs(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Nanoseconds.
    pub fn nanos(self) -> u64 {
        self.0
    }
}

/// 2^63: the floats below it convert to `i64` exactly as to `u64` (and the signed
/// conversions are one instruction each way on x86-64).
pub(crate) const I64_RANGE: f64 = 9_223_372_036_854_775_808.0;

/// Seconds to whole nanoseconds, rounding to nearest and saturating.
#[inline]
pub fn secs_to_nanos(s: f64) -> u64 {
    if s <= 0.0 || s.is_nan() {
        0
    } else if s >= u64::MAX as f64 * 1e-9 {
        u64::MAX
    } else {
        // Round half away from zero, as f64::round, without a libm call: the fraction
        // x - trunc(x) of a non-negative float is exact.
        let x = s * 1e9;
        if x < I64_RANGE {
            // The signed conversions are one instruction each way on x86-64 (the
            // unsigned ones several), and give the same integers in this range.
            let t = x as i64;
            return if x - t as f64 >= 0.5 {
                t as u64 + 1
            } else {
                t as u64
            };
        }
        let t = x as u64;
        if x - t as f64 >= 0.5 { t + 1 } else { t }
    }
}

/// Nanoseconds `x` rounded up: `x.ceil() as u64` for x >= 0 (and the same saturation for huge, infinite or NaN x),
/// without a libm call: below 2^53 the truncation is exact, and above it every float is
/// already an integer.
#[inline]
pub(crate) fn ceil_to_u64(x: f64) -> u64 {
    if (0.0..I64_RANGE).contains(&x) {
        // The signed conversions are one instruction each way on x86-64 (the unsigned
        // ones several), and give the same integers in this range.
        let t = x as i64;
        return if (t as f64) < x {
            t as u64 + 1
        } else {
            t as u64
        };
    }
    let t = x as u64;
    if (t as f64) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

impl Add<u64> for SimTime {
    type Output = SimTime;
    fn add(self, ns: u64) -> SimTime {
        SimTime(self.0.saturating_add(ns))
    }
}

impl Sub for SimTime {
    type Output = u64;
    fn sub(self, other: SimTime) -> u64 {
        self.0 - other.0
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secs_to_nanos_rounds_exactly_as_f64_round() {
        let reference = |s: f64| {
            if s <= 0.0 || s.is_nan() {
                0
            } else if s >= u64::MAX as f64 * 1e-9 {
                u64::MAX
            } else {
                (s * 1e9).round() as u64
            }
        };
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut samples = vec![0.0, -1.0, f64::NAN, f64::INFINITY, 0.5e-9, 1.5e-9, 2.5e-9];
        samples.extend([
            f64::from_bits(0.5e-9f64.to_bits() - 1),
            (2f64.powi(52) + 0.5) * 1e-9,
            1.8e10,
            // Either side of 2^63 ns, where the signed shortcut stops.
            2f64.powi(63) * 1e-9,
            f64::from_bits((2f64.powi(63) * 1e-9).to_bits() - 1),
            f64::from_bits((2f64.powi(63) * 1e-9).to_bits() + 1),
            1.2e10,
        ]);
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Spread over many magnitudes, including exact half-nanoseconds.
            let mantissa = (x >> 11) as f64 / (1u64 << 53) as f64;
            let scale = 10f64.powi((x % 23) as i32 - 12);
            samples.push(mantissa * scale);
            samples.push((x % 1_000_000) as f64 * 1e-9 + 0.5e-9);
        }
        for s in samples {
            assert_eq!(secs_to_nanos(s), reference(s), "s = {s:e}");
        }
    }

    #[test]
    fn ceil_to_u64_matches_f64_ceil() {
        let mut samples = vec![0.0, 0.3, 1.0, 1.000_000_000_000_000_2, 2f64.powi(53) - 0.5];
        samples.extend([2f64.powi(53), 2f64.powi(64), 1e300, f64::INFINITY, f64::NAN]);
        // Either side of 2^63, where the signed shortcut stops, and below zero.
        let two63 = 2f64.powi(63);
        samples.extend([two63, f64::from_bits(two63.to_bits() - 1), two63 * 1.5]);
        samples.extend([-0.0, -0.3, -1.0, -2.5, f64::NEG_INFINITY]);
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mantissa = (x >> 11) as f64 / (1u64 << 53) as f64;
            samples.push(mantissa * 10f64.powi((x % 25) as i32 - 5));
        }
        for v in samples {
            assert_eq!(ceil_to_u64(v), v.ceil() as u64, "v = {v:e}");
        }
    }
}
