//! Tables to text: commented `[hardware]` and `[params]` (numbers to 6 significant
//! digits), then `[calibration]`, refused when a number is not finite.

use super::CalibrationFile;
use super::from_fit::lines_in_flight;
use super::tables::Provenance;
use crate::calibrate::error::{FileError, Result};
use crate::calibrate::fit::staging::staging_notes;
use crate::model::CopyDir;
use serde::Serialize;
use std::fmt::Write as _;

impl CalibrationFile {
    /// The file's text: commented `[hardware]` and `[params]` tables (numbers to 6
    /// significant digits), then `[calibration]`. Refuses a non-finite number.
    pub fn render(&self) -> Result<String> {
        let mut o = String::new();
        let prov = &self.calibration;
        let (fit, m) = (&prov.fitted, &prov.measurements);
        let hw = &self.hardware;
        writeln!(o, "# bwsim calibration: {}", one_line(&prov.summary))?;
        writeln!(
            o,
            "# Include it from a scenario: include = [\"calibration/<this file>\"]. Written by\n\
             # `bwsim calibrate`; [calibration] at the end holds provenance and raw data.\n"
        )?;
        writeln!(o, "[hardware]")?;
        writeln!(o, "cpu_cores = {}", hw.cpu_cores)?;
        writeln!(o)?;
        if let Some(c) = &hw.cpu {
            writeln!(o, "[hardware.cpu]")?;
            writeln!(
                o,
                "# Compute-bound hash loop on 1..N threads, one per core first. Per-core throughput\n\
                 # vs active cores, relative to one alone, fitted non-increasing (all-core frequency\n\
                 # cannot rise with more active cores). Stages opt in with compute_bound_frac."
            )?;
            writeln!(o, "physical_cores = {}", c.physical_cores)?;
            writeln!(o, "threads_per_core = {}", c.threads_per_core)?;
            writeln!(o, "smt_yield = {}", f(c.smt_yield))?;
            let pts: Vec<String> = (c.per_core_throughput.iter())
                .map(|&(n, r)| format!("[{}, {}]", n, f(r)))
                .collect();
            writeln!(o, "per_core_throughput = [{}]", pts.join(", "))?;
            writeln!(o)?;
        }
        writeln!(o, "[hardware.dram]")?;
        writeln!(
            o,
            "# DRAM bytes per second, write-allocate counted. {}",
            fit.capacity_basis
        )?;
        writeln!(o, "capacity_gbps = {}", f(hw.dram.capacity_gbps))?;
        writeln!(
            o,
            "# Loaded latency vs utilisation (achieved / capacity), pointer chase behind {} \
             streams",
            fit.latency_curve_mix
        )?;
        let pts: Vec<String> = hw
            .dram
            .latency_curve
            .iter()
            .map(|&(u, ns)| format!("[{}, {}]", f(u), f(ns)))
            .collect();
        writeln!(o, "latency_curve = [{}]", pts.join(", "))?;
        if let Some(load) = &hw.dram.latency_load {
            writeln!(
                o,
                "# Read the curve at offered load (demand / capacity): latency keeps rising past\n\
                 # saturation while queues build."
            )?;
            writeln!(o, "latency_load = \"{}\"", esc(load))?;
        }
        if let Some(lines) = hw.dram.lines_in_flight_per_thread {
            if let Some((_, note)) = lines_in_flight(m, fit) {
                writeln!(o, "# {}", one_line(&note))?;
            }
            writeln!(o, "lines_in_flight_per_thread = {}", f(lines))?;
        }
        for (dir, p) in [("h2d", &hw.dram.dma_h2d), ("d2h", &hw.dram.dma_d2h)] {
            if let Some(p) = p {
                let basis = fit.contention.dma.get(dir).map_or(
                    "not measured here; the direction's usual policy".to_string(),
                    |_| "fitted from the DMA-next-to-streams runs".to_string(),
                );
                writeln!(o, "# pinned {dir} DMA's DRAM share: {basis}")?;
                writeln!(o, "dma_{dir} = {{ policy = \"{}\" }}", esc(&p.policy))?;
            }
        }
        writeln!(o)?;
        if let Some(g) = &hw.gpu {
            writeln!(o, "[hardware.gpu]")?;
            if let Some(info) = &m.gpu {
                writeln!(
                    o,
                    "# {} (driver {})",
                    one_line(&info.name),
                    one_line(&info.driver_version)
                )?;
            }
            writeln!(o, "count = {}", g.count)?;
            writeln!(o, "vram_gib = {}", f(g.vram_gib))?;
            writeln!(o, "pcie_h2d_gbps = {}", f(g.pcie_h2d_gbps))?;
            writeln!(o, "pcie_d2h_gbps = {}", f(g.pcie_d2h_gbps))?;
            if let Some(d) = g.pcie_duplex_gbps {
                writeln!(o, "pcie_duplex_gbps = {}", f(d))?;
            }
            let opt = |o: &mut String, key: &str, v: Option<f64>| -> std::fmt::Result {
                match v {
                    Some(v) => writeln!(o, "{key} = {}", f(v)),
                    None => Ok(()),
                }
            };
            opt(&mut o, "pageable_h2d_gbps", g.pageable_h2d_gbps)?;
            opt(&mut o, "pageable_d2h_gbps", g.pageable_d2h_gbps)?;
            for n in fit.pcie.iter().flat_map(|p| &p.notes) {
                writeln!(o, "# {}", one_line(n))?;
            }
            opt(&mut o, "h2d_dram_factor", g.h2d_dram_factor)?;
            opt(&mut o, "d2h_dram_factor", g.d2h_dram_factor)?;
            opt(
                &mut o,
                "pageable_copy_dram_factor",
                g.pageable_copy_dram_factor,
            )?;
            writeln!(
                o,
                "# Share of each copy's time that waits on DRAM latency (a transfer stage takes it\n\
                 # unless it sets latency_bound_frac), fitted from the copies next to streams."
            )?;
            opt(&mut o, "pinned_h2d_latency_frac", g.pinned_h2d_latency_frac)?;
            opt(&mut o, "pinned_d2h_latency_frac", g.pinned_d2h_latency_frac)?;
            opt(
                &mut o,
                "pageable_h2d_latency_frac",
                g.pageable_h2d_latency_frac,
            )?;
            opt(
                &mut o,
                "pageable_d2h_latency_frac",
                g.pageable_d2h_latency_frac,
            )?;
            writeln!(o)?;
            for (dir, d) in (g.pageable_staging.iter())
                .flat_map(|t| [(CopyDir::H2d, &t.h2d), (CopyDir::D2h, &t.d2h)])
            {
                let Some(d) = d else { continue };
                writeln!(o, "[hardware.gpu.pageable_staging.{dir}]")?;
                writeln!(
                    o,
                    "# Pageable {dir} copies as the driver's one-thread memcpy through a pinned bounce\n\
                     # buffer, pipelined with the DMA: setup per call + bytes at min(memcpy, DMA)."
                )?;
                for n in staging_notes(&fit.contention, fit.pcie.as_ref(), dir) {
                    writeln!(o, "# {}", one_line(&n))?;
                }
                writeln!(o, "setup_s = {}", f(d.setup_s))?;
                writeln!(o, "memcpy_gbps = {}", f(d.memcpy_gbps))?;
                writeln!(o, "memcpy_pace = \"{}\"", esc(&d.memcpy_pace))?;
                if let Some(k) = d.memcpy_latency_exponent {
                    writeln!(o, "memcpy_latency_exponent = {}", f(k))?;
                }
                if let Some(c) = &d.memcpy_beside_streams {
                    let pts: Vec<String> = (c.iter())
                        .map(|(x, r)| format!("[{}, {}]", f(*x), f(*r)))
                        .collect();
                    writeln!(o, "memcpy_beside_streams = [{}]", pts.join(", "))?;
                }
                writeln!(o)?;
            }
            if let Some(c) = &g.cpu_load {
                writeln!(o, "[hardware.gpu.cpu_load]")?;
                writeln!(
                    o,
                    "# Each kernel's time next to busy CPU threads (spinning, unpinned) over its time\n\
                     # alone: its host side (launches, waits, sppark's MSM bucket sums on one thread\n\
                     # per CPU) shares the CPUs. A GPU kernel stage takes its kind's curve (the nearest\n\
                     # measured size) at the pools' runnable threads per CPU."
                )?;
                for n in fit.cpu_load.iter().flat_map(|c| &c.notes) {
                    writeln!(o, "# {}", one_line(n))?;
                }
                let list = |v: &[f64]| v.iter().map(|&x| f(x)).collect::<Vec<_>>().join(", ");
                writeln!(o, "busy_per_cpu = [{}]", list(&c.busy_per_cpu))?;
                let kernels: Vec<String> = (c.kernels.iter())
                    .map(|(k, v)| format!("\"{}\" = [{}]", esc(k), list(v)))
                    .collect();
                writeln!(o, "kernels = {{ {} }}", kernels.join(", "))?;
                if !c.threads.is_empty() {
                    writeln!(
                        o,
                        "# CPUs each kernel's host side keeps busy while it runs alone (the harness's\n\
                         # CPU time over the kernels' wall time): runnable threads on the pools while a\n\
                         # stage of its kind runs."
                    )?;
                    let threads: Vec<String> = (c.threads.iter())
                        .map(|(k, v)| format!("\"{}\" = {}", esc(k), f(*v)))
                        .collect();
                    writeln!(o, "threads = {{ {} }}", threads.join(", "))?;
                }
                writeln!(o)?;
                let fitted = fit.cpu_load.as_ref();
                let beside = [
                    (
                        "streaming",
                        "copy memory",
                        &c.next_to_streaming,
                        fitted.and_then(|f| f.next_to_streaming.as_ref()),
                    ),
                    (
                        "chasing",
                        "chase pointers",
                        &c.next_to_chasing,
                        fitted.and_then(|f| f.next_to_chasing.as_ref()),
                    ),
                ];
                for (name, what, table, measured) in beside {
                    // A table in the file is read; one only measured is written commented
                    // out, for a user to switch on (docs/model-v2.md says why it is not yet
                    // the default).
                    let Some((t, lead)) =
                        (table.as_ref().map(|t| (t, ""))).or_else(|| measured.map(|m| (m, "# ")))
                    else {
                        continue;
                    };
                    if !lead.is_empty() {
                        writeln!(
                            o,
                            "# Measured, not read by default. To read it, remove the \"# \" before\n\
                             # the lines of its [table], busy_per_cpu and kernels (docs/model-v2.md)."
                        )?;
                    }
                    writeln!(o, "{lead}[hardware.gpu.cpu_load.next_to_{name}]")?;
                    writeln!(
                        o,
                        "# The same MSMs next to threads that {what}. A kernel stage's stretch\n\
                         # above 1 scales by this curve's excess over the spinning curve's (for the\n\
                         # same kernel) for the share of the runnable threads that do so."
                    )?;
                    writeln!(o, "{lead}busy_per_cpu = [{}]", list(&t.busy_per_cpu))?;
                    let kernels: Vec<String> = (t.kernels.iter())
                        .map(|(k, v)| format!("\"{}\" = [{}]", esc(k), list(v)))
                        .collect();
                    writeln!(o, "{lead}kernels = {{ {} }}", kernels.join(", "))?;
                    writeln!(o)?;
                }
            }
        }
        writeln!(o, "[params]")?;
        for p in &self.params.0 {
            writeln!(
                o,
                "{} = {{ default = {}, doc = \"{}\" }}",
                p.name,
                f(p.default),
                esc(&p.doc)
            )?;
        }
        writeln!(o)?;
        #[derive(Serialize)]
        struct Wrapper<'a> {
            calibration: &'a Provenance,
        }
        let provenance = toml::to_string(&Wrapper { calibration: prov });
        o.push_str(&provenance.map_err(FileError::Serialize)?);
        check_finite(&o)?;
        Ok(o)
    }
}

fn f(x: f64) -> String {
    // Up to 6 significant digits, always a float literal.
    if x == 0.0 {
        return "0.0".into();
    }
    let digits = (6 - x.abs().log10().floor() as i32 - 1).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Refuses a rendered file that is not valid TOML or holds a non-finite number (an
/// `inf` or `nan` would be read back as a capacity or a rate): the caller gets an error
/// naming the key instead of a file that breaks every scenario including it.
pub fn check_finite(text: &str) -> Result<()> {
    let t: toml::Table = toml::from_str(text).map_err(FileError::WouldNotParse)?;
    fn walk(v: &toml::Value, path: &str) -> Result<(), FileError> {
        match v {
            toml::Value::Float(x) if !x.is_finite() => Err(FileError::NonFinite {
                key: path.to_string(),
                value: *x,
            }),
            toml::Value::Table(t) => t
                .iter()
                .try_for_each(|(k, v)| walk(v, &format!("{path}.{k}"))),
            toml::Value::Array(a) => a
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| walk(v, &format!("{path}[{i}]"))),
            _ => Ok(()),
        }
    }
    Ok(t.iter().try_for_each(|(k, v)| walk(v, k))?)
}

/// Text measured on the host (a driver version read once per GPU, a CPU model) as one
/// comment line: line breaks would end the comment and break the file.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_numbers_are_refused() {
        assert!(check_finite("[a]\nx = 1.0\n").is_ok());
        let e = check_finite("[hardware.dram]\ncapacity_gbps = inf\n").unwrap_err();
        assert!(e.to_string().contains("hardware.dram.capacity_gbps"), "{e}");
        assert!(check_finite("x = inf.0\n").is_err());
    }

    #[test]
    fn number_format_is_a_toml_float() {
        assert_eq!(f(1.0), "1.00000");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(123456.0), "123456.0");
        assert_eq!(f(0.000123456789), "0.000123457");
        let v: toml::Table = toml::from_str(&format!("x = {}", f(1234567.0))).unwrap();
        assert!(v["x"].is_float());
    }

    #[test]
    fn host_text_with_line_breaks_stays_one_comment_line() {
        // nvidia-smi prints the driver version once per GPU.
        assert_eq!(
            one_line("580.159.04\n580.159.04\n"),
            "580.159.04 580.159.04"
        );
        let comment = format!("# NVIDIA H200 (driver {})", one_line("580.1\r\n580.1"));
        assert!(toml::from_str::<toml::Table>(&comment).unwrap().is_empty());
    }
}
