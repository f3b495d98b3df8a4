//! A log set beside the model: the same analysis run on the TIMELINE log the scenario
//! writes when simulated at the log's concurrency, compared stage by stage (brackets of
//! the same marker names), timer by timer, with throughput and bracketed GPU busy.
//! Pure: the caller runs the model.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::analyse::{Distribution, LogAnalysis};

/// How `--against` picks the model's concurrency by default, said in every output.
pub const CONCURRENCY_RULE: &str = "the log's time-weighted median of jobs in flight (a job is in flight from its first record to its last), set as arrivals.concurrency";
/// The rule when the user sets it.
pub const CONCURRENCY_SET: &str = "as --set arrivals.concurrency gives it";

/// One stage or timer, log beside model.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Stage (marker bracket) or timer name.
    pub name: String,
    /// Its durations in the log, ms.
    pub log: Option<Distribution>,
    /// Its durations in the model, ms.
    pub model: Option<Distribution>,
}

impl Row {
    /// Model p50 / log p50 (None unless both exist and the log's is positive).
    pub fn p50_ratio(&self) -> Option<f64> {
        match (&self.log, &self.model) {
            (Some(l), Some(m)) if l.p50 > 0.0 => Some(m.p50 / l.p50),
            _ => None,
        }
    }
}

/// The comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Against {
    /// Scenario file as given.
    pub scenario: String,
    /// Jobs in flight the model ran with.
    pub concurrency: usize,
    /// How that was chosen.
    pub concurrency_rule: &'static str,
    /// Jobs per hour over each window (log, model).
    pub jobs_per_hour: (f64, f64),
    /// Bracketed GPU busy (log, model).
    pub bracketed_busy_frac: (f64, f64),
    /// Stage brackets, the log's order first, then stages only the model has.
    pub stages: Vec<Row>,
    /// Timers, likewise.
    pub timers: Vec<Row>,
    /// Partitions per job (log, model), when their markers name partitions.
    pub partitions_per_job: (Option<usize>, Option<usize>),
}

impl Against {
    /// A warning when the log's jobs and the scenario's have different partition counts:
    /// per-job figures (jobs/day, brackets per job) then compare different jobs.
    pub fn partition_mismatch(&self) -> Option<String> {
        match self.partitions_per_job {
            (Some(log), Some(model)) if log != model => Some(format!(
                "the log's jobs have {log} partition{} each, the scenario's {model} (as {}): jobs/day compares different jobs, so read the per-partition stages (p50s) instead, or point --against at a scenario of the log's proof size",
                if log == 1 { "" } else { "s" },
                self.scenario
            )),
            _ => None,
        }
    }
}

/// Completed jobs per hour of measurement window.
pub fn jobs_per_hour(a: &LogAnalysis) -> f64 {
    let s = (a.window_ms.1 - a.window_ms.0) / 1e3;
    if s > 0.0 {
        a.jobs.saturating_sub(a.warmup_jobs) as f64 / s * 3600.0
    } else {
        0.0
    }
}

fn rows(
    log: Vec<(String, Option<Distribution>)>,
    model: Vec<(String, Option<Distribution>)>,
) -> Vec<Row> {
    let mut out: Vec<Row> = log
        .into_iter()
        .map(|(name, d)| Row {
            name,
            log: d,
            model: None,
        })
        .collect();
    for (name, d) in model {
        match out.iter_mut().find(|r| r.name == name) {
            Some(r) => r.model = d,
            None => out.push(Row {
                name,
                log: None,
                model: d,
            }),
        }
    }
    out
}

/// Sets the log's analysis beside the model's.
pub fn compare(
    scenario: &str,
    concurrency: usize,
    concurrency_rule: &'static str,
    log: &LogAnalysis,
    model: &LogAnalysis,
) -> Against {
    let stages = |a: &LogAnalysis| {
        a.stages
            .iter()
            .map(|s| (s.name.clone(), s.duration_ms.clone()))
            .collect::<Vec<_>>()
    };
    let timers = |a: &LogAnalysis| {
        a.timers
            .iter()
            .map(|(n, d)| (n.clone(), Some(d.clone())))
            .collect::<Vec<_>>()
    };
    Against {
        scenario: scenario.to_string(),
        concurrency,
        concurrency_rule,
        jobs_per_hour: (jobs_per_hour(log), jobs_per_hour(model)),
        bracketed_busy_frac: (log.gpu_bracketed_busy_frac, model.gpu_bracketed_busy_frac),
        stages: rows(stages(log), stages(model)),
        timers: rows(timers(log), timers(model)),
        partitions_per_job: (log.partitions_per_job, model.partitions_per_job),
    }
}

fn dist(d: &Option<Distribution>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({"count": d.count, "mean": d.mean, "p50": d.p50, "p90": d.p90}),
    }
}

/// The comparison as JSON.
pub fn to_json(a: &Against) -> Value {
    let rows = |rs: &[Row]| -> Vec<Value> {
        rs.iter()
            .map(|r| {
                json!({"name": r.name, "log_ms": dist(&r.log), "model_ms": dist(&r.model),
                            "model_over_log_p50": r.p50_ratio()})
            })
            .collect()
    };
    json!({
        "scenario": a.scenario,
        "concurrency": a.concurrency,
        "concurrency_rule": a.concurrency_rule,
        "jobs_per_hour": {"log": a.jobs_per_hour.0, "model": a.jobs_per_hour.1},
        "jobs_per_day": {"log": 24.0 * a.jobs_per_hour.0, "model": 24.0 * a.jobs_per_hour.1},
        "gpu_bracketed_busy_frac": {"log": a.bracketed_busy_frac.0, "model": a.bracketed_busy_frac.1},
        "stages": rows(&a.stages),
        "timers": rows(&a.timers),
        "partitions_per_job": {"log": a.partitions_per_job.0, "model": a.partitions_per_job.1},
        "warnings": a.partition_mismatch().into_iter().collect::<Vec<_>>(),
    })
}

/// The comparison as text.
pub fn to_text(a: &Against) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nagainst {} at concurrency {} ({})",
        a.scenario, a.concurrency, a.concurrency_rule
    );
    if let Some(warning) = a.partition_mismatch() {
        let _ = writeln!(o, "warning: {warning}");
    }
    let _ = writeln!(
        o,
        "{:<24} {:>12} {:>12} {:>9}",
        "", "log", "model", "model/log"
    );
    let line = |o: &mut String, name: &str, l: f64, m: f64| {
        let ratio = if l > 0.0 {
            format!("{:.2}", m / l)
        } else {
            "-".into()
        };
        let _ = writeln!(o, "{name:<24} {l:>12.2} {m:>12.2} {ratio:>9}");
    };
    line(
        &mut o,
        "jobs/day",
        24.0 * a.jobs_per_hour.0,
        24.0 * a.jobs_per_hour.1,
    );
    line(
        &mut o,
        "GPU bracketed busy %",
        100.0 * a.bracketed_busy_frac.0,
        100.0 * a.bracketed_busy_frac.1,
    );
    for (title, rows) in [("stage p50 (ms)", &a.stages), ("timer p50 (ms)", &a.timers)] {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(o, "{title}");
        for r in rows {
            let p = |d: &Option<Distribution>| {
                d.as_ref().map_or("-".into(), |d| format!("{:.1}", d.p50))
            };
            let ratio = r.p50_ratio().map_or("-".into(), |x| format!("{x:.2}"));
            let _ = writeln!(
                o,
                "  {:<22} {:>12} {:>12} {:>9}",
                r.name,
                p(&r.log),
                p(&r.model),
                ratio
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuzk_log::{ParsedLog, analyse};

    fn analysed(text: &str) -> LogAnalysis {
        let mut log = ParsedLog::default();
        log.add_text("t.log", text);
        analyse(&log, &crate::cuzk_log::AnalyseOptions::default())
    }

    #[test]
    fn stages_pair_by_name_and_ratios_are_model_over_log() {
        let log = analysed(
            "TIMELINE,0,SYNTH_START,0,partition=0\nTIMELINE,100,SYNTH_END,0,partition=0\n",
        );
        let model = analysed(
            "TIMELINE,0,SYNTH_START,0,partition=0\nTIMELINE,150,SYNTH_END,0,partition=0\n\
             TIMELINE,150,GPU_START,0,worker=0,partition=0\nTIMELINE,200,GPU_END,0,worker=0,partition=0\n",
        );
        let a = compare("s.toml", 1, CONCURRENCY_RULE, &log, &model);
        assert_eq!(a.stages.len(), 2);
        assert_eq!(a.stages[0].name, "SYNTH");
        assert!((a.stages[0].p50_ratio().unwrap() - 1.5).abs() < 1e-12);
        assert!(a.stages[1].log.is_none() && a.stages[1].p50_ratio().is_none());
        let j = to_json(&a);
        assert_eq!(j["stages"][0]["model_over_log_p50"], 1.5);
        assert!(to_text(&a).contains("SYNTH"));
        assert_eq!(a.partition_mismatch(), None, "one partition each side");
    }

    #[test]
    fn a_partition_count_that_differs_is_flagged() {
        let log = analysed(
            "TIMELINE,0,SYNTH_START,0,partition=0\nTIMELINE,100,SYNTH_END,0,partition=0\n",
        );
        let model = analysed(
            "TIMELINE,0,SYNTH_START,0,partition=0\nTIMELINE,100,SYNTH_END,0,partition=0\n\
             TIMELINE,0,SYNTH_START,0,partition=1\nTIMELINE,100,SYNTH_END,0,partition=1\n",
        );
        let a = compare("c2.toml", 1, CONCURRENCY_RULE, &log, &model);
        assert_eq!(a.partitions_per_job, (Some(1), Some(2)));
        let warning = a.partition_mismatch().expect("1 against 2");
        assert!(warning.starts_with("the log's jobs have 1 partition each, the scenario's 2"));
        assert!(to_text(&a).contains(&format!("warning: {warning}")));
        assert_eq!(to_json(&a)["warnings"][0], warning.as_str());
    }
}
