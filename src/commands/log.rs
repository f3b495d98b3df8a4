//! `bwsim log FILE...`: read cuzk daemon logs and print what they say about GPU use,
//! gaps, timers, stage durations and concurrency (text or JSON).

use crate::cli::{Format, LogArgs};
use crate::cuzk_log::{read_and_analyse, report};
use crate::output::print_stdout;

/// Reads the logs (garbled lines are counted, never fatal) and prints the analysis.
pub fn log(args: LogArgs) -> anyhow::Result<()> {
    let (log, analysis) = read_and_analyse(&args.files, args.warmup_jobs)?;
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    match args.format {
        Format::Text => print_stdout(&report::to_text(&names, &log, &analysis)),
        Format::Json => print_stdout(&format!("{:#}\n", report::to_json(&names, &log, &analysis))),
    }?;
    Ok(())
}
