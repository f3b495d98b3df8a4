//! bwsim: a memory-bandwidth contention simulator for GPU proving hosts.
//!
//! Data flows one way: a scenario file becomes a typed [`model::Model`]; the
//! [`engine`] runs it and streams events to observers; [`metrics`] turns them into a
//! [`report::Report`]; exporters render it. [`run::run_model`] does the whole trip.

pub use bwsim_engine::{engine, model, time};

pub mod atomic_file;
pub mod bottleneck;
pub mod calibrate;
pub mod cli;
pub mod metrics;
pub mod plot;
pub mod replay;
pub mod report;
pub mod run;
pub mod scenario;
pub mod sweep;
pub mod trace;
