//! The fluid sharing solver: how fast each class of identical running activities goes
//! when they share rate resources (DRAM, PCIe directions, thread pools, GPU compute).
//!
//! # The system (in the vocabulary of SimGrid's LMM)
//!
//! - **Variables**: one per class `i` of `n_i` running activities, its speed `x_i` in
//!   [0, 1], a fraction of the speed it has running alone.
//! - **Constraints**: one per rate resource `r`, `sum_i n_i w_ir x_i <= C_r`, where `w_ir`
//!   is what one activity of class `i` draws from `r` running alone
//!   ([`ClassKey::weights`]) and `C_r` the resource's capacity.
//! - **Caps**: `x_i <= cap_i(u)`, the speed the class's own physics allows at DRAM
//!   utilisation `u` (DRAM latency, core throughput, its host thread; see [`CapTable`]).
//! - **Fairness**: max-min on each activity's *rate* `x_i phi_i`, where `phi_i` is its draw
//!   on the resource that is tightest for it (largest `w_ir / C_r`), in that resource's
//!   own unit. Progressive filling ([`Filling`]) raises all rates equally, as SimGrid
//!   does for flows, until a constraint saturates or a cap is reached; the classes concerned
//!   freeze and the others keep rising. On one resource that is water-filling (n equal
//!   streams get C/n, small demands are served in full, bytes-fair on DRAM, threads-fair
//!   on a pool), and a flow crossing two resources is held to the tighter one. Classes
//!   whose tightest resources differ in unit meet on a shared resource with a heuristic
//!   normalisation; it avoids starving a one-thread task beside a 32-thread one.
//! - **Fixed point**: the caps depend on `u` and `u` on the speeds. Usage is
//!   non-increasing in `u`, so `u = usage(u) / C_dram` has one root, which
//!   [`FixedPoint`] finds by the Illinois method, one filling per step.
//!
//! # What shapes the caps and the filling
//!
//! - *Latency-bound share* `f`: that share of standalone time stretches with latency, so
//!   `cap = 1 / ((1 - f) + f L(u)/L(0))`.
//! - *Lines in flight* (Little's law): threads keeping `lines` cache lines in flight draw
//!   at most `threads x lines x CACHE_LINE_BYTES / L` of DRAM, so the cap falls as
//!   latency `L` rises.
//! - *Staged pageable copy* ([`StagedCopy`](crate::model::StagedCopy)): its memcpy thread alone runs `headroom` x
//!   the copy's streaming rate; a latency-bound memcpy keeps the lines that rate implies
//!   in flight, so the streaming part runs at `min(1, headroom L(0)/L)` and the whole
//!   call, whose setup share `g` never slows, at `1 / (g + (1 - g) / that)`.
//! - *Core throughput*: the compute-bound share `c` of a class on a pool with a
//!   [`CpuThroughput`](crate::model::CpuThroughput) runs at `per_thread(active) / per_thread(alone)`, where `active` is
//!   the threads the running classes want from the pool (capped at its size) and `alone`
//!   the class's own threads; it adds `c (per_thread(alone)/per_thread(active) - 1)` to
//!   the cap's denominator.
//! - *Host thread* (e.g. a GPU stage's launching thread) on a per-thread pool that wants
//!   `W` threads of `C`: its share `h` of the class's time stretches by `max(1, W / C)`,
//!   a term `h (W/C - 1)` in the same denominator.
//! - *DRAM policy* per class: max-min (above); *priority* classes are filled first and
//!   the others share what they leave, but on any resource the others also draw on the
//!   first pass takes at most [`PRIORITY_SHARE`] of its capacity; what the others then
//!   leave, the priority classes held by that bound take after them. So a posted-write
//!   DMA keeps its rate beside streams (as measured) and can never starve them, however
//!   many DMAs run. A *proportional* class rises at the speed of the heaviest max-min
//!   DRAM class beside it (equal fractional slowdown).
//! - *Per-thread pool* (Linux CFS): a class whose tightest resource is such a pool takes
//!   the pool's capacity as its `phi`, so every pool-bound class rises at the same speed
//!   and each runnable thread gets the same share.
//! - *Offered-load curve*: the fixed point is on offered load (what the classes would
//!   draw at their caps with DRAM unconstrained, over capacity), which may exceed 1; the
//!   latency keeps rising while queues build.
//!
//! # The pipeline
//!
//! ```text
//!   System (capacities, pools, classes)
//!      |
//!      v
//!   CapTable      each class's cap: fixed, or terms read at a latency      cap_table.rs
//!      |                                                                   threads.rs
//!      v
//!   Filling       progressive filling at the caps of one latency;         filling.rs
//!      |          the DRAM policies as phase orders
//!      v
//!   FixedPoint    Illinois over fillings until DRAM's load reproduces     fixed_point.rs
//!      |          itself
//!      v
//!   Solution (speeds, usage, DRAM utilisation, latency slowdown)
//! ```
//!
//! The engine runs the pipeline inside accelerators ([`Solver`], `accelerated.rs`),
//! each of which gives the plain pipeline's bits and is tested against it:
//! `shared_rounds.rs` (the fillings of one solve share their rounds), `lone.rs` (at
//! most one class running: remembered by its count) and `memo.rs` (whole solutions
//! remembered by the classes' keys and counts). `system.rs` holds the inputs and the
//! answer.

mod accelerated;
mod cap_table;
mod filling;
mod fixed_point;
mod lone;
mod memo;
mod shared_rounds;
mod system;
mod threads;

#[cfg(test)]
mod cap_table_tests;
#[cfg(test)]
mod filling_tests;
#[cfg(test)]
mod test_support;

pub use accelerated::Solver;
pub use cap_table::{CapTable, Latency};
pub use filling::{DramLoad, Filling, PRIORITY_SHARE, Phase};
pub use fixed_point::{Fill, FixedPoint};
pub use shared_rounds::SharedRounds;
pub use system::{ClassDemand, ClassKey, ClassSpeed, CpuLoadKey, PoolRule, Solution, System};
