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
    /// Each kernel measured for it: the CPUs its host side keeps busy while it runs.
    threads: Vec<(KernelKind, f64)>,
}

/// What a kernel stage takes from the table: its stretch curve, and the CPUs its host
/// side keeps busy (0 when not measured).
#[derive(Debug, Clone, PartialEq)]
pub struct KernelLoad {
    /// (busy threads per CPU, stretch) points.
    pub stretch: Vec<(f64, f64)>,
    /// Runnable threads it adds to the pools while it runs.
    pub threads: f64,
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
        let kind_of = |key: &str, name: &str| match KernelKind::parse(name) {
            Ok(k @ (KernelKind::Msm { .. } | KernelKind::Ntt { .. })) => Ok(k),
            Ok(KernelKind::Spin) => Err(err(
                key.to_string(),
                "a curve is for an msm or ntt kernel".into(),
            )),
            Err(m) => Err(err(key.to_string(), m.to_string())),
        };
        let mut curves = Vec::with_capacity(spec.kernels.len());
        for (name, ys) in &spec.kernels {
            let key = format!("{KEY}.kernels.{name:?}");
            let kind = kind_of(&key, name)?;
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
        let mut threads = Vec::with_capacity(spec.threads.len());
        for (name, &t) in &spec.threads {
            let key = format!("{KEY}.threads.{name:?}");
            let kind = kind_of(&key, name)?;
            if !t.is_finite() || !(0.0..=MAX_THREADS).contains(&t) {
                return Err(err(
                    key,
                    format!(
                        "{t}: must be the CPUs the kernel's host side keeps busy, finite, 0 to {MAX_THREADS}"
                    ),
                ));
            }
            threads.push((kind, t));
        }
        Ok(Self {
            busy_per_cpu: xs.clone(),
            curves,
            threads,
        })
    }

    /// What a stage of `kind` takes: the measured kernel of its family nearest in size
    /// (the smaller on a tie), its curve as (busy threads per CPU, stretch) points and
    /// the CPUs it keeps busy; None when its family was not measured or it is a spin
    /// kernel.
    pub fn load(&self, kind: KernelKind) -> Option<KernelLoad> {
        let (k, ys) = nearest(&self.curves, kind)?;
        let threads = (self.threads.iter())
            .find(|(t, _)| *t == k)
            .map_or(0.0, |&(_, t)| t);
        Some(KernelLoad {
            stretch: self
                .busy_per_cpu
                .iter()
                .copied()
                .zip(ys.iter().copied())
                .collect(),
            threads,
        })
    }

    /// The stretch curve alone (see [`KernelCpuLoad::load`]).
    pub fn curve(&self, kind: KernelKind) -> Option<Vec<(f64, f64)>> {
        self.load(kind).map(|l| l.stretch)
    }
}

/// No host has more CPUs than this; a larger reading is corrupt.
const MAX_THREADS: f64 = 4096.0;

/// The entry of `of` of `kind`'s family nearest to it in size (the smaller on a tie).
fn nearest<T>(of: &[(KernelKind, T)], kind: KernelKind) -> Option<(KernelKind, &T)> {
    let (family, lg) = family_and_lg(kind)?;
    (of.iter())
        .filter_map(|(k, v)| {
            let (f, l) = family_and_lg(*k)?;
            (f == family).then_some((l.abs_diff(lg), l, *k, v))
        })
        .min_by_key(|&(d, l, _, _)| (d, l))
        .map(|(_, _, k, v)| (k, v))
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
            threads: BTreeMap::new(),
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
    fn a_kernel_keeps_busy_the_cpus_measured_for_the_size_whose_curve_it_takes() {
        let mut s = spec(
            &[0.0, 1.0],
            &[
                ("msm:20", &[1.0, 2.0]),
                ("msm:24", &[1.0, 1.2]),
                ("ntt:22", &[1.0, 1.0]),
            ],
        );
        s.threads = BTreeMap::from([("msm:20".to_string(), 5.5), ("msm:24".to_string(), 2.0)]);
        let t = KernelCpuLoad::from_spec(Some(&s), &loc()).unwrap();
        assert_eq!(t.load(KernelKind::Msm { lg: 21 }).unwrap().threads, 5.5);
        assert_eq!(t.load(KernelKind::Msm { lg: 26 }).unwrap().threads, 2.0);
        // Measured curve, no CPU reading: none added.
        assert_eq!(t.load(KernelKind::Ntt { lg: 22 }).unwrap().threads, 0.0);
        for (name, v, want) in [("msm:20", -1.0, "0 to 4096"), ("spin", 1.0, "msm or ntt")] {
            s.threads = BTreeMap::from([(name.to_string(), v)]);
            let e = KernelCpuLoad::from_spec(Some(&s), &loc())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("{KEY}.threads")) && e.contains(want),
                "{e}"
            );
        }
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
