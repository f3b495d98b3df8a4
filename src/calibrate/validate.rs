//! `bwsim validate --calibration FILE`: runs mixed contention experiments on the real
//! host (streaming threads + a pointer-chase victim + PCIe copy loops + an upload/NTT
//! pipeline), predicts each from the calibration alone (no refitting), and reports
//! predicted vs measured with the error.

use super::data::Measurements;
use super::gpu::{self, GpuProbe, num};
use super::output::read_provenance;
use super::predict::V2Rules;
use super::predict::{Calib, Copy, Outcome, Setup};
use super::probes::{self, Mode, Plan, bar};
use super::stream::Kernel;
use crate::model::{DramPolicy, LatencyCurve, PcieLink};
use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `bwsim validate`.
#[derive(Debug, Clone)]
pub struct ValidateArgs {
    /// The calibration file to predict from.
    pub calibration: PathBuf,
    /// Experiment length: tiny (tests), quick or full.
    pub mode: Mode,
    /// Folder for validate.csv, validate.json and validate.png.
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

/// One compared quantity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Experiment name.
    pub experiment: String,
    /// What was compared (with unit).
    pub metric: String,
    /// Measured value.
    pub measured: f64,
    /// Predicted value.
    pub predicted: f64,
    /// (predicted - measured) / measured, percent.
    pub error_pct: f64,
    /// The engine's prediction with the model v1 rules (max-min for every DRAM
    /// consumer, latency of utilisation capped at 1, no per-thread bound).
    #[serde(default)]
    pub predicted_v1: f64,
    /// Its error, percent.
    #[serde(default)]
    pub error_v1_pct: f64,
    /// Steady-state prediction with equal fractional slowdown for all activities on a
    /// saturated resource (the design note's max-min rule), one latency curve.
    #[serde(default)]
    pub predicted_equal_share: f64,
    /// Its error, percent.
    #[serde(default)]
    pub error_equal_share_pct: f64,
    /// As the equal-share prediction, but with per-mix latency curves (a possible model
    /// extension; not what the engine does).
    #[serde(default)]
    pub predicted_mix_aware: f64,
    /// Its error, percent.
    #[serde(default)]
    pub error_mix_aware_pct: f64,
}

/// All rows plus summary statistics.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Table {
    /// Calibration file used.
    pub calibration: String,
    /// Rows.
    pub rows: Vec<Row>,
    /// Median of |error %|.
    pub median_abs_error_pct: f64,
    /// Max of |error %|.
    pub max_abs_error_pct: f64,
    /// Median of |error %| of the engine with the model v1 rules.
    #[serde(default)]
    pub median_abs_error_v1_pct: f64,
    /// Max of |error %| of the engine with the model v1 rules.
    #[serde(default)]
    pub max_abs_error_v1_pct: f64,
    /// Median of |error %| of the equal-share steady-state variant.
    #[serde(default)]
    pub median_abs_error_equal_share_pct: f64,
    /// Max of |error %| of the equal-share steady-state variant.
    #[serde(default)]
    pub max_abs_error_equal_share_pct: f64,
    /// Median of |error %| of the mix-aware variant.
    #[serde(default)]
    pub median_abs_error_mix_aware_pct: f64,
    /// Max of |error %| of the mix-aware variant.
    #[serde(default)]
    pub max_abs_error_mix_aware_pct: f64,
    /// What was skipped and why.
    pub skipped: Vec<String>,
    /// Each experiment's setup and measured outcome (to re-predict from another
    /// calibration with `--remeasured`).
    #[serde(default)]
    pub experiments: Vec<Measured>,
}

/// One experiment as run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    /// Name.
    pub name: String,
    /// What ran.
    pub setup: Setup,
    /// What was measured.
    pub outcome: Outcome,
}

/// Builds the predictor's view of the host from a calibration file's text.
pub fn load_calib(text: &str) -> anyhow::Result<Calib> {
    let t: toml::Table = toml::from_str(text).context("calibration file is not valid TOML")?;
    let hw = t
        .get("hardware")
        .and_then(|v| v.as_table())
        .ok_or_else(|| anyhow!("calibration file has no [hardware] table"))?;
    let dram = hw
        .get("dram")
        .and_then(|v| v.as_table())
        .ok_or_else(|| anyhow!("calibration file has no [hardware.dram] table"))?;
    let fnum = |tab: &toml::Table, k: &str| -> Option<f64> {
        tab.get(k)
            .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
    };
    let capacity = fnum(dram, "capacity_gbps")
        .ok_or_else(|| anyhow!("[hardware.dram] lacks capacity_gbps"))?;
    if !(capacity.is_finite() && capacity > 0.0) {
        bail!(
            "[hardware.dram] capacity_gbps = {capacity}: must be a finite number of GB/s \
             greater than 0"
        );
    }
    let pts: Vec<(f64, f64)> = dram
        .get("latency_curve")
        .and_then(|v| v.as_array())
        .ok_or_else(|| anyhow!("[hardware.dram] lacks latency_curve"))?
        .iter()
        .filter_map(|p| {
            let a = p.as_array()?;
            let g = |i: usize| {
                a.get(i)
                    .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|x| x as f64)))
            };
            Some((g(0)?, g(1)?))
        })
        .collect();
    let curve = LatencyCurve::new(pts.clone()).map_err(|e| anyhow!("latency_curve: {e}"))?;
    let offered_curve = LatencyCurve::offered(pts).map_err(|e| anyhow!("latency_curve: {e}"))?;
    let link = hw.get("gpu").and_then(|v| v.as_table()).and_then(|g| {
        Some(PcieLink {
            h2d_gbps: fnum(g, "pcie_h2d_gbps")?,
            d2h_gbps: fnum(g, "pcie_d2h_gbps")?,
            duplex_gbps: fnum(g, "pcie_duplex_gbps"),
            pageable_h2d_gbps: fnum(g, "pageable_h2d_gbps")?,
            pageable_d2h_gbps: fnum(g, "pageable_d2h_gbps")?,
            h2d_dram_factor: fnum(g, "h2d_dram_factor").unwrap_or(1.0),
            d2h_dram_factor: fnum(g, "d2h_dram_factor").unwrap_or(1.0),
            pageable_copy_dram_factor: fnum(g, "pageable_copy_dram_factor").unwrap_or(2.0),
        })
    });
    if let Some(l) = &link {
        for (key, v) in [
            ("pcie_h2d_gbps", l.h2d_gbps),
            ("pcie_d2h_gbps", l.d2h_gbps),
            ("pageable_h2d_gbps", l.pageable_h2d_gbps),
            ("pageable_d2h_gbps", l.pageable_d2h_gbps),
            ("h2d_dram_factor", l.h2d_dram_factor),
            ("d2h_dram_factor", l.d2h_dram_factor),
            ("pageable_copy_dram_factor", l.pageable_copy_dram_factor),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("[hardware.gpu] {key} = {v}: must be a finite number greater than 0");
            }
        }
    }
    let prov = read_provenance(text).context("calibration file's [calibration] table")?;
    let lat = prov.fitted.pcie.as_ref().map_or((0.0, 0.0), |p| {
        (p.pageable_h2d_latency_frac, p.pageable_d2h_latency_frac)
    });
    Ok(Calib {
        capacity_gbps: capacity,
        curve,
        link,
        meas: prov.measurements,
        ntt: prov.fitted.ntt,
        pageable_latency_frac: lat,
        mix_curves: mix_curves(&prov.fitted.curves),
        v2: Some(V2Rules {
            dma_h2d: dma_policy(&prov.fitted.contention, "h2d", DramPolicy::Proportional),
            dma_d2h: dma_policy(&prov.fitted.contention, "d2h", DramPolicy::Priority),
            offered_curve,
        }),
    })
}

/// The DMA policy calibrate fitted for `dir`, or what a pinned DMA of that direction
/// shows on the hosts measured so far (H2D proportional, D2H priority).
fn dma_policy(
    c: &super::fit_contention::ContentionFit,
    dir: &str,
    default: DramPolicy,
) -> DramPolicy {
    c.dma
        .get(dir)
        .and_then(|f| DramPolicy::parse(&f.policy))
        .unwrap_or(default)
}

fn mix_curves(
    curves: &std::collections::BTreeMap<String, Vec<(f64, f64)>>,
) -> Option<(LatencyCurve, LatencyCurve)> {
    let r = LatencyCurve::new(curves.get("read")?.clone()).ok()?;
    let c = LatencyCurve::new(curves.get("copy")?.clone()).ok()?;
    Some((r, c))
}

struct Exp {
    name: String,
    setup: Setup,
}

fn experiments(mode: Mode, cores: usize, gpu: bool) -> Vec<Exp> {
    // CPU 0: the chase; CPUs 1..=k: streams; at least one CPU left for the GPU harness.
    let kmax = cores.saturating_sub(2).max(1);
    let pick = |list: &[usize]| -> Vec<usize> {
        let mut v: Vec<usize> = list.iter().map(|&k| k.min(kmax)).collect();
        v.dedup();
        v
    };
    let mut out = Vec::new();
    let (triad, dma_k, pipe_k, lg) = match mode {
        Mode::Tiny => (pick(&[1]), pick(&[1]), pick(&[1]), 16u32),
        Mode::Quick => (
            pick(&[3, kmax / 2, kmax]),
            pick(&[kmax / 2, kmax]),
            pick(&[0, kmax]),
            24,
        ),
        Mode::Full => (
            pick(&[2, 5, kmax / 2, kmax]),
            pick(&[3, kmax / 2, kmax]),
            pick(&[0, kmax / 2, kmax]),
            25,
        ),
    };
    for k in triad {
        out.push(Exp {
            name: format!("triad x{k} + chase"),
            setup: Setup {
                streams: Some((Kernel::Triad, k)),
                chase: true,
                dma: None,
                pipe: None,
            },
        });
    }
    if !gpu {
        return out;
    }
    for &k in &dma_k {
        out.push(Exp {
            name: format!("copy x{k} + pinned h2d + chase"),
            setup: Setup {
                streams: Some((Kernel::Copy, k)),
                chase: true,
                dma: Some(Copy {
                    h2d: true,
                    pinned: true,
                }),
                pipe: None,
            },
        });
    }
    if let Some(&k) = dma_k.last() {
        out.push(Exp {
            name: format!("read x{k} + pageable h2d + chase"),
            setup: Setup {
                streams: Some((Kernel::Read, k)),
                chase: true,
                dma: Some(Copy {
                    h2d: true,
                    pinned: false,
                }),
                pipe: None,
            },
        });
    }
    for k in pipe_k {
        out.push(Exp {
            name: format!("copy x{k} + pageable 2^{lg} upload/NTT/download + chase"),
            setup: Setup {
                streams: if k == 0 {
                    None
                } else {
                    Some((Kernel::Copy, k))
                },
                chase: true,
                dma: None,
                pipe: Some((lg, false)),
            },
        });
    }
    out
}

fn measure(
    s: &Setup,
    plan: &Plan,
    workers: &super::stream::Workers,
    chaser: &super::latency::Chaser,
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

/// Predictions of one experiment: engine, equal-share steady state, mix-aware.
pub struct Predictions {
    /// The bwsim engine (model v2 rules when the calibration gives them).
    pub engine: Outcome,
    /// The bwsim engine with the model v1 rules.
    pub v1: Outcome,
    /// Equal fractional shares, one latency curve.
    pub equal: Outcome,
    /// Equal shares, per-mix latency curves.
    pub mix: Outcome,
}

fn rows_for(name: &str, m: &Outcome, p: &Predictions) -> Vec<Row> {
    let mut rows = Vec::new();
    let err = |b: f64, a: f64| (b - a) / a * 100.0;
    let mut push = |metric: &str, f: fn(&Outcome) -> Option<f64>| {
        if let (Some(a), Some(b)) = (f(m), f(&p.engine))
            && a > 0.0
        {
            let e = f(&p.equal).unwrap_or(b);
            let c = f(&p.mix).unwrap_or(e);
            let v1 = f(&p.v1).unwrap_or(b);
            rows.push(Row {
                experiment: name.into(),
                metric: metric.into(),
                measured: a,
                predicted: b,
                error_pct: err(b, a),
                predicted_v1: v1,
                error_v1_pct: err(v1, a),
                predicted_equal_share: e,
                error_equal_share_pct: err(e, a),
                predicted_mix_aware: c,
                error_mix_aware_pct: err(c, a),
            });
        }
    };
    push("streams GB/s", |o| o.stream_gbps);
    push("chase ns", |o| o.chase_ns);
    push("dma GB/s", |o| o.dma_gbps);
    push("pipe iteration ms", |o| o.pipe_iter_ms);
    push("pipe upload ms", |o| o.pipe_h2d_ms);
    rows
}

fn predictions(calib: &Calib, s: &Setup) -> anyhow::Result<Predictions> {
    Ok(Predictions {
        engine: calib.predict_engine(s)?,
        v1: Calib {
            v2: None,
            ..calib.clone()
        }
        .predict_engine(s)?,
        equal: calib.predict(s)?,
        mix: calib.predict_with(s, true)?,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Summarises rows into a table.
pub fn summarise(
    calibration: &str,
    rows: Vec<Row>,
    skipped: Vec<String>,
    experiments: Vec<Measured>,
) -> Table {
    let abs: Vec<f64> = rows.iter().map(|r| r.error_pct.abs()).collect();
    let abs2: Vec<f64> = rows.iter().map(|r| r.error_mix_aware_pct.abs()).collect();
    let abs3: Vec<f64> = rows.iter().map(|r| r.error_equal_share_pct.abs()).collect();
    let abs1: Vec<f64> = rows.iter().map(|r| r.error_v1_pct.abs()).collect();
    Table {
        calibration: calibration.into(),
        median_abs_error_v1_pct: median(abs1.clone()),
        max_abs_error_v1_pct: abs1.iter().copied().fold(0.0, f64::max),
        median_abs_error_pct: median(abs.clone()),
        max_abs_error_pct: abs.iter().copied().fold(0.0, f64::max),
        median_abs_error_equal_share_pct: median(abs3.clone()),
        max_abs_error_equal_share_pct: abs3.iter().copied().fold(0.0, f64::max),
        median_abs_error_mix_aware_pct: median(abs2.clone()),
        max_abs_error_mix_aware_pct: abs2.iter().copied().fold(0.0, f64::max),
        rows,
        skipped,
        experiments,
    }
}

/// The table as Markdown.
pub fn markdown(t: &Table) -> String {
    let mut s = String::from(
        "| experiment | metric | measured | engine | error % | engine v1 | error % | \
         equal-share | error % | mix-aware | error % |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in &t.rows {
        s.push_str(&format!(
            "| {} | {} | {:.2} | {:.2} | {:+.1} | {:.2} | {:+.1} | {:.2} | {:+.1} | {:.2} | \
             {:+.1} |\n",
            r.experiment,
            r.metric,
            r.measured,
            r.predicted,
            r.error_pct,
            r.predicted_v1,
            r.error_v1_pct,
            r.predicted_equal_share,
            r.error_equal_share_pct,
            r.predicted_mix_aware,
            r.error_mix_aware_pct
        ));
    }
    s.push_str(&format!(
        "\nengine (the model as simulated): median |error| {:.1}%, max |error| {:.1}% over {} \
         comparisons\nengine v1 (the old rules: max-min for every DRAM consumer, latency \
         of utilisation): median {:.1}%, max {:.1}%\nequal-share steady state (max-min with equal slowdown, one latency \
         curve): median {:.1}%, max {:.1}%\nmix-aware latency (per-mix curves, a model \
         extension): median {:.1}%, max {:.1}%\n",
        t.median_abs_error_pct,
        t.max_abs_error_pct,
        t.rows.len(),
        t.median_abs_error_v1_pct,
        t.max_abs_error_v1_pct,
        t.median_abs_error_equal_share_pct,
        t.max_abs_error_equal_share_pct,
        t.median_abs_error_mix_aware_pct,
        t.max_abs_error_mix_aware_pct
    ));
    s
}

/// The table as CSV.
pub fn csv(t: &Table) -> String {
    let mut s = String::from(
        "experiment,metric,measured,predicted_engine,error_pct,predicted_engine_v1,\
         error_v1_pct,predicted_equal_share,error_equal_share_pct,predicted_mix_aware,\
         error_mix_aware_pct\n",
    );
    for r in &t.rows {
        s.push_str(&format!(
            "\"{}\",\"{}\",{},{},{:.3},{},{:.3},{},{:.3},{},{:.3}\n",
            r.experiment,
            r.metric,
            r.measured,
            r.predicted,
            r.error_pct,
            r.predicted_v1,
            r.error_v1_pct,
            r.predicted_equal_share,
            r.error_equal_share_pct,
            r.predicted_mix_aware,
            r.error_mix_aware_pct
        ));
    }
    s
}

/// Runs the experiments, prints the table, writes CSV / JSON / PNG into `out_dir`.
pub fn validate_command(args: ValidateArgs) -> anyhow::Result<()> {
    let bad = |e: String| anyhow::Error::new(super::InputError(e));
    let text = std::fs::read_to_string(&args.calibration)
        .map_err(|e| bad(format!("cannot read {}: {e}", args.calibration.display())))?;
    let calib = load_calib(&text).map_err(|e| {
        bad(format!(
            "in calibration file {}: {e:#}",
            args.calibration.display()
        ))
    })?;
    let name = args.calibration.display().to_string();
    let table = if let Some(path) = &args.remeasured {
        let old: Table = serde_json::from_str(
            &std::fs::read_to_string(path)
                .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?,
        )
        .map_err(|e| bad(format!("{} is not a validate.json: {e}", path.display())))?;
        let mut rows = Vec::new();
        for e in &old.experiments {
            let p = predictions(&calib, &e.setup)?;
            rows.extend(rows_for(&e.name, &e.outcome, &p));
        }
        let mut skipped = old.skipped.clone();
        skipped.push(format!("measurements reused from {}", path.display()));
        summarise(&name, rows, skipped, old.experiments)
    } else {
        run_experiments(&args, &calib, &name)?
    };
    let mut text = markdown(&table);
    for s in &table.skipped {
        text.push_str(&format!("skipped: {s}\n"));
    }
    crate::output::print_stdout(&text)?;
    write_outputs(&table, &args.out_dir)?;
    crate::output::print_stdout(&format!(
        "wrote {}/validate.{{csv,json,md,png}}\n",
        args.out_dir.display()
    ))?;
    Ok(())
}

fn run_experiments(args: &ValidateArgs, calib: &Calib, name: &str) -> anyhow::Result<Table> {
    let mut skipped = Vec::new();
    let cores = super::sys::allowed_cpus().len();
    let plan = Plan::new(args.mode, cores);
    let mut scratch = Measurements::default();
    let (workers, chaser) = probes::start_host(&mut scratch, &plan, args.hugepages)?;
    probes::settle(&mut scratch, &plan, &workers, &chaser)?;
    let mut probe = None;
    if args.no_gpu {
        skipped.push("GPU experiments: skipped on request (--no-gpu)".to_string());
    } else if calib.link.is_none() {
        skipped.push("GPU experiments: the calibration has no [hardware.gpu]".to_string());
    } else {
        match GpuProbe::start(gpu::locate(args.gpu_probe.as_deref()), &gpu::harness_cpus()) {
            Ok(p) => probe = Some(p),
            Err(gpu::Skip(why)) => skipped.push(format!("GPU experiments: skipped, {why}")),
        }
    }
    let exps = experiments(args.mode, cores, probe.is_some());
    let pb = bar(exps.len() as u64, "validate");
    let mut rows = Vec::new();
    let mut done = Vec::new();
    for e in &exps {
        pb.set_message(e.name.clone());
        let p = predictions(calib, &e.setup)?;
        match measure(&e.setup, &plan, &workers, &chaser, probe.as_mut()) {
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
    Ok(summarise(name, rows, skipped, done))
}

fn write_outputs(t: &Table, dir: &Path) -> anyhow::Result<()> {
    use super::output::write_atomic;
    write_atomic(&dir.join("validate.csv"), &csv(t))?;
    write_atomic(
        &dir.join("validate.json"),
        &serde_json::to_string_pretty(t)?,
    )?;
    write_atomic(&dir.join("validate.md"), &markdown(t))?;
    super::plot::predicted_vs_measured(t, &dir.join("validate.png"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_statistics() {
        let row = |e: f64| Row {
            experiment: "e".into(),
            metric: "m".into(),
            measured: 100.0,
            predicted: 100.0 + e,
            error_pct: e,
            predicted_v1: 100.0,
            error_v1_pct: 0.0,
            predicted_equal_share: 100.0,
            error_equal_share_pct: 0.0,
            predicted_mix_aware: 100.0,
            error_mix_aware_pct: 0.0,
        };
        let t = summarise("c", vec![row(-5.0), row(2.0), row(20.0)], vec![], vec![]);
        assert_eq!(t.median_abs_error_pct, 5.0);
        assert_eq!(t.max_abs_error_pct, 20.0);
        assert!(markdown(&t).contains("median |error| 5.0%"));
        assert_eq!(t.max_abs_error_mix_aware_pct, 0.0);
        assert_eq!(csv(&t).lines().count(), 4);
    }

    #[test]
    fn experiment_list_fits_the_cores() {
        let e = experiments(Mode::Quick, 16, true);
        assert!(
            e.iter()
                .all(|x| x.setup.streams.is_none_or(|(_, k)| k <= 14))
        );
        assert!(e.iter().any(|x| x.setup.pipe.is_some()));
        let e = experiments(Mode::Quick, 16, false);
        assert!(
            e.iter()
                .all(|x| x.setup.dma.is_none() && x.setup.pipe.is_none())
        );
    }

    #[test]
    fn bad_calibration_files_give_clear_errors() {
        let e = load_calib("x = 1").unwrap_err().to_string();
        assert!(e.contains("[hardware]"), "{e}");
        let e = load_calib("[hardware.dram]\ncapacity_gbps = 10.0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("latency_curve"), "{e}");
        assert!(load_calib("not toml [").is_err());
    }

    #[test]
    fn tiny_validate_runs_host_experiments() {
        let dir = tempfile::tempdir().unwrap();
        let cal = dir.path().join("cal.toml");
        super::super::calibrate_command(super::super::CalibrateArgs {
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
    }
}
