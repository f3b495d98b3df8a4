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

/// A pending request.
#[derive(Debug, Clone)]
pub struct Request<T> {
    /// What the requester gets back when granted.
    pub token: T,
    /// Resources and amounts.
    pub needs: Vec<(HoldSlot, u64)>,
    /// The GPU the requester is already bound to, if any.
    pub gpu: Option<u32>,
    /// The resource that last blocked this request (for wait attribution).
    pub blocked_on: Option<HoldIndex>,
}

/// A granted request: the token, the concrete instances taken, and the chosen GPU.
#[derive(Debug, Clone)]
pub struct Grant<T> {
    /// The requester's token.
    pub token: T,
    /// Concrete instances and amounts now held.
    pub taken: Vec<(HoldIndex, u64)>,
    /// GPU chosen (or kept) for the requester.
    pub gpu: Option<u32>,
    /// The resource that made it wait, if it waited.
    pub blocked_on: Option<HoldIndex>,
}

/// The set of holdable instances and their FIFO queue.
#[derive(Debug, Clone)]
pub struct Holdables<T> {
    capacity: Vec<u64>,
    in_use: Vec<u64>,
    gpus: u32,
    queue: VecDeque<Request<T>>,
    blocked: Vec<bool>,
    touched: Vec<HoldIndex>,
}

impl<T> Holdables<T> {
    /// Instances with the given capacities; `gpus` is the number of GPUs (per-GPU families
    /// occupy `gpus` consecutive instances).
    pub fn new(capacity: Vec<u64>, gpus: u32) -> Self {
        let n = capacity.len();
        Self {
            in_use: vec![0; n],
            blocked: vec![false; n],
            capacity,
            gpus,
            queue: VecDeque::new(),
            touched: Vec::new(),
        }
    }

    /// Units in use of an instance.
    pub fn in_use(&self, i: HoldIndex) -> u64 {
        self.in_use[i]
    }

    /// Capacity of an instance.
    pub fn capacity(&self, i: HoldIndex) -> u64 {
        self.capacity[i]
    }

    /// Requests waiting.
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// Instances whose use changed since the last call (each at most once, sorted).
    pub fn take_touched(&mut self) -> Vec<HoldIndex> {
        let mut t = std::mem::take(&mut self.touched);
        t.sort_unstable();
        t.dedup();
        t
    }

    /// Queues a request; grants go to `granted` in FIFO order (possibly this one at once).
    pub fn request(&mut self, req: Request<T>, granted: &mut Vec<Grant<T>>) {
        self.queue.push_back(req);
        self.serve(granted);
    }

    /// Returns units; newly possible grants go to `granted`.
    pub fn release(&mut self, taken: &[(HoldIndex, u64)], granted: &mut Vec<Grant<T>>) {
        for &(i, a) in taken {
            self.in_use[i] -= a;
            self.touched.push(i);
        }
        if !self.queue.is_empty() {
            self.serve(granted);
        }
    }

    /// Grants every request that fits, in FIFO order, without letting later requests
    /// overtake an earlier one on a resource they share.
    fn serve(&mut self, granted: &mut Vec<Grant<T>>) {
        self.blocked.iter_mut().for_each(|b| *b = false);
        let mut k = 0;
        while k < self.queue.len() {
            let req = &self.queue[k];
            match self.fit(req) {
                Ok(gpu) => {
                    let req = self.queue.remove(k).expect("index in range");
                    let taken: Vec<(HoldIndex, u64)> = req
                        .needs
                        .iter()
                        .map(|&(slot, a)| (self.instance(slot, gpu), a))
                        .collect();
                    for &(i, a) in &taken {
                        self.in_use[i] += a;
                        self.touched.push(i);
                    }
                    granted.push(Grant {
                        token: req.token,
                        taken,
                        gpu,
                        blocked_on: req.blocked_on,
                    });
                }
                Err(blocker) => {
                    let gpus: Vec<Option<u32>> = self.candidates(req.gpu, &req.needs);
                    let needs = req.needs.clone();
                    // Keep its place in line on what it is short of (not on what it could
                    // take now), so it never blocks unrelated requests.
                    for g in gpus {
                        for &(slot, _) in &needs {
                            let i = self.instance(slot, g);
                            let total: u64 = needs
                                .iter()
                                .filter(|&&(s, _)| self.instance(s, g) == i)
                                .map(|&(_, a)| a)
                                .sum();
                            if self.in_use[i] + total > self.capacity[i] {
                                self.blocked[i] = true;
                            }
                        }
                    }
                    self.queue[k].blocked_on = Some(blocker);
                    k += 1;
                }
            }
        }
    }

    fn instance(&self, slot: HoldSlot, gpu: Option<u32>) -> HoldIndex {
        match slot {
            HoldSlot::Global(i) => i,
            HoldSlot::PerGpu(base) => base + gpu.unwrap_or(0) as usize,
        }
    }

    fn candidates(&self, bound: Option<u32>, needs: &[(HoldSlot, u64)]) -> Vec<Option<u32>> {
        let per_gpu = needs.iter().any(|(s, _)| matches!(s, HoldSlot::PerGpu(_)));
        match (bound, per_gpu) {
            (Some(g), _) => vec![Some(g)],
            (None, true) => (0..self.gpus.max(1)).map(Some).collect(),
            (None, false) => vec![None],
        }
    }

    /// Ok(chosen GPU) if the request fits now, else Err(the first instance that blocks it).
    /// Several needs on one instance (e.g. two RAM holds released at different stages)
    /// must fit together.
    fn fit(&self, req: &Request<T>) -> Result<Option<u32>, HoldIndex> {
        let mut first_blocker = None;
        for g in self.candidates(req.gpu, &req.needs) {
            let mut ok = true;
            for (k, &(slot, _)) in req.needs.iter().enumerate() {
                let i = self.instance(slot, g);
                let total: u64 = req
                    .needs
                    .iter()
                    .filter(|&&(s, _)| self.instance(s, g) == i)
                    .map(|&(_, a)| a)
                    .sum();
                let first_on_instance = req.needs[..k]
                    .iter()
                    .all(|&(s, _)| self.instance(s, g) != i);
                if first_on_instance
                    && (self.blocked[i] || self.in_use[i] + total > self.capacity[i])
                {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn req(token: u32, needs: &[(HoldSlot, u64)]) -> Request<u32> {
        Request {
            token,
            needs: needs.to_vec(),
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
        let taken = g[0].taken.clone();
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
        let a = g[0].taken.clone();
        h.release(&a, &mut g);
        // RAM is back; B now lacks only the core (C has it), so B is first in line for the
        // core and D may use the spare RAM.
        assert_eq!(g.iter().map(|g| g.token).collect::<Vec<_>>(), vec![1, 3, 4]);
        let c = g[1].taken.clone();
        h.release(&c, &mut g);
        assert_eq!(
            g.iter().map(|g| g.token).collect::<Vec<_>>(),
            vec![1, 3, 4, 2]
        );
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
