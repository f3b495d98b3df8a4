//! A log analysis as text (for people) and JSON (for scripts), with what could not be
//! read: garbled lines, out-of-order offsets, unterminated files.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::analyse::{Distribution, LogAnalysis};
use super::breakdown;
use super::parse::{LineNote, ParsedLog};
use crate::analysis::gap::{GapPart, GapTotals};

/// Garbled lines listed in full before the rest are only counted.
const GARBLED_SHOWN: usize = 10;

fn dist_json(d: &Option<Distribution>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({"count": d.count, "mean": d.mean, "p50": d.p50, "p90": d.p90,
                          "p99": d.p99, "max": d.max}),
    }
}

/// The analysis as one JSON object.
pub fn to_json(files: &[String], log: &ParsedLog, a: &LogAnalysis) -> Value {
    let notes = |v: &[LineNote]| -> Vec<Value> {
        v.iter()
            .take(GARBLED_SHOWN)
            .map(|g| json!({"file": g.file, "line": g.line, "problem": g.problem}))
            .collect()
    };
    let per_gpu: Vec<Value> = a
        .per_gpu
        .iter()
        .map(|g| {
            json!({"gpu": g.gpu, "bracketed_busy_frac": g.bracketed_busy_frac,
                   "engine_busy_frac": g.engine_busy_frac, "brackets": g.brackets})
        })
        .collect();
    let stages: Vec<Value> = a
        .stages
        .iter()
        .map(|s| {
            json!({"name": s.name, "duration_ms": dist_json(&s.duration_ms),
                   "mean_in_flight": s.mean_in_flight, "max_in_flight": s.max_in_flight,
                   "unmatched_starts": s.unmatched_starts, "unmatched_ends": s.unmatched_ends})
        })
        .collect();
    let timers: serde_json::Map<String, Value> = a
        .timers
        .iter()
        .map(|(n, d)| (n.clone(), dist_json(&Some(d.clone()))))
        .collect();
    json!({
        "files": files,
        "input": {
            "lines": log.lines,
            "timeline_records": log.markers.len(),
            "timing_records": log.timings.len(),
            "timing_notes": log.timing_notes,
            "unattributed_timing_records": a.unattributed_timings,
            "other_lines": log.other_lines,
            "garbled_lines": log.garbled.len(),
            "garbled": notes(&log.garbled),
            "warning_lines": log.warnings.len(),
            "warnings": notes(&log.warnings),
            "out_of_order_records": log.out_of_order,
            "unterminated_files": log.unterminated_files,
        },
        "window": {"start_ms": a.window_ms.0, "end_ms": a.window_ms.1,
                   "seconds": (a.window_ms.1 - a.window_ms.0) / 1e3},
        "jobs": a.jobs,
        "warmup_jobs": a.warmup_jobs,
        "gpu": {
            "count": a.gpus,
            "workers_per_gpu": a.workers.per_gpu,
            "workers_from": a.workers.source,
            "per_gpu": per_gpu,
            "bracketed_busy_frac": a.gpu_bracketed_busy_frac,
            "brackets_summed_frac": a.gpu_bracket_sums.summed_frac,
            "brackets_summed_span_frac": a.gpu_bracket_sums.summed_span_frac,
            "engine_busy_frac": a.gpu_engine_busy_frac,
            "gap_ms": dist_json(&a.gpu_gap_ms),
            "timer_busy_frac": a.gpu_timer_busy_frac,
            "breakdown": breakdown_json(breakdown::of(&a.gpu_brackets, a.window_ms)),
        },
        "jobs_in_flight": {"median": a.jobs_in_flight.median, "mean": a.jobs_in_flight.mean,
                           "max": a.jobs_in_flight.max},
        "timers": timers,
        "stages": stages,
    })
}

/// The bracket breakdown: brackets, their mean length and each part's seconds per
/// bracket and share (null when no bracket carries its timers).
fn breakdown_json(t: Option<GapTotals>) -> Value {
    let Some(t) = t else {
        return Value::Null;
    };
    let parts: serde_json::Map<String, Value> = GapPart::ALL
        .iter()
        .map(|&p| {
            (
                p.key().to_string(),
                json!({"per_bracket_s": t.per_bracket_s(p), "share": t.share(p)}),
            )
        })
        .collect();
    json!({"brackets": t.brackets, "mean_bracket_s": t.mean_bracket_s(), "parts": parts,
           "from": "CUZK_TIMING timers; kernels include their PCIe streams"})
}

/// One line per part: what the brackets were spent on, from their timers.
fn breakdown_text(o: &mut String, t: &GapTotals) {
    let _ = writeln!(
        o,
        "GPU brackets {} with timers, {:.3} s mean; spent on (from CUZK_TIMING; kernels include their PCIe streams):",
        t.brackets,
        t.mean_bracket_s()
    );
    // The timers do not tell transfers from the kernels they feed.
    for part in GapPart::ALL
        .into_iter()
        .filter(|&p| p != GapPart::Transfers)
    {
        let _ = writeln!(
            o,
            "  {:<14} {:>8.3} s/bracket {:>6.1}%",
            part.label(),
            t.per_bracket_s(part),
            100.0 * t.share(part)
        );
    }
}

fn fmt_dist(d: &Option<Distribution>) -> String {
    match d {
        None => "-".into(),
        Some(d) => format!(
            "{:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            d.count, d.mean, d.p50, d.p90, d.p99, d.max
        ),
    }
}

/// The analysis as a readable report.
pub fn to_text(files: &[String], log: &ParsedLog, a: &LogAnalysis) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "log: {}", files.join(", "));
    let _ = writeln!(
        o,
        "read {} lines: {} TIMELINE, {} timing, {} other, {} garbled, {} with warnings, {} out of order",
        log.lines,
        log.markers.len(),
        log.timings.len(),
        log.other_lines,
        log.garbled.len(),
        log.warnings.len(),
        log.out_of_order
    );
    for (what, list) in [("garbled", &log.garbled), ("warning", &log.warnings)] {
        for g in list.iter().take(GARBLED_SHOWN) {
            let _ = writeln!(o, "  {what} {}:{}: {}", g.file, g.line, g.problem);
        }
        if list.len() > GARBLED_SHOWN {
            let _ = writeln!(o, "  ... and {} more", list.len() - GARBLED_SHOWN);
        }
    }
    for f in &log.unterminated_files {
        let _ = writeln!(
            o,
            "  {f}: last line has no newline (cut off or still being written)"
        );
    }
    let _ = writeln!(
        o,
        "window: {:.3} s to {:.3} s ({} jobs, --warmup-jobs {} skipped), {} GPU(s), {} workers per GPU ({})",
        a.window_ms.0 / 1e3,
        a.window_ms.1 / 1e3,
        a.jobs,
        a.warmup_jobs,
        a.gpus,
        a.workers.per_gpu,
        a.workers.source
    );
    let _ = write!(
        o,
        "GPU bracketed busy {:.1}% (mean of GPUs)",
        100.0 * a.gpu_bracketed_busy_frac
    );
    if let Some(e) = a.gpu_engine_busy_frac {
        let _ = write!(o, "   from gpu_ms {:.1}%", 100.0 * e);
    }
    if let Some(t) = a.gpu_timer_busy_frac {
        let _ = write!(o, "   from gpu_total_ms timers {:.1}%", 100.0 * t);
    }
    if let Some(g) = &a.gpu_gap_ms {
        let _ = write!(o, "   mean gap between GPU operations {:.1} ms", g.mean);
    }
    o.push('\n');
    bracket_sums_text(&mut o, a);
    if a.per_gpu.len() > 1 {
        for g in &a.per_gpu {
            let _ = write!(
                o,
                "  GPU {}: bracketed busy {:.1}%, {} brackets",
                g.gpu,
                100.0 * g.bracketed_busy_frac,
                g.brackets
            );
            if let Some(e) = g.engine_busy_frac {
                let _ = write!(o, ", from gpu_ms {:.1}%", 100.0 * e);
            }
            o.push('\n');
        }
    }
    if let Some(t) = breakdown::of(&a.gpu_brackets, a.window_ms) {
        breakdown_text(&mut o, &t);
    }
    let j = &a.jobs_in_flight;
    let _ = writeln!(
        o,
        "jobs in flight: median {} (time-weighted), mean {:.2}, max {}",
        j.median, j.mean, j.max
    );
    let head = format!(
        "{:>6} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "n", "mean", "p50", "p90", "p99", "max"
    );
    if !a.stages.is_empty() {
        let _ = writeln!(
            o,
            "\nstage (ms)       {head}  in flight mean/max  unmatched"
        );
        for s in &a.stages {
            let _ = writeln!(
                o,
                "{:<16} {}  {:>9.2} / {:<5} {}/{}",
                s.name,
                fmt_dist(&s.duration_ms),
                s.mean_in_flight,
                s.max_in_flight,
                s.unmatched_starts,
                s.unmatched_ends
            );
        }
    }
    if !a.timers.is_empty() {
        let _ = writeln!(o, "\ntimer (ms)       {head}");
        for (n, d) in &a.timers {
            let _ = writeln!(o, "{:<16} {}", n, fmt_dist(&Some(d.clone())));
        }
    }
    o
}

/// The brackets added up (the seed's formula) beside the union ("bracketed busy").
fn bracket_sums_text(o: &mut String, a: &LogAnalysis) {
    let b = &a.gpu_bracket_sums;
    if let Some(over_span) = b.summed_span_frac {
        let gap = b.mean_gap.map_or(String::new(), |g| {
            format!("; idle time in the span per transition {g:.1} ms (the seed's mean gap)")
        });
        let _ = writeln!(
            o,
            "GPU brackets added up {:.1}% of the window, {:.1}% of the GPU's span (the seed's formula; bracketed busy above is their union){gap}",
            100.0 * b.summed_frac,
            100.0 * over_span
        );
    }
}
