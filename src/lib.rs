//! bwsim: a memory-bandwidth contention simulator for GPU proving hosts.

pub mod atomic_file;
pub mod engine;
pub mod model;
pub mod plot;
pub mod sweep;
pub mod time;
pub mod trace;
