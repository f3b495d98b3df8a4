//! Holdable resources (cores, host RAM, VRAM, locks) with strict FIFO waiting.
//!
//! A request asks for several resources at once and is granted all-or-nothing, so a
//! stage never sits on a core while it waits for RAM. FIFO is strict per resource: a
//! waiter blocks later waiters on each resource it is short of (no barging past it
//! there, as with a fair semaphore), but not on resources it could take now.
//!
//! Per-GPU resources (VRAM, per-GPU locks) exist once per GPU. A request from a partition
//! that is not yet bound to a GPU may be served by any GPU; the first that fits wins and
//! binds the partition.

use std::collections::VecDeque;
use std::rc::Rc;

/// Identifies one holdable instance in [`Holdables`].
pub type HoldIndex = usize;

/// How a request names a resource before a GPU is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldSlot {
    /// A host-wide instance.
    Global(HoldIndex),
    /// The per-GPU family starting at this index (instance = base + gpu).
    PerGpu(HoldIndex),
}

impl HoldSlot {
    /// The concrete instance this slot names for a requester bound to `gpu`.
    pub fn instance(self, gpu: Option<u32>) -> HoldIndex {
        match self {
            HoldSlot::Global(i) => i,
            HoldSlot::PerGpu(base) => base + gpu.unwrap_or(0) as usize,
        }
    }
}

/// A pending request.
#[derive(Debug, Clone)]
pub struct Request<T> {
    /// What the requester gets back when granted.
    pub token: T,
    /// Resources and amounts (shared: every instance of a stage asks for the same).
    pub needs: Rc<[(HoldSlot, u64)]>,
    /// The GPU the requester is already bound to, if any.
    pub gpu: Option<u32>,
    /// The resource that last blocked this request (for wait attribution).
    pub blocked_on: Option<HoldIndex>,
}

/// A granted request: the token, what it asked for, and the chosen GPU.
#[derive(Debug, Clone)]
pub struct Grant<T> {
    /// The requester's token.
    pub token: T,
    /// The request's needs; [`Grant::taken`] resolves them to instances.
    pub needs: Rc<[(HoldSlot, u64)]>,
    /// GPU chosen (or kept) for the requester.
    pub gpu: Option<u32>,
    /// The resource that made it wait, if it waited.
    pub blocked_on: Option<HoldIndex>,
}

impl<T> Grant<T> {
    /// Concrete instances and amounts now held, in the order of the request's needs.
    pub fn taken(&self) -> impl Iterator<Item = (HoldIndex, u64)> + '_ {
        self.needs
            .iter()
            .map(|&(slot, a)| (slot.instance(self.gpu), a))
    }
}

/// The set of holdable instances and their FIFO queue.
///
/// The line is kept as *runs*: consecutive waiters with the same needs, GPU binding and
/// blocker. Waiters of one run are judged alike (the first refused means all are refused,
/// for the same reason, blocking nothing more), so a serving pass costs one step per run,
/// not per waiter: an overloaded open queue of identical jobs is one run however long.
#[derive(Debug, Clone)]
pub struct Holdables<T> {
    inst: Vec<Instance>,
    gpus: u32,
    runs: VecDeque<Run<T>>,
    /// Waiters in all runs.
    waiting: usize,
    /// Emptied token lines, kept to be reused by new runs (no allocation per run).
    spare: Vec<VecDeque<T>>,
    pass: u64,
    /// True when the last pass left every waiter judged against the current use and the
    /// current block flags (no grant followed a refusal): a new request can then be
    /// judged alone, exactly as a full pass would judge it at the back of the line.
    settled: bool,
    touched: Vec<HoldIndex>,
    /// Judgements made (a request or a run judged, or a run skipped): a test hook that
    /// shows the serving cost does not grow with the length of the line.
    examined: u64,
}

/// Consecutive waiters with equal needs, GPU binding and blocker, oldest first.
#[derive(Debug, Clone)]
struct Run<T> {
    needs: Rc<[(HoldSlot, u64)]>,
    gpu: Option<u32>,
    blocked_on: Option<HoldIndex>,
    tokens: VecDeque<T>,
}

impl<T> Run<T> {
    /// Same needs (by content) and binding: judged exactly alike.
    fn alike(&self, needs: &Rc<[(HoldSlot, u64)]>, gpu: Option<u32>) -> bool {
        self.gpu == gpu && (Rc::ptr_eq(&self.needs, needs) || *self.needs == **needs)
    }
}

/// One holdable instance (kept together: every check reads all three).
#[derive(Debug, Clone, Copy)]
struct Instance {
    capacity: u64,
    in_use: u64,
    /// Blocked in the current serving pass when equal to `Holdables::pass` (a stamp, so
    /// starting a pass clears every flag at once).
    blocked: u64,
}

impl Instance {
    /// Short of `a` units, or kept for an earlier waiter in this pass.
    fn refuses(&self, a: u64, pass: u64) -> bool {
        self.blocked == pass || self.in_use + a > self.capacity
    }
}

impl<T> Holdables<T> {
    /// Instances with the given capacities; `gpus` is the number of GPUs (per-GPU families
    /// occupy `gpus` consecutive instances).
    pub fn new(capacity: Vec<u64>, gpus: u32) -> Self {
        Self {
            inst: capacity
                .into_iter()
                .map(|capacity| Instance {
                    capacity,
                    in_use: 0,
                    blocked: 0,
                })
                .collect(),
            pass: 0,
            settled: true,
            gpus,
            runs: VecDeque::new(),
            waiting: 0,
            spare: Vec::new(),
            touched: Vec::new(),
            examined: 0,
        }
    }

    /// Units in use of an instance.
    pub fn in_use(&self, i: HoldIndex) -> u64 {
        self.inst[i].in_use
    }

    /// Capacity of an instance.
    pub fn capacity(&self, i: HoldIndex) -> u64 {
        self.inst[i].capacity
    }

    /// Requests waiting.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// Judgements made so far (requests and runs judged, runs skipped). Not a result:
    /// a hook for tests that the cost of serving does not grow with the line.
    #[doc(hidden)]
    pub fn examined(&self) -> u64 {
        self.examined
    }

    /// Instances whose use changed since the last call (each at most once, sorted).
    pub fn take_touched(&mut self) -> Vec<HoldIndex> {
        let mut t = Vec::new();
        self.take_touched_into(&mut t);
        t
    }

    /// As [`Holdables::take_touched`], into `out` (cleared first), without allocating.
    pub fn take_touched_into(&mut self, out: &mut Vec<HoldIndex>) {
        out.clear();
        std::mem::swap(out, &mut self.touched);
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// Queues a request; grants go to `granted` in FIFO order (possibly this one at once).
    pub fn request(&mut self, req: Request<T>, granted: &mut impl Extend<Grant<T>>) {
        if self.waiting == 0 {
            // Nobody waits: a new pass over a one-request line.
            self.pass += 1;
            self.settled = true;
        }
        if !self.settled {
            self.push_back(req);
            self.serve(granted);
            return;
        }
        self.examined += 1;
        if let [(HoldSlot::Global(i), a)] = *req.needs {
            // One host-wide need (a lock, cores): the commonest case, judged in place.
            if self.inst[i].refuses(a, self.pass) {
                let inst = &mut self.inst[i];
                if inst.in_use + a > inst.capacity {
                    inst.blocked = self.pass;
                }
                self.push_back(Request {
                    blocked_on: Some(i),
                    ..req
                });
            } else {
                self.settled = self.waiting == 0;
                self.grant(req.token, req.needs, req.gpu, req.blocked_on, granted);
            }
            return;
        }
        match self.fit(&req.needs, req.gpu) {
            Ok(gpu) => {
                // Use grows past what the waiters ahead were judged against.
                self.settled = self.waiting == 0;
                self.grant(req.token, req.needs, gpu, req.blocked_on, granted);
            }
            Err(blocker) => {
                self.block(req.gpu, &req.needs);
                self.push_back(Request {
                    blocked_on: Some(blocker),
                    ..req
                });
            }
        }
    }

    /// Puts a request at the back of the line, in the last run when it is alike.
    fn push_back(&mut self, req: Request<T>) {
        self.waiting += 1;
        if let Some(back) = self.runs.back_mut()
            && back.blocked_on == req.blocked_on
            && back.alike(&req.needs, req.gpu)
        {
            back.tokens.push_back(req.token);
            return;
        }
        let mut tokens = self.spare.pop().unwrap_or_default();
        tokens.push_back(req.token);
        self.runs.push_back(Run {
            needs: req.needs,
            gpu: req.gpu,
            blocked_on: req.blocked_on,
            tokens,
        });
    }

    /// Marks what a refused request is short of, so later requests do not take it.
    #[inline]
    fn block(&mut self, bound: Option<u32>, needs: &[(HoldSlot, u64)]) {
        for g in self.candidates(bound, needs) {
            for &(slot, _) in needs {
                let i = slot.instance(g);
                let total = total_on(needs, g, i);
                let inst = &mut self.inst[i];
                if inst.in_use + total > inst.capacity {
                    inst.blocked = self.pass;
                }
            }
        }
    }

    #[inline]
    fn grant(
        &mut self,
        token: T,
        needs: Rc<[(HoldSlot, u64)]>,
        gpu: Option<u32>,
        blocked_on: Option<HoldIndex>,
        granted: &mut impl Extend<Grant<T>>,
    ) {
        for &(slot, a) in needs.iter() {
            let i = slot.instance(gpu);
            self.inst[i].in_use += a;
            self.touched.push(i);
        }
        granted.extend(std::iter::once(Grant {
            token,
            needs,
            gpu,
            blocked_on,
        }));
    }

    /// Returns units; newly possible grants go to `granted`.
    pub fn release(&mut self, taken: &[(HoldIndex, u64)], granted: &mut impl Extend<Grant<T>>) {
        for &(i, a) in taken {
            self.inst[i].in_use -= a;
            self.touched.push(i);
        }
        if self.waiting > 0 {
            self.serve(granted);
        }
    }

    /// Grants every request that fits, in FIFO order, without letting later requests
    /// overtake an earlier one on a resource they share.
    fn serve(&mut self, granted: &mut impl Extend<Grant<T>>) {
        self.pass += 1;
        // The last refused run and its blocker, valid until the next grant. A run alike
        // to it is refused for the same reason and would block nothing new (use only
        // grows within a pass): it takes the blocker and joins the refused run.
        let mut refused: Option<(usize, HoldIndex)> = None;
        let mut any_refused = false;
        let mut settled = true;
        let mut r = 0;
        while r < self.runs.len() {
            self.examined += 1;
            if let Some((at, blocker)) = refused {
                let run = &self.runs[r];
                let last = &self.runs[at];
                if last.alike(&run.needs, run.gpu) {
                    debug_assert_eq!(at + 1, r, "the refused run is the previous one");
                    let mut run = self.runs.remove(r).expect("index in range");
                    self.runs[at].tokens.append(&mut run.tokens);
                    debug_assert_eq!(self.runs[at].blocked_on, Some(blocker));
                    self.spare.push(run.tokens);
                    continue;
                }
            }
            let run = &self.runs[r];
            // One host-wide need (a lock, cores): judged in place, as `fit` would.
            let one_global = match *run.needs {
                [(HoldSlot::Global(i), a)] => Some((i, a)),
                _ => None,
            };
            let verdict = match one_global {
                Some((i, a)) if self.inst[i].refuses(a, self.pass) => Err(i),
                Some(_) => Ok(run.gpu),
                None => self.fit(&run.needs, run.gpu),
            };
            match verdict {
                Ok(gpu) => {
                    let run = &mut self.runs[r];
                    let token = run.tokens.pop_front().expect("runs are never empty");
                    let (needs, blocked_on) = (run.needs.clone(), run.blocked_on);
                    if run.tokens.is_empty() {
                        let run = self.runs.remove(r).expect("index in range");
                        self.spare.push(run.tokens);
                    }
                    self.waiting -= 1;
                    self.grant(token, needs, gpu, blocked_on, granted);
                    refused = None;
                    settled &= !any_refused;
                }
                Err(blocker) => {
                    // Keep its place in line on what it is short of (not on what it could
                    // take now), so it never blocks unrelated requests.
                    if let Some((i, a)) = one_global {
                        // What `block` does for one host-wide need.
                        let inst = &mut self.inst[i];
                        if inst.in_use + a > inst.capacity {
                            inst.blocked = self.pass;
                        }
                    } else {
                        let (gpu, needs) = (run.gpu, run.needs.clone());
                        self.block(gpu, &needs);
                    }
                    self.runs[r].blocked_on = Some(blocker);
                    refused = Some((r, blocker));
                    any_refused = true;
                    r += 1;
                }
            }
        }
        self.settled = settled;
    }

    /// The GPUs a request may be served by: its bound GPU, any GPU when it needs a
    /// per-GPU resource and is not bound yet, or none.
    fn candidates(
        &self,
        bound: Option<u32>,
        needs: &[(HoldSlot, u64)],
    ) -> impl Iterator<Item = Option<u32>> + use<T> {
        let per_gpu = needs.iter().any(|(s, _)| matches!(s, HoldSlot::PerGpu(_)));
        let (lo, hi, some) = match (bound, per_gpu) {
            (Some(g), _) => (g, g + 1, true),
            (None, true) => (0, self.gpus.max(1), true),
            (None, false) => (0, 1, false),
        };
        (lo..hi).map(move |g| some.then_some(g))
    }

    /// Ok(chosen GPU) if a request with these needs and binding fits now, else Err(the
    /// first instance that blocks it). Several needs on one instance (e.g. two RAM holds
    /// released at different stages) must fit together.
    #[inline]
    fn fit(&self, needs: &[(HoldSlot, u64)], bound: Option<u32>) -> Result<Option<u32>, HoldIndex> {
        let mut first_blocker = None;
        if let [(HoldSlot::Global(i), a)] = *needs {
            // One host-wide need (a lock, cores): the commonest case, one check.
            return if self.inst[i].refuses(a, self.pass) {
                Err(i)
            } else {
                Ok(bound)
            };
        }
        if let [(slot, a)] = *needs {
            // One need (a lock, a core): the common case, without the bookkeeping.
            for g in self.candidates(bound, needs) {
                let i = slot.instance(g);
                if !self.inst[i].refuses(a, self.pass) {
                    return Ok(g);
                }
                first_blocker.get_or_insert(i);
            }
            return Err(first_blocker.unwrap_or(0));
        }
        for g in self.candidates(bound, needs) {
            let mut ok = true;
            for (k, &(slot, _)) in needs.iter().enumerate() {
                let i = slot.instance(g);
                // Judge an instance once, at its first need, for all needs on it.
                if needs[..k].iter().any(|&(s, _)| s.instance(g) == i) {
                    continue;
                }
                if self.inst[i].refuses(total_on(needs, g, i), self.pass) {
                    ok = false;
                    first_blocker.get_or_insert(i);
                    break;
                }
            }
            if ok {
                return Ok(g);
            }
        }
        Err(first_blocker.unwrap_or(0))
    }
}

/// Units a request needs of instance `i` when bound to `gpu` (several needs may land on
/// one instance, e.g. two RAM holds released at different stages).
#[inline]
fn total_on(needs: &[(HoldSlot, u64)], gpu: Option<u32>, i: HoldIndex) -> u64 {
    match needs {
        [(_, a)] => *a,
        _ => needs
            .iter()
            .filter(|&&(s, _)| s.instance(gpu) == i)
            .map(|&(_, a)| a)
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let lock: Rc<[(HoldSlot, u64)]> = vec![(HoldSlot::Global(0), 1)].into();
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
        assert!(h.runs.iter().all(|r| r.blocked_on == Some(0)));
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
}
