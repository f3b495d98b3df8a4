//! The model compiled for a run: the resource table, each stage's sampler, holds,
//! dependency counts and instance slots (`compile.rs`), the interned class keys (what
//! makes two running activities interchangeable for the fluid model, `keys.rs`), where
//! instances sit in a job (`slots.rs`), and the read-only view executors outside the
//! engine run (`view.rs`).

mod compile;
mod keys;
mod slots;
mod view;

pub(super) use compile::Plan;
pub(super) use slots::woken_scopes;
pub use view::{CompiledHold, CompiledPlan, CompiledStage};
