//! The system a solve takes ([`System`]: resources, pools, classes) and what it gives
//! back ([`Solution`]), in the vocabulary of the math in `solver/mod.rs`.

use std::hash::{Hash, Hasher};

use crate::engine::ids::Limiter;
use crate::model::{
    CpuThroughput, DramPolicy, LatencyCurve, MemcpyPace, NeighbourRatios, StagedCopy,
};

/// What makes running activities interchangeable for the solver: resolved resource
/// weights (sorted by resource, duplicates summed) and the terms of the class's cap.
/// Interned once per run. Two keys are equal when every number in them has the same
/// bits (so a NaN write share equals itself, and keys hash and intern).
#[derive(Debug, Clone, Default)]
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
    pub(super) fn weight_on(&self, r: usize) -> Option<f64> {
        self.weights
            .iter()
            .find(|&&(x, w)| x == r && w > 0.0)
            .map(|&(_, w)| w)
    }

    /// Whether it is a staged copy whose memcpy slows as latency rises.
    pub(super) fn paced(&self) -> bool {
        self.staging
            .is_some_and(|st| st.memcpy_pace == MemcpyPace::LatencyBound)
    }

    /// Every field as words, in a fixed order (lists with their lengths, options with a
    /// tag): what equality and hashing compare.
    fn words(&self, out: &mut impl FnMut(u64)) {
        let points = |out: &mut dyn FnMut(u64), p: &[(f64, f64)]| {
            out(p.len() as u64);
            for &(x, y) in p {
                out(x.to_bits());
                out(y.to_bits());
            }
        };
        out(self.weights.len() as u64);
        for &(r, w) in &self.weights {
            out(r as u64);
            out(w.to_bits());
        }
        out(self.latency_frac.to_bits());
        out(self.dram_policy as u64);
        out(self.line_bound.to_bits());
        out(self.compute_frac.to_bits());
        out(self.write_frac.to_bits());
        out(self.host_frac.to_bits());
        out(self.host_pool as u64);
        match &self.staging {
            None => out(0),
            Some(st) => {
                out(1);
                out(st.setup_frac.to_bits());
                out(st.memcpy_headroom.to_bits());
                out(st.memcpy_pace as u64);
                out(st.latency_exponent.to_bits());
                match &st.beside_streams {
                    None => out(0),
                    Some(c) => {
                        out(1);
                        points(out, c.points());
                    }
                }
            }
        }
        match &self.cpu_load {
            None => out(0),
            Some(l) => {
                out(1);
                out(l.pools.len() as u64);
                l.pools.iter().for_each(|&p| out(p as u64));
                points(out, &l.stretch);
                out(l.threads.to_bits());
                points(out, &l.by_neighbour.streaming);
                points(out, &l.by_neighbour.chasing);
            }
        }
        out(self.memcpy_pools.len() as u64);
        self.memcpy_pools.iter().for_each(|&p| out(p as u64));
    }
}

impl PartialEq for ClassKey {
    fn eq(&self, other: &Self) -> bool {
        let mut mine = Vec::new();
        self.words(&mut |w| mine.push(w));
        let mut at = 0;
        let mut same = true;
        other.words(&mut |w| {
            same &= mine.get(at) == Some(&w);
            at += 1;
        });
        same && at == mine.len()
    }
}

impl Eq for ClassKey {}

impl Hash for ClassKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.words(&mut |w| state.write_u64(w));
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
    pub(super) fn dram_weight(&self, dram: usize) -> Option<f64> {
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

/// The system one solve takes: the rate resources (constraints), how the thread pools
/// among them are shared, and the classes (variables).
#[derive(Debug, Clone, Copy)]
pub struct System<'a> {
    /// `C_r`, per rate resource.
    pub capacities: &'a [f64],
    /// DRAM's resource index: its utilisation drives the latency curve.
    pub dram: usize,
    /// DRAM's loaded-latency curve.
    pub curve: &'a LatencyCurve,
    /// The rules of the pools that have one.
    pub pools: &'a [PoolRule],
    pub classes: &'a [ClassDemand],
}

impl System<'_> {
    /// DRAM's capacity.
    pub(super) fn dram_capacity(&self) -> f64 {
        self.capacities[self.dram]
    }

    /// Whether any running class's cap depends on DRAM latency, so the speeds are a
    /// fixed point over the utilisation (else one filling settles them).
    pub(super) fn latency_sensitive(&self) -> bool {
        self.classes.iter().any(|c| {
            c.count > 0 && (c.key.latency_frac > 0.0 || c.key.line_bound > 0.0 || c.key.paced())
        })
    }

    /// The rule of the pool at resource `r`, when it is shared per thread.
    pub(super) fn per_thread_pool(&self, r: usize) -> bool {
        self.pools.iter().any(|p| p.per_thread && p.resource == r)
    }
}

/// The solver's answer for one class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassSpeed {
    /// Speed as a fraction of standalone, in (0, 1].
    pub speed: f64,
    /// What held it below 1, if anything.
    pub limiter: Option<Limiter>,
}

impl ClassSpeed {
    /// Standalone speed, held by nothing.
    pub const FULL: ClassSpeed = ClassSpeed {
        speed: 1.0,
        limiter: None,
    };
}

/// What one solve gives back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Solution {
    /// Per class, its speed (meaningful for the classes with members).
    pub speeds: Vec<ClassSpeed>,
    /// Draw on each rate resource.
    pub usage: Vec<f64>,
    /// DRAM's draw over its capacity, in [0, 1].
    pub dram_utilisation: f64,
    /// What the classes would draw of DRAM at their caps with DRAM unconstrained, GB/s
    /// (its offered load, which may exceed its capacity).
    pub dram_offered: f64,
    /// L/L(0) at the load the solve settled at.
    pub latency_slowdown: f64,
}

impl Solution {
    /// Becomes a copy of `other`, in the buffers it has.
    pub fn copy_from(&mut self, other: &Solution) {
        self.speeds.clear();
        self.speeds.extend_from_slice(&other.speeds);
        self.usage.clear();
        self.usage.extend_from_slice(&other.usage);
        self.dram_utilisation = other.dram_utilisation;
        self.dram_offered = other.dram_offered;
        self.latency_slowdown = other.latency_slowdown;
    }
}
