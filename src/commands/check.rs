//! `bwsim check`: load and validate a scenario, print its summary.

use crate::cli::CheckArgs;
use crate::output::print_stdout;

/// Loads the scenario with its overrides and prints the summary.
pub fn check(args: CheckArgs) -> anyhow::Result<()> {
    let loaded = crate::scenario::load(&args.input.scenario, &args.input.sets)?;
    print_stdout(&loaded.summary())?;
    Ok(())
}
