//! Each class's cap: the highest speed its own physics allows at a DRAM latency (its
//! latency-bound share, lines in flight, a staged copy's memcpy, core throughput, its
//! host thread). What does not depend on latency is computed once per solve; the rest
//! is kept as [`CapTerms`] and evaluated by each filling.

use crate::engine::observer::{Limiter, RateId};
use crate::model::{CACHE_LINE_BYTES, LatencyCurve, StagedCopy, stretch_at};

use super::{ClassDemand, ClassSpeed, CpuLoadKey, EPS, Solver};

impl Solver {
    /// The run's write mix (each running class's write share, weighted by its DRAM
    /// demand) and the idle latency L(0) at that mix, the divisor of every slowdown.
    pub(super) fn mix_writes(
        &mut self,
        dram: usize,
        curve: &LatencyCurve,
        classes: &[ClassDemand],
    ) {
        self.write_frac = None;
        if let Some(base) = curve.base_write_frac() {
            let (mut writes, mut total) = (0.0, 0.0);
            for c in classes.iter().filter(|c| c.count > 0) {
                if let Some(w) = c.dram_weight(dram) {
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
        self.idle_ns = curve.latency_ns_mix(0.0, self.write_frac);
    }

    /// Each class's compute and host-thread terms, and its whole cap where that does not
    /// depend on DRAM latency.
    pub(super) fn set_cap_terms(
        &mut self,
        capacities: &[f64],
        dram: usize,
        classes: &[ClassDemand],
    ) {
        self.compute_term.clear();
        self.compute_pool.clear();
        self.host_term.clear();
        self.oversub.clear();
        self.memcpy_beside.clear();
        self.fixed_cap.clear();
        // What the running classes want of each pool (the same sums, in the same order,
        // for every class that asks): threads, and threads plus host threads.
        self.pool_wanted.clear();
        self.pool_wanted.resize(self.pools.len(), None);
        self.host_wanted.clear();
        self.host_wanted.resize(self.pools.len(), None);
        // Per pool, the last per-thread throughput asked for (active threads' bits, the
        // throughput): most classes on a pool ask it for the same active threads.
        let mut paces: Vec<Option<(u64, f64)>> = std::mem::take(&mut self.pool_paces);
        paces.clear();
        paces.resize(self.pools.len(), None);
        for (i, c) in classes.iter().enumerate() {
            let (slow, pool) = self.compute_slowdown(capacities, classes, c, &mut paces);
            let host = self.host_slowdown(capacities, classes, c);
            self.compute_term.push(c.key.compute_frac * (slow - 1.0));
            self.compute_pool.push(pool);
            let mut host_term = c.key.host_frac * (host - 1.0);
            if let Some(load) = &c.key.cpu_load {
                host_term += cpu_load_stretch(load, capacities, classes, dram) - 1.0;
            }
            self.host_term.push(host_term);
            let oversub = self.oversubscription(capacities, classes, c);
            self.oversub.push(oversub);
            let beside = memcpy_neighbour_ratio(c, capacities, classes, dram);
            self.memcpy_beside.push(beside);
            // A class that is neither latency bound nor bounded by lines in flight has
            // the same cap at every utilisation: `0 * slowdown` is 0 for any (finite)
            // slowdown, so computing it once at slowdown 1 gives the same bits.
            let varies = c.key.latency_frac != 0.0
                || (c.key.line_bound > 0.0 && c.dram_weight(dram).is_some())
                || c.key.staging.is_some();
            let fixed = (!varies).then(|| self.cap_of(i, c, dram, 1.0, 0.0));
            self.fixed_cap.push(fixed);
        }
        self.pool_paces = paces;
    }

    /// How much slower class `c`'s compute-bound share runs than alone, on the pool
    /// whose per-thread throughput slows it most (1 and None when none does).
    fn compute_slowdown(
        &mut self,
        capacities: &[f64],
        classes: &[ClassDemand],
        c: &ClassDemand,
        paces: &mut [Option<(u64, f64)>],
    ) -> (f64, Option<usize>) {
        let (mut slow, mut pool) = (1.0, None);
        if c.key.compute_frac > 0.0 && c.count > 0 {
            for (k, p) in self.pools.iter().enumerate() {
                let (Some(cpu), Some(own)) = (&p.cpu, c.key.weight_on(p.resource)) else {
                    continue;
                };
                let wanted = *self.pool_wanted[k].get_or_insert_with(|| {
                    classes
                        .iter()
                        .filter(|o| o.count > 0)
                        .filter_map(|o| Some(o.count as f64 * o.key.weight_on(p.resource)?))
                        .sum()
                });
                let active = wanted.min(capacities[p.resource]).max(own);
                let at_active = match paces[k] {
                    Some((bits, pace)) if bits == active.to_bits() => pace,
                    _ => {
                        let pace = cpu.per_thread(active);
                        paces[k] = Some((active.to_bits(), pace));
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
    fn host_slowdown(
        &mut self,
        capacities: &[f64],
        classes: &[ClassDemand],
        c: &ClassDemand,
    ) -> f64 {
        let mut host = 1.0;
        if c.key.host_frac > 0.0 && c.count > 0 {
            let p = c.key.host_pool;
            if let Some(k) = (self.pools.iter()).position(|r| r.per_thread && r.resource == p) {
                let wanted = *self.host_wanted[k]
                    .get_or_insert_with(|| runnable_threads(classes, capacities, p));
                host = (wanted / capacities[p]).max(1.0);
            }
        }
        host
    }

    /// How many runnable threads share each CPU of the busiest per-thread pool class `c`
    /// draws on (at least 1): a thread stalled on memory still holds its CPU, so its
    /// time when running is stretched again by its wait for a CPU.
    fn oversubscription(
        &mut self,
        capacities: &[f64],
        classes: &[ClassDemand],
        c: &ClassDemand,
    ) -> f64 {
        let mut o: f64 = 1.0;
        if c.count == 0 {
            return o;
        }
        for k in 0..self.pools.len() {
            let p = self.pools[k].resource;
            if !self.pools[k].per_thread || c.key.weight_on(p).is_none() || capacities[p] <= 0.0 {
                continue;
            }
            let wanted = *self.host_wanted[k]
                .get_or_insert_with(|| runnable_threads(classes, capacities, p));
            o = o.max(wanted / capacities[p]);
        }
        o
    }

    /// Each class's cap where fixed, and the terms of the others (evaluated by each
    /// filling); the fixed caps go to the filling's view of each class. Runs after the
    /// weights are flattened.
    pub(super) fn set_fixed_caps(&mut self, dram: usize, classes: &[ClassDemand]) {
        self.varying.clear();
        self.fixed_out.clear();
        for (i, c) in classes.iter().enumerate() {
            let s = self.fixed_cap[i].unwrap_or_else(|| {
                let terms = self.cap_terms(i, c, dram);
                self.varying.push(terms);
                ClassSpeed {
                    speed: f64::NAN,
                    limiter: None,
                }
            });
            let rising = &mut self.rising[i];
            rising.cap = s.speed;
            rising.cap_level = s.speed * rising.scale;
            self.fixed_out.push(s);
        }
        self.caps_fixed = self.varying.is_empty();
        self.rising_fixed.clear();
        let fixed = self
            .base_active
            .iter()
            .filter(|&&i| self.fixed_cap[i].is_some());
        self.rising_fixed.extend(fixed);
    }

    /// Class `i`'s cap (the highest speed latency, cores and its host thread allow) at a
    /// latency `slowdown` of L(u)/L(0) and `latency_ns` of L(u), and what holds it there.
    pub(super) fn cap_of(
        &self,
        i: usize,
        c: &ClassDemand,
        dram: usize,
        slowdown: f64,
        latency_ns: f64,
    ) -> ClassSpeed {
        self.cap_terms(i, c, dram).at(slowdown, latency_ns)
    }

    /// The terms of class `i`'s cap that do not depend on DRAM latency.
    fn cap_terms(&self, i: usize, c: &ClassDemand, dram: usize) -> CapTerms {
        let lines = (c.key.line_bound > 0.0)
            .then(|| Some((c.key.line_bound, c.dram_weight(dram)?)))
            .flatten();
        // The share of its time alone that the stage streams at its lines' rate (its draw
        // over what its lines move at idle latency): that share waits on latency as the
        // latency-bound share does; what it asks above the bound, it cannot have.
        let unbound = 1.0 - c.key.latency_frac;
        let streaming = lines.map_or(0.0, |(bound, w)| (w * self.idle_ns / bound).min(unbound));
        CapTerms {
            class: i,
            latency_frac: c.key.latency_frac + streaming,
            unbound_frac: unbound - streaming,
            compute: self.compute_term[i],
            compute_pool: self.compute_pool[i],
            host: self.host_term[i],
            oversub: self.oversub[i],
            host_pool: match &c.key.cpu_load {
                Some(load) if c.key.host_frac == 0.0 => load.pools.first().copied(),
                _ => Some(c.key.host_pool),
            },
            lines,
            staging: c.key.staging,
            memcpy_beside: self.memcpy_beside[i],
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
}

/// A staged copy's memcpy rate over alone by the threads streaming beside it per CPU on
/// its pools (1 unless its neighbours pace it; see [`StagedCopy::neighbour_ratio`]); a
/// host thread of its own on one of them is not its neighbour.
fn memcpy_neighbour_ratio(
    c: &ClassDemand,
    capacities: &[f64],
    classes: &[ClassDemand],
    dram: usize,
) -> f64 {
    let Some(st) = &c.key.staging else {
        return 1.0;
    };
    if c.key.memcpy_pools.is_empty() || c.count == 0 {
        return 1.0;
    }
    let (mut streaming, mut cpus) = (0.0, 0.0);
    for &p in &c.key.memcpy_pools {
        streaming += runnable_by_kind(classes, capacities, p, dram).streaming - host_share(c, p);
        cpus += capacities[p];
    }
    if cpus <= 0.0 {
        return 1.0;
    }
    st.neighbour_ratio(streaming.max(0.0) / cpus)
}

/// How much slower a class with CPU `load` runs than alone: its curve read at the
/// threads the running classes want of its pools (pool draws plus host threads) per CPU,
/// less its own host side's (the curve was measured with those running). With ratios by
/// neighbour kind, the curve's excess over 1 scales by their mean over those threads.
fn cpu_load_stretch(
    load: &CpuLoadKey,
    capacities: &[f64],
    classes: &[ClassDemand],
    dram: usize,
) -> f64 {
    let (mut wanted, mut cpus) = (0.0, 0.0);
    for &p in &load.pools {
        cpus += capacities[p];
        wanted += runnable_threads(classes, capacities, p);
    }
    if cpus <= 0.0 {
        return 1.0;
    }
    let busy = (wanted - load.threads).max(0.0) / cpus;
    let stretch = stretch_at(&load.stretch, busy);
    if load.by_neighbour.is_empty() {
        return stretch.max(1.0);
    }
    let mut kinds = NeighbourThreads::default();
    for &p in &load.pools {
        kinds.add(&runnable_by_kind(classes, capacities, p, dram));
    }
    kinds.spinning = (kinds.spinning - load.threads).max(0.0);
    let total = kinds.spinning + kinds.streaming + kinds.chasing;
    if total <= 0.0 {
        return stretch.max(1.0);
    }
    let ratios = &load.by_neighbour;
    let ratio = (kinds.spinning
        + kinds.streaming * stretch_at(&ratios.streaming, busy)
        + kinds.chasing * stretch_at(&ratios.chasing, busy))
        / total;
    (1.0 + (stretch - 1.0) * ratio).max(1.0)
}

/// Runnable threads on a pool by what they do while they run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct NeighbourThreads {
    spinning: f64,
    streaming: f64,
    chasing: f64,
}

impl NeighbourThreads {
    fn add(&mut self, o: &NeighbourThreads) {
        self.spinning += o.spinning;
        self.streaming += o.streaming;
        self.chasing += o.chasing;
    }
}

/// [`runnable_threads`] split by kind: a pool thread chases pointers for its stage's
/// latency-bound share, streams for the rest of its time outside compute when the stage
/// draws on DRAM, and spins otherwise; a staged copy's memcpy thread streams; every
/// other host thread, and a kernel's host side, spins.
fn runnable_by_kind(
    classes: &[ClassDemand],
    capacities: &[f64],
    p: usize,
    dram: usize,
) -> NeighbourThreads {
    let mut out = NeighbourThreads::default();
    for o in classes.iter().filter(|o| o.count > 0) {
        let n = o.count as f64;
        let pool = o.key.weight_on(p).unwrap_or(0.0) * n;
        let chasing = o.key.latency_frac.clamp(0.0, 1.0);
        let streaming = if o.key.weight_on(dram).is_some() {
            (1.0 - chasing - o.key.compute_frac).max(0.0)
        } else {
            0.0
        };
        out.chasing += pool * chasing;
        out.streaming += pool * streaming;
        out.spinning += pool * (1.0 - chasing - streaming);
        let host = host_share(o, p) * n;
        if o.key.staging.is_some() {
            out.streaming += host;
        } else {
            out.spinning += host;
        }
        out.spinning += kernel_host_share(o, capacities, p) * n;
    }
    out
}

/// The threads the running classes want on pool resource `p`: its draws, the host
/// threads on it, and its share (by size) of what the running kernels' host sides keep
/// busy on their pools.
fn runnable_threads(classes: &[ClassDemand], capacities: &[f64], p: usize) -> f64 {
    (classes.iter().filter(|o| o.count > 0))
        .map(|o| {
            let pool = o.key.weight_on(p).unwrap_or(0.0);
            o.count as f64 * (pool + host_share(o, p) + kernel_host_share(o, capacities, p))
        })
        .sum()
}

/// The share of a CPU on pool resource `p` that one activity's host thread wants.
fn host_share(o: &ClassDemand, p: usize) -> f64 {
    if o.key.host_frac > 0.0 && o.key.host_pool == p {
        o.key.host_frac
    } else {
        0.0
    }
}

/// The CPUs on pool resource `p` that one activity's kernel host side keeps busy: its
/// measured threads, spread over its pools by their size.
fn kernel_host_share(o: &ClassDemand, capacities: &[f64], p: usize) -> f64 {
    match &o.key.cpu_load {
        Some(l) if l.threads > 0.0 && l.pools.contains(&p) => {
            let cpus: f64 = l.pools.iter().map(|&q| capacities[q]).sum();
            if cpus > 0.0 {
                l.threads * capacities[p] / cpus
            } else {
                0.0
            }
        }
        _ => 0.0,
    }
}

/// What a class's cap is made of, but for DRAM latency (see [`Solver::cap_of`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct CapTerms {
    pub(super) class: usize,
    latency_frac: f64,
    /// `1 - latency_frac`.
    unbound_frac: f64,
    /// The time the compute-bound share adds, and the pool that slows it.
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
    /// The cap at a latency `slowdown` of L(u)/L(0) and `latency_ns` of L(u).
    #[inline]
    pub(super) fn at(&self, slowdown: f64, latency_ns: f64) -> ClassSpeed {
        let (compute, host) = (self.compute, self.host);
        let latency = self.latency_frac * (slowdown - 1.0);
        // (Zero compute and host terms leave the latency term's bits as they are.)
        let mut cap = 1.0 / (self.unbound_frac + self.latency_frac * slowdown + compute + host);
        if let Some((line_bound, w)) = self.lines {
            cap = cap.min(line_bound / (latency_ns * w));
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

#[cfg(test)]
mod tests {
    use super::super::ClassDemand;
    use super::super::test_support::{class, pool_solver, solve};
    use crate::engine::observer::{Limiter, RateId};
    use crate::model::{CpuThroughput, LatencyCurve, MemcpyPace, StagedCopy};

    /// Pool (resource 1) of 16 CPUs, per thread: a kernel (GPU share on resource 2) with
    /// the curve (0, 1) (0.5, 1.2) (1, 2.0) whose host side keeps `threads` CPUs busy,
    /// 12 one-thread streams, and a driver whose host thread needs a CPU half its time.
    fn kernel_streams_driver(threads: f64) -> [ClassDemand; 3] {
        let mut kernel = class(1, &[(2, 0.5)], 0.0);
        kernel.key.cpu_load = Some(super::CpuLoadKey {
            pools: vec![1],
            stretch: vec![(0.0, 1.0), (0.5, 1.2), (1.0, 2.0)],
            threads,
            by_neighbour: Default::default(),
        });
        let mut driver = class(1, &[(2, 0.1)], 0.0);
        driver.key.host_frac = 0.5;
        driver.key.host_pool = 1;
        [kernel, class(12, &[(1, 1.0)], 0.0), driver]
    }

    #[test]
    fn a_kernel_stretches_by_its_cpu_load_curve_at_the_pools_runnable_threads() {
        // The pool holds 12.5 runnable threads, 0.78125 per CPU, so the kernel takes
        // 1.2 + 0.8 x (0.78125 - 0.5) / 0.5 = 1.65 its time.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 100.0)]).unwrap();
        let classes = kernel_streams_driver(0.0);
        let [kernel, streams, _] = classes.clone();
        let mut s = pool_solver(true, None);
        let mut out = Vec::new();
        s.solve(&[1000.0, 16.0, 1.0], 0, &curve, &classes, &mut out);
        assert!((out[0].speed - 1.0 / 1.65).abs() < 1e-12, "{out:?}");
        assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
        // Alone, or past the last point, it reads the curve's ends.
        s.solve(
            &[1000.0, 16.0, 1.0],
            0,
            &curve,
            std::slice::from_ref(&kernel),
            &mut out,
        );
        assert_eq!(out[0].speed, 1.0);
        let mut many = streams;
        many.count = 40;
        s.solve(&[1000.0, 16.0, 1.0], 0, &curve, &[kernel, many], &mut out);
        assert!((out[0].speed - 0.5).abs() < 1e-12, "{out:?}");
    }

    #[test]
    fn a_kernels_stretch_scales_by_what_its_neighbours_do() {
        // As above, but the 12 workers are mostly latency bound (0.7) and draw on DRAM
        // (resource 0): 8.4 chasing and 3.6 streaming threads, beside the driver's 0.5
        // spinning. Ratios: chasing 0.5, streaming 2 (flat). The curve's excess 0.65 at
        // 0.78125 scales by (0.5 x 1 + 3.6 x 2 + 8.4 x 0.5) / 12.5 = 0.952: 1.6188.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 100.0)]).unwrap();
        let [mut kernel, _, driver] = kernel_streams_driver(0.0);
        let ratios = &mut kernel.key.cpu_load.as_mut().unwrap().by_neighbour;
        ratios.chasing = vec![(0.0, 0.5)];
        ratios.streaming = vec![(0.0, 2.0)];
        let workers = class(12, &[(0, 1.0), (1, 1.0)], 0.7);
        let mut s = pool_solver(true, None);
        let mut out = Vec::new();
        let caps = [1000.0, 16.0, 1.0];
        s.solve(
            &caps,
            0,
            &curve,
            &[kernel.clone(), workers.clone(), driver],
            &mut out,
        );
        let want = 1.0 + 0.65 * (0.5 + 3.6 * 2.0 + 8.4 * 0.5) / 12.5;
        assert!((out[0].speed - 1.0 / want).abs() < 1e-12, "{out:?}");
        // Workers that draw no DRAM spin for their unbound share: 8.4 chasing, 3.6
        // spinning, ratio (4.1 + 4.2) / 12.5 = 0.664.
        let cpu_only = class(12, &[(1, 1.0)], 0.7);
        let driver = kernel_streams_driver(0.0)[2].clone();
        s.solve(&caps, 0, &curve, &[kernel, cpu_only, driver], &mut out);
        let want = 1.0 + 0.65 * (0.5 + 3.6 + 8.4 * 0.5) / 12.5;
        assert!((out[0].speed - 1.0 / want).abs() < 1e-12, "{out:?}");
    }

    #[test]
    fn the_cpus_a_kernels_host_side_keeps_busy_load_the_pool_for_the_others() {
        // The kernel's host side keeps 4 CPUs busy: the pool holds 12 + 4 + 0.5 = 16.5
        // runnable threads. The driver's host share waits 16.5/16: speed
        // 1 / (0.5 + 0.5 x 1.03125) = 0.984615. The kernel reads its curve without its
        // own 4: 12.5/16 = 0.78125, stretch 1.65 as without them.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 100.0)]).unwrap();
        let classes = kernel_streams_driver(4.0);
        let mut s = pool_solver(true, None);
        let mut out = Vec::new();
        s.solve(&[1000.0, 16.0, 1.0], 0, &curve, &classes, &mut out);
        assert!((out[0].speed - 1.0 / 1.65).abs() < 1e-12, "{out:?}");
        assert!(
            (out[2].speed - 1.0 / (0.5 + 0.5 * 16.5 / 16.0)).abs() < 1e-12,
            "{out:?}"
        );
        // Without the kernel the pool holds 12.5 threads and the driver never waits.
        let [_, streams, driver] = classes;
        s.solve(
            &[1000.0, 16.0, 1.0],
            0,
            &curve,
            &[streams, driver],
            &mut out,
        );
        assert_eq!(out[1].speed, 1.0);
    }

    #[test]
    fn little_law_bound_slows_a_stream_as_its_own_latency_rises() {
        // One thread keeps enough lines in flight for 20 GB/s at the idle 100 ns
        // (line bound 20 x 100). L(u) = 100 + 200u, capacity 100. At the fixed point
        // speed = 100 / L and u = 20 speed / 100, so 200u^2 + 100u - 20 = 0:
        // u = (-100 + sqrt(26000)) / 400 = 0.153113, speed = 100 / (100 + 200u) = 0.765564.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
        let mut c = class(1, &[(0, 20.0)], 0.0);
        c.key.line_bound = 20.0 * 100.0;
        let (out, s) = solve(&[100.0], &[c.clone()], &curve);
        let u = (-100.0 + 26000.0_f64.sqrt()) / 400.0;
        assert!((s.dram_utilisation - u).abs() < 1e-8, "{s:?}");
        assert!(
            (out[0].speed - 100.0 / (100.0 + 200.0 * u)).abs() < 1e-8,
            "{out:?}"
        );
        assert_eq!(out[0].limiter, Some(Limiter::DramLatency));
        // Twice the lines in flight: alone it streams half its time (its 20 GB/s of a
        // 40 GB/s bound at 100 ns), and that half waits on latency: speed
        // 1 / (0.5 + 0.5 L/100) = 1 / (1 + u) with u = 0.2 speed, so
        // 0.2 speed^2 + speed - 1 = 0: speed = (-1 + sqrt(1.8)) / 0.4 = 0.854102. (The
        // bound itself, 40 x 100 / (L x 20) = 1.49 at that load, does not bind.)
        c.key.line_bound = 40.0 * 100.0;
        let (out, s) = solve(&[100.0], &[c], &curve);
        let speed = (-1.0 + 1.8_f64.sqrt()) / 0.4;
        assert!((out[0].speed - speed).abs() < 1e-8, "{out:?}");
        assert!((s.dram_utilisation - 0.2 * speed).abs() < 1e-8, "{s:?}");
    }

    #[test]
    fn staged_copy_is_capped_by_its_memcpy_at_the_loaded_latency() {
        // DRAM 100 (0), PCIe 50 (1), L = 100 + 100u. A stream wants 150: u = 1, latency
        // doubles. A staged copy streaming 10 GB/s (30 of DRAM), memcpy-bound (headroom 1),
        // setup a tenth of its time: streaming part at 1/2, speed 1 / (0.1 + 0.9 x 2) =
        // 0.526316; it draws 15.789 of DRAM and the stream the rest, 84.21 of 150.
        let curve = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let mut copy = class(1, &[(0, 30.0), (1, 10.0)], 0.0);
        copy.key.staging = Some(StagedCopy {
            setup_frac: 0.1,
            memcpy_headroom: 1.0,
            memcpy_pace: MemcpyPace::LatencyBound,
            latency_exponent: 1.0,
            beside_streams: None,
        });
        let stream = class(1, &[(0, 150.0)], 0.0);
        let (out, s) = solve(&[100.0, 50.0], &[copy.clone(), stream.clone()], &curve);
        let speed = 1.0 / (0.1 + 0.9 * 2.0);
        assert!((out[0].speed - speed).abs() < 1e-9, "{out:?}");
        assert_eq!(out[0].limiter, Some(Limiter::DramLatency));
        assert!(
            (out[1].speed * 150.0 - (100.0 - 30.0 * speed)).abs() < 1e-6,
            "{out:?}"
        );
        assert!((s.latency_slowdown - 2.0).abs() < 1e-9);
        // Posted stores do not wait on latency: the copy keeps its standalone speed.
        copy.key.staging.as_mut().unwrap().memcpy_pace = MemcpyPace::Posted;
        let (out, _) = solve(&[100.0, 50.0], &[copy, stream], &curve);
        assert_eq!(out[0].speed, 1.0);
    }

    #[test]
    fn a_slowed_thread_on_an_oversubscribed_pool_also_waits_for_its_cpu() {
        // Pool of 16 CPUs, per thread (CFS), per-core throughput 1.0 alone falling to 0.8
        // with 16 cores active. 32 one-thread compute-bound activities: each runs at 0.8
        // of its speed alone while it has a CPU, and has one half the time: 0.4 (the pool
        // share alone gave 0.5, the cores alone 0.8). 12 of them fit on the CPUs and
        // wait for none: 12 active cores give each 1 - 0.2 x 11/15 = 0.853333.
        let cpu = CpuThroughput {
            physical_cores: 16,
            threads_per_core: 1,
            smt_yield: 1.0,
            per_core: vec![(1.0, 1.0), (16.0, 0.8)],
        };
        let mut busy = class(32, &[(1, 1.0)], 0.0);
        busy.key.compute_frac = 1.0;
        let mut s = pool_solver(true, Some(cpu));
        let mut out = Vec::new();
        let flat = LatencyCurve::flat();
        s.solve(&[100.0, 16.0], 0, &flat, &[busy.clone()], &mut out);
        assert!((out[0].speed - 0.4).abs() < 1e-12, "{out:?}");
        assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
        busy.count = 12;
        s.solve(&[100.0, 16.0], 0, &flat, &[busy], &mut out);
        let p12 = 1.0 - 0.2 * 11.0 / 15.0;
        assert!((out[0].speed - p12).abs() < 1e-12, "{out:?}");
        // Nothing slows it but the pool: the pool's share, as before.
        let plain = class(32, &[(1, 1.0)], 0.0);
        s.solve(&[100.0, 16.0], 0, &flat, &[plain], &mut out);
        assert!((out[0].speed - 0.5).abs() < 1e-12, "{out:?}");
    }

    #[test]
    fn compute_bound_share_slows_with_the_per_thread_throughput() {
        // Pool of 16 threads, no SMT, per-core throughput 1.0 with 1 core active falling
        // linearly to 0.8 with 16. A one-thread stage entirely compute bound beside a
        // 7-thread stage half compute bound: 8 threads active, per_thread(8) =
        // 1 - 0.2 x 7/15 = 0.906667. The one-thread stage ran alone at 1.0, so it runs
        // at 0.906667. The 7-thread one ran alone at per_thread(7) = 0.92: its compute
        // half is 0.92/0.906667 = 1.014706 slower, speed 1/(0.5 + 0.5 x 1.014706) = 0.992701.
        let cpu = CpuThroughput {
            physical_cores: 16,
            threads_per_core: 1,
            smt_yield: 1.0,
            per_core: vec![(1.0, 1.0), (16.0, 0.8)],
        };
        let mut one = class(1, &[(1, 1.0)], 0.0);
        one.key.compute_frac = 1.0;
        let mut seven = class(1, &[(1, 7.0)], 0.0);
        seven.key.compute_frac = 0.5;
        let mut out = Vec::new();
        let mut s = pool_solver(false, Some(cpu));
        s.solve(
            &[100.0, 16.0],
            0,
            &LatencyCurve::flat(),
            &[one.clone(), seven],
            &mut out,
        );
        let p8 = 1.0 - 0.2 * 7.0 / 15.0;
        assert!((out[0].speed - p8).abs() < 1e-9, "{out:?}");
        let slow = (1.0 - 0.2 * 6.0 / 15.0) / p8;
        assert!(
            (out[1].speed - 1.0 / (0.5 + 0.5 * slow)).abs() < 1e-9,
            "{out:?}"
        );
        assert_eq!(out[0].limiter, Some(Limiter::Rate(RateId::from_index(1))));
        // Alone, it runs at standalone speed.
        s.solve(&[100.0, 16.0], 0, &LatencyCurve::flat(), &[one], &mut out);
        assert_eq!(out[0].speed, 1.0);
    }
}
