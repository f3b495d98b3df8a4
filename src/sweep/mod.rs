//! Parameter sweeps: `--param KEY=SPEC` grids, several seeds per point run in parallel,
//! aggregated to mean and 95% CI per metric, written as sweep.csv / sweep.json with
//! plots, and the throughput knee.
//!
//! The steps are separate, as in hyperfine: parse ([`spec`], [`range`]) -> expand
//! ([`grid`], [`seeds`]) -> run ([`runner`], [`progress`]) -> aggregate ([`aggregate`]
//! with [`crate::analysis::interval`], [`knee`]) -> export ([`csv`], [`json`]).
//! [`session`] strings the steps together. [`folder`] keeps a sweep's output folder whole
//! or absent: a [`manifest`], a [`journal`] of finished points that a resume reads back,
//! and for a `--shard` sweep a [`shard`] file that [`merge`] joins with the others'. Plots
//! and printing are the `bwsim sweep` command's business.
//!
//! ```
//! use bwsim::sweep::{Grid, parse_param};
//! let grid = Grid::new(vec![
//!     parse_param("arrivals.concurrency=1..4:2").unwrap(),
//!     parse_param("params.pinned=true,false").unwrap(),
//! ]).unwrap();
//! let sets: Vec<String> = grid.points().iter().map(|p| grid.sets(p).join(" ")).collect();
//! assert_eq!(sets, [
//!     "arrivals.concurrency=1 params.pinned=true",
//!     "arrivals.concurrency=1 params.pinned=false",
//!     "arrivals.concurrency=3 params.pinned=true",
//!     "arrivals.concurrency=3 params.pinned=false",
//! ]);
//! ```

pub mod aggregate;
pub mod csv;
pub mod error;
pub mod folder;
pub mod grid;
pub mod journal;
pub mod json;
pub mod knee;
pub mod manifest;
pub mod merge;
pub mod no_effect;
pub mod prediction;
pub mod progress;
pub mod range;
pub mod runner;
pub mod scenario_sim;
pub mod seed_report;
pub mod seeds;
pub mod session;
pub mod shard;
pub mod spec;
pub mod spec_error;
pub mod table;
pub mod value;

pub use error::SweepError;
pub use folder::{RanSweep, SweepFolder, SweepOutcome};
pub use grid::{Grid, Point};
pub use knee::{KNEE_TOLERANCE, Knee, find_knees, knee_index};
pub use manifest::{MANIFEST, Manifest};
pub use progress::{Progress, ProgressMode};
pub use runner::{PointRun, PointSink, RunFn, RunOptions, run_sweep};
pub use scenario_sim::ScenarioSimulator;
pub use seed_report::SeedReport;
pub use session::{
    ScenarioInfo, Simulator, SweepArgs, SweepPlan, execute, plan, table as aggregate_table,
    write_results,
};
pub use shard::{SHARD_FILE, ShardFile, ShardPoint, ShardSpec, SweepIdentity};
pub use spec::{Param, parse_param, parse_spec};
pub use spec_error::SpecError;
pub use table::{Row, Series, Stat, SweepTable};
pub use value::ParamValue;
