//! The cartesian product of swept parameters: every combination is one sweep point.
//! The first parameter varies slowest, so rows group by it (as nested loops would).

use super::spec::Param;
use super::spec_error::SpecError;
use super::value::ParamValue;

/// The most points a grid may have: every point is validated, run and kept in memory.
pub const MAX_POINTS: u64 = 100_000;
/// The most simulations (points x seeds) one sweep may run.
pub const MAX_RUNS: u64 = 1_000_000;

/// The parameters of a sweep and their product.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Swept parameters in the order given; the first is the x axis of plots.
    pub params: Vec<Param>,
}

/// One combination of parameter values.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Position in the grid (row-major, first parameter slowest).
    pub index: usize,
    /// One value per parameter of the grid, in the grid's order.
    pub values: Vec<ParamValue>,
}

impl Grid {
    /// Builds a grid, rejecting a key given twice. No parameters gives one point
    /// (a plain multi-seed run).
    pub fn new(params: Vec<Param>) -> Result<Grid, SpecError> {
        for (i, p) in params.iter().enumerate() {
            if params[..i].iter().any(|q| q.key == p.key) {
                return Err(SpecError::DuplicateKey { key: p.key.clone() });
            }
        }
        let points = params
            .iter()
            .try_fold(1u64, |n, p| n.checked_mul(p.values.len() as u64));
        match points {
            Some(n) if n <= MAX_POINTS => Ok(Grid { params }),
            _ => Err(SpecError::TooLarge {
                what: format!(
                    "the grid's {} points",
                    params
                        .iter()
                        .map(|p| p.values.len().to_string())
                        .collect::<Vec<_>>()
                        .join(" x ")
                ),
                limit: MAX_POINTS,
            }),
        }
    }

    /// Checks that `seeds` replicates of every point stay within [`MAX_RUNS`].
    pub fn check_runs(&self, seeds: usize) -> Result<(), SpecError> {
        let runs = (self.len() as u64).checked_mul(seeds as u64);
        match runs {
            Some(n) if n <= MAX_RUNS => Ok(()),
            _ => Err(SpecError::TooLarge {
                what: format!("{} points x {seeds} seeds", self.len()),
                limit: MAX_RUNS,
            }),
        }
    }

    /// Number of points (the product of the value counts).
    pub fn len(&self) -> usize {
        self.params.iter().map(|p| p.values.len()).product()
    }

    /// True when some parameter has no values (never, for parsed SPECs).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All points, first parameter varying slowest.
    pub fn points(&self) -> Vec<Point> {
        let n = self.len();
        (0..n)
            .map(|index| {
                let mut rest = index;
                let mut values = vec![ParamValue::Int(0); self.params.len()];
                for (k, p) in self.params.iter().enumerate().rev() {
                    values[k] = p.values[rest % p.values.len()].clone();
                    rest /= p.values.len();
                }
                Point { index, values }
            })
            .collect()
    }

    /// The `--set` overrides for a point: `KEY=VALUE` per parameter.
    pub fn sets(&self, point: &Point) -> Vec<String> {
        self.params
            .iter()
            .zip(&point.values)
            .map(|(p, v)| format!("{}={v}", p.key))
            .collect()
    }

    /// The keys, in order.
    pub fn keys(&self) -> Vec<String> {
        self.params.iter().map(|p| p.key.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::spec::parse_param;

    #[test]
    fn one_param_is_a_line() {
        let g = Grid::new(vec![parse_param("a=1..3").unwrap()]).unwrap();
        let sets: Vec<_> = g.points().iter().map(|p| g.sets(p)).collect();
        assert_eq!(sets, [["a=1"], ["a=2"], ["a=3"]]);
    }

    #[test]
    fn two_params_are_a_cartesian_grid_first_slowest() {
        let g = Grid::new(vec![
            parse_param("x=1..3").unwrap(),
            parse_param("y=true,false").unwrap(),
        ])
        .unwrap();
        assert_eq!(g.len(), 6);
        let sets: Vec<String> = g.points().iter().map(|p| g.sets(p).join(" ")).collect();
        assert_eq!(
            sets,
            [
                "x=1 y=true",
                "x=1 y=false",
                "x=2 y=true",
                "x=2 y=false",
                "x=3 y=true",
                "x=3 y=false"
            ]
        );
        let idx: Vec<usize> = g.points().iter().map(|p| p.index).collect();
        assert_eq!(idx, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn no_params_is_one_point() {
        let g = Grid::new(vec![]).unwrap();
        assert_eq!(g.points().len(), 1);
        assert!(g.sets(&g.points()[0]).is_empty());
    }

    #[test]
    fn duplicate_key_is_rejected() {
        let e = Grid::new(vec![
            parse_param("x=1").unwrap(),
            parse_param("x=2").unwrap(),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("'x' is given twice"), "{e}");
    }
}
