//! Why a latency curve or a CPU throughput table was refused: which point, what was
//! wrong, what is allowed.

use std::fmt;

/// The load axis of a latency curve, as its errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadAxis {
    /// Achieved utilisation, in 0..=1.
    Utilisation,
    /// Offered load (demand / capacity), 0 or more.
    OfferedLoad,
}

impl fmt::Display for LoadAxis {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            LoadAxis::Utilisation => "utilisation",
            LoadAxis::OfferedLoad => "offered load",
        })
    }
}

/// A latency curve that cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error("needs at least one ({axis}, ns) point")]
    NoPoints { axis: LoadAxis },
    #[error("point {point}: utilisation {value} is outside 0..=1")]
    UtilisationOutOfRange { point: usize, value: f64 },
    #[error("point {point}: offered load {value} must be finite and >= 0")]
    OfferedLoadOutOfRange { point: usize, value: f64 },
    #[error("point {point}: latency {ns} ns must be positive")]
    LatencyNotPositive { point: usize, ns: f64 },
    #[error("point {point}: {axis} {value} must be greater than the previous point's")]
    NotRising {
        point: usize,
        axis: LoadAxis,
        value: f64,
    },
    #[error("the mix with write fraction {write_frac} is on another load axis than the base curve")]
    MixOnAnotherAxis { write_frac: f64 },
    #[error("write fraction {0} is outside 0..=1")]
    WriteFracOutOfRange(f64),
    #[error("two mixes have the same write fraction")]
    SameWriteFrac,
    #[error(
        "page factors ({idle}, {loaded}) must be finite and >= 1 (4 KiB pages are never faster)"
    )]
    PageFactor { idle: f64, loaded: f64 },
}

/// A per-core throughput table that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CpuThroughputError {
    #[error("physical_cores and threads_per_core must be >= 1")]
    NoCores,
    #[error("smt_yield {smt_yield} must be between 1 and threads_per_core ({threads_per_core})")]
    SmtYield {
        smt_yield: f64,
        threads_per_core: u32,
    },
    #[error("per_core needs at least one (active cores, relative) point")]
    NoPoints,
    #[error("point {point}: ({cores}, {relative}) needs active cores >= 1 and relative > 0")]
    BadPoint {
        point: usize,
        cores: f64,
        relative: f64,
    },
    #[error("point {point}: active cores must rise")]
    CoresNotRising { point: usize },
}

#[cfg(test)]
mod tests {
    use crate::model::{CpuThroughput, LatencyCurve};

    #[test]
    fn refusals_name_the_point_and_what_is_allowed() {
        let e = LatencyCurve::new(vec![(0.0, 100.0), (0.0, 120.0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "point 1: utilisation 0 must be greater than the previous point's"
        );
        let e = LatencyCurve::offered(vec![]).unwrap_err();
        assert_eq!(e.to_string(), "needs at least one (offered load, ns) point");
        let e = LatencyCurve::flat().with_page_factor(0.5, 1.0).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("page factors (0.5, 1) must be finite and >= 1")
        );
        let cpu = CpuThroughput {
            physical_cores: 4,
            threads_per_core: 1,
            smt_yield: 1.0,
            per_core: vec![(1.0, 1.0), (1.0, 0.9)],
        };
        assert_eq!(
            cpu.validate().unwrap_err().to_string(),
            "point 1: active cores must rise"
        );
    }
}
