//! The discrete-event engine: clock, event queue, activities, holdable resources and the
//! fluid bandwidth-sharing solver. It knows nothing of files, TOML or plots.

pub mod observer;

pub use observer::{JOB_LEVEL, NullObserver, Observer, StageRecord, StageRef, Tee};
