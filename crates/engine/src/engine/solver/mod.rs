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
//!   utilisation `u` (DRAM latency, core throughput, its host thread; see `caps`).
//! - **Fairness**: max-min on each activity's *rate* `x_i phi_i`, where `phi_i` is its draw
//!   on the resource that is tightest for it (largest `w_ir / C_r`), in that resource's
//!   own unit. Progressive filling (`fill`) raises all rates equally, as SimGrid does for
//!   flows, until a constraint saturates or a cap is reached; the classes concerned
//!   freeze and the others keep rising. On one resource that is water-filling (n equal
//!   streams get C/n, small demands are served in full, bytes-fair on DRAM, threads-fair
//!   on a pool), and a flow crossing two resources is held to the tighter one. Classes
//!   whose tightest resources differ in unit meet on a shared resource with a heuristic
//!   normalisation; it avoids starving a one-thread task beside a 32-thread one.
//! - **Fixed point**: the caps depend on `u` and `u` on the speeds. Usage is
//!   non-increasing in `u`, so `u = usage(u) / C_dram` has one root, which
//!   `fixed_point` finds by the Illinois method, one filling per step.
//!
//! # What shapes the caps and the filling
//!
//! - *Latency-bound share* `f`: that share of standalone time stretches with latency, so
//!   `cap = 1 / ((1 - f) + f L(u)/L(0))`.
//! - *Lines in flight* (Little's law): threads keeping `lines` cache lines in flight draw
//!   at most `threads x lines x CACHE_LINE_BYTES / L` of DRAM, so the cap falls as
//!   latency `L` rises.
//! - *Staged pageable copy* ([`StagedCopy`]): its memcpy thread alone runs `headroom` x
//!   the copy's streaming rate; a latency-bound memcpy keeps the lines that rate implies
//!   in flight, so the streaming part runs at `min(1, headroom L(0)/L)` and the whole
//!   call, whose setup share `g` never slows, at `1 / (g + (1 - g) / that)`.
//! - *Core throughput*: the compute-bound share `c` of a class on a pool with a
//!   [`CpuThroughput`] runs at `per_thread(active) / per_thread(alone)`, where `active` is
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
//! # Rooms
//!
//! - `caps`: each class's cap terms, computed once per solve.
//! - `fill`: the weights flattened per solve, and one progressive filling.
//! - `fixed_point`: [`Solver::solve`], the search for `u` over fillings.
//! - `trace`: the fillings of one solve share their work, exactly: later ones replay
//!   the first one's rounds that no latency-dependent cap takes part in.
//! - `memo`: [`SolveMemo`] remembers whole solutions by a key the caller chooses.
//! - `lone`: [`Solver::solve_lone`], one class alone, the same bits as a full solve.

use crate::engine::observer::Limiter;
use crate::model::{CpuThroughput, DramPolicy, MemcpyPace, NeighbourRatios, StagedCopy};

mod caps;
mod fill;
mod fixed_point;
mod lone;
mod memo;
mod trace;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod trace_tests;

pub use memo::SolveMemo;

use caps::CapTerms;
use fill::{Rising, Weight};
use trace::Trace;

/// What makes running activities interchangeable for the solver: resolved resource
/// weights (sorted by resource, duplicates summed) and the terms of the class's cap.
/// Interned once per run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClassKey {
    /// (rate resource index, draw per activity at standalone speed).
    pub weights: Vec<(usize, f64)>,
    /// Fraction of standalone time that is DRAM-latency bound.
    pub latency_frac: f64,
    /// How it shares a saturated DRAM (by the PCIe direction it moves data on).
    pub dram_policy: DramPolicy,
    /// Little's-law bound of one activity: threads x lines in flight x
    /// [`CACHE_LINE_BYTES`](crate::model::CACHE_LINE_BYTES), in GB/s x ns (its DRAM draw
    /// is at most `line_bound / L`); 0 when unbounded.
    pub line_bound: f64,
    /// Fraction of standalone time that is compute bound (slows with the pool's
    /// per-thread throughput), in [0, 1 - latency_frac].
    pub compute_frac: f64,
    /// Write share of its DRAM bytes (NaN: the latency curve's own mix).
    pub write_frac: f64,
    /// Share of standalone time its host thread must be on a CPU of `host_pool` (0: none).
    pub host_frac: f64,
    /// The pool its host thread runs on (rate resource index; unused when `host_frac` is 0).
    pub host_pool: usize,
    /// A staged pageable copy: its memcpy's Little's-law pace caps it (None: not one).
    pub staging: Option<StagedCopy>,
    /// Its time stretches with the threads runnable on these pools (None: it does not).
    pub cpu_load: Option<CpuLoadKey>,
    /// The pools (rate resource indices) whose streaming threads pace a staged copy's
    /// memcpy (empty unless its neighbours pace it).
    pub memcpy_pools: Vec<usize>,
}

/// [`crate::model::CpuLoad`] with its pools as rate resource indices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuLoadKey {
    /// The pools' rate resource indices.
    pub pools: Vec<usize>,
    /// (runnable threads per CPU, time / time alone), read as [`crate::model::CpuLoad`].
    pub stretch: Vec<(f64, f64)>,
    /// CPUs its host side keeps busy while it runs, spread over `pools` by their size.
    pub threads: f64,
    /// Its stretch next to streaming or chasing threads, read as [`crate::model::CpuLoad`].
    pub by_neighbour: NeighbourRatios,
}

impl ClassKey {
    /// The solver's view of `count` running activities of this key.
    pub fn demand(&self, count: u32) -> ClassDemand {
        ClassDemand {
            count,
            key: self.clone(),
        }
    }

    /// Whether activities of this key can ever run slower than standalone.
    pub fn shared(&self) -> bool {
        !self.weights.is_empty()
            || self.latency_frac > 0.0
            || self.line_bound > 0.0
            || self.compute_frac > 0.0
            || self.host_frac > 0.0
            || self.staging.is_some()
            || self.cpu_load.is_some()
    }

    /// Its draw per activity on resource `r` at standalone speed, if it draws on it.
    fn weight_on(&self, r: usize) -> Option<f64> {
        self.weights
            .iter()
            .find(|&&(x, w)| x == r && w > 0.0)
            .map(|&(_, w)| w)
    }

    /// Whether it is a staged copy whose memcpy slows as latency rises.
    fn paced(&self) -> bool {
        self.staging
            .is_some_and(|st| st.memcpy_pace == MemcpyPace::LatencyBound)
    }
}

/// One class of identical activities as the solver sees it: `count` running activities
/// of one key.
#[derive(Debug, Clone, Default)]
pub struct ClassDemand {
    /// Running activities in the class.
    pub count: u32,
    pub key: ClassKey,
}

impl ClassDemand {
    /// Its draw per activity on DRAM (resource `dram`) at standalone speed, if any.
    fn dram_weight(&self, dram: usize) -> Option<f64> {
        self.key.weight_on(dram)
    }
}

/// How one thread pool (a rate resource in threads) is shared and how fast its threads
/// compute; pools without a rule are shared by activity and compute at full speed.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolRule {
    /// The pool's rate resource index.
    pub resource: usize,
    /// Every runnable thread gets the same share (CFS) instead of every activity.
    pub per_thread: bool,
    /// Per-thread compute throughput vs active threads.
    pub cpu: Option<CpuThroughput>,
}

/// The solver's answer for one class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassSpeed {
    /// Speed as a fraction of standalone, in (0, 1].
    pub speed: f64,
    /// What held it below 1, if anything.
    pub limiter: Option<Limiter>,
}

/// Reusable solver state (scratch buffers kept between calls to avoid allocation).
#[derive(Debug, Default, Clone)]
pub struct Solver {
    /// Sharing and throughput rules of the thread pools (set once per run).
    pub pools: Vec<PoolRule>,
    /// Draw on each resource after the last solve.
    pub usage: Vec<f64>,
    /// DRAM utilisation (draw / capacity) after the last solve.
    pub dram_utilisation: f64,
    /// L(u)/L(0) after the last solve.
    pub latency_slowdown: f64,

    // Cap terms (`caps`), set per solve.
    /// Write share of the running classes' DRAM demand (None: the curve's own mix).
    write_frac: Option<f64>,
    /// L(0) at this solve's write mix (the divisor of every latency slowdown).
    idle_ns: f64,
    /// Per class: the time its compute-bound share adds, `c (slowdown - 1)`, where the
    /// slowdown is how much slower that share runs than alone.
    compute_term: Vec<f64>,
    /// Per class: the pool whose compute throughput slows it, if any.
    compute_pool: Vec<Option<usize>>,
    /// Per class: the time its host thread's share adds, `h (slowdown - 1)`.
    host_term: Vec<f64>,
    /// Per class: runnable threads per CPU on the busiest per-thread pool it draws on.
    oversub: Vec<f64>,
    /// Per class: a staged copy's memcpy rate over alone by the threads streaming beside
    /// it (1 unless its neighbours pace it).
    memcpy_beside: Vec<f64>,
    /// Per class: its cap and limiter when they do not depend on DRAM utilisation.
    fixed_cap: Vec<Option<ClassSpeed>>,
    /// Per pool rule: what the running classes want of it, threads (None: not yet
    /// summed in this solve), and threads plus host threads.
    pool_wanted: Vec<Option<f64>>,
    host_wanted: Vec<Option<f64>>,
    /// Scratch for the per-thread throughputs of the pools.
    pool_paces: Vec<Option<(u64, f64)>>,
    /// The classes whose cap depends on DRAM utilisation.
    varying: Vec<CapTerms>,
    /// The classes that take part in the filling with a fixed cap.
    rising_fixed: Vec<usize>,
    /// Each class's cap and limiter where fixed (the others are set by each filling).
    fixed_out: Vec<ClassSpeed>,
    /// Whether no class's cap depends on DRAM utilisation.
    caps_fixed: bool,

    // The flattened weights (`fill`), set per solve.
    /// Per class, its `phi` (speed x scale is its rate level).
    scale: Vec<f64>,
    /// Classes that take part in the filling (running, with some draw).
    base_active: Vec<usize>,
    /// Of those, the DRAM-priority classes (filled first) and the others.
    priority: Vec<usize>,
    rest: Vec<usize>,
    /// The capacities the priority classes' first pass sees: [`PRIORITY_SHARE`] of each
    /// resource another running class draws on, the whole of the others.
    priority_caps: Vec<f64>,
    /// Which resources those are.
    priority_bounded: Vec<bool>,
    /// Priority classes the first pass held at that bound: they rise again last.
    priority_again: Vec<usize>,
    /// Every running class's weights, class after class.
    flat: Vec<Weight>,
    /// Each class's slice of `flat` (empty for classes not running).
    flat_range: Vec<(u32, u32)>,
    /// Per class, what a filling round reads of it (caps set per filling).
    rising: Vec<Rising>,
    /// Each class's draw at speed 1 on DRAM (class, count x weight), in `flat` order.
    dram_loads: Vec<(usize, f64)>,

    // One filling (`fill`).
    /// Per resource, in one filling round: the rate level at which it saturates.
    room: Vec<f64>,
    frozen_load: Vec<f64>,
    active: Vec<usize>,
    still: Vec<usize>,
    /// DRAM draw after the last filling (`usage` is summed only when the solve ends).
    dram_draw: f64,
    /// DRAM offered load after the last filling: what the classes would draw at their
    /// caps with DRAM unconstrained, GB/s.
    offered: f64,

    // Shared work between fillings (`trace`).
    /// The first filling's rounds that no latency-dependent cap takes part in.
    trace: Trace,
    /// Rounds the fillings skipped by replaying recorded ones (for the tests).
    #[cfg(test)]
    rounds_repeated: u64,
}

/// The most of a resource's capacity that priority classes take before the others are
/// served, on each resource the others draw on too. An estimate: calibrate saw one D2H
/// DMA's posted writes take up to 0.54 of DRAM's capacity (d2h_dram_factor 1.96 on an
/// H200 boot; 0.51 in accuracy run 6) while the streams absorbed the whole loss, and
/// never measured what a controller does when the writes alone would fill the
/// channels (two or more GPUs downloading at once). Three quarters keeps every
/// measured case as it was and leaves the cores' loads at least a quarter, so they
/// always progress.
pub const PRIORITY_SHARE: f64 = 0.75;

/// Relative tolerance when comparing fill levels.
const EPS: f64 = 1e-12;

impl Solver {
    /// A solver for a host whose pools follow `pools`.
    pub fn with_pools(pools: Vec<PoolRule>) -> Self {
        Self {
            pools,
            ..Self::default()
        }
    }
}
