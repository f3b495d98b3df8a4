//! `bwsim replay`: turn the flags into replay options, run the replay (which prints the
//! plan and the measured-vs-predicted table) and list the files it wrote.

use super::error::{InputError, Result};
use crate::cli::ReplayCliArgs;
use crate::replay::kernels::BufferSizes;
use crate::replay::repredict::repredict_command;
use crate::replay::{ReplayOptions, replay_command};

/// Runs `bwsim replay`.
pub fn replay(a: ReplayCliArgs) -> Result<()> {
    let mut opts = ReplayOptions::new(a.scenario);
    opts.sets = a.sets;
    opts.param = a.param;
    opts.calibration = a.calibration;
    opts.dry_run = a.dry_run;
    opts.out = a.out;
    let (runs, note) = crate::cli::replications(a.replications, a.runs, "--runs");
    if let Some(note) = note {
        eprintln!("warning: {note}");
    }
    opts.runs = runs;
    opts.gpu_harness = a.gpu_harness;
    opts.nvml_period_ms = a.nvml_period_ms;
    for (flag, value) in [
        ("--host-ram-gib", a.host_ram_gib),
        ("--max-hours", Some(a.max_hours)),
    ] {
        if let Some(v) = value.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(InputError::new(format!("{v} is not a number > 0"))
                .key(flag)
                .into());
        }
    }
    opts.host_ram_bytes = a.host_ram_gib.map(|g| g * 1024.0 * 1024.0 * 1024.0);
    opts.max_wall_s = a.max_hours * 3600.0;
    if a.small_buffers {
        opts.buffers = BufferSizes::TEST;
    }
    let outcome = match &a.repredict {
        Some(dir) => repredict_command(&opts, dir)?,
        None => replay_command(&opts)?,
    };
    for f in &outcome.files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}
