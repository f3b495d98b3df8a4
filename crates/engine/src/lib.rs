//! bwsim-engine: the simulation core of bwsim. A typed [`model::Model`] goes in, the
//! [`engine`] runs it in simulated [`time`] and streams events to observers. This crate
//! knows nothing of files, TOML, JSON or plots; the `bwsim` crate adds those.

pub mod engine;
pub mod model;
pub mod time;
