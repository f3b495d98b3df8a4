//! What a replay measured, in the simulator's terms: throughput over the same window
//! (it opens when the warm-up jobs have completed), the three views of GPU busy
//! (bracketed by markers, sampled by NVML as nvidia-smi shows it, true kernel time),
//! per-stage inflation and DRAM GB/s from the kernels' own byte counts.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::analysis::bracket_measures::{self, Bracket};
use crate::engine::Scope;
use crate::model::Model;

use super::executor::Recording;
use super::kernels::HostNow;

/// One stage's measured timings over the measured jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageStat {
    /// Instances measured.
    pub count: u64,
    /// Mean running time (start to end), seconds.
    pub mean_s: f64,
    /// Mean sampled standalone duration, seconds.
    pub standalone_mean_s: f64,
    /// `mean_s / standalone_mean_s`.
    pub inflation: f64,
    /// Mean wait for holds (ready to start), seconds.
    pub mean_wait_s: f64,
}

/// A replay's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Window / jobs completed in it, seconds.
    pub seconds_per_job: f64,
    /// Jobs completed inside the window.
    pub jobs_in_window: u64,
    /// Length of the measurement window, seconds.
    pub window_s: f64,
    /// Union of kernel device time / window (None: no GPU stages).
    pub gpu_true_busy_frac: Option<f64>,
    /// Union of `gpu_busy` spans between markers / window (None: no such span).
    pub gpu_bracketed_busy_frac: Option<f64>,
    /// The same spans added up over the window (the seed's formula; absent in replays
    /// that predate it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_brackets_summed_frac: Option<f64>,
    /// Mean gap between GPU operations, seconds (absent: no gap, or an older replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_mean_gap_s: Option<f64>,
    /// Mean NVML utilization.gpu over the window, 0..1 (None: not sampled).
    pub gpu_sampled_busy_frac: Option<f64>,
    /// Mean NVML board power over the window, W (None: not sampled).
    pub gpu_power_w: Option<f64>,
    /// DRAM bytes moved by CPU kernels and copies that ended in the window / window, GB/s.
    pub dram_gbps: f64,
    /// Per stage.
    pub stages: BTreeMap<String, StageStat>,
    /// Wall-clock length of the whole replay, seconds.
    pub wall_s: f64,
    /// The host's memory just before this run (absent in replays that predate it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_before: Option<HostNow>,
}

impl Measured {
    /// Checks numbers read back from a replay.json: a time per job that is a positive
    /// number of seconds, fractions within 0..=1, rates and times >= 0. The error names
    /// the field (`seconds_per_job`, `stages.NAME.mean_s`).
    pub fn check(&self) -> Result<(), InvalidMeasurement> {
        let bad = |field: &str, value: f64, allowed: &'static str| InvalidMeasurement {
            field: field.to_string(),
            value,
            allowed,
        };
        let finite_ge0 = |field: &str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(bad(field, v, "a number >= 0"))
            }
        };
        if !(self.seconds_per_job.is_finite() && self.seconds_per_job > 0.0) {
            return Err(bad(
                "seconds_per_job",
                self.seconds_per_job,
                "a number of seconds > 0 (a replay that finished no job in its window has \
                 no time per job)",
            ));
        }
        finite_ge0("window_s", self.window_s)?;
        finite_ge0("wall_s", self.wall_s)?;
        finite_ge0("dram_gbps", self.dram_gbps)?;
        if let Some(w) = self.gpu_power_w {
            finite_ge0("gpu_power_w", w)?;
        }
        if let Some(h) = self.host_before {
            for (name, v) in [
                ("host_before.chase_ns_per_step", h.chase_ns_per_step),
                (
                    "host_before.stream_gbps_one_thread",
                    h.stream_gbps_one_thread,
                ),
            ] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(name, v, "a number > 0"));
                }
            }
        }
        for (name, v) in [
            ("gpu_true_busy_frac", self.gpu_true_busy_frac),
            ("gpu_bracketed_busy_frac", self.gpu_bracketed_busy_frac),
            ("gpu_sampled_busy_frac", self.gpu_sampled_busy_frac),
        ] {
            if let Some(v) = v
                && !(0.0..=1.0).contains(&v)
            {
                return Err(bad(name, v, "a fraction from 0 to 1"));
            }
        }
        for (stage, st) in &self.stages {
            for (name, v) in [
                ("mean_s", st.mean_s),
                ("standalone_mean_s", st.standalone_mean_s),
                ("inflation", st.inflation),
                ("mean_wait_s", st.mean_wait_s),
            ] {
                finite_ge0(&format!("stages.{stage}.{name}"), v)?;
            }
        }
        Ok(())
    }
}

/// A measured number read back from a replay.json that no replay can have measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {value} is not {allowed}")]
pub struct InvalidMeasurement {
    /// The field, as a path within one run's numbers (`stages.NAME.mean_s`).
    pub field: String,
    /// The value found.
    pub value: f64,
    /// What it must be.
    pub allowed: &'static str,
}

/// NVML samples mapped to replay time: `(seconds since the replay started, util %, W)`.
pub type NvmlTrace = [(f64, f64, f64)];

/// Computes the measured numbers of a replay.
pub fn measure(model: &Model, rec: &Recording, nvml: Option<&NvmlTrace>) -> Measured {
    let mut finishes: Vec<f64> = rec.jobs.iter().map(|j| j.finished_s).collect();
    finishes.sort_by(f64::total_cmp);
    let warm = model.arrivals.warmup_jobs as usize;
    let (start, counted) = if warm == 0 {
        (0.0, finishes.len())
    } else if finishes.len() > warm {
        (finishes[warm - 1], finishes.len() - warm)
    } else {
        (finishes.last().copied().unwrap_or(0.0), 0)
    };
    let end = finishes.last().copied().unwrap_or(0.0);
    let window_s = (end - start).max(0.0);
    let seconds_per_job = if counted > 0 {
        window_s / counted as f64
    } else {
        f64::NAN
    };
    let frac = |iv: &mut Vec<(f64, f64)>| {
        (window_s > 0.0).then(|| union_within(iv, start, end) / window_s)
    };

    let has_kernels = model.workload.stages.iter().any(|s| s.gpu_kernel);
    // Per GPU, then averaged over the model's GPUs, as the simulator reports it.
    let gpus = model.hardware.gpus.len().max(1);
    let per_gpu_mean = |iv: Vec<(u32, f64, f64)>| -> Option<f64> {
        let mut by_gpu = vec![Vec::new(); gpus];
        for (g, a, b) in iv {
            by_gpu[(g as usize).min(gpus - 1)].push((a, b));
        }
        let fracs: Option<Vec<f64>> = by_gpu.iter_mut().map(&frac).collect();
        fracs.map(|f| f.iter().sum::<f64>() / gpus as f64)
    };
    let gpu_true_busy_frac = if has_kernels {
        per_gpu_mean(
            rec.kernels
                .iter()
                .map(|k| (k.gpu, k.start_s, k.end_s))
                .collect(),
        )
    } else {
        None
    };

    let brackets = bracketed(model, rec)
        .filter(|_| window_s > 0.0)
        .map(|iv| bracket_measures::measure(&iv, (start, end), gpus));
    let gpu_bracketed_busy_frac = brackets.as_ref().map(|m| m.union_frac);
    let gpu_brackets_summed_frac = brackets.as_ref().map(|m| m.summed_frac);
    let gpu_mean_gap_s = brackets.as_ref().and_then(|m| m.mean_gap());

    let in_window: Vec<&(f64, f64, f64)> = nvml
        .unwrap_or(&[])
        .iter()
        .filter(|s| s.0 >= start && s.0 <= end)
        .collect();
    let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
        (!in_window.is_empty())
            .then(|| in_window.iter().map(|s| f(s)).sum::<f64>() / in_window.len() as f64)
    };
    let gpu_sampled_busy_frac = mean(&|s| s.1 / 100.0);
    let gpu_power_w = mean(&|s| s.2).filter(|w| *w >= 0.0);

    let bytes: f64 = rec
        .dram_bytes
        .iter()
        .filter(|(t, _)| *t >= start && *t <= end)
        .map(|(_, b)| b)
        .sum();
    let dram_gbps = if window_s > 0.0 {
        bytes / window_s / 1e9
    } else {
        0.0
    };

    let mut acc: HashMap<usize, (u64, f64, f64, f64)> = HashMap::new();
    for s in &rec.stages {
        if (s.job as usize) < warm {
            continue;
        }
        let a = acc.entry(s.stage).or_default();
        a.0 += 1;
        a.1 += (s.end.nanos() - s.start.nanos()) as f64 * 1e-9;
        a.2 += s.standalone_s;
        a.3 += s.start.nanos().saturating_sub(s.ready.nanos()) as f64 * 1e-9;
    }
    let stages = model
        .workload
        .stages
        .iter()
        .enumerate()
        .filter_map(|(i, st)| {
            let &(n, run, alone, wait) = acc.get(&i)?;
            let nf = n as f64;
            Some((
                st.name.clone(),
                StageStat {
                    count: n,
                    mean_s: run / nf,
                    standalone_mean_s: alone / nf,
                    inflation: if alone > 0.0 { run / alone } else { 1.0 },
                    mean_wait_s: wait / nf,
                },
            ))
        })
        .collect();

    Measured {
        seconds_per_job,
        jobs_in_window: counted as u64,
        window_s,
        gpu_true_busy_frac,
        gpu_bracketed_busy_frac,
        gpu_brackets_summed_frac,
        gpu_mean_gap_s,
        gpu_sampled_busy_frac,
        gpu_power_w,
        dram_gbps,
        stages,
        wall_s: rec.wall_s,
        host_before: None,
    }
}

/// The `gpu_busy` spans' brackets, pairing each span's markers by job and partition (a
/// job-level marker pairs with every partition's), each on the GPU its opening marker
/// named, or, when the partition was not bound to a GPU yet as the span opened, the GPU
/// its closing marker named (where the partition ran). None: no such span.
fn bracketed(model: &Model, rec: &Recording) -> Option<Vec<Bracket>> {
    let spans: Vec<_> = model
        .instrumentation
        .spans
        .iter()
        .filter(|s| s.gpu_busy)
        .collect();
    if spans.is_empty() {
        return None;
    }
    let mut at: HashMap<(usize, u64, Scope), (f64, Option<u32>)> = HashMap::new();
    for m in &rec.markers {
        at.insert((m.marker, m.job, m.scope), (m.t.as_secs(), m.gpu));
    }
    let mut out = Vec::new();
    for span in spans {
        for m in rec.markers.iter().filter(|m| m.marker == span.from) {
            let end = at
                .get(&(span.to, m.job, m.scope))
                .or_else(|| at.get(&(span.to, m.job, Scope::Job)));
            if let Some(&(e, end_gpu)) = end
                && e >= m.t.as_secs()
            {
                out.push(Bracket {
                    gpu: m.gpu.or(end_gpu).unwrap_or(0),
                    start: m.t.as_secs(),
                    end: e,
                });
            }
        }
    }
    Some(out)
}

/// Length of the union of `iv` within `[lo, hi]`.
fn union_within(iv: &mut [(f64, f64)], lo: f64, hi: f64) -> f64 {
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut cur: Option<(f64, f64)> = None;
    for &(a, b) in iv.iter() {
        let (a, b) = (a.max(lo), b.min(hi));
        if b <= a {
            continue;
        }
        match cur {
            Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += cb - ca;
                cur = Some((a, b));
            }
            None => cur = Some((a, b)),
        }
    }
    if let Some((a, b)) = cur {
        total += b - a;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_no_replay_measures_is_named_by_its_field() {
        let stage = StageStat {
            count: 1,
            mean_s: 1.0,
            standalone_mean_s: 1.0,
            inflation: 1.0,
            mean_wait_s: 0.0,
        };
        let good = Measured {
            seconds_per_job: 2.0,
            jobs_in_window: 3,
            window_s: 6.0,
            gpu_true_busy_frac: Some(0.5),
            gpu_bracketed_busy_frac: None,
            gpu_brackets_summed_frac: None,
            gpu_mean_gap_s: None,
            gpu_sampled_busy_frac: None,
            gpu_power_w: None,
            dram_gbps: 1.0,
            stages: BTreeMap::from([("s".to_string(), stage.clone())]),
            wall_s: 7.0,
            host_before: Some(HostNow {
                chase_ns_per_step: 130.0,
                stream_gbps_one_thread: 10.0,
            }),
        };
        assert_eq!(good.check(), Ok(()));
        let mut busy = good.clone();
        busy.gpu_true_busy_frac = Some(1.5);
        let e = busy.check().unwrap_err();
        assert_eq!((e.field.as_str(), e.value), ("gpu_true_busy_frac", 1.5));
        assert_eq!(
            e.to_string(),
            "gpu_true_busy_frac: 1.5 is not a fraction from 0 to 1"
        );
        let mut wait = good.clone();
        wait.stages.insert(
            "s".into(),
            StageStat {
                mean_wait_s: f64::NAN,
                ..stage
            },
        );
        assert_eq!(wait.check().unwrap_err().field, "stages.s.mean_wait_s");
        let mut probe = good.clone();
        probe.host_before = Some(HostNow {
            chase_ns_per_step: 0.0,
            stream_gbps_one_thread: 10.0,
        });
        assert_eq!(
            probe.check().unwrap_err().field,
            "host_before.chase_ns_per_step"
        );
        let mut none = good;
        none.seconds_per_job = 0.0;
        assert!(none.check().unwrap_err().allowed.contains("> 0"));
    }

    #[test]
    fn union_merges_overlaps_and_clips() {
        let mut iv = vec![(0.0, 2.0), (1.0, 3.0), (5.0, 6.0), (9.0, 12.0)];
        assert_eq!(union_within(&mut iv, 0.5, 10.0), 2.5 + 1.0 + 1.0);
        assert_eq!(union_within(&mut [], 0.0, 1.0), 0.0);
    }
}
