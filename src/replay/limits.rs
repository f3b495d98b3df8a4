//! What a replay is refused for before anything runs (exit 2): a point that would not
//! fit this host's RAM or the GPU's memory, or a plan that would run past `--max-hours`.

use super::error::{Memory, ReplayInputError, Result};
use super::options::ReplayOptions;
use super::plan::PointPlan;

/// Refuses points that would not fit (exit 2), naming the point and the shortfall.
pub fn check_fit(points: &[PointPlan], ram_limit: f64, vram_limit: f64) -> Result<()> {
    for p in points {
        for (memory, needs_bytes, limit_bytes) in [
            (Memory::HostRam, p.memory.host_bytes, ram_limit),
            (Memory::Vram, p.memory.vram_bytes, vram_limit),
        ] {
            if needs_bytes > limit_bytes {
                return Err(ReplayInputError::DoesNotFit {
                    point: p.sets.clone(),
                    memory,
                    needs_bytes,
                    limit_bytes,
                }
                .into());
            }
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
    let expected_s: f64 = points.iter().map(|p| p.expected_wall_s()).sum::<f64>() * f64::from(runs);
    if expected_s > max_wall_s {
        return Err(ReplayInputError::TooLong {
            expected_s,
            limit_s: max_wall_s,
            points_counted: points.len(),
            points_total: total,
            runs,
        }
        .into());
    }
    Ok(())
}
