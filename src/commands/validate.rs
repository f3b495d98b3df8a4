//! `bwsim validate`: check the output folder, then run the experiments and compare.

use crate::calibrate::{ValidateArgs, validate_command};
use crate::cli::ValidateCliArgs;
use crate::output::{check_dir_target, check_file_target};

use super::calibrate::probe_mode;

/// Runs `bwsim validate`.
pub fn validate(a: ValidateCliArgs) -> anyhow::Result<()> {
    check_dir_target(&a.out_dir)?;
    for name in [
        "validate.csv",
        "validate.json",
        "validate.md",
        "validate.png",
    ] {
        check_file_target(&a.out_dir.join(name))?;
    }
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
