//! `bwsim replay`: run a scenario's pipeline for real on this host and set it beside
//! the simulator's prediction, point by point over a concurrency range.
//!
//! The flow, one file each: [`command`] drives it. [`points`] loads and simulates each
//! point and [`plan`]s its stages; [`limits`] refuses what will not fit or runs too long.
//! [`host`] and [`gpu`] (a harness process per GPU) bring up the hardware, [`kernels`] the
//! CPU work; [`run_points`] replays each point through the [`executor`] (the engine's plan,
//! holds by [`holds`]). [`measure`] and [`record`] read a run; [`compare`], [`chart`] and
//! [`results`] write measured beside predicted. [`repredict`] redoes only the prediction.

pub mod chart;
pub mod command;
pub mod compare;
pub mod describe;
pub mod error;
pub mod executor;
pub mod gpu;
pub mod holds;
pub mod host;
pub mod kernels;
pub mod limits;
pub mod measure;
pub mod memory;
pub mod options;
pub mod plan;
pub mod points;
pub mod record;
pub mod repredict;
pub mod results;
pub mod run_points;

pub use command::{ReplayOutcome, replay_command};
pub use describe::describe_plan;
pub use error::{ExecutorFault, GpuError, ReplayError, ReplayInputError};
pub use limits::check_fit;
pub use options::ReplayOptions;
pub use plan::PointPlan;
pub use points::plan_points;
pub use results::{REPREDICTED_FROM, RESULT_FILES, check_results_folder};
pub use run_points::replay_point;
