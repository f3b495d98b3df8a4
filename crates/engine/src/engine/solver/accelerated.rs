//! The solver as the engine runs it: the plain pipeline ([`FixedPoint`]) wrapped in its
//! accelerators, each of which gives the plain pipeline's bits: the fillings of a solve
//! share their rounds ([`SharedRounds`]), a system where at most one class runs is
//! remembered by its count ([`LoneMemo`]), and any other by its classes' keys and
//! counts ([`SolveMemo`]).

use crate::engine::ids::KeyId;

use super::fixed_point::FixedPoint;
use super::lone::LoneMemo;
use super::memo::SolveMemo;
use super::shared_rounds::SharedRounds;
use super::system::{ClassSpeed, Solution, System};

/// The accelerated solver of one run.
#[derive(Debug, Default)]
pub struct Solver {
    plain: FixedPoint<SharedRounds>,
    memo: SolveMemo,
    memo_key: Vec<u64>,
    lone: LoneMemo,
    /// The solution of a lone class's system (its one class alone).
    alone: Solution,
    solution: Solution,
}

impl Solver {
    /// Solves `system` whose class `i` has the interned key `ids[i]`. The memos hold the
    /// caller to this: from one call to the next, only DRAM's capacity and the classes'
    /// keys and counts change (the pools, the curve and the other capacities stay), and
    /// equal ids mean equal keys.
    pub fn solve(&mut self, system: &System, ids: &[KeyId]) -> &Solution {
        let mut running = (system.classes.iter().enumerate()).filter(|(_, c)| c.count > 0);
        let lone = running.next().map(|(i, _)| i);
        if running.next().is_none() {
            self.solve_lone(system, lone, ids);
            return &self.solution;
        }
        // The solution depends only on DRAM's capacity and on each running class's key
        // and count: classes that are empty take no part.
        let mut key = std::mem::take(&mut self.memo_key);
        key.clear();
        key.push(system.dram_capacity().to_bits());
        for (c, &id) in system.classes.iter().zip(ids) {
            key.push(if c.count > 0 {
                ((id as u64) << 32) | c.count as u64
            } else {
                u64::MAX
            });
        }
        if !self.memo.recall(&key, &mut self.solution) {
            self.plain.solve(system, &mut self.solution);
            self.memo.remember(&key, &self.solution);
        }
        self.memo_key = key;
        &self.solution
    }

    /// [`Solver::solve`] when at most class `lone` runs: its system is its class alone
    /// (the empty ones take no part).
    fn solve_lone(&mut self, system: &System, lone: Option<usize>, ids: &[KeyId]) {
        let classes = system.classes;
        let capacity = system.dram_capacity().to_bits();
        let slot = self.lone.slot(lone.map(|i| (ids[i], classes[i].count)));
        let remembered = slot.filter(|&s| self.lone.get(s, capacity).is_some());
        if remembered.is_none() {
            let alone = System {
                classes: lone.map_or(&[], |i| std::slice::from_ref(&classes[i])),
                ..*system
            };
            self.plain.solve(&alone, &mut self.alone);
            if let Some(s) = slot {
                self.lone.set(s, capacity, &self.alone);
            }
        }
        let alone = match remembered {
            Some(s) => self.lone.get(s, capacity).expect("remembered"),
            None => &self.alone,
        };
        let out = &mut self.solution;
        out.speeds.clear();
        out.speeds.resize(classes.len(), ClassSpeed::FULL);
        if let Some(i) = lone {
            out.speeds[i] = alone.speeds[0];
        }
        out.usage.clear();
        out.usage.extend_from_slice(&alone.usage);
        out.dram_utilisation = alone.dram_utilisation;
        out.dram_offered = alone.dram_offered;
        out.latency_slowdown = alone.latency_slowdown;
    }
}

#[cfg(test)]
mod tests {
    use super::super::system::{Solution, System};
    use super::super::test_support::{
        XorShift, assert_same_bits, random_class, random_host, solved, system,
    };
    use super::Solver;

    /// `got` is `want`, to the bit, for the classes that run.
    fn assert_same(system: &System, got: &Solution, want: &Solution, why: &str) {
        assert_same_bits(got, want, Some(system.classes), why);
    }

    #[test]
    fn a_lone_class_gives_the_plain_solves_bits_solved_or_recalled() {
        // One running class among idle ones (which take no part), on random rates,
        // pools and curves, solved twice (the second time recalled by its count), then
        // nothing running. Expected: the plain solve of the whole system, bit for bit.
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        for case in 0..5_000 {
            // A solver serves one run: one host.
            let mut solver = Solver::default();
            let (caps, pools, curve, _) = random_host(&mut rng);
            let idle = rng.below(4) as usize;
            let at = rng.below(idle as u64 + 1) as usize;
            let mut classes: Vec<_> = (0..idle)
                .map(|_| {
                    let mut c = random_class(&mut rng, caps.len(), false);
                    c.count = 0;
                    c
                })
                .collect();
            let simple = rng.below(2) == 0;
            let mut lone = random_class(&mut rng, caps.len(), simple);
            lone.count = lone.count.max(1);
            classes.insert(at, lone);
            let ids: Vec<usize> = (0..classes.len()).collect();
            let mut system = System {
                pools: &pools,
                ..system(&caps, &classes, &curve)
            };
            let want = solved(&system);
            let why = format!("case {case}: {system:?}");
            for _ in 0..2 {
                let got = solver.solve(&system, &ids).clone();
                assert_same(&system, &got, &want, &why);
            }
            let mut none = classes.clone();
            none[at].count = 0;
            system.classes = &none;
            let got = solver.solve(&system, &ids).clone();
            assert_same(&system, &got, &solved(&system), &why);
        }
    }

    #[test]
    fn remembered_systems_give_the_plain_solves_bits() {
        // Random hosts and classes, each solved twice (the second time from the memo
        // when it is not resting). Expected: the plain solve, bit for bit, for every
        // running class.
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for case in 0..5_000 {
            let mut solver = Solver::default();
            let (caps, pools, curve, classes) = random_host(&mut rng);
            let system = System {
                pools: &pools,
                ..system(&caps, &classes, &curve)
            };
            let ids: Vec<usize> = (0..classes.len()).collect();
            let want = solved(&system);
            let why = format!("case {case}: {system:?}");
            for _ in 0..2 {
                let got = solver.solve(&system, &ids).clone();
                assert_same(&system, &got, &want, &why);
            }
        }
    }
}
