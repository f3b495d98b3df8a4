//! A stage's duration: seconds as written (`duration_s`) or a distribution
//! (`duration = { dist = ... }`), its parameters checked against what the distribution
//! takes.

use crate::model::Duration;
use crate::scenario::error::{ErrorKind, ScenarioError};
use crate::scenario::schema::DistSpec;
use crate::scenario::units::{Dim, Qty};
use crate::scenario::values::positive;

use super::StageCx;

impl StageCx<'_> {
    /// Seconds as written (a number or a time string such as "300 ms"), never negative.
    pub(super) fn seconds(&self, q: &Qty, field: &str) -> Result<f64, ScenarioError> {
        q.to_base(Dim::Time, 1.0).map_err(|m| {
            let m = m.replace("a time must be >= 0", "durations must be >= 0 seconds");
            self.err(ErrorKind::Value, field, m)
        })
    }

    /// The distribution is one bwsim knows, and its table gives exactly the parameters
    /// it takes.
    fn check_dist_params(&self, d: &DistSpec) -> Result<(), ScenarioError> {
        let field = |f: &str| format!("duration.{f}");
        let fields: [(&str, bool); 8] = [
            ("value_s", d.value_s.is_some()),
            ("mean_s", d.mean_s.is_some()),
            ("std_s", d.std_s.is_some()),
            ("min_s", d.min_s.is_some()),
            ("max_s", d.max_s.is_some()),
            ("scale_s", d.scale_s.is_some()),
            ("shape", d.shape.is_some()),
            ("k", d.k.is_some()),
        ];
        let needs: &[&str] = match d.dist.as_str() {
            "fixed" => &["value_s"],
            "exponential" => &["mean_s"],
            "normal" | "lognormal" => &["mean_s", "std_s"],
            "uniform" => &["min_s", "max_s"],
            "gamma" => &["shape", "scale_s"],
            "erlang" => &["k", "mean_s"],
            "weibull" => &["scale_s", "shape"],
            other => {
                return Err(self.err(
                    ErrorKind::Value,
                    "duration.dist",
                    format!("{other:?} is not a distribution; use fixed, exponential, normal, lognormal, uniform, gamma, erlang or weibull"),
                ));
            }
        };
        for (f, present) in fields {
            if present && !needs.contains(&f) {
                return Err(self.err(
                    ErrorKind::UnknownKey,
                    &field(f),
                    format!(
                        "not used by dist = {:?}, which takes {}",
                        d.dist,
                        needs.join(", ")
                    ),
                ));
            }
        }
        for f in needs {
            if !fields.iter().any(|(n, p)| n == f && *p) {
                return Err(self.err(
                    ErrorKind::MissingKey,
                    &field(f),
                    format!("missing; dist = {:?} takes {}", d.dist, needs.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// A distribution's parameters, each checked (durations in seconds, positive where
    /// the distribution needs it).
    pub(super) fn dist(&self, d: &DistSpec) -> Result<Duration, ScenarioError> {
        let field = |f: &str| format!("duration.{f}");
        self.check_dist_params(d)?;
        let s =
            |q: &Option<Qty>, f: &str| self.seconds(q.as_ref().expect("checked above"), &field(f));
        let pos_s = |q: &Option<Qty>, f: &str| -> Result<f64, ScenarioError> {
            let v = s(q, f)?;
            if v <= 0.0 {
                return Err(self.err(
                    ErrorKind::Value,
                    &field(f),
                    format!("{v} is not allowed; it must be > 0 seconds"),
                ));
            }
            Ok(v)
        };
        let shape = || {
            positive(
                d.shape.unwrap_or(0.0),
                &self.k(&field("shape")),
                "the shape",
                self.loc,
            )
        };
        Ok(match d.dist.as_str() {
            "fixed" => Duration::Fixed(s(&d.value_s, "value_s")?),
            "exponential" => Duration::Exponential {
                mean_s: pos_s(&d.mean_s, "mean_s")?,
            },
            "normal" => Duration::Normal {
                mean_s: s(&d.mean_s, "mean_s")?,
                std_s: s(&d.std_s, "std_s")?,
            },
            "lognormal" => {
                let (mean_s, std_s) = (pos_s(&d.mean_s, "mean_s")?, s(&d.std_s, "std_s")?);
                // The log-space sigma is sqrt(ln(1 + (std/mean)^2)): it must be finite.
                if !(std_s / mean_s).powi(2).is_finite() {
                    return Err(self.err(
                        ErrorKind::Value,
                        &field("std_s"),
                        format!("{std_s} is too large for mean_s = {mean_s}; a log-normal needs std_s / mean_s below 1e150"),
                    ));
                }
                Duration::LogNormal { mean_s, std_s }
            }
            "uniform" => {
                let (lo, hi) = (s(&d.min_s, "min_s")?, s(&d.max_s, "max_s")?);
                if lo > hi {
                    return Err(self.err(
                        ErrorKind::Value,
                        &field("max_s"),
                        format!("{hi} is below min_s = {lo}; need min_s <= max_s"),
                    ));
                }
                Duration::Uniform {
                    min_s: lo,
                    max_s: hi,
                }
            }
            "gamma" => Duration::Gamma {
                shape: shape()?,
                scale_s: pos_s(&d.scale_s, "scale_s")?,
            },
            "erlang" => {
                let k = d.k.unwrap_or(0);
                if k == 0 {
                    return Err(self.err(
                        ErrorKind::Value,
                        &field("k"),
                        "0 phases; Erlang needs k >= 1",
                    ));
                }
                Duration::Erlang {
                    k,
                    mean_s: pos_s(&d.mean_s, "mean_s")?,
                }
            }
            _ => Duration::Weibull {
                scale_s: pos_s(&d.scale_s, "scale_s")?,
                shape: shape()?,
            },
        })
    }
}
