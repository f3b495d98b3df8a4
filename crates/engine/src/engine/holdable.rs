//! Holdable resources (cores, host RAM, VRAM, locks) with strict FIFO waiting.
//!
//! A request asks for several resources at once and is granted all-or-nothing, so a
//! stage never sits on a core while it waits for RAM. FIFO is strict per resource: a
//! waiter blocks later waiters on each resource it is short of (no barging past it
//! there, as with a fair semaphore), but not on resources it could take now.
//!
//! Per-GPU resources (VRAM, per-GPU locks) exist once per GPU. A request from a partition
//! that is not yet bound to a GPU may be served by any GPU; of those it fits, the least
//! loaded wins (then the least recently granted, then the lowest) and binds the partition.

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

/// Identifies one holdable instance in [`Holdables`].
pub type HoldIndex = usize;

/// How a request names a resource before a GPU is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// What a request asks for: resources and amounts (shared: every instance of a stage asks
/// for the same).
pub type Needs = Rc<[(HoldSlot, u64)]>;

/// A pending request.
#[derive(Debug, Clone)]
pub struct Request<T> {
    /// What the requester gets back when granted.
    pub token: T,
    /// Resources and amounts (shared: every instance of a stage asks for the same).
    pub needs: Needs,
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
    pub needs: Needs,
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

/// The set of holdable instances and their FIFO line.
///
/// The line is kept per *kind*: waiters with the same needs and GPU binding, each with
/// its place in the whole line. Waiters of one kind are judged alike, and within a
/// serving pass use only grows and blocks only spread, so once a kind is refused it stays
/// refused until the pass ends. A pass therefore judges only the waiters whose verdict
/// can change something (a grant, or a block no earlier waiter made), taking them in line
/// order across kinds; the others are refused without being visited. Its cost grows with
/// the grants it makes and the kinds waiting, not with the length of the line.
#[derive(Debug, Clone)]
pub struct Holdables<T> {
    board: Board,
    kinds: Vec<Kind<T>>,
    /// The kind of each needs list and binding seen so far.
    kind_of: HashMap<(Needs, Option<u32>), usize>,
    /// Kinds with waiters (any order).
    active: Vec<usize>,
    /// The place the next waiter takes in the line.
    next_place: u64,
    /// Waiters in all kinds.
    waiting: usize,
    /// True when the last pass left every waiter judged against the current use and the
    /// current block flags (no grant followed a refusal): a new request can then be
    /// judged alone, exactly as a full pass would judge it at the back of the line.
    settled: bool,
    touched: Vec<HoldIndex>,
    /// Judgements made (a request or a waiter judged): a test hook that shows the serving
    /// cost does not grow with the length of the line.
    examined: u64,
}

/// Waiters with equal needs and GPU binding, oldest first.
#[derive(Debug, Clone)]
struct Kind<T> {
    needs: Needs,
    gpu: Option<u32>,
    /// Each waiter's place in the whole line, and its token.
    waiters: VecDeque<(u64, T)>,
    /// What last blocked the waiters, as steps `(first place, blocker)` in line order: a
    /// waiter's blocker is that of the last step at or before its place.
    blockers: VecDeque<(u64, Option<HoldIndex>)>,
    /// In the current pass, a waiter of this kind was refused (so every later one is).
    refused: bool,
    /// In the current pass, for a refused kind: the place of its next waiter that would
    /// block an instance no earlier waiter has blocked.
    blocks_at: Option<u64>,
}

impl<T> Kind<T> {
    /// Adds a waiter at the back, remembering what blocked it.
    fn push(&mut self, place: u64, token: T, blocked_on: Option<HoldIndex>) {
        if self.waiters.is_empty() {
            self.blockers.clear();
        }
        if self.blockers.back().map(|&(_, b)| b) != Some(blocked_on) {
            self.blockers.push_back((place, blocked_on));
        }
        self.waiters.push_back((place, token));
    }

    /// Removes the oldest waiter, with what last blocked it.
    fn pop(&mut self) -> Option<(T, Option<HoldIndex>)> {
        let (place, token) = self.waiters.pop_front()?;
        while self.blockers.len() > 1 && self.blockers[1].0 <= place {
            self.blockers.pop_front();
        }
        Some((token, self.blockers[0].1))
    }

    /// The place of the first waiter after `place`.
    fn first_after(&self, place: u64) -> Option<u64> {
        let i = self.waiters.partition_point(|&(p, _)| p <= place);
        self.waiters.get(i).map(|&(p, _)| p)
    }
}

/// The instances, their use and the block flags of the current pass.
#[derive(Debug, Clone)]
struct Board {
    inst: Vec<Instance>,
    gpus: u32,
    pass: u64,
    /// Grants so far (the clock of [`Instance::granted_at`]).
    grants: u64,
}

/// One holdable instance (kept together: every check reads all three).
#[derive(Debug, Clone, Copy)]
struct Instance {
    capacity: u64,
    in_use: u64,
    /// Blocked in the current serving pass when equal to `Board::pass` (a stamp, so
    /// starting a pass clears every flag at once).
    blocked: u64,
    /// When it was last granted, as a count of grants (0: never): of two GPUs equally
    /// loaded, the one granted longest ago takes the next request.
    granted_at: u64,
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
            board: Board {
                inst: capacity
                    .into_iter()
                    .map(|capacity| Instance {
                        capacity,
                        in_use: 0,
                        blocked: 0,
                        granted_at: 0,
                    })
                    .collect(),
                gpus,
                pass: 0,
                grants: 0,
            },
            kinds: Vec::new(),
            kind_of: HashMap::new(),
            active: Vec::new(),
            next_place: 0,
            waiting: 0,
            settled: true,
            touched: Vec::new(),
            examined: 0,
        }
    }

    /// Units in use of an instance.
    pub fn in_use(&self, i: HoldIndex) -> u64 {
        self.board.inst[i].in_use
    }

    /// Capacity of an instance.
    pub fn capacity(&self, i: HoldIndex) -> u64 {
        self.board.inst[i].capacity
    }

    /// Requests waiting.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// Judgements made so far (requests and waiters judged). Not a result: a hook for
    /// tests that the cost of serving does not grow with the line.
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
            self.board.pass += 1;
            self.settled = true;
        }
        if !self.settled {
            self.push_back(req);
            self.serve(granted);
            return;
        }
        self.examined += 1;
        match self.board.fit(&req.needs, req.gpu) {
            Ok(gpu) => {
                // Use grows past what the waiters ahead were judged against.
                self.settled = self.waiting == 0;
                self.grant(req.token, req.needs, gpu, req.blocked_on, granted);
            }
            Err(blocker) => {
                self.board.block(req.gpu, &req.needs);
                self.push_back(Request {
                    blocked_on: Some(blocker),
                    ..req
                });
            }
        }
    }

    /// Puts a request at the back of the line, with the waiters of its kind.
    fn push_back(&mut self, req: Request<T>) {
        let key = (req.needs, req.gpu);
        let k = match self.kind_of.get(&key) {
            Some(&k) => k,
            None => {
                let k = self.kinds.len();
                self.kinds.push(Kind {
                    needs: key.0.clone(),
                    gpu: key.1,
                    waiters: VecDeque::new(),
                    blockers: VecDeque::new(),
                    refused: false,
                    blocks_at: None,
                });
                self.kind_of.insert(key, k);
                k
            }
        };
        let kind = &mut self.kinds[k];
        if kind.waiters.is_empty() {
            self.active.push(k);
        }
        kind.push(self.next_place, req.token, req.blocked_on);
        self.next_place += 1;
        self.waiting += 1;
    }

    #[inline]
    fn grant(
        &mut self,
        token: T,
        needs: Needs,
        gpu: Option<u32>,
        blocked_on: Option<HoldIndex>,
        granted: &mut impl Extend<Grant<T>>,
    ) {
        self.board.grants += 1;
        for &(slot, a) in needs.iter() {
            let i = slot.instance(gpu);
            self.board.inst[i].in_use += a;
            self.board.inst[i].granted_at = self.board.grants;
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
            self.board.inst[i].in_use -= a;
            self.touched.push(i);
        }
        if self.waiting > 0 {
            self.serve(granted);
        }
    }

    /// Grants every request that fits, in FIFO order, without letting later requests
    /// overtake an earlier one on a resource they share. Judges waiters in line order as
    /// if it walked the whole line, but visits only those whose verdict changes something.
    fn serve(&mut self, granted: &mut impl Extend<Grant<T>>) {
        self.board.pass += 1;
        for &k in &self.active {
            self.kinds[k].refused = false;
            self.kinds[k].blocks_at = None;
        }
        let mut any_refused = false;
        let mut settled = true;
        while let Some((place, k)) = self.next_to_judge() {
            self.examined += 1;
            let kind = &mut self.kinds[k];
            let (needs, gpu) = (kind.needs.clone(), kind.gpu);
            let board_changed = if kind.refused {
                // Refused for the reason already recorded; it keeps its place in line on
                // what it is short of, which no earlier waiter has kept yet.
                kind.blocks_at = None;
                self.board.block(gpu, &needs)
            } else {
                match self.board.fit(&needs, gpu) {
                    Ok(chosen) => {
                        let (token, blocked_on) = kind.pop().expect("a judged kind waits");
                        self.waiting -= 1;
                        self.grant(token, needs, chosen, blocked_on, granted);
                        settled &= !any_refused;
                        true
                    }
                    Err(blocker) => {
                        // Keep its place in line on what it is short of (not on what it
                        // could take now), so it never blocks unrelated requests.
                        kind.refused = true;
                        kind.blockers.clear();
                        kind.blockers.push_back((place, Some(blocker)));
                        any_refused = true;
                        // Its later waiters are refused alike, blocking nothing more.
                        self.board.block(gpu, &needs)
                    }
                }
            };
            if board_changed {
                self.rejudge_refused(place);
            }
        }
        let kinds = &self.kinds;
        self.active.retain(|&k| !kinds[k].waiters.is_empty());
        self.settled = settled;
    }

    /// The earliest waiter whose judgement may change the board: the oldest of a kind not
    /// yet refused in this pass, or the next of a refused kind that would block more.
    fn next_to_judge(&self) -> Option<(u64, usize)> {
        let mut next: Option<(u64, usize)> = None;
        for &k in &self.active {
            let kind = &self.kinds[k];
            let place = match kind.refused {
                true => kind.blocks_at,
                false => kind.waiters.front().map(|&(p, _)| p),
            };
            if let Some(p) = place
                && next.is_none_or(|(q, _)| p < q)
            {
                next = Some((p, k));
            }
        }
        next
    }

    /// After the board changed at `place`: each refused kind's waiters behind it are
    /// refused for a reason that may have changed, and may block more than before.
    fn rejudge_refused(&mut self, place: u64) {
        for &k in &self.active {
            let kind = &mut self.kinds[k];
            if !kind.refused {
                continue;
            }
            let Some(next) = kind.first_after(place) else {
                kind.blocks_at = None;
                continue;
            };
            let blocker = match self.board.fit(&kind.needs, kind.gpu) {
                Err(blocker) => blocker,
                Ok(_) => unreachable!("use only grows and blocks only spread within a pass"),
            };
            if kind.blockers.back().map(|&(_, b)| b) != Some(Some(blocker)) {
                kind.blockers.push_back((next, Some(blocker)));
            }
            kind.blocks_at = self
                .board
                .would_block_more(kind.gpu, &kind.needs)
                .then_some(next);
        }
    }
}

impl Board {
    /// Marks what a refused request is short of, so later requests do not take it; true
    /// when an instance was not marked before.
    #[inline]
    fn block(&mut self, bound: Option<u32>, needs: &[(HoldSlot, u64)]) -> bool {
        let mut more = false;
        for g in self.candidates(bound, needs) {
            for &(slot, _) in needs {
                let i = slot.instance(g);
                let total = total_on(needs, g, i);
                let inst = &mut self.inst[i];
                if inst.in_use + total > inst.capacity {
                    more |= inst.blocked != self.pass;
                    inst.blocked = self.pass;
                }
            }
        }
        more
    }

    /// True when [`Board::block`] would mark an instance not yet marked in this pass.
    fn would_block_more(&self, bound: Option<u32>, needs: &[(HoldSlot, u64)]) -> bool {
        self.candidates(bound, needs).any(|g| {
            needs.iter().any(|&(slot, _)| {
                let i = slot.instance(g);
                let inst = &self.inst[i];
                inst.blocked != self.pass && inst.in_use + total_on(needs, g, i) > inst.capacity
            })
        })
    }

    /// The GPUs a request may be served by: its bound GPU, any GPU when it needs a
    /// per-GPU resource and is not bound yet, or none.
    fn candidates(
        &self,
        bound: Option<u32>,
        needs: &[(HoldSlot, u64)],
    ) -> impl Iterator<Item = Option<u32>> + use<> {
        let per_gpu = needs.iter().any(|(s, _)| matches!(s, HoldSlot::PerGpu(_)));
        let (lo, hi, some) = match (bound, per_gpu) {
            (Some(g), _) => (g, g + 1, true),
            (None, true) => (0, self.gpus.max(1), true),
            (None, false) => (0, 1, false),
        };
        (lo..hi).map(move |g| some.then_some(g))
    }

    /// How loaded GPU `g` is for these needs, lower first: the share in use of the first
    /// per-GPU instance they name, then when it was last granted ((0, 0) when no need is
    /// per-GPU). cuzk's GPU workers wait on one queue and the longest idle takes the next
    /// partition, so work spreads over the GPUs instead of piling onto GPU 0; the least
    /// loaded GPU, the least recently granted of equals, is the rule that comes closest.
    fn load(&self, needs: &[(HoldSlot, u64)], g: Option<u32>) -> (f64, u64) {
        (needs.iter())
            .find(|(slot, _)| matches!(slot, HoldSlot::PerGpu(_)))
            .map_or((0.0, 0), |&(slot, _)| {
                let inst = &self.inst[slot.instance(g)];
                let share = inst.in_use as f64 / inst.capacity.max(1) as f64;
                (share, inst.granted_at)
            })
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
        // Of the GPUs a request fits, the least loaded (see [`Board::load`]); with one
        // candidate (one GPU, or bound already) the first that fits, without weighing.
        let spread = bound.is_none() && self.gpus > 1;
        let mut chosen: Option<(Option<u32>, (f64, u64))> = None;
        let mut consider = |g: Option<u32>, load: (f64, u64)| {
            if chosen.is_none_or(|(_, best)| load < best) {
                chosen = Some((g, load));
            }
        };
        if let [(slot, a)] = *needs {
            // One need (a lock, a core): the common case, without the bookkeeping.
            for g in self.candidates(bound, needs) {
                let i = slot.instance(g);
                if !self.inst[i].refuses(a, self.pass) {
                    if !spread {
                        return Ok(g);
                    }
                    consider(g, self.load(needs, g));
                } else {
                    first_blocker.get_or_insert(i);
                }
            }
            return chosen.map(|(g, _)| g).ok_or(first_blocker.unwrap_or(0));
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
                if !spread {
                    return Ok(g);
                }
                consider(g, self.load(needs, g));
            }
        }
        chosen.map(|(g, _)| g).ok_or(first_blocker.unwrap_or(0))
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
