//! `bwsim sweep merge DIR... --out DIR`: joins the folders written by
//! `bwsim sweep --shard I/N` ([`crate::sweep::merge`] checks them and stages the merged
//! sweep), draws the charts and prints what was written: the sweep.csv, sweep.json,
//! plots and manifest that the same sweep run on one machine writes.

use super::error::Result;
use super::sweep::{check_stalls, print_outcome, with_charts};
use crate::cli::SweepMergeCli;
use crate::output::print_stdout;

/// Runs `bwsim sweep merge`.
pub fn merge(cli: SweepMergeCli) -> Result<()> {
    let ran = crate::sweep::merge::merge_folders(&cli.shards, &cli.out)?;
    let seeds = ran.plan().opts.seeds;
    let out = with_charts(ran)?;
    print_stdout(&format!("merged {} shard folders\n", cli.shards.len()))?;
    print_outcome(&out, seeds, None)?;
    check_stalls(&out)
}
