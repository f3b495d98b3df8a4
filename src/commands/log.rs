//! `bwsim log FILE...`: read cuzk daemon logs and print what they say about GPU use,
//! gaps, timers, stage durations and concurrency (text or JSON); with `--against` run
//! the scenario at the log's concurrency and set the two side by side, with `--fit`
//! correct the scenario's fittable durations until the model's medians match the log's
//! and write them as a scenario that includes the original, with `--plot` draw
//! concurrency and GPU busy over time.

use std::path::{Component, Path, PathBuf};

use serde_json::json;

use crate::cli::{Format, LogArgs};
use crate::cuzk_log::fit::{FitTarget, Fitted, fit_targets, render_include};
use crate::cuzk_log::{LogAnalysis, LogInputError, ParsedLog, against, analyse};
use crate::cuzk_log::{read_and_analyse, report};
use crate::output::{Output, OutputKind, check_outputs, print_stdout, write_atomic};
use crate::run::{RunOptions, run_model_with};
use crate::trace::{TraceRecorder, render_log, timeline_records, timing_records};

/// Most model runs `--fit` makes while correcting the durations.
const FIT_ROUNDS: usize = 8;
/// `--fit` stops when every fitted median is within this fraction of the log's.
const FIT_TOLERANCE: f64 = 0.002;

/// Reads the logs (garbled lines are counted, never fatal) and prints the analysis.
pub fn log(args: LogArgs) -> anyhow::Result<()> {
    // Every output with its sibling formats (the chart's .svg beside its .png), none on
    // another's path, before anything is read or simulated.
    let mut outputs = Vec::new();
    if let Some(p) = &args.plot {
        outputs.push(Output::new("--plot", p, OutputKind::Chart));
    }
    if let Some(f) = &args.fit_out {
        outputs.push(Output::new("--fit-out", f, OutputKind::File));
    }
    check_outputs(&outputs, &[])?;
    let (log, analysis) = read_and_analyse(&args.files, args.warmup_jobs)?;
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    if log.markers.is_empty() && log.timings.is_empty() {
        // Still a report (a daemon that has just started logs nothing yet), but a file
        // that is not a cuzk log at all should not pass for an idle GPU unremarked.
        eprintln!("warning: {}", no_records(&names, &log));
    }
    if let Some(p) = &args.plot {
        draw(&names.join(", "), &analysis, p)?;
    }
    let mut against_out = None;
    let mut fit_out = None;
    if let Some(scenario) = &args.against {
        let concurrency = analysis.jobs_in_flight.median.max(1);
        let mut sets = args.sets.clone();
        sets.push(format!("arrivals.concurrency={concurrency}"));
        let model = simulate(scenario, &sets)?;
        let cmp = against::compare(
            &scenario.display().to_string(),
            concurrency,
            &analysis,
            &model,
        );
        if args.fit {
            let out = args
                .fit_out
                .clone()
                .unwrap_or_else(|| PathBuf::from("fit.toml"));
            let fitted = fit(scenario, &sets, &analysis)?;
            let include = relative_to(scenario, out.parent().unwrap_or(Path::new("")));
            let text = render_include(&include, &names.join(", "), concurrency, &fitted);
            write_atomic(&out, text.as_bytes())?;
            fit_out = Some((out, fitted));
        }
        against_out = Some(cmp);
    }
    match args.format {
        Format::Text => {
            let mut text = report::to_text(&names, &log, &analysis);
            if let Some(a) = &against_out {
                text.push_str(&against::to_text(a));
            }
            if let Some((file, fitted)) = &fit_out {
                text.push_str(&format!("\nfit: wrote {}\n", file.display()));
                for f in fitted {
                    text.push_str(&format!(
                        "  {} = {:.6} (was {}; {} p50 {:.1} ms in the log, {:.1} in the model)\n",
                        f.target.param,
                        f.value,
                        f.was,
                        f.target.observable.describe(),
                        f.log_p50_ms,
                        f.model_p50_ms
                    ));
                }
            }
            print_stdout(&text)
        }
        Format::Json => {
            let mut doc = report::to_json(&names, &log, &analysis);
            if let Some(a) = &against_out {
                doc["against"] = against::to_json(a);
            }
            if let Some((file, fitted)) = &fit_out {
                doc["fit"] = json!({
                    "file": file.display().to_string(),
                    "params": fitted.iter().map(|f| json!({
                        "name": f.target.param, "stage": f.target.stage,
                        "observed_by": f.target.observable.describe(),
                        "was": f.was, "value": f.value,
                        "log_p50_ms": f.log_p50_ms, "model_p50_ms": f.model_p50_ms,
                    })).collect::<Vec<_>>(),
                });
            }
            print_stdout(&format!("{doc:#}\n"))
        }
    }?;
    Ok(())
}

/// Why the report that follows is empty: no line of `files` was a record.
fn no_records(files: &[String], log: &ParsedLog) -> String {
    let garbled = match log.garbled.len() {
        0 => String::new(),
        n => format!(", {n} that looked like records but did not parse"),
    };
    format!(
        "{}: no TIMELINE or *_TIMING line among {} lines read{garbled}; the report is empty \
         (bwsim log reads cuzk daemon logs)",
        files.join(", "),
        log.lines
    )
}

/// Runs the scenario, writes its TIMELINE log in memory and analyses it as a real one
/// (warm-up: the scenario's own).
fn simulate(scenario: &Path, sets: &[String]) -> anyhow::Result<LogAnalysis> {
    let loaded = crate::scenario::load(scenario, sets)?;
    let model = loaded.model;
    let mut rec = TraceRecorder::new(&model);
    let report = run_model_with(&model, RunOptions { ideal: false }, &mut rec)?;
    if let Some(why) = report.stall() {
        anyhow::bail!("{}: the model stalled: {why}", scenario.display());
    }
    let mut records = timeline_records(&rec);
    records.extend(timing_records(&rec));
    let mut log = ParsedLog::default();
    log.add_text("model", &render_log(records));
    Ok(analyse(&log, model.arrivals.warmup_jobs as usize))
}

/// Corrects each fittable duration by log p50 / model p50 until they agree.
fn fit(scenario: &Path, sets: &[String], real: &LogAnalysis) -> anyhow::Result<Vec<Fitted>> {
    let doc = crate::scenario::include::load_file(scenario)?;
    let loaded = crate::scenario::load(scenario, sets)?;
    let targets: Vec<(FitTarget, f64, f64)> = fit_targets(&doc.table)
        .into_iter()
        .filter_map(|t| {
            let p = loaded.params.iter().find(|p| p.name == t.param)?;
            let v = p
                .value
                .as_float()
                .or(p.value.as_integer().map(|i| i as f64))?;
            let observed = t.observable.p50_ms(real)?;
            Some((t, v, observed))
        })
        .filter(|(_, _, observed)| *observed > 0.0)
        .collect();
    if targets.is_empty() {
        return Err(LogInputError(format!(
            "--fit: {} has no parameter this log observes; a parameter is fittable when a \
             stage's duration_s is exactly \"$name\" and the log has that stage alone: \
             markers X_START at \"stage:start\" and X_END at \"stage:end\", or a timer from \
             \"stage:start\" to \"stage:end\"",
            scenario.display()
        ))
        .into());
    }
    let mut values: Vec<f64> = targets.iter().map(|t| t.1).collect();
    let mut model_p50 = vec![f64::NAN; targets.len()];
    for _ in 0..FIT_ROUNDS {
        let mut s = sets.to_vec();
        s.extend(
            targets
                .iter()
                .zip(&values)
                .map(|((t, _, _), v)| format!("params.{}={v}", t.param)),
        );
        let model = simulate(scenario, &s)?;
        let mut worst: f64 = 0.0;
        for (i, (t, _, observed)) in targets.iter().enumerate() {
            let Some(m) = t.observable.p50_ms(&model).filter(|m| *m > 0.0) else {
                continue;
            };
            model_p50[i] = m;
            worst = worst.max((observed / m - 1.0).abs());
        }
        if worst <= FIT_TOLERANCE {
            break;
        }
        for (i, (_, _, observed)) in targets.iter().enumerate() {
            if model_p50[i].is_finite() {
                values[i] *= observed / model_p50[i];
            }
        }
    }
    Ok(targets
        .into_iter()
        .zip(values)
        .zip(model_p50)
        .map(
            |(((target, was, log_p50_ms), value), model_p50_ms)| Fitted {
                target,
                was,
                value,
                log_p50_ms,
                model_p50_ms,
            },
        )
        .collect())
}

/// `path` as seen from folder `from` (relative when both resolve, else absolute).
fn relative_to(path: &Path, from: &Path) -> String {
    let abs = |p: &Path| -> Option<PathBuf> {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        p.canonicalize().ok()
    };
    let (Some(target), Some(base)) = (abs(path), abs(from)) else {
        return path.display().to_string();
    };
    let t: Vec<Component> = target.components().collect();
    let b: Vec<Component> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..b.len() {
        rel.push("..");
    }
    for c in &t[common..] {
        rel.push(c.as_os_str());
    }
    rel.display().to_string()
}

fn draw(source: &str, a: &LogAnalysis, file: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = file
        .file_stem()
        .map_or_else(|| "log".into(), |s| s.to_string_lossy().into_owned());
    Ok(crate::plot::render(
        &crate::plot::log::LogChart {
            source,
            end_ms: a.window_ms.1,
            jobs: &a.jobs_in_flight.series,
            stages: a
                .stages
                .iter()
                .map(|s| (s.name.as_str(), s.in_flight.as_slice()))
                .collect(),
            gpus_busy: &a.gpus_busy,
            gpus: a.gpus,
        },
        &dir,
        &stem,
    )?)
}
