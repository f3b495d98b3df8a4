//! Duration sampling: a stage's standalone-time distribution, validated once when the
//! plan is compiled, then sampled from the run's random stream.

use rand_distr::{Distribution, Exp, Gamma, LogNormal, Normal, Uniform, Weibull};
use rand_pcg::Pcg64;

use crate::model::Duration;

/// Why a duration distribution cannot be sampled (the distribution library's own reason).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DistributionError {
    /// Exponential: the rate 1 / mean_s is not positive and finite.
    #[error("{0}")]
    Exponential(rand_distr::ExpError),
    /// Normal or log-normal: the spread is negative or not finite.
    #[error("{0}")]
    Normal(rand_distr::NormalError),
    /// Gamma or Erlang: shape or scale out of range.
    #[error("{0}")]
    Gamma(rand_distr::GammaError),
    /// Weibull: scale or shape out of range.
    #[error("{0}")]
    Weibull(rand_distr::WeibullError),
    /// Uniform: the lower bound lies above the upper one, or one is NaN.
    #[error("min_s {min_s} > max_s {max_s}")]
    UniformBounds { min_s: f64, max_s: f64 },
}

/// Samples a stage's standalone duration, in seconds, never negative: the engine's
/// sampler, which a replay of the same model uses too.
#[derive(Debug, Clone)]
pub struct Sampler(Kind);

#[derive(Debug, Clone)]
enum Kind {
    Fixed(f64),
    Exp(Exp<f64>),
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
    Uniform(Uniform<f64>),
    Gamma(Gamma<f64>),
    Weibull(Weibull<f64>),
}

impl Sampler {
    /// A sampler of `d`, or why its parameters cannot be sampled.
    pub fn new(d: &Duration) -> Result<Self, DistributionError> {
        use DistributionError as E;
        Ok(Self(match *d {
            Duration::Fixed(s) => Kind::Fixed(s),
            Duration::Exponential { mean_s } => {
                Kind::Exp(Exp::new(1.0 / mean_s).map_err(E::Exponential)?)
            }
            Duration::Normal { mean_s, std_s } => {
                Kind::Normal(Normal::new(mean_s, std_s).map_err(E::Normal)?)
            }
            Duration::LogNormal { mean_s, std_s } => {
                // Parameters of the underlying normal that give this mean and spread.
                let sigma2 = (1.0 + (std_s / mean_s).powi(2)).ln();
                let mu = mean_s.ln() - sigma2 / 2.0;
                Kind::LogNormal(LogNormal::new(mu, sigma2.sqrt()).map_err(E::Normal)?)
            }
            Duration::Uniform { min_s, max_s } => {
                if min_s > max_s || min_s.is_nan() || max_s.is_nan() {
                    return Err(E::UniformBounds { min_s, max_s });
                }
                if min_s == max_s {
                    Kind::Fixed(min_s)
                } else {
                    Kind::Uniform(Uniform::new(min_s, max_s))
                }
            }
            Duration::Gamma { shape, scale_s } => {
                Kind::Gamma(Gamma::new(shape, scale_s).map_err(E::Gamma)?)
            }
            Duration::Erlang { k, mean_s } => {
                Kind::Gamma(Gamma::new(k as f64, mean_s / k as f64).map_err(E::Gamma)?)
            }
            Duration::Weibull { scale_s, shape } => {
                Kind::Weibull(Weibull::new(scale_s, shape).map_err(E::Weibull)?)
            }
        }))
    }

    /// One duration, seconds, from `rng`.
    pub fn sample(&self, rng: &mut Pcg64) -> f64 {
        let x = match &self.0 {
            Kind::Fixed(s) => *s,
            Kind::Exp(d) => d.sample(rng),
            Kind::Normal(d) => d.sample(rng),
            Kind::LogNormal(d) => d.sample(rng),
            Kind::Uniform(d) => d.sample(rng),
            Kind::Gamma(d) => d.sample(rng),
            Kind::Weibull(d) => d.sample(rng),
        };
        x.max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn mean_of(d: Duration, n: usize) -> f64 {
        let s = Sampler::new(&d).unwrap();
        let mut rng = Pcg64::seed_from_u64(11);
        (0..n).map(|_| s.sample(&mut rng)).sum::<f64>() / n as f64
    }

    #[test]
    fn fixed_and_degenerate_uniform_are_exact() {
        assert_eq!(mean_of(Duration::Fixed(2.5), 10), 2.5);
        assert_eq!(
            mean_of(
                Duration::Uniform {
                    min_s: 3.0,
                    max_s: 3.0
                },
                10
            ),
            3.0
        );
    }

    #[test]
    fn means_match_the_parameters() {
        let n = 200_000;
        let cases = [
            (Duration::Exponential { mean_s: 2.0 }, 2.0),
            (
                Duration::Normal {
                    mean_s: 5.0,
                    std_s: 0.5,
                },
                5.0,
            ),
            (
                Duration::LogNormal {
                    mean_s: 4.0,
                    std_s: 1.0,
                },
                4.0,
            ),
            (
                Duration::Uniform {
                    min_s: 1.0,
                    max_s: 3.0,
                },
                2.0,
            ),
            (
                Duration::Gamma {
                    shape: 2.0,
                    scale_s: 1.5,
                },
                3.0,
            ),
            (Duration::Erlang { k: 3, mean_s: 6.0 }, 6.0),
        ];
        for (d, want) in cases {
            let got = mean_of(d.clone(), n);
            assert!(
                (got - want).abs() < 0.02 * want,
                "{d:?}: mean {got}, want {want}"
            );
        }
    }

    #[test]
    fn samples_are_never_negative() {
        let s = Sampler::new(&Duration::Normal {
            mean_s: 0.0,
            std_s: 1.0,
        })
        .unwrap();
        let mut rng = Pcg64::seed_from_u64(3);
        assert!((0..10_000).all(|_| s.sample(&mut rng) >= 0.0));
    }

    #[test]
    fn invalid_parameters_are_typed_errors() {
        let bad = Sampler::new(&Duration::Uniform {
            min_s: 2.0,
            max_s: 1.0,
        })
        .err()
        .unwrap();
        assert_eq!(
            bad,
            DistributionError::UniformBounds {
                min_s: 2.0,
                max_s: 1.0
            }
        );
        assert_eq!(bad.to_string(), "min_s 2 > max_s 1");
        assert!(matches!(
            Sampler::new(&Duration::Weibull {
                scale_s: -1.0,
                shape: 1.0
            }),
            Err(DistributionError::Weibull(_))
        ));
        assert!(matches!(
            Sampler::new(&Duration::Gamma {
                shape: -1.0,
                scale_s: 1.0
            }),
            Err(DistributionError::Gamma(_))
        ));
    }
}
