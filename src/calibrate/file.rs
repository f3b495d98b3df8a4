//! Writes `calibration.toml`: `[hardware.dram]`, `[hardware.gpu]` and `[params]` that a
//! scenario can `include`, plus a `[calibration]` table with provenance, the fits with
//! their residuals, and every raw measurement. Written atomically (temp file + rename).

use super::fit::Fitted;
use super::measurements::Measurements;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// The `[calibration]` table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    /// One-line summary of the host.
    pub summary: String,
    /// The fitted values with their bases and residuals.
    pub fitted: Fitted,
    /// The raw measurements.
    pub measurements: Measurements,
}

#[derive(Serialize, Deserialize)]
struct Wrapper {
    calibration: Provenance,
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

/// Renders the whole file.
pub fn render(m: &Measurements, fit: &Fitted) -> anyhow::Result<String> {
    let mut o = String::new();
    let host = m
        .host
        .clone()
        .unwrap_or_else(super::probe::sys::HostInfo::gather);
    let gpu_name = m.gpu.as_ref().map_or("none", |g| g.name.as_str());
    let summary = format!(
        "{} ({} CPUs, {}), GPU {}, THP {}{}, measured {} by bwsim {} ({} mode)",
        host.hostname,
        host.cores,
        host.cpu_model,
        gpu_name,
        host.thp_mode(),
        if m.hugepages_advised {
            ", buffers advised MADV_HUGEPAGE"
        } else {
            ""
        },
        m.date,
        m.bwsim_version,
        m.mode
    );
    writeln!(o, "# bwsim calibration: {summary}")?;
    writeln!(
        o,
        "# Include it from a scenario: include = [\"calibration/<this file>\"]. Written by\n\
         # `bwsim calibrate`; [calibration] at the end holds provenance and raw data.\n"
    )?;
    writeln!(o, "[hardware]")?;
    writeln!(o, "cpu_cores = {}", host.cores)?;
    writeln!(o)?;
    writeln!(o, "[hardware.dram]")?;
    writeln!(
        o,
        "# DRAM bytes per second, write-allocate counted. {}",
        fit.capacity_basis
    )?;
    writeln!(o, "capacity_gbps = {}", f(fit.capacity_gbps))?;
    writeln!(
        o,
        "# Loaded latency vs utilisation (achieved / capacity), pointer chase behind {} \
         streams",
        fit.latency_curve_mix
    )?;
    let pts: Vec<String> = fit
        .latency_curve
        .iter()
        .map(|&(u, ns)| format!("[{}, {}]", f(u), f(ns)))
        .collect();
    writeln!(o, "latency_curve = [{}]", pts.join(", "))?;
    writeln!(o)?;
    if let (Some(g), Some(p)) = (&m.gpu, &fit.pcie) {
        writeln!(o, "[hardware.gpu]")?;
        writeln!(o, "# {} (driver {})", g.name, g.driver_version)?;
        writeln!(o, "count = 1")?;
        writeln!(
            o,
            "vram_gib = {}",
            f((g.vram_bytes as f64 / (1u64 << 30) as f64 * 10.0).floor() / 10.0)
        )?;
        writeln!(o, "pcie_h2d_gbps = {}", f(p.h2d_gbps))?;
        writeln!(o, "pcie_d2h_gbps = {}", f(p.d2h_gbps))?;
        if let Some(d) = p.duplex_gbps {
            writeln!(o, "pcie_duplex_gbps = {}", f(d))?;
        }
        writeln!(o, "pageable_h2d_gbps = {}", f(p.pageable_h2d_gbps))?;
        writeln!(o, "pageable_d2h_gbps = {}", f(p.pageable_d2h_gbps))?;
        for n in &p.notes {
            writeln!(o, "# {n}")?;
        }
        writeln!(o, "h2d_dram_factor = {}", f(p.h2d_dram_factor))?;
        writeln!(o, "d2h_dram_factor = {}", f(p.d2h_dram_factor))?;
        writeln!(
            o,
            "pageable_copy_dram_factor = {}",
            f(p.pageable_copy_dram_factor)
        )?;
        writeln!(o)?;
    }
    writeln!(o, "[params]")?;
    let mut param = |name: &str, v: f64, doc: &str| {
        let _ = writeln!(
            o,
            "{name} = {{ default = {}, doc = \"{}\" }}",
            f(v),
            esc(doc)
        );
    };
    param(
        "dram_idle_latency_ns",
        fit.idle_latency_ns,
        "unloaded DRAM latency (pointer chase), ns",
    );
    if let Some(r) = m.bw_at(super::probe::stream::Kernel::Copy, 1) {
        param(
            "cpu_copy_thread_gbps",
            r,
            "DRAM GB/s one thread draws running a copy (write-allocate counted)",
        );
    }
    if let Some(r) = m.bw_at(super::probe::stream::Kernel::Triad, 1) {
        param(
            "cpu_triad_thread_gbps",
            r,
            "DRAM GB/s one thread draws running a triad (write-allocate counted)",
        );
    }
    if let Some(p) = &fit.pcie {
        param(
            "pageable_h2d_latency_frac",
            p.pageable_h2d_latency_frac,
            "fraction of a pageable H2D copy's time that is DRAM-latency bound (its CPU memcpy); \
             use as the transfer stage's latency_bound_frac",
        );
        param(
            "pageable_d2h_latency_frac",
            p.pageable_d2h_latency_frac,
            "fraction of a pageable D2H copy's time that is DRAM-latency bound",
        );
    }
    // Sizes that were measured are written as measured; others from the model.
    let ntt_at = |variant: &str, lg: u32| -> Option<(f64, &'static str)> {
        if let Some(p) = m.ntt.iter().find(|p| p.variant == variant && p.lg == lg) {
            return Some((p.ms / 1e3, "measured"));
        }
        fit.ntt.get(variant).map(|k| (k.seconds(lg), "model"))
    };
    let msm_at = |lg: u32| -> Option<(f64, &'static str)> {
        if let Some(p) = m.msm.iter().find(|p| p.lg == lg) {
            return Some((p.ms / 1e3, "measured"));
        }
        fit.msm
            .as_ref()
            .map(|k| (k.seconds(lg), "model, extrapolated"))
    };
    if let Some(nr) = fit.ntt.get("fwd_nr") {
        param(
            "ntt_a_ns",
            nr.a_ns,
            "NTT (BLS12-381 Fr, forward NR, device-resident) time = ntt_a_ns * n*log2(n) + ntt_b_s",
        );
        param("ntt_b_s", nr.b_s, "NTT fixed cost, s");
    }
    if let Some((t, how)) = ntt_at("fwd_nr", 27) {
        param(
            "ntt_2p27_s",
            t,
            &format!("forward NR NTT at 2^27, s ({how})"),
        );
    }
    for (variant, kf) in &fit.ntt {
        param(
            &format!("ntt_{variant}_a_ns"),
            kf.a_ns,
            &format!(
                "{variant} NTT: t = a * n*log2(n) + b, ns (b = {:.3e} s; rms rel residual {:.1}%)",
                kf.b_s,
                kf.rms_rel_residual * 100.0
            ),
        );
        if let Some((t, how)) = ntt_at(variant, 27) {
            param(
                &format!("ntt_{variant}_2p27_s"),
                t,
                &format!("{variant} NTT at 2^27, s ({how})"),
            );
        }
    }
    if let (Some((i, _)), Some((c, _)), Some((n, _))) = (
        ntt_at("inv_nr", 27),
        ntt_at("fwd_coset_rn", 27),
        ntt_at("inv_coset_nn", 27),
    ) {
        param(
            "h_ntt_2p27_s",
            3.0 * (i + c) + n,
            "NTT kernel time of supraseal's H phase at 2^27: 3 x (inverse NR + forward coset \
             RN) + inverse coset NN, s (pointwise kernels and uploads not included)",
        );
    }
    if let Some(kf) = &fit.msm {
        param(
            "msm_a_ns",
            kf.a_ns,
            &format!(
                "G1 MSM (points on device, scalars pinned host) time = msm_a_ns * {} + msm_b_s \
                 (rms rel residual {:.1}%)",
                kf.model,
                kf.rms_rel_residual * 100.0
            ),
        );
        param("msm_b_s", kf.b_s, "MSM fixed cost, s");
    }
    for lg in [26, 27] {
        if let Some((t, how)) = msm_at(lg) {
            param(
                &format!("msm_2p{lg}_s"),
                t,
                &format!("G1 MSM of 2^{lg} points, s ({how})"),
            );
        }
    }
    writeln!(o)?;
    let wrapper = Wrapper {
        calibration: Provenance {
            summary,
            fitted: fit.clone(),
            measurements: m.clone(),
        },
    };
    o.push_str(&toml::to_string(&wrapper)?);
    check_finite(&o)?;
    Ok(o)
}

/// Refuses a rendered file that is not valid TOML or holds a non-finite number (an
/// `inf` or `nan` would be read back as a capacity or a rate): the caller gets an error
/// naming the key instead of a file that breaks every scenario including it.
pub fn check_finite(text: &str) -> anyhow::Result<()> {
    let t: toml::Table = toml::from_str(text).map_err(|e| {
        anyhow::anyhow!("refusing to write a calibration file that is not valid TOML: {e}")
    })?;
    fn walk(v: &toml::Value, path: &str) -> Result<(), String> {
        match v {
            toml::Value::Float(x) if !x.is_finite() => Err(format!(
                "refusing to write a calibration file with {path} = {x}: every number must \
                 be finite (the measurements behind it are degenerate)"
            )),
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
    t.iter()
        .try_for_each(|(k, v)| walk(v, k))
        .map_err(anyhow::Error::msg)
}

/// Writes `text` to `path` atomically: a temp file in the same folder, then a rename.
/// An interruption leaves either the old file or the new one, never a partial one.
pub fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".calibration-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| anyhow::anyhow!("cannot create a temp file in {}: {e}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {}", path.display(), e.error))?;
    Ok(())
}

/// Reads back the `[calibration]` table of a calibration file.
pub fn read_provenance(text: &str) -> anyhow::Result<Provenance> {
    #[derive(Deserialize)]
    struct W {
        calibration: Provenance,
    }
    let w: W = toml::from_str(text)?;
    Ok(w.calibration)
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
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/cal.toml");
        write_atomic(&p, "a = 1\n").unwrap();
        write_atomic(&p, "a = 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a = 2\n");
        let leftovers = std::fs::read_dir(p.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1);
    }
}
