//! Each GPU kernel's time next to busy CPU threads over its time alone
//! (`[hardware.gpu.cpu_load]`), from the probe's passes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::median::median;
use crate::calibrate::measurements::{CpuLoadPoint, Measurements};

/// The fitted curves.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuLoadFit {
    /// Busy threads per CPU of each point, 0 first.
    pub busy_per_cpu: Vec<f64>,
    /// Per kernel (`"msm:20"`), its stretch at each point: the median over passes of its
    /// time over the same pass's time alone, held non-decreasing and at least 1 (more
    /// busy threads cannot speed a kernel up; lower readings are noise).
    pub kernels: BTreeMap<String, Vec<f64>>,
    /// Per kernel, the CPUs its host side keeps busy while it runs alone: the median over
    /// passes of the harness's CPU time over the kernels' wall time (absent when the
    /// harness did not report it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub threads: BTreeMap<String, f64>,
    /// What was measured, per kernel: the stretch at full load and the spread of passes.
    pub notes: Vec<String>,
    /// The MSMs' curves next to threads that stream memory (absent: not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_to_streaming: Option<NeighbourCurves>,
    /// The MSMs' curves next to threads that chase pointers (absent: not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_to_chasing: Option<NeighbourCurves>,
}

/// Kernel stretches next to busy threads of one kind, fitted as the spinning curve is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NeighbourCurves {
    /// Busy threads per CPU of each point, 0 first.
    pub busy_per_cpu: Vec<f64>,
    /// Per kernel, its stretch at each point.
    pub kernels: BTreeMap<String, Vec<f64>>,
}

/// The curves, None when the probe did not run (no GPU, or an older file). The MSMs
/// timed next to streaming or chasing threads give their own curves and a note each
/// (written commented out: the model reads them only when a user switches them on).
pub fn fit_cpu_load(m: &Measurements) -> Option<CpuLoadFit> {
    let mut fit = curves(&m.cpu_load)?;
    fit.next_to_streaming = neighbour_curves(&mut fit, &m.cpu_load_streaming, "streaming memory");
    fit.next_to_chasing = neighbour_curves(&mut fit, &m.cpu_load_chasing, "chasing pointers");
    Some(fit)
}

/// The curves of the MSMs timed next to threads doing `what`, with a note per kernel
/// beside its spinning curve in `fit`; None when they were not measured.
fn neighbour_curves(
    fit: &mut CpuLoadFit,
    points: &[CpuLoadPoint],
    what: &str,
) -> Option<NeighbourCurves> {
    let other = curves(points)?;
    let at = |x: &[f64], y: &[f64]| -> String {
        (x.iter().zip(y))
            .map(|(x, y)| format!("x{y:.2} at {x:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (name, curve) in &other.kernels {
        let spinning = fit.kernels.get(name).map_or(String::new(), |c| {
            format!("; next to spinning threads {}", at(&fit.busy_per_cpu, c))
        });
        fit.notes.push(format!(
            "{name} next to threads {what}: {} threads per CPU{spinning}",
            at(&other.busy_per_cpu, curve)
        ));
    }
    Some(NeighbourCurves {
        busy_per_cpu: other.busy_per_cpu,
        kernels: other.kernels,
    })
}

/// Each kernel's stretch over the busy levels of `points`, with a note per kernel.
fn curves(points: &[CpuLoadPoint]) -> Option<CpuLoadFit> {
    let cpus = points.first()?.cpus;
    let mut levels: Vec<usize> = points.iter().map(|p| p.busy_threads).collect();
    levels.sort_unstable();
    levels.dedup();
    if levels.first() != Some(&0) || levels.len() < 2 || cpus == 0 {
        return None;
    }
    let mut names: Vec<&str> = points.iter().map(|p| p.kernel.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut fit = CpuLoadFit {
        busy_per_cpu: levels.iter().map(|&k| k as f64 / cpus as f64).collect(),
        ..Default::default()
    };
    for name in names {
        let of: Vec<&CpuLoadPoint> = points.iter().filter(|p| p.kernel == name).collect();
        let mut curve = Vec::with_capacity(levels.len());
        let mut widest = 0.0f64;
        for &k in &levels {
            let ratios: Vec<f64> = (of.iter())
                .filter(|p| p.busy_threads == k)
                .filter_map(|p| {
                    let alone = of
                        .iter()
                        .find(|a| a.pass == p.pass && a.busy_threads == 0)?;
                    (alone.ms > 0.0 && p.ms > 0.0).then(|| p.ms / alone.ms)
                })
                .collect();
            if ratios.is_empty() {
                break;
            }
            let (lo, hi) =
                (ratios.iter()).fold((f64::MAX, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
            widest = widest.max(hi / lo - 1.0);
            curve.extend(median(&ratios));
        }
        if curve.len() != levels.len() {
            continue;
        }
        let mut top = 1.0f64;
        for y in &mut curve {
            top = top.max(*y);
            *y = (top * 1e4).round() / 1e4;
        }
        let full = (fit.busy_per_cpu.iter().position(|&x| x >= 1.0))
            .map_or(curve[curve.len() - 1], |i| curve[i]);
        let alone: Vec<f64> = (of.iter())
            .filter(|p| p.busy_threads == 0)
            .filter_map(|p| p.cpu_threads.filter(|t| t.is_finite() && *t >= 0.0))
            .collect();
        let busy = median(&alone).map(|m| (m * 1e3).round() / 1e3);
        fit.notes.push(format!(
            "{name}: x{full:.2} next to one busy thread per CPU; passes {} apart at most{}",
            pct(widest),
            busy.map_or(String::new(), |t| format!(
                "; keeps {t:.2} CPUs busy while it runs alone"
            ))
        ));
        if let Some(t) = busy {
            fit.threads.insert(name.to_string(), t);
        }
        fit.kernels.insert(name.to_string(), curve);
    }
    (!fit.kernels.is_empty()).then_some(fit)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(kernel: &str, busy: usize, pass: usize, ms: f64) -> CpuLoadPoint {
        CpuLoadPoint {
            kernel: kernel.into(),
            busy_threads: busy,
            cpus: 16,
            pass,
            ms,
            cpu_threads: None,
        }
    }

    #[test]
    fn the_curve_is_the_median_ratio_to_the_same_pass_alone_held_non_decreasing() {
        let m = Measurements {
            cpu_load: vec![
                pt("msm:20", 0, 0, 20.0),
                pt("msm:20", 8, 0, 19.0),
                pt("msm:20", 16, 0, 40.0),
                pt("msm:20", 0, 1, 25.0),
                pt("msm:20", 8, 1, 30.0),
                pt("msm:20", 16, 1, 45.0),
                pt("msm:20", 0, 2, 20.0),
                pt("msm:20", 8, 2, 22.0),
                pt("msm:20", 16, 2, 38.0),
                // No time alone in its pass: not a curve.
                pt("ntt:22", 8, 0, 3.0),
            ],
            ..Default::default()
        };
        let f = fit_cpu_load(&m).unwrap();
        assert_eq!(f.busy_per_cpu, vec![0.0, 0.5, 1.0]);
        // Ratios at 8: 0.95, 1.2, 1.1 -> 1.1; at 16: 2.0, 1.8, 1.9 -> 1.9.
        assert_eq!(f.kernels["msm:20"], vec![1.0, 1.1, 1.9]);
        assert!(!f.kernels.contains_key("ntt:22"));
        assert!(f.notes[0].contains("x1.90"), "{:?}", f.notes);
        assert!(
            f.threads.is_empty(),
            "no harness CPU times: {:?}",
            f.threads
        );
        // A dip below alone, or below a lower load, is held up.
        let m = Measurements {
            cpu_load: vec![
                pt("ntt:22", 0, 0, 10.0),
                pt("ntt:22", 4, 0, 9.0),
                pt("ntt:22", 8, 0, 12.0),
                pt("ntt:22", 16, 0, 11.0),
            ],
            ..Default::default()
        };
        assert_eq!(
            fit_cpu_load(&m).unwrap().kernels["ntt:22"],
            vec![1.0, 1.0, 1.2, 1.2]
        );
        assert_eq!(fit_cpu_load(&Measurements::default()), None);
    }

    #[test]
    fn msms_next_to_streaming_and_chasing_threads_give_their_own_curves_and_notes() {
        let m = Measurements {
            cpu_load: vec![pt("msm:20", 0, 0, 20.0), pt("msm:20", 16, 0, 30.0)],
            cpu_load_streaming: vec![
                pt("msm:20", 0, 0, 21.0),
                pt("msm:20", 8, 0, 28.0),
                pt("msm:20", 16, 0, 42.0),
            ],
            cpu_load_chasing: vec![
                pt("msm:20", 0, 0, 20.0),
                pt("msm:20", 4, 0, 19.0),
                pt("msm:20", 16, 0, 24.0),
            ],
            ..Default::default()
        };
        let f = fit_cpu_load(&m).unwrap();
        assert_eq!(f.kernels["msm:20"], vec![1.0, 1.5]);
        assert_eq!(f.busy_per_cpu, vec![0.0, 1.0]);
        let streaming = f.next_to_streaming.as_ref().unwrap();
        assert_eq!(streaming.busy_per_cpu, vec![0.0, 0.5, 1.0]);
        assert_eq!(streaming.kernels["msm:20"], vec![1.0, 1.3333, 2.0]);
        // Held non-decreasing and at least 1, as the spinning curve.
        let chasing = f.next_to_chasing.as_ref().unwrap();
        assert_eq!(chasing.busy_per_cpu, vec![0.0, 0.25, 1.0]);
        assert_eq!(chasing.kernels["msm:20"], vec![1.0, 1.0, 1.2]);
        let note = f.notes.iter().find(|n| n.contains("streaming")).unwrap();
        assert!(
            note.contains("x1.00 at 0.00, x1.33 at 0.50, x2.00 at 1.00")
                && note.contains("spinning threads x1.00 at 0.00, x1.50 at 1.00"),
            "{note}"
        );
        assert!(
            f.notes
                .iter()
                .any(|n| n.contains("chasing pointers: x1.00 at 0.00"))
        );
        // Neighbour points alone make no curve: the model needs the spinning one.
        let only = Measurements {
            cpu_load_streaming: m.cpu_load_streaming.clone(),
            cpu_load_chasing: m.cpu_load_chasing.clone(),
            ..Default::default()
        };
        assert_eq!(fit_cpu_load(&only), None);
    }

    #[test]
    fn the_cpus_a_kernel_keeps_busy_are_the_median_of_its_passes_alone() {
        let with = |busy, pass, ms, t| CpuLoadPoint {
            cpu_threads: Some(t),
            ..pt("msm:20", busy, pass, ms)
        };
        let m = Measurements {
            cpu_load: vec![
                with(0, 0, 20.0, 3.0),
                with(16, 0, 30.0, 9.0),
                with(0, 1, 20.0, 4.5),
                with(16, 1, 30.0, 9.0),
                with(0, 2, 20.0, 4.0),
                with(16, 2, 30.0, 9.0),
            ],
            ..Default::default()
        };
        let f = fit_cpu_load(&m).unwrap();
        // Alone: 3.0, 4.5, 4.0 -> 4.0; the readings next to spinners are not used.
        assert_eq!(f.threads["msm:20"], 4.0);
        assert!(
            f.notes[0].ends_with("keeps 4.00 CPUs busy while it runs alone"),
            "{:?}",
            f.notes
        );
    }
}
