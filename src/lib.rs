//! bwsim: a memory-bandwidth contention simulator for GPU proving hosts.
//!
//! Data flows one way: a scenario file becomes a typed [`model::Model`]; the
//! [`engine`] runs it and streams events to observers; [`analysis`] turns them into
//! [`analysis::run_stats::RunStats`] and a [`report::Report`]; exporters render it.
//! [`run::run_model`] does the whole trip.

pub use bwsim_engine::{engine, model, time};

pub mod accuracy;
pub mod analysis;
pub mod calibrate;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod cuzk_log;
pub mod input_file;
pub mod output;
pub mod plot;
pub mod prediction;
pub mod replay;
pub mod run;
pub mod scenario;
pub mod sweep;
pub mod trace;
