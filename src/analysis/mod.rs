//! From engine events to a result: [`metrics`] observes a run and hands over
//! [`run_stats::RunStats`]; [`bottleneck`] names what limits it; [`report`] assembles and
//! renders the [`report::Report`]; [`keys`] names the report's metrics for JSON, plots
//! and sweep tables alike.

pub mod bottleneck;
pub mod bracket_chain;
mod few;
pub mod gap;
pub mod keys;
pub mod knob;
pub mod metrics;
mod nonzero;
pub mod report;
pub mod run_stats;
pub mod sampled;

#[cfg(test)]
mod tests;
