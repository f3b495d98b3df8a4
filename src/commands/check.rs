//! `bwsim check`: load and validate a scenario, print its summary; warn (stderr) of an
//! included calibration that measured another host.

use super::error::Result;
use crate::cli::CheckArgs;
use crate::output::print_stdout;

/// Loads the scenario with its overrides and prints the summary.
pub fn check(args: CheckArgs) -> Result<()> {
    let loaded = crate::scenario::load_with(
        &args.input.scenario,
        &args.input.sets,
        &args.limits.limits(),
    )?;
    print_stdout(&loaded.summary())?;
    let included = &loaded.summary.files;
    for w in crate::calibrate::consistency::calibration_warnings(&loaded.model, included) {
        eprintln!("warning: {w}");
    }
    Ok(())
}
