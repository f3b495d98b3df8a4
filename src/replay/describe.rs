//! The plan as `bwsim replay` prints it before it runs (and a dry run prints alone):
//! the stages, then per point the memory it takes and the time it is expected to run.

use std::fmt::Write as _;

use super::plan::{GIB, PointPlan};

/// The dry-run text: the stage plan, then per point the memory and expected time.
pub fn describe_plan(points: &[PointPlan], ram_limit: f64, vram_limit: f64) -> String {
    let mut s = String::new();
    let Some(first) = points.first() else {
        return s;
    };
    let m = &first.loaded.model;
    let _ = writeln!(
        s,
        "replay plan: {} ({} partition{} per job, {} jobs, {} warm-up)",
        m.name,
        m.workload.partitions,
        if m.workload.partitions == 1 { "" } else { "s" },
        m.arrivals.jobs,
        m.arrivals.warmup_jobs
    );
    let _ = writeln!(s, "stages (standalone mean, what runs for real):");
    for st in &first.stages {
        let _ = writeln!(s, "  {}", st.describe());
    }
    let _ = writeln!(
        s,
        "points (host RAM limit {:.1} GiB, VRAM limit {:.1} GiB):",
        ram_limit / GIB,
        vram_limit / GIB
    );
    let mut total = 0.0;
    for p in points {
        let fits = p.memory.host_bytes <= ram_limit && p.memory.vram_bytes <= vram_limit;
        total += p.expected_wall_s();
        let _ = writeln!(
            s,
            "  {:<32} RAM {:>7.1} GiB  VRAM {:>7.1} GiB  expected {:>8.1} s  predicted {:.3} s/job{}",
            if p.sets.is_empty() {
                "(scenario as is)".to_string()
            } else {
                p.sets.join(" ")
            },
            p.memory.host_bytes / GIB,
            p.memory.vram_bytes / GIB,
            p.expected_wall_s(),
            p.report["seconds_per_job"].as_f64().unwrap_or(f64::NAN),
            if fits { "" } else { "  DOES NOT FIT" }
        );
    }
    let _ = writeln!(
        s,
        "expected wall time per run over all points: {total:.1} s"
    );
    s
}
