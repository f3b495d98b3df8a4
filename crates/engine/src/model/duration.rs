//! A stage's standalone duration and its distribution.

/// A stage's standalone duration.
#[derive(Debug, Clone, PartialEq)]
pub enum Duration {
    /// Always the same, seconds.
    Fixed(f64),
    /// Exponential with the given mean, seconds.
    Exponential { mean_s: f64 },
    /// Normal, truncated at zero.
    Normal { mean_s: f64, std_s: f64 },
    /// Log-normal with the given mean and standard deviation of the duration itself.
    LogNormal { mean_s: f64, std_s: f64 },
    /// Uniform on [min_s, max_s].
    Uniform { min_s: f64, max_s: f64 },
    /// Gamma with shape k and scale theta (mean k*theta).
    Gamma { shape: f64, scale_s: f64 },
    /// Erlang-k with the given mean (a Gamma with integer shape).
    Erlang { k: u32, mean_s: f64 },
    /// Weibull with scale lambda and shape k.
    Weibull { scale_s: f64, shape: f64 },
}

impl Duration {
    /// Mean of the distribution in seconds.
    pub fn mean_s(&self) -> f64 {
        match *self {
            Duration::Fixed(s) => s,
            Duration::Exponential { mean_s } => mean_s,
            Duration::Normal { mean_s, .. } => mean_s,
            Duration::LogNormal { mean_s, .. } => mean_s,
            Duration::Uniform { min_s, max_s } => (min_s + max_s) / 2.0,
            Duration::Gamma { shape, scale_s } => shape * scale_s,
            Duration::Erlang { mean_s, .. } => mean_s,
            Duration::Weibull { scale_s, shape } => scale_s * gamma_fn(1.0 + 1.0 / shape),
        }
    }
}

/// Lanczos approximation of the Gamma function (for the Weibull mean).
fn gamma_fn(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma_fn(1.0 - x))
    } else {
        let x = x - 1.0;
        let mut a = C[0];
        let t = x + G + 0.5;
        for (i, c) in C.iter().enumerate().skip(1) {
            a += c / (x + i as f64);
        }
        (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weibull_mean_uses_gamma_function() {
        // Weibull(scale 2, shape 1) is exponential with mean 2.
        let d = Duration::Weibull {
            scale_s: 2.0,
            shape: 1.0,
        };
        assert!((d.mean_s() - 2.0).abs() < 1e-9);
    }
}
