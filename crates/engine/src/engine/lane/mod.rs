//! The single-hold lane: a run whose workload is one stage, one instance per job, with at
//! most one host-wide hold (released at its own end) and no markers, whose instances
//! either are never slowed (no demands) or share rate resources as one class whose speed
//! comes from its rates alone (a processor-sharing pool). Its instances go ready, granted,
//! started and finished without the job table, the DAG counters, the per-job hold list,
//! the general work queue, the general hold line or the general fluid table: a job *is*
//! its one instance, its zero-time steps wait in a queue of their own (a third of the
//! general item's size), its one hold is a counter with a FIFO line, and its running
//! instances are in one [`LaneClass`](class::LaneClass). The steps run in the order the general path would
//! run them and make the same observer calls, so every output is the same; only the
//! bookkeeping goes. [`LaneEngine`] runs it, an engine of its own beside the general
//! one; the two share only the loop's own state ([`EventLoop`](super::event_loop::EventLoop)).

mod class;
mod engine;
mod fit;
mod state;
#[cfg(test)]
mod tests;

pub(super) use engine::LaneEngine;
pub(super) use fit::Lane;
