//! Whether a calibration file a scenario includes describes the host the scenario
//! simulates: a calibration measured on a 2-core machine beside a 192-thread pool, or on
//! one GPU beside a four-GPU host, gives DRAM and kernel figures of another machine.
//! `check` warns of each mismatch; nothing is refused (a scenario may deliberately
//! borrow one host's DRAM curve for another).

use std::path::Path;

use super::file::CalibrationFile;
use crate::model::Model;

/// Warnings for every included file that is a calibration and disagrees with `model`.
/// Files that are not calibrations (or cannot be read again) are passed over: the
/// scenario loader has already judged them.
pub fn calibration_warnings(model: &Model, included: &[impl AsRef<Path>]) -> Vec<String> {
    let mut out = Vec::new();
    for path in included {
        let path = path.as_ref();
        let Ok(text) = crate::input_file::read_text(path, crate::input_file::MAX_TOML_BYTES) else {
            continue;
        };
        let Ok(cal) = CalibrationFile::parse(&text) else {
            continue;
        };
        out.extend(
            mismatches(model, &cal)
                .into_iter()
                .map(|m| format!("{}: {m}", path.display())),
        );
    }
    out
}

/// What in `model` the calibration `cal` did not measure.
pub fn mismatches(model: &Model, cal: &CalibrationFile) -> Vec<String> {
    let hw = &cal.hardware;
    let threads = match &hw.cpu {
        Some(c) => c.physical_cores * c.threads_per_core,
        None => hw.cpu_cores,
    };
    let mut out = Vec::new();
    if model.hardware.cpu_cores as usize != hw.cpu_cores {
        out.push(format!(
            "the calibration measured a host with {} cores, but the scenario's \
             hardware.cpu_cores is {}: its DRAM and compute fits are of another machine",
            hw.cpu_cores, model.hardware.cpu_cores
        ));
    }
    for pool in &model.hardware.pools {
        if pool.threads > threads as f64 {
            out.push(format!(
                "pool '{}' has {} threads, but the calibrated host has {threads} hardware \
                 threads: its per-thread rates and DRAM curve were measured with at most {threads}",
                pool.name, pool.threads
            ));
        }
    }
    let gpus = model.hardware.gpus.len();
    match &hw.gpu {
        Some(g) if g.count as usize != gpus => out.push(format!(
            "the calibration measured {} GPU(s), but the scenario has {gpus}",
            g.count
        )),
        None if gpus > 0 => out.push(format!(
            "the calibration measured no GPU, but the scenario has {gpus}: its PCIe and \
             kernel figures are not from the calibration"
        )),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(scenario: &str) -> Vec<String> {
        let loaded = crate::scenario::load(Path::new(scenario), &[]).unwrap();
        calibration_warnings(&loaded.model, &loaded.summary.files)
    }

    /// The single-GPU H200 scenario is the host its calibration measured: no warning.
    #[test]
    fn a_calibration_of_the_same_host_is_quiet() {
        assert_eq!(warnings("scenarios/c2-32g-h200.toml"), Vec::<String>::new());
    }

    /// The two-GPU, 32-core scenario includes the one-GPU, 16-core calibration.
    #[test]
    fn a_calibration_of_a_smaller_host_is_named_with_what_differs() {
        let w = warnings("scenarios/c2-32g-h200-multi.toml");
        assert_eq!(w.len(), 3, "{w:#?}");
        assert!(w[0].contains("16 cores") && w[0].contains("hardware.cpu_cores is 32"));
        assert!(w[1].contains("pool 'cpu' has 32 threads"));
        assert!(w[2].contains("measured 1 GPU(s), but the scenario has 2"));
        assert!(
            w.iter()
                .all(|m| m.starts_with("scenarios/calibration/h200-host.toml: "))
        );
    }
}
