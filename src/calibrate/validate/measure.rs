//! Runs one validation experiment on the real host and measures its outcome: streaming
//! workers, the pointer chase, and a copy loop or pipeline in the GPU probe harness.

use super::experiment::{Outcome, Setup};
use crate::calibrate::probe::harness::{GpuProbe, num};
use crate::calibrate::probe::latency::Chaser;
use crate::calibrate::probe::plan::Plan;
use crate::calibrate::probe::stream::Workers;
use std::time::Duration;

/// Runs `s` on the host (streams on CPUs 1..=k, the chase on CPU 0, a copy loop or
/// pipeline in the harness) and returns what was measured; the workers end idle.
pub fn measure(
    s: &Setup,
    plan: &Plan,
    workers: &Workers,
    chaser: &Chaser,
    probe: Option<&mut GpuProbe>,
) -> anyhow::Result<Outcome> {
    let k = s.streams.map_or(0, |(_, k)| k);
    if let Some((kernel, k)) = s.streams {
        workers.run(1..1 + k, Some(kernel));
    }
    std::thread::sleep(plan.warm);
    let secs = plan.pcie_secs * 1.5;
    let cmd = match (s.dma, s.pipe) {
        (Some(c), _) => Some(format!(
            "pcie {} {} {secs} {}",
            if c.h2d { "h2d" } else { "d2h" },
            c.pinned as u8,
            plan.pcie_mib
        )),
        (None, Some((lg, pinned))) => Some(format!("pipe {lg} {} {secs}", pinned as u8)),
        _ => None,
    };
    let mut probe = probe;
    let chase_dur = Duration::from_secs_f64(if cmd.is_some() {
        secs * 0.8
    } else {
        plan.dur.as_secs_f64()
    });
    let result = (|| -> anyhow::Result<Outcome> {
        if let (Some(c), Some(p)) = (&cmd, probe.as_deref_mut()) {
            p.begin(c)?;
        }
        let s0 = workers.snapshot();
        let ns = if s.chase {
            Some(chaser.measure(chase_dur)?)
        } else {
            None
        };
        let s1 = workers.snapshot();
        let reply = match (&cmd, probe.as_deref_mut()) {
            (Some(c), Some(p)) => Some(p.end(c)?),
            _ => None,
        };
        let mut o = Outcome {
            chase_ns: ns,
            stream_gbps: (k > 0).then(|| s1.gbps_since(&s0)),
            ..Default::default()
        };
        if let Some(v) = reply {
            if let Some(c) = s.dma {
                o.dma_gbps = Some(num(&v, if c.h2d { "h2d_gbps" } else { "d2h_gbps" })?);
            } else {
                o.pipe_iter_ms = Some(num(&v, "iter_ms")?);
                o.pipe_h2d_ms = Some(num(&v, "h2d_ms")?);
            }
        }
        Ok(o)
    })();
    workers.idle();
    result
}
