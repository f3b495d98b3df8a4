//! `[hardware.gpu.cpu_load]`: how much longer each GPU kernel takes next to busy CPU
//! threads, as `bwsim calibrate` measures it (next to spinning threads, and where
//! measured next to streaming and chasing ones), and the curve a stage's
//! `gpu_kernel_kind` takes from it.

use bwsim_engine::model::{NeighbourRatios, stretch_at};

use crate::scenario::error::{ErrorKind, Locator, ScenarioError};
use crate::scenario::replay_info::KernelKind;
use crate::scenario::schema::{CpuLoadSpec, NeighbourCurvesSpec};

const KEY: &str = "hardware.gpu.cpu_load";

/// The measured curves: kernel time next to k busy threads per CPU over its time alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelCpuLoad {
    /// Next to spinning threads: the curve every kernel stage reads.
    spinning: Curves,
    /// Each kernel measured for it: the CPUs its host side keeps busy while it runs.
    threads: Vec<(KernelKind, f64)>,
    /// Next to streaming and to chasing threads (empty: not measured).
    streaming: Curves,
    chasing: Curves,
}

/// One table of curves over the same busy levels.
#[derive(Debug, Clone, Default, PartialEq)]
struct Curves {
    /// Busy threads per CPU of each point, strictly rising from 0 or more.
    busy_per_cpu: Vec<f64>,
    /// Each measured kernel and its stretch at each point.
    curves: Vec<(KernelKind, Vec<f64>)>,
}

impl Curves {
    fn read(
        key: &str,
        xs: &[f64],
        kernels: &std::collections::BTreeMap<String, Vec<f64>>,
        loc: &Locator,
    ) -> Result<Self, ScenarioError> {
        let rising = xs.windows(2).all(|w| w[0] < w[1]);
        if xs.is_empty() || !rising || xs.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(loc.error(
                ErrorKind::Value,
                &format!("{key}.busy_per_cpu"),
                format!(
                    "{xs:?}: must be busy threads per CPU, finite, >= 0 and strictly rising, at least one point"
                ),
            ));
        }
        let mut curves = Vec::with_capacity(kernels.len());
        for (name, ys) in kernels {
            let key = format!("{key}.kernels.{name:?}");
            let kind = curve_kind(&key, name, loc)?;
            if ys.len() != xs.len() || ys.iter().any(|y| !y.is_finite() || *y <= 0.0) {
                return Err(loc.error(
                    ErrorKind::Value,
                    &key,
                    format!(
                        "{ys:?}: must give one stretch (time / time alone, finite, > 0) per busy_per_cpu point ({} points)",
                        xs.len()
                    ),
                ));
            }
            curves.push((kind, ys.clone()));
        }
        Ok(Self {
            busy_per_cpu: xs.to_vec(),
            curves,
        })
    }

    fn read_neighbours(
        key: &str,
        spec: Option<&NeighbourCurvesSpec>,
        loc: &Locator,
    ) -> Result<Self, ScenarioError> {
        spec.map_or(Ok(Self::default()), |n| {
            Self::read(key, &n.busy_per_cpu, &n.kernels, loc)
        })
    }

    /// `kernel`'s measured curve as points, if this table has it.
    fn of(&self, kernel: KernelKind) -> Option<Vec<(f64, f64)>> {
        let (_, ys) = self.curves.iter().find(|(k, _)| *k == kernel)?;
        Some(
            self.busy_per_cpu
                .iter()
                .copied()
                .zip(ys.iter().copied())
                .collect(),
        )
    }
}

/// The kind of a curve's kernel: an msm or ntt size.
fn curve_kind(key: &str, name: &str, loc: &Locator) -> Result<KernelKind, ScenarioError> {
    let err = |msg: String| loc.error(ErrorKind::Value, key, msg);
    match KernelKind::parse(name) {
        Ok(k @ (KernelKind::Msm { .. } | KernelKind::Ntt { .. })) => Ok(k),
        Ok(KernelKind::Spin) => Err(err("a curve is for an msm or ntt kernel".into())),
        Err(m) => Err(err(m.to_string())),
    }
}

/// What a kernel stage takes from the table: its stretch curve, the CPUs its host
/// side keeps busy (0 when not measured), and how that stretch differs by neighbour kind.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelLoad {
    /// (busy threads per CPU, stretch) points.
    pub stretch: Vec<(f64, f64)>,
    /// Runnable threads it adds to the pools while it runs.
    pub threads: f64,
    /// Its excess over 1 next to streaming or chasing threads over its excess next to
    /// spinning ones, at each of their measured points.
    pub by_neighbour: NeighbourRatios,
}

/// Below this excess next to spinning threads a ratio is noise over noise (calibrate's
/// passes differ by 5-12%): read as 1.
const RATIO_FLOOR_EXCESS: f64 = 0.10;

/// No ratio beyond this: a neighbour kind that stretches a kernel more than this many
/// times its spinning excess is a reading to distrust, not to extrapolate.
const RATIO_MAX: f64 = 4.0;

impl KernelCpuLoad {
    /// Reads and checks the table (none: no kernel stretches).
    pub fn from_spec(spec: Option<&CpuLoadSpec>, loc: &Locator) -> Result<Self, ScenarioError> {
        let Some(spec) = spec else {
            return Ok(Self::default());
        };
        let spinning = Curves::read(KEY, &spec.busy_per_cpu, &spec.kernels, loc)?;
        let mut threads = Vec::with_capacity(spec.threads.len());
        for (name, &t) in &spec.threads {
            let key = format!("{KEY}.threads.{name:?}");
            let kind = curve_kind(&key, name, loc)?;
            if !t.is_finite() || !(0.0..=MAX_THREADS).contains(&t) {
                return Err(loc.error(
                    ErrorKind::Value,
                    &key,
                    format!(
                        "{t}: must be the CPUs the kernel's host side keeps busy, finite, 0 to {MAX_THREADS}"
                    ),
                ));
            }
            threads.push((kind, t));
        }
        let streaming = Curves::read_neighbours(
            &format!("{KEY}.next_to_streaming"),
            spec.next_to_streaming.as_ref(),
            loc,
        )?;
        let chasing = Curves::read_neighbours(
            &format!("{KEY}.next_to_chasing"),
            spec.next_to_chasing.as_ref(),
            loc,
        )?;
        Ok(Self {
            spinning,
            threads,
            streaming,
            chasing,
        })
    }

    /// What a stage of `kind` takes: the measured kernel of its family nearest in size
    /// (the smaller on a tie), its curve as (busy threads per CPU, stretch) points, the
    /// CPUs it keeps busy, and that same kernel's ratios next to streaming and chasing
    /// threads where they were measured; None when its family was not measured or it is
    /// a spin kernel.
    pub fn load(&self, kind: KernelKind) -> Option<KernelLoad> {
        let (k, _) = nearest(&self.spinning.curves, kind)?;
        let stretch = self.spinning.of(k)?;
        let threads = (self.threads.iter())
            .find(|(t, _)| *t == k)
            .map_or(0.0, |&(_, t)| t);
        let ratios = |other: &Curves| -> Vec<(f64, f64)> {
            (other.of(k).unwrap_or_default().into_iter())
                .map(|(x, y)| (x, excess_ratio(y, stretch_at(&stretch, x))))
                .collect()
        };
        Some(KernelLoad {
            by_neighbour: NeighbourRatios {
                streaming: ratios(&self.streaming),
                chasing: ratios(&self.chasing),
            },
            stretch,
            threads,
        })
    }

    /// The stretch curve alone (see [`KernelCpuLoad::load`]).
    pub fn curve(&self, kind: KernelKind) -> Option<Vec<(f64, f64)>> {
        self.load(kind).map(|l| l.stretch)
    }
}

/// `other`'s excess over 1 over `spinning`'s, within [0, RATIO_MAX]; 1 where the
/// spinning excess is too small to divide by.
fn excess_ratio(other: f64, spinning: f64) -> f64 {
    if spinning - 1.0 < RATIO_FLOOR_EXCESS {
        return 1.0;
    }
    ((other - 1.0) / (spinning - 1.0)).clamp(0.0, RATIO_MAX)
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
    use crate::scenario::schema::NeighbourCurvesSpec;
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
            next_to_streaming: None,
            next_to_chasing: None,
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
    fn neighbour_curves_become_ratios_of_the_same_kernels_excess_next_to_spinning() {
        let mut s = spec(
            &[0.0, 0.5, 1.0],
            &[("msm:20", &[1.0, 1.5, 2.0]), ("msm:24", &[1.0, 1.01, 1.3])],
        );
        s.next_to_chasing = Some(NeighbourCurvesSpec {
            busy_per_cpu: vec![0.0, 0.25, 1.0],
            kernels: BTreeMap::from([
                ("msm:20".to_string(), vec![1.0, 1.05, 1.9]),
                ("msm:24".to_string(), vec![1.0, 1.2, 2.5]),
            ]),
        });
        let t = KernelCpuLoad::from_spec(Some(&s), &loc()).unwrap();
        let l = t.load(KernelKind::Msm { lg: 21 }).unwrap();
        // At 0.25 spinning reads 1.25: 0.05 / 0.25 = 0.2; at 1, 0.9 / 1.0.
        let want = [(0.0, 1.0), (0.25, 0.2), (1.0, 0.9)];
        for ((x, r), (wx, wr)) in l.by_neighbour.chasing.iter().zip(want) {
            assert_eq!(*x, wx);
            assert!((r - wr).abs() < 1e-12, "{:?}", l.by_neighbour);
        }
        assert!(l.by_neighbour.streaming.is_empty());
        // Where msm:24 barely stretches next to spinning threads its ratio reads 1 (that
        // excess is noise); elsewhere never above the cap.
        let big = t
            .load(KernelKind::Msm { lg: 24 })
            .unwrap()
            .by_neighbour
            .chasing;
        assert_eq!(big, vec![(0.0, 1.0), (0.25, 1.0), (1.0, RATIO_MAX)]);
        // A bad neighbour table names its own key.
        s.next_to_chasing.as_mut().unwrap().busy_per_cpu = vec![1.0, 0.5, 0.0];
        let e = KernelCpuLoad::from_spec(Some(&s), &loc())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("hardware.gpu.cpu_load.next_to_chasing.busy_per_cpu"),
            "{e}"
        );
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
