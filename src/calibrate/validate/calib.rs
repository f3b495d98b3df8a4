//! What validate knows about the host: the host model exactly as a scenario run with
//! `--calibration` on the file gets it (the scenario layer's reader, with the default
//! rule set), plus the raw measurements and kernel fits that size the experiments.

use crate::calibrate::error::{FileError, Result};
use crate::calibrate::file::CalibrationFile;
use crate::calibrate::fit::KernelFit;
use crate::calibrate::measurements::Measurements;
use crate::model::{Hardware, PcieLink};
use crate::scenario::MissingKey;
use std::collections::BTreeMap;
use std::path::Path;

/// What the model knows about the host, read from a calibration file.
#[derive(Debug, Clone)]
pub struct Calib {
    /// The host as a scenario including the calibration sees it: DRAM capacity, latency
    /// curve and sharing rules, CPU table, GPUs and their links.
    pub host: Hardware,
    /// Raw calibration measurements (per-kernel stream rates vs threads).
    pub meas: Measurements,
    /// NTT models per variant.
    pub ntt: BTreeMap<String, KernelFit>,
    /// Host keys the file lacks, with the typical value each took.
    pub missing: Vec<MissingKey>,
}

impl Calib {
    /// The GPU's link, if the calibration has a GPU.
    pub fn link(&self) -> Option<&PcieLink> {
        self.host.gpus.first().map(|g| &g.link)
    }

    /// DRAM latency of an idle host, ns.
    pub fn idle_latency_ns(&self) -> f64 {
        self.host.dram.latency.latency_ns_mix(0.0, None)
    }
}

/// Reads the calibration file at `path`: the host through the scenario layer (a
/// scenario of one trivial stage run with `--calibration` on the file), the measurements
/// and fits from the file.
pub fn load_calib(path: &Path) -> Result<Calib> {
    let text =
        crate::input_file::read_text(path, crate::input_file::MAX_TOML_BYTES).map_err(|error| {
            FileError::Read {
                path: path.to_path_buf(),
                error,
            }
        })?;
    let file = CalibrationFile::parse(&text)?;
    let (host, missing) = host_of(path)?;
    let prov = file.calibration;
    Ok(Calib {
        host,
        meas: prov.measurements,
        ntt: prov.fitted.ntt,
        missing,
    })
}

/// The host a scenario run with `--calibration calibration` gets, and the keys the file
/// lacks with what each took.
pub fn host_of(calibration: &Path) -> Result<(Hardware, Vec<MissingKey>)> {
    const ONE_STAGE: &str = "[[workload.stages]]\nname = \"probe\"\nduration_s = 1\n\
                             [arrivals]\nkind = \"closed\"\nconcurrency = 1\njobs = 1\n";
    let origin = calibration.with_file_name("validate-host.toml");
    let loaded = crate::scenario::load_str_with_calibration(ONE_STAGE, &origin, calibration, &[])
        .map_err(FileError::NotAHost)?;
    let missing = (loaded.summary.calibration)
        .map(|c| c.missing)
        .unwrap_or_default();
    Ok((loaded.model.hardware, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Calib> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cal.toml");
        std::fs::write(&path, text).unwrap();
        load_calib(&path)
    }

    #[test]
    fn bad_calibration_files_give_clear_errors() {
        let e = load("x = 1").unwrap_err().to_string();
        assert!(e.contains("hardware"), "{e}");
        let e = load("[hardware.dram]\ncapacity_gbps = 10.0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("latency_curve"), "{e}");
        assert!(load("not toml [").is_err());
    }

    /// A `[hardware.gpu]` value out of range is refused by the one reader of those keys
    /// (the scenario layer's), naming the calibration file, its line and the key.
    #[test]
    fn bad_gpu_values_are_named_by_the_scenario_reader() {
        let bundled = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scenarios/calibration/h200-host.toml"
        ))
        .unwrap();
        for (line, bad, key) in [
            (
                "pcie_h2d_gbps = 55.3371",
                "pcie_h2d_gbps = 0.0",
                "pcie_h2d_gbps",
            ),
            (
                "pinned_h2d_latency_frac = 0.195842",
                "pinned_h2d_latency_frac = 1.5",
                "pinned_h2d_latency_frac",
            ),
        ] {
            assert!(bundled.contains(&format!("\n{line}\n")), "{line}");
            let e = load(&bundled.replacen(line, bad, 1))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("cal.toml:") && e.contains(&format!("hardware.gpu.{key}")),
                "{e}"
            );
        }
    }
}
