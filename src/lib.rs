//! bwsim: a memory-bandwidth contention simulator for GPU proving hosts.

pub mod calibrate;
pub mod engine;
pub mod model;
pub mod time;
