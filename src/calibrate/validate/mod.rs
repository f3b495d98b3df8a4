//! `bwsim validate --calibration FILE`: runs mixed contention experiments on the real
//! host (streaming threads + a pointer-chase victim + PCIe copy loops + an upload/NTT
//! pipeline), predicts each from the calibration alone (no refitting), and reports
//! predicted vs measured with the error.
//!
//! - [`calib`]: the calibration as validate reads it.
//! - [`experiment`]: an experiment's setup and outcome.
//! - [`experiment_list`]: the experiments run on a host.
//! - [`measure`]: running one on the real host.
//! - [`predict`]: predicting one with the engine.
//! - [`table`]: predicted vs measured rows, statistics, Markdown and CSV.
//! - [`plot`]: the predicted-vs-measured chart.
//!
//! Every prediction goes through the engine; `steady_state_tests` keeps a steady-state
//! max-min solver as a test oracle that cross-checks it.

pub mod calib;
pub mod experiment;
pub mod experiment_list;
pub mod measure;
pub mod plot;
pub mod predict;
pub mod table;

#[cfg(test)]
mod steady_state_tests;

pub use calib::{Calib, load_calib};
pub use table::{Measured, Row, Table, csv, markdown, summarise};

use crate::calibrate::error::{CalibrateError, Result};
use crate::calibrate::measurements::Measurements;
use crate::calibrate::probe::harness::{self as gpu, GpuProbe};
use crate::calibrate::probe::host as probes;
use crate::calibrate::probe::multi_gpu;
use crate::calibrate::probe::plan::{Mode, Plan, bar};
use crate::calibrate::probe::stream::Kernel;
use crate::calibrate::probe::sys::huge_shortfall;
use crate::input_file::{MAX_JSON_BYTES, read_text};
use experiment_list::experiments;
use measure::measure;
use std::path::{Path, PathBuf};
use table::{HostBandwidth, IdleChase, rows_for};

/// Arguments of `bwsim validate`.
#[derive(Debug, Clone)]
pub struct ValidateArgs {
    /// The calibration file to predict from.
    pub calibration: PathBuf,
    /// Experiment length: tiny (tests), quick or full.
    pub mode: Mode,
    /// Folder for validate.csv, .json, .md and the chart (.png, .svg).
    pub out_dir: PathBuf,
    /// Advise huge pages for the probe buffers.
    pub hugepages: bool,
    /// Skip the GPU experiments.
    pub no_gpu: bool,
    /// A GPU probe harness built by gpu/build.sh (default: the embedded one).
    pub gpu_probe: Option<PathBuf>,
    /// Re-predict the experiments of an earlier validate.json (no measuring).
    pub remeasured: Option<PathBuf>,
}

/// Runs the experiments, prints the table, writes CSV / JSON / PNG into `out_dir`.
pub fn validate_command(args: ValidateArgs) -> Result<()> {
    let bad = CalibrateError::Input;
    let calib = load_calib(&args.calibration).map_err(|e| {
        bad(format!(
            "in calibration file {}: {e:#}",
            args.calibration.display()
        ))
    })?;
    let name = args.calibration.display().to_string();
    let used = crate::scenario::CalibrationUse {
        file: args.calibration.clone(),
        missing: calib.missing.clone(),
    };
    if let Some(note) = used.note() {
        eprintln!("{note}");
    }
    let mut table = if let Some(path) = &args.remeasured {
        let old: Table = serde_json::from_str(
            &read_text(path, MAX_JSON_BYTES)
                .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?,
        )
        .map_err(|e| bad(format!("{} is not a validate.json: {e}", path.display())))?;
        check_remeasured(&old).map_err(|e| bad(format!("{}: {e}", path.display())))?;
        let mut rows = Vec::new();
        for e in &old.experiments {
            let p = calib.predict_engine(&e.setup)?;
            rows.extend(rows_for(&e.name, &e.outcome, &p));
        }
        let mut skipped = old.skipped.clone();
        skipped.push(format!("measurements reused from {}", path.display()));
        let mut table = summarise(&name, rows, skipped, old.experiments);
        table.idle_chase = old.idle_chase.map(|c| idle_chase(&calib, c.run_ns));
        table.host_bandwidth = host_bandwidth(&calib, &table.experiments);
        table
    } else {
        run_experiments(&args, &calib, &name)?
    };
    table.calibration_missing = used.missing;
    let mut text = markdown(&table);
    for s in &table.skipped {
        text.push_str(&format!("skipped: {s}\n"));
    }
    crate::output::print_stdout(&text)?;
    write_outputs(&table, &args.out_dir)?;
    crate::output::print_stdout(&format!(
        "wrote {}/validate.{{csv,json,md,png,svg}}\n",
        args.out_dir.display()
    ))?;
    Ok(())
}

/// The most streaming threads an experiment read back from a file may ask for.
pub const MAX_STREAMS: usize = 4096;
/// The most GPUs copying at once an experiment read back from a file may ask for.
pub const MAX_COPY_GPUS: u32 = 256;
/// The largest pipeline an experiment read back from a file may ask for (log2 of the
/// points: 2^34 x 32 bytes is 512 GiB per copy).
pub const MAX_PIPE_LOG2: u32 = 34;

/// Checks the experiments of a validate.json before re-predicting them: there are some,
/// each asks for what a host can run, and each measured number is a positive number (a
/// row was silently dropped for a negative rate; an experiment of 4,294,967,295 streams
/// ended in "engine run stalled"). The error names the field.
pub fn check_remeasured(t: &Table) -> std::result::Result<(), RemeasuredError> {
    if t.experiments.is_empty() {
        return Err(RemeasuredError::NoExperiments);
    }
    for (i, e) in t.experiments.iter().enumerate() {
        let at = |f: &str| format!("experiments[{i}] ({}).{f}", e.name);
        if let Some((_, n)) = e.setup.streams
            && !(1..=MAX_STREAMS).contains(&n)
        {
            return Err(RemeasuredError::Streams {
                field: at("setup.streams"),
                streams: n,
            });
        }
        if let Some(c) = e.setup.dma
            && !(1..=MAX_COPY_GPUS).contains(&c.gpus)
        {
            return Err(RemeasuredError::CopyGpus {
                field: at("setup.dma.gpus"),
                gpus: c.gpus,
            });
        }
        if let Some((lg, _)) = e.setup.pipe
            && !(1..=MAX_PIPE_LOG2).contains(&lg)
        {
            return Err(RemeasuredError::PipeLog2 {
                field: at("setup.pipe"),
                lg,
            });
        }
        let o = &e.outcome;
        for (f, v) in [
            ("outcome.stream_gbps", o.stream_gbps),
            ("outcome.chase_ns", o.chase_ns),
            ("outcome.dma_gbps", o.dma_gbps),
            ("outcome.pipe_iter_ms", o.pipe_iter_ms),
            ("outcome.pipe_h2d_ms", o.pipe_h2d_ms),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(RemeasuredError::NotMeasured {
                    field: at(f),
                    value: v,
                });
            }
        }
    }
    if let Some(c) = &t.idle_chase
        && !(c.run_ns.is_finite() && c.run_ns > 0.0)
    {
        return Err(RemeasuredError::NotMeasured {
            field: "idle_chase.run_ns".into(),
            value: c.run_ns,
        });
    }
    Ok(())
}

/// An earlier validate.json that cannot be re-predicted: the field, its value and what is
/// allowed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RemeasuredError {
    /// No experiments.
    #[error(
        "experiments is empty: there is nothing to re-predict (a validate.json keeps its \
         experiments' setups and measurements; give one from a run that measured some)"
    )]
    NoExperiments,
    /// Streaming threads outside 1..=[`MAX_STREAMS`].
    #[error("{field}: {streams} streaming threads; an experiment runs 1 to {MAX_STREAMS}")]
    Streams {
        /// `experiments[i] (name).setup.streams`.
        field: String,
        /// The threads asked for.
        streams: usize,
    },
    /// GPUs copying outside 1..=[`MAX_COPY_GPUS`].
    #[error("{field}: {gpus} GPUs; a copy runs on 1 to {MAX_COPY_GPUS}")]
    CopyGpus {
        /// `experiments[i] (name).setup.dma.gpus`.
        field: String,
        /// The GPUs asked for.
        gpus: u32,
    },
    /// A pipeline size outside 2^1..=2^[`MAX_PIPE_LOG2`].
    #[error("{field}: 2^{lg} points; a pipeline runs 2^1 to 2^{MAX_PIPE_LOG2}")]
    PipeLog2 {
        /// `experiments[i] (name).setup.pipe`.
        field: String,
        /// The log2 of the points asked for.
        lg: u32,
    },
    /// A measured number that is not a positive number.
    #[error("{field}: {value} is not a measured number > 0")]
    NotMeasured {
        /// Where it is.
        field: String,
        /// The value.
        value: f64,
    },
}

fn run_experiments(args: &ValidateArgs, calib: &Calib, name: &str) -> Result<Table> {
    let mut skipped = Vec::new();
    let cores = crate::calibrate::probe::sys::allowed_cpus().len();
    let plan = Plan::new(args.mode, cores);
    let mut scratch = Measurements::default();
    let (workers, chaser) = probes::start_host(&mut scratch, &plan, args.hugepages)?;
    if let Some(c) = huge_shortfall(args.hugepages, chaser.huge_coverage) {
        eprintln!(
            "WARNING: the chase buffer is only {:.0}% huge-page backed (fragmented memory?): \
             its latencies describe base-page access, unlike a huge-page calibration",
            c * 100.0
        );
    }
    if let Some(line) = scratch.chase_candidates_line() {
        eprintln!("{line}");
    }
    probes::settle(&mut scratch, &plan, &workers, &chaser)?;
    let mut probes: Vec<GpuProbe> = Vec::new();
    if args.no_gpu {
        skipped.push("GPU experiments: on request (--no-gpu)".to_string());
    } else if calib.link().is_none() {
        skipped.push("GPU experiments: the calibration has no [hardware.gpu]".to_string());
    } else {
        match GpuProbe::start(gpu::locate(args.gpu_probe.as_deref()), &gpu::harness_cpus()) {
            Ok(p) => {
                // Several GPUs: one harness each, for the all-GPU DMA experiments.
                let others = multi_gpu::siblings(&p, &mut skipped);
                probes.push(p);
                probes.extend(others);
            }
            Err(gpu::Skip(why)) => skipped.push(format!("GPU experiments: {why}")),
        }
    }
    let exps = experiments(args.mode, cores, probes.len());
    let pb = bar(exps.len() as u64, "validate");
    let mut rows = Vec::new();
    let mut done = Vec::new();
    for e in &exps {
        pb.set_message(e.name.clone());
        let p = calib.predict_engine(&e.setup)?;
        match measure(&e.setup, &plan, &workers, &chaser, &mut probes) {
            Ok(measured) => {
                rows.extend(rows_for(&e.name, &measured, &p));
                done.push(Measured {
                    name: e.name.clone(),
                    setup: e.setup.clone(),
                    outcome: measured,
                });
            }
            Err(err) => skipped.push(format!("{}: {err:#}", e.name)),
        }
        pb.inc(1);
    }
    pb.finish_with_message("done");
    skipped.extend(scratch.skipped);
    let mut table = summarise(name, rows, skipped, done);
    table.idle_chase = scratch
        .chase_trial_ns
        .iter()
        .copied()
        .reduce(f64::min)
        .map(|run_ns| idle_chase(calib, run_ns));
    if let Some(c) = &table.idle_chase {
        eprintln!("{}", c.line());
    }
    table.host_bandwidth = host_bandwidth(calib, &table.experiments);
    if let Some(b) = &table.host_bandwidth {
        eprintln!("{}", b.line());
    }
    Ok(table)
}

/// A run's idle chase `run_ns` beside the calibration's latency curve at no load.
fn idle_chase(calib: &Calib, run_ns: f64) -> IdleChase {
    IdleChase {
        run_ns,
        calibrated_ns: calib.idle_latency_ns(),
    }
}

/// The streams of the run's highest-thread triad experiment (streams and the chase
/// victim only) beside the calibration's measured rate for that kernel and thread count;
/// None when no such experiment was measured or the calibration has no triad rates.
fn host_bandwidth(calib: &Calib, done: &[Measured]) -> Option<HostBandwidth> {
    let (threads, run_gbps) = done
        .iter()
        .filter(|m| m.setup.dma.is_none() && m.setup.pipe.is_none())
        .filter_map(|m| match (m.setup.streams, m.outcome.stream_gbps) {
            (Some((Kernel::Triad, k)), Some(gbps)) if gbps > 0.0 => Some((k, gbps)),
            _ => None,
        })
        .max_by_key(|&(k, _)| k)?;
    let calibrated_gbps = calib.meas.bw_at(Kernel::Triad, threads)?;
    (calibrated_gbps > 0.0).then_some(HostBandwidth {
        kernel: Kernel::Triad,
        threads,
        run_gbps,
        calibrated_gbps,
    })
}

fn write_outputs(t: &Table, dir: &Path) -> Result<()> {
    use crate::output::write_atomic;
    write_atomic(&dir.join("validate.csv"), csv(t).as_bytes())?;
    write_atomic(
        &dir.join("validate.json"),
        serde_json::to_string_pretty(t)
            .map_err(CalibrateError::Json)?
            .as_bytes(),
    )?;
    write_atomic(&dir.join("validate.md"), markdown(t).as_bytes())?;
    plot::predicted_vs_measured(t, dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remeasured_table_without_experiments_or_with_a_bad_chase_is_refused() {
        let mut t = Table {
            calibration: "cal.toml".into(),
            calibration_missing: Vec::new(),
            rows: Vec::new(),
            median_abs_error_pct: 0.0,
            max_abs_error_pct: 0.0,
            skipped: Vec::new(),
            experiments: Vec::new(),
            idle_chase: None,
            host_bandwidth: None,
        };
        assert_eq!(check_remeasured(&t), Err(RemeasuredError::NoExperiments));
        t.experiments.push(Measured {
            name: "chase alone".into(),
            setup: experiment::Setup {
                streams: None,
                chase: true,
                dma: None,
                pipe: Some((40, true)),
            },
            outcome: experiment::Outcome::default(),
        });
        assert_eq!(
            check_remeasured(&t).unwrap_err().to_string(),
            "experiments[0] (chase alone).setup.pipe: 2^40 points; a pipeline runs 2^1 to 2^34"
        );
        t.experiments[0].setup.pipe = None;
        assert_eq!(check_remeasured(&t), Ok(()));
        t.idle_chase = Some(IdleChase {
            run_ns: -3.0,
            calibrated_ns: 90.0,
        });
        assert_eq!(
            check_remeasured(&t),
            Err(RemeasuredError::NotMeasured {
                field: "idle_chase.run_ns".into(),
                value: -3.0
            })
        );
    }

    #[test]
    fn tiny_validate_runs_host_experiments() {
        let _cpus = crate::calibrate::probe::sys::cpu_timing_lock();
        let dir = tempfile::tempdir().unwrap();
        let cal = dir.path().join("cal.toml");
        crate::calibrate::calibrate_command(crate::calibrate::CalibrateArgs {
            mode: Mode::Tiny,
            out: cal.clone(),
            hugepages: false,
            no_gpu: true,
            gpu_probe: None,
            json: None,
            refit: None,
        })
        .unwrap();
        validate_command(ValidateArgs {
            calibration: cal,
            mode: Mode::Tiny,
            out_dir: dir.path().to_path_buf(),
            hugepages: false,
            no_gpu: true,
            gpu_probe: None,
            remeasured: None,
        })
        .unwrap();
        let j: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
        )
        .unwrap();
        assert!(!j["rows"].as_array().unwrap().is_empty());
        assert!(dir.path().join("validate.png").exists());
        assert!(dir.path().join("validate.svg").exists());
    }

    fn h200_run8(file: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/runs/calibrate/h200-run8")
            .join(file)
    }

    fn committed_table(n: u32) -> Table {
        let text = std::fs::read_to_string(h200_run8(&format!("validate{n}.json"))).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    fn committed_calib() -> Calib {
        load_calib(&h200_run8("h200-host.toml")).unwrap()
    }

    #[test]
    fn host_bandwidth_takes_the_highest_thread_triad_run() {
        let calib = committed_calib();
        let t = committed_table(3);
        let b = host_bandwidth(&calib, &t.experiments).unwrap();
        // triad x14 ran 124.3 GB/s; the calibration measured 14 triad threads at 148.8.
        assert_eq!((b.kernel, b.threads), (Kernel::Triad, 14));
        assert!((b.run_gbps - 124.29).abs() < 0.01, "{b:?}");
        assert!((b.calibrated_gbps - 148.82).abs() < 0.01, "{b:?}");
        // Without triad experiments there is nothing to compare.
        let others: Vec<Measured> = t
            .experiments
            .into_iter()
            .filter(|m| m.setup.streams.is_none_or(|(k, _)| k != Kernel::Triad))
            .collect();
        assert_eq!(host_bandwidth(&calib, &others), None);
    }

    #[test]
    fn remeasured_h200_run8_validates_say_when_the_host_bandwidth_moved() {
        let dir = tempfile::tempdir().unwrap();
        let footer = |n: u32| {
            validate_command(ValidateArgs {
                calibration: h200_run8("h200-host.toml"),
                mode: Mode::Full,
                out_dir: dir.path().to_path_buf(),
                hugepages: false,
                no_gpu: true,
                gpu_probe: None,
                remeasured: Some(h200_run8(&format!("validate{n}.json"))),
            })
            .unwrap();
            let md = std::fs::read_to_string(dir.path().join("validate.md")).unwrap();
            let t: Table = serde_json::from_str(
                &std::fs::read_to_string(dir.path().join("validate.json")).unwrap(),
            )
            .unwrap();
            assert!(t.host_bandwidth.is_some(), "validate{n}");
            md.lines().last().unwrap().to_string()
        };
        // Validate 3's triad x14 drew 124.3 GB/s against 148.8 at calibration: -16%.
        let three = footer(3);
        assert!(
            three.starts_with("WARNING: host bandwidth: triad x14 streams this run 124.3 GB/s"),
            "{three}"
        );
        assert!(three.contains("(-16%)"), "{three}");
        // Validate 1's drew 141.2: -5%, within the tolerance.
        let one = footer(1);
        assert!(
            one.starts_with("host bandwidth: triad x14 streams this run 141.2 GB/s"),
            "{one}"
        );
    }
}
