//! `[hardware.gpu.cpu_load]`: how much longer each GPU kernel takes next to busy CPU
//! threads, as `bwsim calibrate` measures it, and the curve a stage's
//! `gpu_kernel_kind` takes from it.

use crate::scenario::error::{ErrorKind, Locator, ScenarioError};
use crate::scenario::replay_info::KernelKind;
use crate::scenario::schema::CpuLoadSpec;

const KEY: &str = "hardware.gpu.cpu_load";

/// The measured curves: kernel time next to k busy threads per CPU over its time alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelCpuLoad {
    /// Busy threads per CPU of each point, strictly rising from 0 or more.
    busy_per_cpu: Vec<f64>,
    /// Each measured kernel and its stretch at each point.
    curves: Vec<(KernelKind, Vec<f64>)>,
}

impl KernelCpuLoad {
    /// Reads and checks the table (none: no kernel stretches).
    pub fn from_spec(spec: Option<&CpuLoadSpec>, loc: &Locator) -> Result<Self, ScenarioError> {
        let Some(spec) = spec else {
            return Ok(Self::default());
        };
        let err = |key: String, msg: String| loc.error(ErrorKind::Value, &key, msg);
        let xs = &spec.busy_per_cpu;
        let rising = xs.windows(2).all(|w| w[0] < w[1]);
        if xs.is_empty() || !rising || xs.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(err(
                format!("{KEY}.busy_per_cpu"),
                format!(
                    "{xs:?}: must be busy threads per CPU, finite, >= 0 and strictly rising, at least one point"
                ),
            ));
        }
        let mut curves = Vec::with_capacity(spec.kernels.len());
        for (name, ys) in &spec.kernels {
            let key = format!("{KEY}.kernels.{name:?}");
            let kind = match KernelKind::parse(name) {
                Ok(k @ (KernelKind::Msm { .. } | KernelKind::Ntt { .. })) => k,
                Ok(KernelKind::Spin) => {
                    return Err(err(key, "a curve is for an msm or ntt kernel".into()));
                }
                Err(m) => return Err(err(key, m.to_string())),
            };
            if ys.len() != xs.len() || ys.iter().any(|y| !y.is_finite() || *y <= 0.0) {
                return Err(err(
                    key,
                    format!(
                        "{ys:?}: must give one stretch (time / time alone, finite, > 0) per busy_per_cpu point ({} points)",
                        xs.len()
                    ),
                ));
            }
            curves.push((kind, ys.clone()));
        }
        Ok(Self {
            busy_per_cpu: xs.clone(),
            curves,
        })
    }

    /// The curve for `kind`: the measured kernel of its family nearest in size (the
    /// smaller on a tie), as (busy threads per CPU, stretch) points; None when its
    /// family was not measured or it is a spin kernel.
    pub fn curve(&self, kind: KernelKind) -> Option<Vec<(f64, f64)>> {
        let (family, lg) = family_and_lg(kind)?;
        let (_, ys) = (self.curves.iter())
            .filter_map(|(k, ys)| {
                let (f, l) = family_and_lg(*k)?;
                (f == family).then_some((l.abs_diff(lg), l, ys))
            })
            .min_by_key(|&(d, l, _)| (d, l))
            .map(|(_, l, ys)| (l, ys))?;
        Some(
            self.busy_per_cpu
                .iter()
                .copied()
                .zip(ys.iter().copied())
                .collect(),
        )
    }
}

fn family_and_lg(kind: KernelKind) -> Option<(&'static str, u32)> {
    match kind {
        KernelKind::Msm { lg } => Some(("msm", lg)),
        KernelKind::Ntt { lg } => Some(("ntt", lg)),
        KernelKind::Spin => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn loc() -> Locator {
        Locator {
            root: PathBuf::from("s.toml"),
            ..Default::default()
        }
    }

    fn spec(xs: &[f64], kernels: &[(&str, &[f64])]) -> CpuLoadSpec {
        CpuLoadSpec {
            busy_per_cpu: xs.to_vec(),
            kernels: (kernels.iter())
                .map(|(k, ys)| (k.to_string(), ys.to_vec()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn a_kernel_takes_the_nearest_measured_size_of_its_family() {
        let s = spec(
            &[0.0, 1.0],
            &[
                ("msm:20", &[1.0, 2.0]),
                ("msm:24", &[1.0, 1.2]),
                ("ntt:22", &[1.0, 1.1]),
            ],
        );
        let t = KernelCpuLoad::from_spec(Some(&s), &loc()).unwrap();
        assert_eq!(
            t.curve(KernelKind::Msm { lg: 21 }),
            Some(vec![(0.0, 1.0), (1.0, 2.0)])
        );
        assert_eq!(
            t.curve(KernelKind::Msm { lg: 23 }),
            Some(vec![(0.0, 1.0), (1.0, 1.2)])
        );
        // A tie takes the smaller size.
        assert_eq!(
            t.curve(KernelKind::Msm { lg: 22 }),
            Some(vec![(0.0, 1.0), (1.0, 2.0)])
        );
        assert_eq!(
            t.curve(KernelKind::Ntt { lg: 27 }),
            Some(vec![(0.0, 1.0), (1.0, 1.1)])
        );
        assert_eq!(t.curve(KernelKind::Spin), None);
        let none = KernelCpuLoad::from_spec(None, &loc()).unwrap();
        assert_eq!(none.curve(KernelKind::Msm { lg: 20 }), None);
    }

    #[test]
    fn bad_tables_name_the_key_and_what_is_allowed() {
        let cases: [(CpuLoadSpec, &str); 4] = [
            (spec(&[0.5, 0.25], &[]), "busy_per_cpu"),
            (spec(&[0.0, 1.0], &[("msm:20", &[1.0])]), "one stretch"),
            (
                spec(&[0.0, 1.0], &[("fft:20", &[1.0, 1.0])]),
                "not a kernel",
            ),
            (spec(&[0.0, 1.0], &[("spin", &[1.0, 1.0])]), "msm or ntt"),
        ];
        for (s, want) in cases {
            let e = KernelCpuLoad::from_spec(Some(&s), &loc())
                .unwrap_err()
                .to_string();
            assert!(e.contains(KEY) && e.contains(want), "{e}");
        }
    }
}
