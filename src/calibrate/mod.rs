//! `bwsim calibrate` and `bwsim validate`: measure a real host, fit the model's
//! parameters, write `calibration.toml`, and check the model against mixed experiments.
//!
//! - [`sys`]: host facts, thread pinning, first-touched buffers.
//! - [`stream`]: STREAM-like read / copy / triad workers (how bytes are counted).
//! - [`latency`]: pointer chase for idle and loaded latency.
//! - [`compute`]: compute-bound hash loop (throughput vs active threads, SMT).
//! - [`gpu`]: the CUDA probe harness (real sppark NTT and MSM, PCIe copies).
//! - [`probes`]: runs the probes of one calibration with progress bars.
//! - [`fit`]: capacity, latency curve, PCIe coupling, kernel time models.
//! - [`fit_contention`]: offered-load latency, pages, compute, DMA policy, staging.
//! - [`output`]: the calibration file (atomic write).
//! - [`predict`]: steady-state predictions of the validation experiments.
//! - [`validate`]: runs them for real and compares; [`plot`] draws the comparison.

pub mod compute;
pub mod data;
pub mod engine_predict;
pub mod fit;
pub mod fit_contention;
pub mod gpu;
pub mod latency;
pub mod output;
pub mod plot;
pub mod predict;
pub mod probes;
pub mod stream;
pub mod sys;
pub mod validate;

pub use validate::{ValidateArgs, validate_command};

use probes::{Mode, Plan};
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

/// A problem with the user's input (a missing or malformed calibration, measurements or
/// validate file), as opposed to a failure while measuring. The CLI maps it to exit 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

fn input_err(msg: String) -> anyhow::Error {
    anyhow::Error::new(InputError(msg))
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

/// Runs all probes, fits, and writes the calibration file. Prints what was skipped.
pub fn calibrate_command(args: CalibrateArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.refit {
        let text = std::fs::read_to_string(path)
            .map_err(|e| input_err(format!("cannot read {}: {e}", path.display())))?;
        let m: data::Measurements = serde_json::from_str(&text).map_err(|e| {
            input_err(format!(
                "{} is not a measurements file: {e}",
                path.display()
            ))
        })?;
        m.check()
            .map_err(|e| input_err(format!("{}: {e}", path.display())))?;
        let fitted = fit::fit(&m)
            .map_err(|e| input_err(format!("{}: cannot fit: {e:#}", path.display())))?;
        let text = output::render(&m, &fitted)
            .map_err(|e| input_err(format!("{}: {e:#}", path.display())))?;
        output::write_atomic(&args.out, &text)?;
        print_summary(&m, &fitted);
        println!("re-fitted {} into {}", path.display(), args.out.display());
        return Ok(());
    }
    let mut m = data::Measurements {
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
        m.skipped
            .push("GPU probes: skipped on request (--no-gpu)".into());
    } else {
        match gpu::GpuProbe::start(gpu::locate(args.gpu_probe.as_deref()), &[]) {
            Ok(mut probe) => {
                if let Err(e) = probes::gpu_probes(&mut m, &plan, &mut probe, &workers) {
                    workers.idle();
                    m.skipped.push(format!("GPU probes stopped: {e:#}"));
                }
            }
            Err(gpu::Skip(why)) => m.skipped.push(format!("GPU probes: skipped, {why}")),
        }
    }
    drop(workers);

    if let Some(j) = &args.json {
        output::write_atomic(j, &serde_json::to_string_pretty(&m)?)?;
    }
    let fitted = fit::fit(&m)?;
    let text = output::render(&m, &fitted)?;
    output::write_atomic(&args.out, &text)?;
    print_summary(&m, &fitted);
    println!("wrote {}", args.out.display());
    Ok(())
}

fn print_summary(m: &data::Measurements, f: &fit::Fitted) {
    if let Some(h) = &m.host {
        println!(
            "host: {} CPUs, {}, THP {} (buffers {}advised MADV_HUGEPAGE; AnonHugePages +{} MiB)",
            h.cores,
            h.cpu_model,
            h.thp_mode(),
            if m.hugepages_advised { "" } else { "not " },
            m.anon_huge_bytes_gained >> 20
        );
    }
    for (i, r) in m.settle.iter().enumerate() {
        println!(
            "settle round {}: t {:.1} s, copy streams {:.1} GB/s, idle chase {:.0} ns",
            i + 1,
            r.t_s,
            r.stream_gbps,
            r.idle_ns
        );
    }
    println!("bandwidth (DRAM GB/s, write-allocate counted; STREAM convention in brackets):");
    for k in stream::Kernel::ALL {
        let row: Vec<String> = m
            .bandwidth
            .iter()
            .filter(|p| p.kernel == k)
            .map(|p| format!("{}t {:.1} [{:.1}]", p.threads, p.dram_gbps, p.stream_gbps))
            .collect();
        println!("  {:5} {}", k.name(), row.join(", "));
    }
    println!(
        "DRAM capacity {:.1} GB/s ({})",
        f.capacity_gbps, f.capacity_basis
    );
    for (mix, c) in &f.curves {
        let row: Vec<String> = c
            .iter()
            .map(|(u, ns)| format!("{u:.2}:{ns:.0}ns"))
            .collect();
        println!("  latency {mix:5} {}", row.join(" "));
    }
    println!("latency_curve written from the {} mix", f.latency_curve_mix);
    for p in &m.pages {
        println!(
            "  pages pass {} {} x{}: {:.0} ns (streams {:.1} GB/s)",
            p.pass,
            if p.huge { "huge   " } else { "no-huge" },
            p.stream_threads,
            p.ns,
            p.stream_gbps
        );
    }
    let compute: Vec<String> = m
        .compute
        .iter()
        .map(|p| {
            format!(
                "{}{}:{:.0}",
                if p.kind == "scaling" { "" } else { &p.kind },
                p.cpus.len(),
                p.total_mops / p.cpus.len().max(1) as f64
            )
        })
        .collect();
    if !compute.is_empty() {
        println!("  compute Mops/thread by threads: {}", compute.join(" "));
    }
    if let Some(p) = &f.pcie {
        println!(
            "PCIe pinned h2d {:.1} d2h {:.1} both {} GB/s; pageable h2d {:.1} d2h {:.1}; DRAM \
             factors h2d {:.2} d2h {:.2} pageable copy {:.2}; pageable latency-bound h2d {:.2} \
             d2h {:.2}",
            p.h2d_gbps,
            p.d2h_gbps,
            p.duplex_gbps.map_or("-".into(), |d| format!("{d:.1}")),
            p.pageable_h2d_gbps,
            p.pageable_d2h_gbps,
            p.h2d_dram_factor,
            p.d2h_dram_factor,
            p.pageable_copy_dram_factor,
            p.pageable_h2d_latency_frac,
            p.pageable_d2h_latency_frac
        );
        for n in &p.notes {
            println!("  {n}");
        }
    }
    for d in &m.dma_stream {
        println!(
            "  dma {} {} x{} {}: streams {:.1} -> {:.1} GB/s, dma {:.1} -> {:.1} GB/s",
            d.dir,
            if d.pinned { "pinned" } else { "pageable" },
            d.stream_threads,
            d.mix.name(),
            d.stream_alone_gbps,
            d.stream_with_gbps,
            d.dma_alone_gbps,
            d.dma_with_gbps
        );
    }
    for (v, k) in &f.ntt {
        println!(
            "NTT {v:13} a={:.4} ns*n*log2n b={:.2e} s, 2^27 {:.2} ms, rms resid {:.1}%",
            k.a_ns,
            k.b_s,
            k.seconds(27) * 1e3,
            k.rms_rel_residual * 100.0
        );
    }
    if let Some(k) = &f.msm {
        println!(
            "MSM model {} a={:.3} ns b={:.2e} s, model 2^26 {:.1} ms, 2^27 {:.1} ms, \
             rms resid {:.1}%",
            k.model,
            k.a_ns,
            k.b_s,
            k.seconds(26) * 1e3,
            k.seconds(27) * 1e3,
            k.rms_rel_residual * 100.0
        );
    }
    print_contention(&f.contention);
    if m.skipped.is_empty() {
        println!("skipped: nothing");
    } else {
        for s in &m.skipped {
            println!("skipped: {s}");
        }
    }
}

fn print_contention(c: &fit_contention::ContentionFit) {
    for (mix, curve) in &c.offered_latency {
        let row: Vec<String> = curve
            .points
            .iter()
            .map(|p| {
                format!(
                    "{:.2}->{:.2}:{:.0}ns",
                    p.offered_load, p.achieved_load, p.latency_ns.median
                )
            })
            .collect();
        println!(
            "  offered->achieved load: latency, {mix} (write fraction {:.2}): {}",
            curve.write_fraction,
            row.join(" ")
        );
    }
    if let Some(p) = &c.pages {
        println!(
            "page-size factor (no-huge / huge chase): idle {:.2} ({:.0} vs {:.0} ns), loaded \
             x{} {:.2}",
            p.idle_factor,
            p.idle_nohuge_ns.median,
            p.idle_huge_ns.median,
            p.loaded_stream_threads,
            p.loaded_factor
        );
    }
    if !c.compute.is_empty() {
        let row: Vec<String> = c
            .compute
            .iter()
            .map(|r| format!("{}:{:.2}", r.threads, r.relative))
            .collect();
        println!(
            "compute per-thread throughput vs threads: {}",
            row.join(" ")
        );
    }
    if let Some(y) = c.smt_yield {
        println!("SMT yield (both siblings / one): {y:.2}");
    }
    for (dir, d) in &c.dma {
        println!(
            "DMA {dir}: policy {} (DMA -{:.0}%, streams -{:.0}% over {} runs), DRAM factor {}",
            d.policy,
            d.dma_slowdown.median * 100.0,
            d.stream_slowdown.median * 100.0,
            d.runs,
            d.dram_factor.map_or("-".into(), |s| format!(
                "{:.2} (spread {:.0}%)",
                s.median,
                s.rel_spread * 100.0
            ))
        );
    }
    for (dir, s) in &c.staging {
        println!(
            "pageable {dir} staging: setup {:.2} ms + bytes / {:.1} GB/s",
            s.setup_s * 1e3,
            s.gbps
        );
    }
    for u in &c.unresolved {
        println!("not pinned down: {u}");
    }
    for w in &c.warnings {
        eprintln!("WARNING: {w}");
    }
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
    fn tiny_calibration_writes_a_parseable_file() {
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
        let p = output::read_provenance(&text).unwrap();
        assert!(p.measurements.skipped[0].contains("--no-gpu"));
    }
}
