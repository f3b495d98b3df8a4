//! `bwsim log FILE...`: read cuzk daemon logs and print what they say about GPU use,
//! gaps, timers, stage durations and concurrency (text or JSON); with `--against` run
//! the scenario at the log's concurrency and set the two side by side, with `--fit`
//! correct the scenario's fittable durations until the model's medians match the log's
//! and write them as a scenario that includes the original, with `--plot` draw
//! concurrency and GPU busy over time.

use std::path::{Component, Path, PathBuf};

use super::error::Result;
use crate::cli::{Format, LogArgs};
use crate::cuzk_log::fit::{fit_json, fit_text, render_include, undetermined_warning};
use crate::cuzk_log::model::{fit, model_concurrency, simulate, worker_layout};
use crate::cuzk_log::{AnalyseOptions, LogAnalysis, LogInputError, ParsedLog};
use crate::cuzk_log::{against, read_and_analyse, report};
use crate::output::{check_file_target, print_stdout, write_atomic};

/// Reads the logs (garbled lines are counted, never fatal) and prints the analysis.
pub fn log(args: LogArgs) -> Result<()> {
    check_outputs(&args)?;
    let scenario = match &args.against {
        Some(s) => Some(crate::scenario::load(s, &args.sets)?),
        None => None,
    };
    let opts = AnalyseOptions {
        warmup_jobs: args.warmup_jobs,
        workers: worker_layout(args.gpu_workers_per_device, scenario.as_ref()),
    };
    let (log, analysis) = read_and_analyse(&args.files, &opts)?;
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
    if let (Some(path), Some(loaded)) = (&args.against, &scenario) {
        let (sets, concurrency, rule) = model_concurrency(&args.sets, loaded, &analysis);
        let model = simulate(path, &sets)?;
        let cmp = against::compare(
            &path.display().to_string(),
            concurrency,
            rule,
            &analysis,
            &model,
        );
        if args.fit {
            let out = args
                .fit_out
                .clone()
                .unwrap_or_else(|| PathBuf::from("fit.toml"));
            let fitted = fit(path, &sets, &analysis)?;
            for warning in fitted.iter().filter_map(undetermined_warning) {
                eprintln!("warning: {warning}");
            }
            let include = relative_to(path, &folder_of(&out));
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
                text.push_str(&fit_text(file, fitted));
            }
            print_stdout(&text)
        }
        Format::Json => {
            let mut doc = report::to_json(&names, &log, &analysis);
            if let Some(a) = &against_out {
                doc["against"] = against::to_json(a);
            }
            if let Some((file, fitted)) = &fit_out {
                doc["fit"] = fit_json(file, fitted);
            }
            print_stdout(&format!("{doc:#}\n"))
        }
    }?;
    Ok(())
}

/// Every output (the plot's PNG and SVG, the fit file) checked before any work: each may
/// be written, none is an input (a log, the scenario or a file it includes) and no two
/// are one path.
fn check_outputs(args: &LogArgs) -> Result<()> {
    let mut outputs: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Some(p) = &args.plot {
        let dir = folder_of(p);
        let stem = p
            .file_stem()
            .map_or_else(|| "log".into(), |s| s.to_os_string());
        for ext in ["png", "svg"] {
            let mut f = dir.join(&stem);
            f.set_extension(ext);
            outputs.push(("--plot", f));
        }
    }
    if args.fit {
        let f = args
            .fit_out
            .clone()
            .unwrap_or_else(|| PathBuf::from("fit.toml"));
        outputs.push(("--fit-out", f));
    }
    let mut inputs: Vec<PathBuf> = args.files.clone();
    if let Some(s) = &args.against {
        inputs.push(s.clone());
        if let Ok(doc) = crate::scenario::include::load_file(s) {
            inputs.extend(doc.files);
        }
    }
    for (i, (flag, out)) in outputs.iter().enumerate() {
        check_file_target(out)?;
        if let Some(input) = inputs.iter().find(|f| same_path(f, out)) {
            return Err(LogInputError::OutputIsInput {
                flag,
                output: out.clone(),
                input: input.clone(),
            }
            .into());
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, o)| same_path(o, out)) {
            return Err(LogInputError::OutputsCollide {
                flag,
                output: out.clone(),
                other,
            }
            .into());
        }
    }
    Ok(())
}

/// Whether two paths name one file (existing files by identity, others by their
/// absolute form).
fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => absolute(a) == absolute(b),
    }
}

/// `path` made absolute without touching the file system beyond its existing part.
fn absolute(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    // Resolve the longest existing ancestor (symlinks, `..`), keep the rest as written.
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return abs,
        }
    }
}

/// The folder a file goes in (`.` for a bare name).
fn folder_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
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

/// `path` as seen from folder `from`, which need not exist yet (relative when both
/// resolve to absolute paths, else `path` as given).
fn relative_to(path: &Path, from: &Path) -> String {
    let (target, base) = (absolute(path), absolute(from));
    if !target.is_absolute() || !base.is_absolute() {
        return path.display().to_string();
    }
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

fn draw(source: &str, a: &LogAnalysis, file: &Path) -> Result<Vec<PathBuf>> {
    let dir = folder_of(file);
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
