//! The FIFO holds checked against a slow, obviously-correct reference that walks the
//! whole line at every change, plus the rules stated case by case.
use proptest::prelude::*;

use super::holdable::{Grant, HoldIndex, HoldSlot, Holdables, Needs, Request};

fn req(token: u32, needs: &[(HoldSlot, u64)]) -> Request<u32> {
    Request {
        token,
        needs: needs.into(),
        gpu: None,
        blocked_on: None,
    }
}

#[test]
fn fifo_is_strict_no_barging() {
    // Capacity 4. A takes 3; B wants 2 (waits); C wants 1 (fits, but must not overtake B).
    let mut h = Holdables::new(vec![4], 0);
    let mut g = Vec::new();
    h.request(req(1, &[(HoldSlot::Global(0), 3)]), &mut g);
    h.request(req(2, &[(HoldSlot::Global(0), 2)]), &mut g);
    h.request(req(3, &[(HoldSlot::Global(0), 1)]), &mut g);
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1]);
    let taken = g[0].taken().collect::<Vec<_>>();
    g.clear();
    h.release(&taken, &mut g);
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(h.in_use(0), 3);
}

#[test]
fn all_or_nothing_grants_do_not_hold_partial_resources() {
    // Cores 1, RAM 10. A holds RAM 10. B wants core + RAM: waits holding nothing. C
    // wants only the core: B is short of RAM, not of the core, so C may take it.
    let mut h = Holdables::new(vec![1, 10], 0);
    let mut g = Vec::new();
    h.request(req(1, &[(HoldSlot::Global(1), 10)]), &mut g);
    h.request(
        req(2, &[(HoldSlot::Global(0), 1), (HoldSlot::Global(1), 5)]),
        &mut g,
    );
    assert_eq!(g.len(), 1);
    assert_eq!(
        h.in_use(0),
        0,
        "B must not sit on the core while waiting for RAM"
    );
    h.request(req(3, &[(HoldSlot::Global(0), 1)]), &mut g);
    assert_eq!(g.len(), 2, "C takes the idle core");
    // D wants RAM only: B is first in line for RAM, so D must wait behind it.
    h.request(req(4, &[(HoldSlot::Global(1), 1)]), &mut g);
    assert_eq!(g.len(), 2);
    let a = g[0].taken().collect::<Vec<_>>();
    h.release(&a, &mut g);
    // RAM is back; B now lacks only the core (C has it), so B is first in line for the
    // core and D may use the spare RAM.
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1, 3, 4]);
    let c = g[1].taken().collect::<Vec<_>>();
    h.release(&c, &mut g);
    assert_eq!(
        g.iter().map(|g| g.token).collect::<Vec<_>>(),
        vec![1, 3, 4, 2]
    );
}

#[test]
fn a_line_of_identical_waiters_blocks_only_what_it_lacks() {
    // Lock (0) of 1, another resource (1) of 1. A holds the lock; B, C, D share one
    // needs list (as instances of one stage do) and queue for it; E wants only the
    // other resource and must pass them; on release B gets the lock, C and D wait.
    let mut h = Holdables::new(vec![1, 1], 0);
    let mut g = Vec::new();
    let lock: Needs = vec![(HoldSlot::Global(0), 1)].into();
    let shared = |token| Request {
        token,
        needs: lock.clone(),
        gpu: None,
        blocked_on: None,
    };
    h.request(shared(1), &mut g);
    h.request(shared(2), &mut g);
    h.request(shared(3), &mut g);
    h.request(shared(4), &mut g);
    h.request(req(5, &[(HoldSlot::Global(1), 1)]), &mut g);
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1, 5]);
    assert_eq!(h.waiting(), 3);
    let a = g[0].taken().collect::<Vec<_>>();
    h.release(&a, &mut g);
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1, 5, 2]);
    assert_eq!(g[2].blocked_on, Some(0));
    assert_eq!(h.waiting(), 2);
    let b = g[2].taken().collect::<Vec<_>>();
    h.release(&b, &mut g);
    assert_eq!(g[3].token, 3);
    assert_eq!(g[3].blocked_on, Some(0), "C waited for the lock");
}

#[test]
fn a_waiter_keeps_what_blocked_it_at_its_own_turn() {
    // Resources 0 and 1, capacity 2 each. K1 and K2 want one of each; Y wants both of 0.
    // Once W's hold on 0 is back, K1 is refused for 1, Y takes 0, and then K2 (same needs
    // as K1) is refused for 0: a waiter is blocked by what it lacked at its own turn.
    let mut h = Holdables::new(vec![2, 2], 0);
    let mut g = Vec::new();
    let k = [(HoldSlot::Global(0), 1), (HoldSlot::Global(1), 1)];
    h.request(req(1, &[(HoldSlot::Global(1), 2)]), &mut g); // X
    h.request(req(2, &[(HoldSlot::Global(0), 2)]), &mut g); // W
    h.request(req(3, &k), &mut g); // K1
    h.request(req(4, &[(HoldSlot::Global(0), 2)]), &mut g); // Y
    h.request(req(5, &k), &mut g); // K2
    let w = g[1].taken().collect::<Vec<_>>();
    h.release(&w, &mut g);
    assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1, 2, 4]);
    let mut x_and_y = g[0].taken().collect::<Vec<_>>();
    x_and_y.extend(g[2].taken());
    h.release(&x_and_y, &mut g);
    let waited: Vec<_> = g[3..].iter().map(|g| (g.token, g.blocked_on)).collect();
    assert_eq!(waited, vec![(3, Some(1)), (5, Some(0))]);
}

#[test]
fn several_needs_on_one_resource_must_fit_together() {
    // RAM 10: a request for 6 + 6 (two holds released at different times) must wait.
    let mut h = Holdables::new(vec![10], 0);
    let mut g = Vec::new();
    h.request(
        req(1, &[(HoldSlot::Global(0), 6), (HoldSlot::Global(0), 6)]),
        &mut g,
    );
    assert!(g.is_empty());
    assert_eq!(h.in_use(0), 0);
    h.request(
        req(2, &[(HoldSlot::Global(0), 4), (HoldSlot::Global(0), 6)]),
        &mut g,
    );
    assert!(
        g.is_empty(),
        "FIFO: the second may not overtake the first on RAM"
    );
}

#[test]
fn per_gpu_requests_bind_to_the_first_gpu_that_fits() {
    // Two GPUs, a mutex per GPU (instances 0 and 1).
    let mut h = Holdables::new(vec![1, 1], 2);
    let mut g = Vec::new();
    h.request(req(1, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
    h.request(req(2, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
    h.request(req(3, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
    let gpus: Vec<_> = g.iter().map(|g| (g.token, g.gpu)).collect();
    assert_eq!(gpus, vec![(1, Some(0)), (2, Some(1))]);
    assert_eq!(h.waiting(), 1);
}

#[test]
fn per_gpu_requests_spread_to_the_least_loaded_then_least_recently_granted_gpu() {
    // Two GPUs with two worker slots each (instances 0 and 1), as cuzk's
    // gpu_workers_per_device = 2: partitions arriving one at a time alternate GPUs
    // instead of piling onto GPU 0, and a GPU with a free slot of two loses to an idle one.
    let mut h = Holdables::new(vec![2, 2], 2);
    let mut gpus = Vec::new();
    for token in 1..=4 {
        let mut g = Vec::new();
        h.request(req(token, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
        gpus.push(g[0].gpu);
        let mut none = Vec::new();
        h.release(&[(g[0].gpu.unwrap() as usize, 1)], &mut none);
    }
    assert_eq!(gpus, [Some(0), Some(1), Some(0), Some(1)]);
    let mut g = Vec::new();
    h.request(req(5, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
    h.request(req(6, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
    h.request(req(7, &[(HoldSlot::PerGpu(0), 1)]), &mut g);
    let bound: Vec<_> = g.iter().map(|g| (g.token, g.gpu)).collect();
    assert_eq!(bound, [(5, Some(0)), (6, Some(1)), (7, Some(0))]);
}

/// The rules of the line stated plainly: at every change, walk every waiter in order and
/// judge it against the use so far and the instances earlier waiters were short of; of
/// the GPUs a waiter fits, take the least loaded (its first per-GPU need's share in use),
/// then the one granted longest ago, then the lowest.
struct Reference {
    capacity: Vec<u64>,
    in_use: Vec<u64>,
    /// The grant count when each instance was last granted (0: never).
    granted_at: Vec<u64>,
    grants: u64,
    gpus: u32,
    line: Vec<Waiter>,
}

/// Token, needs, bound GPU, what last blocked it.
type Waiter = (u32, Needs, Option<u32>, Option<HoldIndex>);

/// A grant as both sides report it: token, GPU, what made it wait.
type Granted = (u32, Option<u32>, Option<HoldIndex>);

impl Reference {
    fn candidates(&self, bound: Option<u32>, needs: &[(HoldSlot, u64)]) -> Vec<Option<u32>> {
        match bound {
            Some(g) => vec![Some(g)],
            None if needs.iter().any(|(s, _)| matches!(s, HoldSlot::PerGpu(_))) => {
                (0..self.gpus.max(1)).map(Some).collect()
            }
            None => vec![None],
        }
    }

    fn short(&self, needs: &[(HoldSlot, u64)], gpu: Option<u32>, i: HoldIndex) -> bool {
        let total: u64 = needs
            .iter()
            .filter(|(s, _)| s.instance(gpu) == i)
            .map(|(_, a)| a)
            .sum();
        self.in_use[i] + total > self.capacity[i]
    }

    fn load(&self, needs: &[(HoldSlot, u64)], gpu: Option<u32>) -> (f64, u64) {
        match needs.iter().find(|(s, _)| matches!(s, HoldSlot::PerGpu(_))) {
            Some(&(s, _)) => {
                let i = s.instance(gpu);
                let share = self.in_use[i] as f64 / self.capacity[i] as f64;
                (share, self.granted_at[i])
            }
            None => (0.0, 0),
        }
    }

    fn serve(&mut self) -> Vec<Granted> {
        let mut kept = vec![false; self.capacity.len()];
        let mut out = Vec::new();
        let mut k = 0;
        while k < self.line.len() {
            let (token, needs, bound, _) = self.line[k].clone();
            let mut fitting: Vec<Option<u32>> = Vec::new();
            let mut first_refusal = None;
            for g in self.candidates(bound, &needs) {
                let refusing = needs
                    .iter()
                    .map(|&(s, _)| s.instance(g))
                    .find(|&i| kept[i] || self.short(&needs, g, i));
                match refusing {
                    None => fitting.push(g),
                    Some(i) => {
                        first_refusal.get_or_insert(i);
                    }
                }
            }
            // Stable: of equal loads, the lowest GPU.
            fitting.sort_by(|&a, &b| {
                self.load(&needs, a)
                    .partial_cmp(&self.load(&needs, b))
                    .unwrap()
            });
            let verdict = fitting.first().copied().ok_or(first_refusal);
            match verdict {
                Ok(g) => {
                    self.grants += 1;
                    for &(s, a) in needs.iter() {
                        self.in_use[s.instance(g)] += a;
                        self.granted_at[s.instance(g)] = self.grants;
                    }
                    out.push((token, g, self.line[k].3));
                    self.line.remove(k);
                }
                Err(blocker) => {
                    for g in self.candidates(bound, &needs) {
                        for &(s, _) in needs.iter() {
                            let i = s.instance(g);
                            kept[i] |= self.short(&needs, g, i);
                        }
                    }
                    self.line[k].3 = blocker;
                    k += 1;
                }
            }
        }
        out
    }
}

fn granted(grants: &[Grant<u32>]) -> Vec<Granted> {
    grants
        .iter()
        .map(|g| (g.token, g.gpu, g.blocked_on))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Random requests (host-wide and per-GPU needs, several on one instance, bound and
    /// unbound) and releases: the same grants, in the same order, on the same GPUs, with
    /// the same blockers, as the reference that walks the whole line.
    #[test]
    fn serving_matches_a_walk_of_the_whole_line(
        capacity in proptest::collection::vec(1u64..4, 4),
        ops in proptest::collection::vec((0u8..3, 0u8..255, 0u8..255), 1..160),
    ) {
        // Instances 0 and 1 host-wide, 2 and 3 a per-GPU family on two GPUs.
        let palette: Vec<Needs> = vec![
            vec![(HoldSlot::Global(0), 1)].into(),
            vec![(HoldSlot::Global(0), 2), (HoldSlot::Global(1), 1)].into(),
            vec![(HoldSlot::PerGpu(2), 1)].into(),
            vec![(HoldSlot::Global(1), 1), (HoldSlot::PerGpu(2), 1)].into(),
            vec![(HoldSlot::Global(1), 2), (HoldSlot::Global(1), 1)].into(),
            vec![(HoldSlot::Global(0), 1), (HoldSlot::PerGpu(2), 2)].into(),
        ];
        let mut fast = Holdables::new(capacity.clone(), 2);
        let mut slow = Reference {
            in_use: vec![0; capacity.len()],
            granted_at: vec![0; capacity.len()],
            grants: 0,
            capacity,
            gpus: 2,
            line: Vec::new(),
        };
        let mut held: Vec<Vec<(HoldIndex, u64)>> = Vec::new();
        for (token, &(op, a, b)) in ops.iter().enumerate() {
            let token = token as u32;
            let mut grants = Vec::new();
            let expected = if op < 2 || held.is_empty() {
                let needs = palette[a as usize % palette.len()].clone();
                let gpu = [None, Some(0), Some(1)][b as usize % 3];
                fast.request(Request { token, needs: needs.clone(), gpu, blocked_on: None }, &mut grants);
                slow.line.push((token, needs, gpu, None));
                slow.serve()
            } else {
                let taken = held.swap_remove(a as usize % held.len());
                for &(i, u) in &taken {
                    slow.in_use[i] -= u;
                }
                fast.release(&taken, &mut grants);
                slow.serve()
            };
            prop_assert_eq!(granted(&grants), expected);
            prop_assert_eq!(fast.waiting(), slow.line.len());
            held.extend(grants.iter().map(|g| g.taken().collect::<Vec<_>>()));
        }
    }
}
