//! Each class's cap: the highest speed its own physics allows at a DRAM latency (its
//! latency-bound share, lines in flight, a staged copy's memcpy, core throughput, its
//! host thread). [`CapTable::set`] computes what does not depend on latency once per
//! solve; [`CapTable::at`] gives a class's cap at a latency.

use crate::engine::ids::{Limiter, RateId};
use crate::model::{CACHE_LINE_BYTES, LatencyCurve, StagedCopy};

use super::system::{ClassDemand, ClassSpeed, System};
use super::threads::{cpu_load_stretch, memcpy_neighbour_ratio, runnable_threads};

/// Relative tolerance below 1 under which a cap is a slowdown.
const EPS: f64 = 1e-12;

/// The loaded DRAM latency a filling's caps are read at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// L(u)/L(0).
    pub slowdown: f64,
    /// L(u), ns.
    pub ns: f64,
}

impl Latency {
    /// What a table whose caps are all fixed is read at (no curve needed).
    const IDLE: Latency = Latency {
        slowdown: 1.0,
        ns: 0.0,
    };
}

/// A class's cap: fixed, or made of terms that vary with the latency.
// Inline, not boxed: the table's vector is reused from solve to solve, and a box would
// allocate once per class per solve.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy)]
enum Cap {
    Fixed(ClassSpeed),
    Varying(CapTerms),
}

/// Every class's cap for one solve, with the per-pool sums they share.
#[derive(Debug, Default, Clone)]
pub struct CapTable {
    /// Write share of the running classes' DRAM demand (None: the curve's own mix).
    write_frac: Option<f64>,
    /// L(0) at that mix (the divisor of every latency slowdown).
    idle_ns: f64,
    /// Per class.
    caps: Vec<Cap>,
    /// No class's cap varies.
    all_fixed: bool,
    /// Per pool rule: what the running classes want of it, threads (None: not yet
    /// summed in this solve), and threads plus host threads.
    pool_wanted: Vec<Option<f64>>,
    host_wanted: Vec<Option<f64>>,
    /// Per pool rule, the last per-thread throughput asked for (active threads' bits,
    /// the throughput): most classes on a pool ask it for the same active threads.
    paces: Vec<Option<(u64, f64)>>,
}

impl CapTable {
    /// The caps of `system`'s classes.
    pub fn set(&mut self, system: &System) {
        self.mix_writes(system);
        let pools = system.pools.len();
        self.pool_wanted.clear();
        self.pool_wanted.resize(pools, None);
        self.host_wanted.clear();
        self.host_wanted.resize(pools, None);
        self.paces.clear();
        self.paces.resize(pools, None);
        self.caps.clear();
        for c in system.classes {
            if c.count == 0 {
                // (An empty class has no speed to cap.)
                self.caps.push(Cap::Fixed(ClassSpeed::FULL));
                continue;
            }
            let terms = self.terms(system, c);
            // A class that is neither latency bound nor bounded by lines in flight has
            // the same cap at every latency.
            let varies = c.key.latency_frac != 0.0
                || (c.key.line_bound > 0.0 && c.dram_weight(system.dram).is_some())
                || c.key.staging.is_some();
            self.caps.push(if varies {
                Cap::Varying(terms)
            } else {
                Cap::Fixed(terms.at(Latency::IDLE))
            });
        }
        self.all_fixed = self.caps.iter().all(|c| matches!(c, Cap::Fixed(_)));
    }

    /// Whether no class's cap depends on the latency.
    pub fn all_fixed(&self) -> bool {
        self.all_fixed
    }

    /// Whether class `i`'s cap is the same at every latency.
    pub fn is_fixed(&self, i: usize) -> bool {
        matches!(self.caps[i], Cap::Fixed(_))
    }

    /// Class `i`'s cap at `latency`, and what holds it there.
    #[inline]
    pub fn at(&self, i: usize, latency: Latency) -> ClassSpeed {
        match &self.caps[i] {
            Cap::Fixed(s) => *s,
            Cap::Varying(terms) => terms.at(latency),
        }
    }

    /// The latency at DRAM load `u` (utilisation or offered load, as the curve reads
    /// it) at this solve's write mix.
    pub fn latency_at(&self, curve: &LatencyCurve, u: f64) -> Latency {
        if self.all_fixed {
            return Latency::IDLE;
        }
        let ns = curve.latency_ns_mix(u, self.write_frac);
        Latency {
            slowdown: ns / self.idle_ns,
            ns,
        }
    }

    /// L/L(0) at DRAM load `u` (L(0) itself at 0).
    pub fn slowdown_at(&self, curve: &LatencyCurve, u: f64) -> f64 {
        let at = if u.to_bits() == 0 {
            self.idle_ns
        } else {
            curve.latency_ns_mix(u, self.write_frac)
        };
        at / self.idle_ns
    }

    /// The run's write mix (each running class's write share, weighted by its DRAM
    /// demand) and the idle latency L(0) at that mix.
    fn mix_writes(&mut self, system: &System) {
        self.write_frac = None;
        if let Some(base) = system.curve.base_write_frac() {
            let (mut writes, mut total) = (0.0, 0.0);
            for c in system.classes.iter().filter(|c| c.count > 0) {
                if let Some(w) = c.dram_weight(system.dram) {
                    let wf = if c.key.write_frac.is_nan() {
                        base
                    } else {
                        c.key.write_frac
                    };
                    writes += c.count as f64 * w * wf;
                    total += c.count as f64 * w;
                }
            }
            self.write_frac = (total > 0.0).then(|| writes / total);
        }
        self.idle_ns = system.curve.latency_ns_mix(0.0, self.write_frac);
    }

    /// The terms of class `c`'s cap.
    fn terms(&mut self, system: &System, c: &ClassDemand) -> CapTerms {
        let (capacities, classes, dram) = (system.capacities, system.classes, system.dram);
        let (slow, compute_pool) = self.compute_slowdown(system, c);
        let mut host = c.key.host_frac * (self.host_slowdown(system, c) - 1.0);
        if let Some(load) = &c.key.cpu_load {
            host += cpu_load_stretch(load, capacities, classes, dram) - 1.0;
        }
        let lines = (c.key.line_bound > 0.0)
            .then(|| Some((c.key.line_bound, c.dram_weight(dram)?)))
            .flatten();
        // The share of its time alone that the stage streams at its lines' rate (its draw
        // over what its lines move at idle latency): that share waits on latency as the
        // latency-bound share does; what it asks above the bound, it cannot have.
        let unbound = 1.0 - c.key.latency_frac;
        let streaming = lines.map_or(0.0, |(bound, w)| (w * self.idle_ns / bound).min(unbound));
        CapTerms {
            latency_frac: c.key.latency_frac + streaming,
            unbound_frac: unbound - streaming,
            compute: c.key.compute_frac * (slow - 1.0),
            compute_pool,
            host,
            host_pool: match &c.key.cpu_load {
                Some(load) if c.key.host_frac == 0.0 => load.pools.first().copied(),
                _ => Some(c.key.host_pool),
            },
            oversub: self.oversubscription(system, c),
            lines,
            staging: c.key.staging,
            memcpy_beside: memcpy_neighbour_ratio(c, capacities, classes, dram),
            memcpy_lines: c.key.staging.map_or(f64::INFINITY, |st| {
                // Its memcpy's rate alone: the copy's rate on its link (its largest draw
                // off DRAM) x the memcpy's headroom over it.
                let link = (c.key.weights.iter())
                    .filter(|&&(r, _)| r != dram)
                    .fold(0.0_f64, |m, &(_, w)| m.max(w));
                let lines = link * st.memcpy_headroom * self.idle_ns / CACHE_LINE_BYTES;
                if lines > 0.0 { lines } else { f64::INFINITY }
            }),
        }
    }

    /// How much slower class `c`'s compute-bound share runs than alone, on the pool
    /// whose per-thread throughput slows it most (1 and None when none does).
    fn compute_slowdown(&mut self, system: &System, c: &ClassDemand) -> (f64, Option<usize>) {
        let (mut slow, mut pool) = (1.0, None);
        if c.key.compute_frac > 0.0 && c.count > 0 {
            for (k, p) in system.pools.iter().enumerate() {
                let (Some(cpu), Some(own)) = (&p.cpu, c.key.weight_on(p.resource)) else {
                    continue;
                };
                let wanted = *self.pool_wanted[k].get_or_insert_with(|| {
                    (system.classes.iter().filter(|o| o.count > 0))
                        .filter_map(|o| Some(o.count as f64 * o.key.weight_on(p.resource)?))
                        .sum()
                });
                let active = wanted.min(system.capacities[p.resource]).max(own);
                let at_active = match self.paces[k] {
                    Some((bits, pace)) if bits == active.to_bits() => pace,
                    _ => {
                        let pace = cpu.per_thread(active);
                        self.paces[k] = Some((active.to_bits(), pace));
                        pace
                    }
                };
                let s = (cpu.per_thread(own) / at_active).max(1.0);
                if s > slow {
                    (slow, pool) = (s, Some(p.resource));
                }
            }
        }
        (slow, pool)
    }

    /// How much class `c`'s host thread stretches on its per-thread pool: the runnable
    /// threads over the pool's size, at least 1.
    fn host_slowdown(&mut self, system: &System, c: &ClassDemand) -> f64 {
        let mut host = 1.0;
        if c.key.host_frac > 0.0 && c.count > 0 {
            let p = c.key.host_pool;
            let rule = (system.pools.iter()).position(|r| r.per_thread && r.resource == p);
            if let Some(k) = rule {
                let wanted = *self.host_wanted[k]
                    .get_or_insert_with(|| runnable_threads(system.classes, system.capacities, p));
                host = (wanted / system.capacities[p]).max(1.0);
            }
        }
        host
    }

    /// How many runnable threads share each CPU of the busiest per-thread pool class `c`
    /// draws on (at least 1): a thread stalled on memory still holds its CPU, so its
    /// time when running is stretched again by its wait for a CPU.
    fn oversubscription(&mut self, system: &System, c: &ClassDemand) -> f64 {
        let mut o: f64 = 1.0;
        if c.count == 0 {
            return o;
        }
        for (k, rule) in system.pools.iter().enumerate() {
            let (p, capacities) = (rule.resource, system.capacities);
            if !rule.per_thread || c.key.weight_on(p).is_none() || capacities[p] <= 0.0 {
                continue;
            }
            let wanted = *self.host_wanted[k]
                .get_or_insert_with(|| runnable_threads(system.classes, capacities, p));
            o = o.max(wanted / capacities[p]);
        }
        o
    }
}

/// What a class's cap is made of, but for DRAM latency.
#[derive(Debug, Clone, Copy)]
struct CapTerms {
    latency_frac: f64,
    /// `1 - latency_frac`.
    unbound_frac: f64,
    /// The time the compute-bound share adds, `c (slowdown - 1)`, and the pool whose
    /// per-thread throughput slows it.
    compute: f64,
    compute_pool: Option<usize>,
    /// The time the host thread's share and the CPU load add, and the pool they wait on.
    host: f64,
    host_pool: Option<usize>,
    /// Runnable threads per CPU on its busiest pool, at least 1.
    oversub: f64,
    /// Little's-law bound and the DRAM draw it divides, when bounded and on DRAM.
    lines: Option<(f64, f64)>,
    staging: Option<StagedCopy>,
    /// The memcpy's rate ratio by its streaming neighbours (see [`StagedCopy::cap`]).
    memcpy_beside: f64,
    /// The cache lines its memcpy keeps in flight alone at idle latency (infinite when
    /// not known): the floor of its Little's-law pace (see [`StagedCopy::cap`]).
    memcpy_lines: f64,
}

impl CapTerms {
    /// The cap at `latency`.
    #[inline]
    fn at(&self, latency: Latency) -> ClassSpeed {
        let (compute, host) = (self.compute, self.host);
        let slowdown = latency.slowdown;
        let mut cap = 1.0 / (self.unbound_frac + self.latency_frac * slowdown + compute + host);
        if let Some((line_bound, w)) = self.lines {
            cap = cap.min(line_bound / (latency.ns * w));
        }
        // A thread slowed by memory, cores or its host thread holds its CPU the while: on
        // a pool with more runnable threads than CPUs it waits its turn on top.
        if self.oversub > 1.0 && cap < 1.0 {
            cap /= self.oversub;
        }
        if let Some(st) = &self.staging {
            cap = cap.min(st.cap(slowdown, self.memcpy_beside, self.memcpy_lines));
        }
        // Slower cores are the pool's loss; latency the DRAM's.
        let latency = self.latency_frac * (slowdown - 1.0);
        let limiter = match (self.compute_pool, self.host_pool) {
            (_, Some(h)) if host > latency && host >= compute => {
                Limiter::Rate(RateId::from_index(h))
            }
            (Some(p), _) if compute > latency => Limiter::Rate(RateId::from_index(p)),
            _ => Limiter::DramLatency,
        };
        ClassSpeed {
            speed: cap,
            limiter: (cap < 1.0 - EPS).then_some(limiter),
        }
    }
}
