//! bwsim: a memory-bandwidth contention simulator for GPU proving hosts.

pub mod engine;
pub mod model;
pub mod scenario;
pub mod time;
