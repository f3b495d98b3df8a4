//! The model's ids: indices into its lists, below every part that names them.

/// Index of a stage in [`Workload::stages`](super::Workload::stages).
pub type StageId = usize;
/// Index of a lock in [`Hardware::locks`](super::Hardware::locks).
pub type LockId = usize;
/// Index of a thread pool in [`Hardware::pools`](super::Hardware::pools).
pub type PoolId = usize;
/// Index of a marker in [`Instrumentation::markers`](super::Instrumentation::markers).
pub type MarkerId = usize;
