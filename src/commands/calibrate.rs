//! `bwsim calibrate`: check the output files' locations, then measure and fit.

use crate::calibrate::probe::plan::Mode;
use crate::calibrate::{CalibrateArgs, calibrate_command};
use crate::cli::{CalibrateCliArgs, ProbeMode};
use crate::output::check_file_target;

/// The probe length of the calibrate layer for a `--mode`.
pub fn probe_mode(m: ProbeMode) -> Mode {
    match m {
        ProbeMode::Tiny => Mode::Tiny,
        ProbeMode::Quick => Mode::Quick,
        ProbeMode::Full => Mode::Full,
    }
}

/// Runs `bwsim calibrate`.
pub fn calibrate(a: CalibrateCliArgs) -> anyhow::Result<()> {
    // Minutes of probing must not end in an unwritable --out.
    check_file_target(&a.out)?;
    if let Some(j) = &a.json {
        check_file_target(j)?;
    }
    calibrate_command(CalibrateArgs {
        mode: probe_mode(a.probe.mode()),
        out: a.out,
        hugepages: !a.probe.no_hugepages,
        no_gpu: a.probe.no_gpu,
        gpu_probe: a.probe.gpu_probe,
        json: a.json,
        refit: a.refit,
    })
}
