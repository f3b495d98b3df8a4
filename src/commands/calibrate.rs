//! `bwsim calibrate`: check the output files' locations, then measure and fit.

use super::error::{InputError, Result};
use crate::calibrate::probe::plan::Mode;
use crate::calibrate::{CalibrateArgs, calibrate_command};
use crate::cli::{CalibrateCliArgs, ProbeArgs, ProbeMode};
use crate::output::{Output, OutputKind, check_outputs};

/// The probe length of the calibrate layer for a `--mode`.
pub fn probe_mode(m: ProbeMode) -> Mode {
    match m {
        ProbeMode::Tiny => Mode::Tiny,
        ProbeMode::Quick => Mode::Quick,
        ProbeMode::Full => Mode::Full,
    }
}

/// A GPU probe harness asked for by name (`--gpu-probe FILE`) must be a file when the
/// GPU is to be probed (`measuring`, without `--no-gpu`): skipping the GPU probes instead
/// wrote results without them and exit 0.
pub(crate) fn check_gpu_probe(probe: &ProbeArgs, measuring: bool) -> Result<()> {
    if let Some(g) = &probe.gpu_probe
        && measuring
        && !probe.no_gpu
        && !g.is_file()
    {
        let why = match g.metadata() {
            Ok(_) => "is not a regular file",
            Err(_) => "does not exist",
        };
        return Err(InputError::new(why)
            .key(format!("--gpu-probe {}", g.display()))
            .allowed("give the harness built by gpu/build.sh, or --no-gpu to skip the GPU probes")
            .into());
    }
    Ok(())
}

/// Runs `bwsim calibrate`.
pub fn calibrate(a: CalibrateCliArgs) -> Result<()> {
    // Minutes of probing must not end in an unwritable --out, nor write one output over
    // the other or over the measurements being re-fitted.
    let mut outputs = vec![Output::new("--out", &a.out, OutputKind::File)];
    if let Some(j) = &a.json {
        outputs.push(Output::new("--json", j, OutputKind::File));
    }
    let mut inputs = Vec::new();
    if let Some(r) = &a.refit {
        inputs.push(("the --refit measurements".to_string(), r.clone()));
    }
    if let Some(g) = &a.probe.gpu_probe {
        inputs.push(("the --gpu-probe harness".to_string(), g.clone()));
    }
    check_gpu_probe(&a.probe, a.refit.is_none())?;
    check_outputs(&outputs, &inputs)?;
    Ok(calibrate_command(CalibrateArgs {
        mode: probe_mode(a.probe.mode()),
        out: a.out,
        hugepages: !a.probe.no_hugepages,
        no_gpu: a.probe.no_gpu,
        gpu_probe: a.probe.gpu_probe,
        json: a.json,
        refit: a.refit,
    })?)
}
