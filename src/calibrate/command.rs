//! `bwsim calibrate` end to end: measure the host (or re-read saved measurements), fit,
//! and write the calibration file.

use super::error::{CalibrateError, FitError, NotLoadable, Result};
use super::file::CalibrationFile;
use super::probe::harness as gpu;
use super::probe::host as probes;
use super::probe::plan::{Mode, Plan};
use super::probe::{gpu_runs, sys};
use super::summary::{summary, warnings};
use super::{fit, measurements};
use crate::output::print_stdout;
use std::path::PathBuf;

/// Arguments of `bwsim calibrate`.
#[derive(Debug, Clone)]
pub struct CalibrateArgs {
    /// Probe length: tiny (seconds, for tests), quick (< 2 min) or full (< 10 min).
    pub mode: Mode,
    /// Where to write the calibration file.
    pub out: PathBuf,
    /// Advise huge pages (MADV_HUGEPAGE) for the probe buffers.
    pub hugepages: bool,
    /// Skip the GPU probes even if a GPU is present.
    pub no_gpu: bool,
    /// A GPU probe harness built by gpu/build.sh (default: the embedded one).
    pub gpu_probe: Option<PathBuf>,
    /// Also write the raw measurements as JSON here.
    pub json: Option<PathBuf>,
    /// Re-fit measurements saved with `json` instead of measuring.
    pub refit: Option<PathBuf>,
}

impl Default for CalibrateArgs {
    fn default() -> Self {
        Self {
            mode: Mode::Quick,
            out: PathBuf::from("calibration.toml"),
            hugepages: true,
            no_gpu: false,
            gpu_probe: None,
            json: None,
            refit: None,
        }
    }
}

fn input_err(msg: String) -> CalibrateError {
    CalibrateError::Input(msg)
}

/// UTC now as RFC 3339 (seconds precision), without extra dependencies.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The measurements saved with `--json` at `path` (its text `json`), fitted again by
/// today's fits: the measurements, the fit and the calibration file's text. Errors name
/// the file; nothing is written.
pub fn refit(
    path: &std::path::Path,
    json: &str,
) -> Result<(measurements::Measurements, fit::Fitted, String)> {
    let m: measurements::Measurements = serde_json::from_str(json).map_err(|e| {
        input_err(format!(
            "{} is not a measurements file: {e}",
            path.display()
        ))
    })?;
    m.check()
        .map_err(|e| input_err(format!("{}: {e}", path.display())))?;
    let fitted =
        fit::fit(&m).map_err(|e| input_err(format!("{}: cannot fit: {e:#}", path.display())))?;
    let text = CalibrationFile::new(&m, &fitted)
        .render()
        .map_err(|e| input_err(format!("{}: {e:#}", path.display())))?;
    check_loadable(&text).map_err(|why| {
        input_err(format!(
            "{}: the fit gives a calibration bwsim would refuse ({why})",
            path.display()
        ))
    })?;
    Ok((m, fitted, text))
}

/// Runs all probes, fits, and writes the calibration file. Prints what was skipped.
pub fn calibrate_command(args: CalibrateArgs) -> Result<()> {
    if let Some(path) = &args.refit {
        let json = crate::input_file::read_text(path, crate::input_file::MAX_JSON_BYTES)
            .map_err(|e| input_err(format!("cannot read {}: {e}", path.display())))?;
        let (m, fitted, text) = refit(path, &json).map_err(|e| {
            input_err(format!(
                "{e}; nothing was written to {}",
                args.out.display()
            ))
        })?;
        crate::output::write_atomic(&args.out, text.as_bytes())?;
        print_stdout(&format!(
            "{}re-fitted {} into {}\n",
            summary_warning_on_stderr(&m, &fitted),
            path.display(),
            args.out.display()
        ))?;
        return Ok(());
    }
    let mut m = measurements::Measurements {
        mode: args.mode.name().into(),
        date: utc_now(),
        bwsim_version: env!("CARGO_PKG_VERSION").into(),
        ..Default::default()
    };
    let cores = sys::allowed_cpus().len();
    let plan = Plan::new(args.mode, cores);
    let (workers, chaser) = probes::start_host(&mut m, &plan, args.hugepages)?;
    probes::settle(&mut m, &plan, &workers, &chaser)?;
    probes::host_probes(&mut m, &plan, &workers, &chaser)?;
    drop(chaser);
    probes::page_size_probe(&mut m, &plan, &workers)?;
    probes::compute_probe(&mut m, &plan);

    if args.no_gpu {
        m.skipped.push("GPU probes: on request (--no-gpu)".into());
    } else {
        match gpu::GpuProbe::start(gpu::locate(args.gpu_probe.as_deref()), &[]) {
            Ok(mut probe) => {
                if let Err(e) = gpu_runs::gpu_probes(&mut m, &plan, &mut probe, &workers) {
                    workers.idle();
                    m.skipped.push(format!("GPU probes stopped: {e:#}"));
                }
            }
            Err(gpu::Skip(why)) => m.skipped.push(format!("GPU probes: {why}")),
        }
    }
    drop(workers);

    if let Some(j) = &args.json {
        let json = serde_json::to_string_pretty(&m).map_err(CalibrateError::Json)?;
        crate::output::write_atomic(j, json.as_bytes())?;
    }
    let fitted = fit::fit(&m)?;
    let text = CalibrationFile::new(&m, &fitted).render()?;
    if let Err(why) = check_loadable(&text) {
        return Err(FitError::Refused {
            why: Box::new(why),
            out: args.out.clone(),
            measurements: args.json.clone(),
        }
        .into());
    }
    crate::output::write_atomic(&args.out, text.as_bytes())?;
    print_stdout(&format!(
        "{}wrote {}\n",
        summary_warning_on_stderr(&m, &fitted),
        args.out.display()
    ))?;
    Ok(())
}

/// The summary to print on stdout, once the fit's warnings are printed on stderr.
fn summary_warning_on_stderr(m: &measurements::Measurements, fitted: &fit::Fitted) -> String {
    for w in warnings(fitted) {
        eprintln!("{w}");
    }
    summary(m, fitted)
}

/// Checks that a rendered calibration file is one bwsim reads back: as `validate
/// --calibration` reads it, which is also as a scenario including it gets its host (the
/// scenario layer reads it there). A fit of hostile or degenerate measurements (pinned
/// PCIe rates of 0) wrote a file that every later command refused.
pub fn check_loadable(text: &str) -> std::result::Result<(), NotLoadable> {
    let dir = tempfile::tempdir().map_err(NotLoadable::CannotCheck)?;
    let path = dir.path().join("calibration.toml");
    std::fs::write(&path, text).map_err(NotLoadable::CannotCheck)?;
    super::validate::load_calib(&path).map_err(NotLoadable::Refused)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_now_is_rfc3339() {
        let s = utc_now();
        assert_eq!(s.len(), 20);
        assert!(s.ends_with('Z') && s.as_bytes()[10] == b'T');
    }

    #[test]
    fn a_calibration_that_does_not_read_back_is_not_loadable() {
        let e = check_loadable("[hardware.dram]\ncapacity_gbps = -1\n").unwrap_err();
        assert!(matches!(e, NotLoadable::Refused(_)), "{e}");
        assert!(e.to_string().contains("[hardware.dram]"), "{e}");
    }

    #[test]
    fn tiny_calibration_writes_a_parseable_file() {
        let _cpus = crate::calibrate::probe::sys::cpu_timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("cal.toml");
        calibrate_command(CalibrateArgs {
            mode: Mode::Tiny,
            out: out.clone(),
            hugepages: false,
            no_gpu: true,
            gpu_probe: None,
            json: None,
            refit: None,
        })
        .unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        let t: toml::Table = toml::from_str(&text).unwrap();
        assert!(t["hardware"]["dram"]["capacity_gbps"].as_float().unwrap() > 0.0);
        let p = CalibrationFile::parse(&text).unwrap().calibration;
        assert!(p.measurements.skipped[0].contains("--no-gpu"));
    }
}
