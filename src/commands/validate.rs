//! `bwsim validate`: check the output folder, then run the experiments and compare.

use crate::calibrate::{ValidateArgs, validate_command};
use crate::cli::ValidateCliArgs;
use crate::output::{Output, OutputKind, check_outputs};

use super::calibrate::{check_gpu_probe, probe_mode};
use super::error::Result;

/// Runs `bwsim validate`.
pub fn validate(a: ValidateCliArgs) -> Result<()> {
    check_gpu_probe(&a.probe, a.remeasured.is_none())?;
    let mut inputs = vec![("the calibration file".to_string(), a.calibration.clone())];
    if let Some(r) = &a.remeasured {
        inputs.push(("the --remeasured table".to_string(), r.clone()));
    }
    check_outputs(
        &[Output::new(
            "--out",
            &a.out_dir,
            OutputKind::Folder(&[
                "validate.csv",
                "validate.json",
                "validate.md",
                "validate.png",
                "validate.svg",
            ]),
        )],
        &inputs,
    )?;
    Ok(validate_command(ValidateArgs {
        calibration: a.calibration,
        mode: probe_mode(a.probe.mode()),
        out_dir: a.out_dir,
        hugepages: !a.probe.no_hugepages,
        no_gpu: a.probe.no_gpu,
        gpu_probe: a.probe.gpu_probe,
        remeasured: a.remeasured,
    })?)
}
