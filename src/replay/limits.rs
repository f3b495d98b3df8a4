//! What a replay is refused for before anything runs (exit 2): a point that would not
//! fit this host's RAM or the GPU's memory, or a plan that would run past `--max-hours`.

use super::ReplayInputError;
use super::error::Result;
use super::options::ReplayOptions;
use super::plan::{GIB, PointPlan};

/// Refuses points that would not fit (exit 2), naming the point and the shortfall.
pub fn check_fit(points: &[PointPlan], ram_limit: f64, vram_limit: f64) -> Result<()> {
    for p in points {
        let what = if p.sets.is_empty() {
            "the scenario".to_string()
        } else {
            format!("point {}", p.sets.join(" "))
        };
        if p.memory.host_bytes > ram_limit {
            return Err(ReplayInputError(format!(
                "{what} needs {:.1} GiB of host RAM (RAM permits at their simulated peak + kernel and copy buffers), but this host has {:.1} GiB; lower the concurrency or the RAM holds (or pass --host-ram-gib if MemTotal understates it)",
                p.memory.host_bytes / GIB,
                ram_limit / GIB
            ))
            .into());
        }
        if p.memory.vram_bytes > vram_limit {
            return Err(ReplayInputError(format!(
                "{what} needs {:.1} GiB of GPU memory (VRAM permits at their simulated peak + kernel working sets), but the GPU has {:.1} GiB; lower the concurrency, the VRAM holds or the kernel sizes",
                p.memory.vram_bytes / GIB,
                vram_limit / GIB
            ))
            .into());
        }
    }
    Ok(())
}

/// Refuses, before anything runs (a dry run too), a plan that would not fit or would run
/// too long.
pub(crate) fn check_plan(
    points: &[PointPlan],
    ram: f64,
    vram: f64,
    opts: &ReplayOptions,
) -> Result<()> {
    check_fit(points, ram, vram)?;
    check_duration(points, opts.runs, opts.max_wall_s)
}

/// Refuses a replay expected to run longer than `max_wall_s` (exit 2): it runs in real
/// time, so a scenario sized for the simulator (10^5 one-second jobs) would take days.
fn check_duration(points: &[PointPlan], runs: u32, max_wall_s: f64) -> Result<()> {
    check_duration_of(points, points.len(), runs, max_wall_s)
}

/// [`check_duration`] of the first `points` of `total`: what they take alone is a lower
/// bound on the whole replay, so a plan is refused as soon as it passes the limit.
pub(crate) fn check_duration_of(
    points: &[PointPlan],
    total: usize,
    runs: u32,
    max_wall_s: f64,
) -> Result<()> {
    let expected: f64 = points.iter().map(|p| p.expected_wall_s()).sum::<f64>() * f64::from(runs);
    if expected > max_wall_s {
        let what = if points.len() < total {
            format!(
                "more than {:.1} h (the first {} of its {total} points alone, x {runs} run(s))",
                expected / 3600.0,
                points.len()
            )
        } else {
            format!(
                "about {:.1} h ({} point(s) x {runs} run(s))",
                expected / 3600.0,
                points.len()
            )
        };
        return Err(ReplayInputError(format!(
            "the replay would take {what}, above the limit of {:.1} h; lower arrivals.jobs \
             (with --set) or the points, or raise the limit with --max-hours",
            max_wall_s / 3600.0
        ))
        .into());
    }
    Ok(())
}
