//! Runs one validation experiment on the real host and measures its outcome: streaming
//! workers, the pointer chase, and a copy loop or pipeline in the GPU probe harness.

use super::experiment::{Outcome, Setup};
use crate::calibrate::error::{ExperimentError, Result};
use crate::calibrate::probe::harness::{GpuProbe, num};
use crate::calibrate::probe::latency::Chaser;
use crate::calibrate::probe::multi_gpu::{begin_all, end_all};
use crate::calibrate::probe::plan::Plan;
use crate::calibrate::probe::stream::Workers;
use std::time::Duration;

/// Runs `s` on the host (streams on CPUs 1..=k, the chase on CPU 0, a copy loop or
/// pipeline in the harness of GPU 0, a copy loop in each of the first `gpus` harnesses
/// for a multi-GPU DMA) and returns what was measured; the workers end idle.
pub fn measure(
    s: &Setup,
    plan: &Plan,
    workers: &Workers,
    chaser: &Chaser,
    probes: &mut [GpuProbe],
) -> Result<Outcome> {
    let gpus = match (s.dma, s.pipe) {
        (Some(c), _) => c.gpus.max(1) as usize,
        (None, Some(_)) => 1,
        (None, None) => 0,
    };
    if gpus > probes.len() {
        return Err(ExperimentError::TooFewGpus {
            needed: gpus,
            running: probes.len(),
        }
        .into());
    }
    let k = s.streams.map_or(0, |(_, k)| k);
    if let Some((kernel, k)) = s.streams {
        workers.run(1..1 + k, Some(kernel));
    }
    std::thread::sleep(plan.warm);
    let secs = plan.pcie_secs * 1.5;
    let cmd = match (s.dma, s.pipe) {
        (Some(c), _) => Some(format!(
            "pcie {} {} {secs} {}",
            c.dir, c.pinned as u8, plan.pcie_mib
        )),
        (None, Some((lg, pinned))) => Some(format!("pipe {lg} {} {secs}", pinned as u8)),
        _ => None,
    };
    // The probes that run the command: GPU 0's, and one per further GPU of a multi-GPU DMA.
    let active = &mut probes[..if cmd.is_some() { gpus } else { 0 }];
    let chase_dur = Duration::from_secs_f64(if cmd.is_some() {
        secs * 0.8
    } else {
        plan.dur.as_secs_f64()
    });
    let result = (|| -> Result<Outcome> {
        let begun = cmd.as_deref().map(|c| begin_all(active, c));
        let s0 = workers.snapshot();
        let ns = if s.chase {
            Some(chaser.measure(chase_dur)?)
        } else {
            None
        };
        let s1 = workers.snapshot();
        let replies = match (cmd.as_deref(), begun) {
            (Some(c), Some(b)) => end_all(active, b, c)?,
            _ => Vec::new(),
        };
        let mut o = Outcome {
            chase_ns: ns,
            stream_gbps: (k > 0).then(|| s1.gbps_since(&s0)),
            ..Default::default()
        };
        if let Some(v) = replies.first() {
            if let Some(c) = s.dma {
                // Several GPUs: the mean of their loops' rates.
                let key = format!("{}_gbps", c.dir);
                let mut sum = 0.0;
                for r in &replies {
                    sum += num(r, &key)?;
                }
                o.dma_gbps = Some(sum / replies.len() as f64);
            } else {
                o.pipe_iter_ms = Some(num(v, "iter_ms")?);
                o.pipe_h2d_ms = Some(num(v, "h2d_ms")?);
            }
        }
        Ok(o)
    })();
    workers.idle();
    result
}
