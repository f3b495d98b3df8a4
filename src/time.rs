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

/// Seconds to whole nanoseconds, rounding to nearest and saturating.
pub fn secs_to_nanos(s: f64) -> u64 {
    if s <= 0.0 || s.is_nan() {
        0
    } else if s >= u64::MAX as f64 * 1e-9 {
        u64::MAX
    } else {
        (s * 1e9).round() as u64
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
