//! From engine events to a result: [`metrics`] observes a run and hands over
//! [`run_stats::RunStats`]; [`bottleneck`] names what limits it; [`report`] assembles and
//! renders the [`report::Report`]; [`keys`] names the report's metrics for JSON, plots
//! and sweep tables alike; [`interval`] is the one mean and 95% interval every
//! replicated answer (run, what-if, sweep, compare) is given with, [`median`] the one
//! median, and [`throughput`] the one way a throughput is said (s/job and jobs/day with
//! their intervals).

pub mod bottleneck;
pub mod bracket_chain;
pub mod bracket_measures;
mod few;
pub mod gap;
pub mod interval;
pub mod keys;
pub mod knob;
pub mod median;
pub mod metrics;
mod nonzero;
pub mod prediction;
pub mod report;
pub mod run_stats;
pub mod sampled;
pub mod throughput;

#[cfg(test)]
mod tests;
