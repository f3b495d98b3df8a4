//! The typed, validated model the engine runs: hardware, workload, arrivals and
//! instrumentation. No I/O and no TOML here: `scenario` builds a [`Model`] from files,
//! tests and benchmarks build one directly.
//!
//! Units are carried by the field names (`_s` seconds, `_gbps` 10^9 bytes per second,
//! `_bytes`) and by the [`crate::time::SimTime`] type for simulated time.

use std::fmt;

/// Index of a stage in [`Workload::stages`].
pub type StageId = usize;
/// Index of a lock in [`Hardware::locks`].
pub type LockId = usize;
/// Index of a thread pool in [`Hardware::pools`].
pub type PoolId = usize;
/// Index of a marker in [`Instrumentation::markers`].
pub type MarkerId = usize;

/// Bytes in one cache line: what one line in flight (Little's law) or one pointer-chase
/// step moves.
pub const CACHE_LINE_BYTES: f64 = 64.0;

/// A whole scenario, ready to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Scenario name (used in reports and plot titles).
    pub name: String,
    /// Seed of the run's random number generator.
    pub seed: u64,
    /// The host: cores, DRAM, GPUs and their links, RAM, locks, pools.
    pub hardware: Hardware,
    /// What one job (e.g. one proof) does.
    pub workload: Workload,
    /// How jobs arrive and how many are simulated.
    pub arrivals: Arrivals,
    /// Where the real engine's log markers sit.
    pub instrumentation: Instrumentation,
}

/// The host's resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Hardware {
    /// CPU cores (hardware threads) that stages can hold.
    pub cpu_cores: u32,
    /// Host RAM in bytes, a holdable resource.
    pub host_ram_bytes: u64,
    /// The shared DRAM system.
    pub dram: Dram,
    /// Identical GPUs, each on its own PCIe link.
    pub gpus: Vec<Gpu>,
    /// Named holdable locks/semaphores (FIFO).
    pub locks: Vec<Lock>,
    /// Named thread pools, shared by fluid sharing (a rate resource measured in threads).
    pub pools: Vec<Pool>,
}

/// The DRAM system: one rate resource plus its loaded-latency curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Dram {
    /// Achievable bandwidth in GB/s (what all streams together can draw).
    pub capacity_gbps: f64,
    /// Loaded latency as a function of utilisation.
    pub latency: LatencyCurve,
    /// Fraction of capacity lost per concurrent DRAM stream beyond the first (row-buffer
    /// conflicts as streams interleave): effective capacity is
    /// `capacity * max(0.5, 1 - loss * (streams - 1))`. 0 disables it.
    pub efficiency_loss_per_stream: f64,
    /// Who is served how on a saturated DRAM, and the per-thread latency bound (model v2;
    /// the default is the v1 rule: max-min for everyone, no per-thread bound).
    pub sharing: DramSharing,
}

/// How a DRAM consumer shares a saturated DRAM with the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DramPolicy {
    /// Max-min fair on rates (CPU streams; the v1 rule for everyone).
    #[default]
    MaxMin,
    /// Slows by the same fraction as the heaviest max-min stream beside it (what a pinned
    /// H2D DMA shows: the device's reads queue with the cores').
    Proportional,
    /// Served first, up to its demand; the others share what is left (what a D2H DMA's
    /// posted writes show).
    Priority,
}

impl DramPolicy {
    /// Parses a scenario name: "max-min", "proportional" or "priority".
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "max-min" => Some(Self::MaxMin),
            "proportional" => Some(Self::Proportional),
            "priority" => Some(Self::Priority),
            _ => None,
        }
    }

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Self::MaxMin => "max-min",
            Self::Proportional => "proportional",
            Self::Priority => "priority",
        }
    }
}

/// How DRAM is shared between its consumers. The default is the plain max-min rule of
/// model v1; the scenario layer fills in the measured rules.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DramSharing {
    /// Policy of a stage that moves data host-to-device (draws on a PCIe H2D direction).
    pub dma_h2d: DramPolicy,
    /// Policy of a stage that moves data device-to-host (draws on a PCIe D2H direction).
    pub dma_d2h: DramPolicy,
    /// Cache lines one CPU thread keeps in flight (Little's law): one thread draws at most
    /// `lines x CACHE_LINE_BYTES / loaded latency`. None: no per-thread bound.
    pub lines_in_flight_per_thread: Option<f64>,
}

impl Dram {
    /// Achievable bandwidth, GB/s, with `streams` activities drawing on DRAM at once.
    pub fn effective_capacity_gbps(&self, streams: u32) -> f64 {
        let loss = self.efficiency_loss_per_stream * streams.saturating_sub(1) as f64;
        self.capacity_gbps * (1.0 - loss).max(0.5)
    }
}

/// Loaded-latency curve: points (load, latency in ns), piecewise linear. By default the
/// load is achieved utilisation in [0, 1] and the curve is held flat beyond its last point
/// (model v1). A curve of *offered* load (demand / capacity, may exceed 1) keeps rising
/// past its last point: along its last segment, and at least in proportion to the load
/// (past saturation the served rate stays put while the requests in flight grow with
/// the offered load, and L = N / X).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyCurve {
    points: Vec<(f64, f64)>,
    by_offered_load: bool,
    /// Curves of other read/write mixes (the write-fraction axis); None: one mix.
    mixes: Option<Box<WriteMixes>>,
    /// Latency factor of 4 KiB pages (page walks) over the huge pages the curve was
    /// measured with, (idle, loaded at load 1); None: huge pages.
    page_factor: Option<(f64, f64)>,
}

/// The write-fraction axis of a latency curve: one curve per measured read/write mix.
#[derive(Debug, Clone, PartialEq)]
struct WriteMixes {
    /// Write fraction of DRAM bytes of the curve's own points.
    base: f64,
    /// (write fraction, points), sorted by write fraction, the base curve included.
    curves: Vec<(f64, Vec<(f64, f64)>)>,
}

impl LatencyCurve {
    /// Builds a curve from points sorted by utilisation. Returns an error message when the
    /// points are empty, unsorted, outside [0, 1] or have non-positive latency.
    pub fn new(points: Vec<(f64, f64)>) -> Result<Self, String> {
        if points.is_empty() {
            return Err("needs at least one (utilisation, ns) point".into());
        }
        for (i, &(u, ns)) in points.iter().enumerate() {
            if !(0.0..=1.0).contains(&u) || !u.is_finite() {
                return Err(format!("point {i}: utilisation {u} is outside 0..=1"));
            }
            if !(ns > 0.0 && ns.is_finite()) {
                return Err(format!("point {i}: latency {ns} ns must be positive"));
            }
            if i > 0 && u <= points[i - 1].0 {
                return Err(format!(
                    "point {i}: utilisation {u} must be greater than the previous point's"
                ));
            }
        }
        Ok(Self {
            points,
            by_offered_load: false,
            mixes: None,
            page_factor: None,
        })
    }

    /// Builds a curve of offered load (demand / capacity): points sorted by load, loads
    /// finite and >= 0 (above 1 allowed), latency positive; past its last point (u_n,
    /// L_n) it extrapolates along the last segment, and never below L_n u / u_n.
    pub fn offered(points: Vec<(f64, f64)>) -> Result<Self, String> {
        if points.is_empty() {
            return Err("needs at least one (offered load, ns) point".into());
        }
        for (i, &(u, ns)) in points.iter().enumerate() {
            if !(u >= 0.0 && u.is_finite()) {
                return Err(format!(
                    "point {i}: offered load {u} must be finite and >= 0"
                ));
            }
            if !(ns > 0.0 && ns.is_finite()) {
                return Err(format!("point {i}: latency {ns} ns must be positive"));
            }
            if i > 0 && u <= points[i - 1].0 {
                return Err(format!(
                    "point {i}: offered load {u} must be greater than the previous point's"
                ));
            }
        }
        Ok(Self {
            points,
            by_offered_load: true,
            mixes: None,
            page_factor: None,
        })
    }

    /// Whether the load axis is offered load (demand / capacity) rather than utilisation.
    pub fn by_offered_load(&self) -> bool {
        self.by_offered_load
    }

    /// A flat curve: latency never grows with load (pure bandwidth model).
    pub fn flat() -> Self {
        Self {
            points: vec![(0.0, 100.0)],
            by_offered_load: false,
            mixes: None,
            page_factor: None,
        }
    }

    /// The curve's points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Adds the write-fraction axis: this curve's points are the mix with `base` write
    /// fraction (of DRAM bytes), `others` are (write fraction, curve) of other mixes on
    /// the same load axis. Latency at a run's write fraction interpolates linearly
    /// between the two nearest mixes (held at the ends).
    pub fn with_write_mixes(
        mut self,
        base: f64,
        others: Vec<(f64, LatencyCurve)>,
    ) -> Result<Self, String> {
        let mut curves = vec![(base, self.points.clone())];
        for (wf, c) in others {
            if c.by_offered_load != self.by_offered_load {
                return Err(format!(
                    "the mix with write fraction {wf} is on another load axis than the base curve"
                ));
            }
            curves.push((wf, c.points));
        }
        for &(wf, _) in &curves {
            if !(0.0..=1.0).contains(&wf) {
                return Err(format!("write fraction {wf} is outside 0..=1"));
            }
        }
        curves.sort_by(|a, b| a.0.total_cmp(&b.0));
        if curves.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err("two mixes have the same write fraction".into());
        }
        self.mixes = Some(Box::new(WriteMixes { base, curves }));
        Ok(self)
    }

    /// Multiplies latency by the 4 KiB-page factor: `idle` at load 0 rising linearly to
    /// `loaded` at load 1 (held beyond). Both must be >= 1.
    pub fn with_page_factor(mut self, idle: f64, loaded: f64) -> Result<Self, String> {
        if !(idle >= 1.0 && loaded >= 1.0 && idle.is_finite() && loaded.is_finite()) {
            return Err(format!(
                "page factors ({idle}, {loaded}) must be finite and >= 1 (4 KiB pages are never faster)"
            ));
        }
        self.page_factor = Some((idle, loaded));
        Ok(self)
    }

    /// Write fraction of the curve's own points (None without a write-fraction axis).
    pub fn base_write_frac(&self) -> Option<f64> {
        self.mixes.as_ref().map(|m| m.base)
    }

    /// Latency in ns at load `u` for a run whose DRAM bytes are a `write_frac` share
    /// writes (None: the curve's own mix).
    pub fn latency_ns_mix(&self, u: f64, write_frac: Option<f64>) -> f64 {
        let (Some(m), Some(wf)) = (&self.mixes, write_frac) else {
            return self.latency_ns(u);
        };
        let c = &m.curves;
        let at = |pts: &[(f64, f64)]| self.page(u, self.on_points(pts, u));
        if wf <= c[0].0 {
            return at(&c[0].1);
        }
        for w in c.windows(2) {
            let ((w0, p0), (w1, p1)) = (&w[0], &w[1]);
            if wf <= *w1 {
                let (l0, l1) = (at(p0), at(p1));
                return l0 + (l1 - l0) * (wf - w0) / (w1 - w0);
            }
        }
        at(&c[c.len() - 1].1)
    }

    /// L(u)/L(0) at a run's write fraction (None: the curve's own mix).
    pub fn slowdown_mix(&self, u: f64, write_frac: Option<f64>) -> f64 {
        self.latency_ns_mix(u, write_frac) / self.latency_ns_mix(0.0, write_frac)
    }

    fn page(&self, u: f64, ns: f64) -> f64 {
        match self.page_factor {
            None => ns,
            Some((idle, loaded)) => ns * (idle + (loaded - idle) * u.clamp(0.0, 1.0)),
        }
    }

    /// Latency in ns at load `u` (utilisation: clamped to the curve's range; offered
    /// load: extrapolated past the last point, see [`LatencyCurve::offered`]).
    pub fn latency_ns(&self, u: f64) -> f64 {
        self.page(u, self.on_points(&self.points, u))
    }

    fn on_points(&self, p: &[(f64, f64)], u: f64) -> f64 {
        if u <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((u0, l0), (u1, l1)) = (w[0], w[1]);
            if u <= u1 {
                return l0 + (l1 - l0) * (u - u0) / (u1 - u0);
            }
        }
        let (un, ln) = p[p.len() - 1];
        if self.by_offered_load && p.len() >= 2 {
            let (um, lm) = p[p.len() - 2];
            let along = ln + ((ln - lm) / (un - um)).max(0.0) * (u - un);
            // Past saturation the served rate stays put while the requests in flight
            // grow with the offered load, so latency grows at least in proportion
            // (Little's law, L = N / X).
            return along.max(ln * u / un);
        }
        ln
    }

    /// L(u) / L(0): how much slower latency-bound work runs at utilisation `u`.
    pub fn slowdown(&self, u: f64) -> f64 {
        self.latency_ns(u) / self.latency_ns(0.0)
    }
}

/// One GPU and its PCIe link.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    /// Display name, e.g. "gpu0".
    pub name: String,
    /// Device memory in bytes, a holdable resource.
    pub vram_bytes: u64,
    /// The link between host memory and this GPU.
    pub link: PcieLink,
}

/// A PCIe link's per-direction rates and how its traffic lands on host DRAM.
#[derive(Debug, Clone, PartialEq)]
pub struct PcieLink {
    /// Pinned host-to-device bandwidth, GB/s.
    pub h2d_gbps: f64,
    /// Pinned device-to-host bandwidth, GB/s.
    pub d2h_gbps: f64,
    /// Both directions at once, total GB/s (None: directions are independent).
    pub duplex_gbps: Option<f64>,
    /// Pageable host-to-device bandwidth (through CUDA's bounce buffer), GB/s.
    pub pageable_h2d_gbps: f64,
    /// Pageable device-to-host bandwidth, GB/s.
    pub pageable_d2h_gbps: f64,
    /// DRAM bytes per byte moved by a pinned H2D DMA (1.0: one read).
    pub h2d_dram_factor: f64,
    /// DRAM bytes per byte moved by a pinned D2H DMA (1.0: one write).
    pub d2h_dram_factor: f64,
    /// Extra DRAM bytes per byte for a pageable copy's CPU memcpy (2.0: one read, one write).
    pub pageable_copy_dram_factor: f64,
    /// Pageable host-to-device copies as CPU staging pipelined with the DMA (None: the
    /// one-rate rule, `pageable_h2d_gbps`).
    pub pageable_h2d_staging: Option<PageableStaging>,
    /// The same for device-to-host copies.
    pub pageable_d2h_staging: Option<PageableStaging>,
    /// Share of each kind of copy's standalone time that waits on DRAM latency (a
    /// transfer stage takes it unless it states its own).
    pub latency_frac: CopyLatencyFrac,
}

/// Share of a copy's time bound by DRAM latency, per kind of copy. A GPU reading host
/// memory (pinned H2D) keeps a bounded number of reads in flight, each a PCIe round
/// trip plus a DRAM access, so it slows as DRAM latency rises; posted writes (pinned
/// D2H) barely wait; an unstaged pageable copy's CPU memcpy waits like a CPU stream.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CopyLatencyFrac {
    /// Pinned host-to-device DMA.
    pub pinned_h2d: f64,
    /// Pinned device-to-host DMA.
    pub pinned_d2h: f64,
    /// Pageable host-to-device copy without staging.
    pub pageable_h2d: f64,
    /// Pageable device-to-host copy without staging.
    pub pageable_d2h: f64,
}

impl CopyLatencyFrac {
    /// The share for copy `c`.
    pub fn of(&self, c: LinkCopy) -> f64 {
        match (c.dir, c.pinned) {
            (CopyDir::H2d, true) => self.pinned_h2d,
            (CopyDir::D2h, true) => self.pinned_d2h,
            (CopyDir::H2d, false) => self.pageable_h2d,
            (CopyDir::D2h, false) => self.pageable_d2h,
        }
    }
}

/// A pageable copy as the driver runs it: one CPU thread memcpys the pageable buffer
/// into (H2D) or out of (D2H) a pinned bounce buffer chunk by chunk, while the DMA moves
/// the previous chunk. The two overlap, so the copy streams at the slower of the two, not
/// at the sum of their times; each call also pays a fixed setup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageableStaging {
    /// Fixed cost per call (driver work before the first chunk moves), seconds; it never
    /// shares anything, so small copies are slower per byte.
    pub setup_s: f64,
    /// The memcpy thread's rate alone on an idle host, GB/s copied.
    pub memcpy_gbps: f64,
    /// How the memcpy meets a loaded DRAM.
    pub memcpy_pace: MemcpyPace,
}

/// Whether a staging memcpy waits on DRAM latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemcpyPace {
    /// Its loads keep the lines in flight its idle rate implies (Little's law): it runs
    /// at `memcpy_gbps x L(0) / L` as loaded latency `L` rises, like a CPU copy stream.
    LatencyBound,
    /// Its stores are posted (nothing waits on them): latency does not slow it, only
    /// its DRAM share does.
    Posted,
}

impl MemcpyPace {
    /// Parses a scenario name: "latency-bound" or "posted".
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "latency-bound" => Some(Self::LatencyBound),
            "posted" => Some(Self::Posted),
            _ => None,
        }
    }

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Self::LatencyBound => "latency-bound",
            Self::Posted => "posted",
        }
    }
}

/// What the engine needs to pace one staged pageable copy stage (see [`PageableStaging`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StagedCopy {
    /// Share of the stage's standalone time that is the per-call setup, in [0, 1): it
    /// never slows. (Under a DRAM or link share the filling spreads it over the call.)
    pub setup_frac: f64,
    /// The memcpy's rate alone over the copy's streaming rate, >= 1 (above 1 when the
    /// DMA, not the memcpy, sets the pace).
    pub memcpy_headroom: f64,
    /// How the memcpy meets a loaded DRAM.
    pub memcpy_pace: MemcpyPace,
}

impl StagedCopy {
    /// Whether the memcpy sets the copy's pace (else the DMA does).
    pub fn memcpy_bound(&self) -> bool {
        self.memcpy_headroom <= 1.0 + 1e-9
    }

    /// The stage's speed cap (fraction of standalone) when loaded latency is `slowdown`
    /// x idle: the streaming part runs at min(1, headroom / slowdown) when the memcpy is
    /// latency bound (Little's law), the setup part at 1.
    pub fn cap(&self, slowdown: f64) -> f64 {
        let streaming = match self.memcpy_pace {
            MemcpyPace::LatencyBound => (self.memcpy_headroom / slowdown).min(1.0),
            MemcpyPace::Posted => 1.0,
        };
        if streaming >= 1.0 {
            return 1.0;
        }
        1.0 / (self.setup_frac + (1.0 - self.setup_frac) / streaming)
    }
}

/// Which way a copy crosses a PCIe link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyDir {
    /// Host to device.
    H2d,
    /// Device to host.
    D2h,
}

/// A copy over a PCIe link: its direction and whether the host buffer is pinned (a
/// DMA) or pageable (the driver's CPU memcpy through a pinned bounce buffer, then a DMA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkCopy {
    /// Direction.
    pub dir: CopyDir,
    /// Pinned host buffer (else pageable).
    pub pinned: bool,
}

/// What a copy asks of the host while it moves data at some rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CopyDemand {
    /// The link direction it crosses.
    pub link: RateTarget,
    /// GB/s it draws on that direction.
    pub link_gbps: f64,
    /// GB/s it draws on host DRAM.
    pub dram_gbps: f64,
}

impl CopyDemand {
    /// The copy's two rate demands: its link direction, then host DRAM.
    pub fn demands(&self) -> Vec<Demand> {
        vec![
            Demand {
                target: self.link,
                amount: self.link_gbps,
            },
            Demand {
                target: RateTarget::Dram,
                amount: self.dram_gbps,
            },
        ]
    }
}

impl PcieLink {
    /// DRAM bytes per byte of a pinned DMA, unless measured: one read (H2D) or one write
    /// (D2H).
    pub const DEFAULT_DMA_DRAM_FACTOR: f64 = 1.0;
    /// Extra DRAM bytes per byte of a pageable copy's memcpy, unless measured: one read
    /// and one write.
    pub const DEFAULT_PAGEABLE_COPY_DRAM_FACTOR: f64 = 2.0;
    /// A pageable copy's rate as a share of the pinned one, unless measured.
    pub const DEFAULT_PAGEABLE_SHARE: f64 = 0.25;

    /// A copy's standalone streaming rate, GB/s: the pinned or pageable rate of its
    /// direction; a staged pageable copy streams at the slower of its memcpy and the
    /// pinned DMA.
    pub fn copy_gbps(&self, c: LinkCopy) -> f64 {
        if let Some(st) = self.staging(c) {
            return st
                .memcpy_gbps
                .min(self.copy_gbps(LinkCopy { pinned: true, ..c }));
        }
        match (c.dir, c.pinned) {
            (CopyDir::H2d, true) => self.h2d_gbps,
            (CopyDir::D2h, true) => self.d2h_gbps,
            (CopyDir::H2d, false) => self.pageable_h2d_gbps,
            (CopyDir::D2h, false) => self.pageable_d2h_gbps,
        }
    }

    /// The staging of a pageable copy, when the link has one for its direction (None
    /// for a pinned copy).
    pub fn staging(&self, c: LinkCopy) -> Option<&PageableStaging> {
        match (c.pinned, c.dir) {
            (true, _) => None,
            (false, CopyDir::H2d) => self.pageable_h2d_staging.as_ref(),
            (false, CopyDir::D2h) => self.pageable_d2h_staging.as_ref(),
        }
    }

    /// Standalone seconds of one call moving `gb` GB: the setup of a staged copy (0
    /// otherwise) plus the bytes at [`PcieLink::copy_gbps`].
    pub fn copy_seconds(&self, c: LinkCopy, gb: f64) -> f64 {
        let streaming = gb / self.copy_gbps(c);
        match self.staging(c) {
            Some(st) => st.setup_s + streaming,
            None => streaming,
        }
    }

    /// How the engine paces a staged copy of `gb` GB whose stage lasts `secs` standalone
    /// (its own [`PcieLink::copy_seconds`], or longer when stretched over a kernel); None
    /// without staging.
    pub fn staged_copy(&self, c: LinkCopy, gb: f64, secs: f64) -> Option<StagedCopy> {
        let st = self.staging(c)?;
        let streaming_s = secs - st.setup_s;
        if !(streaming_s > 0.0 && gb > 0.0) {
            return Some(StagedCopy {
                setup_frac: 0.0,
                memcpy_headroom: 1.0,
                memcpy_pace: st.memcpy_pace,
            });
        }
        Some(StagedCopy {
            setup_frac: st.setup_s / secs,
            memcpy_headroom: (st.memcpy_gbps * streaming_s / gb).max(1.0),
            memcpy_pace: st.memcpy_pace,
        })
    }

    /// The demands of a copy moving `gbps` (its standalone rate, or less when it is
    /// stretched over a longer stage): its link direction at `gbps`; DRAM at `gbps` x
    /// the direction's DMA factor, plus `gbps` x the memcpy factor when pageable.
    pub fn copy_demand(&self, c: LinkCopy, gbps: f64) -> CopyDemand {
        let (link, dma_factor) = match c.dir {
            CopyDir::H2d => (RateTarget::PcieH2d, self.h2d_dram_factor),
            CopyDir::D2h => (RateTarget::PcieD2h, self.d2h_dram_factor),
        };
        let mut dram_gbps = gbps * dma_factor;
        if !c.pinned {
            dram_gbps += gbps * self.pageable_copy_dram_factor;
        }
        CopyDemand {
            link,
            link_gbps: gbps,
            dram_gbps,
        }
    }
}

/// A named holdable lock or counting semaphore.
#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    /// Name used by stages.
    pub name: String,
    /// Units available (1 for a mutex). Per GPU when `per_gpu`.
    pub capacity: u64,
    /// One instance of this lock per GPU; holding it binds the partition to a GPU.
    pub per_gpu: bool,
}

/// A named thread pool: a rate resource whose capacity is a number of threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    /// Name used by stages.
    pub name: String,
    /// Threads in the pool.
    pub threads: f64,
    /// How a saturated pool is shared (default: by activity, the v1 rule).
    pub sharing: PoolSharing,
    /// How fast its threads compute with many active (None: always as fast as alone).
    pub cpu: Option<CpuThroughput>,
}

/// How a saturated thread pool is shared among the stages drawing on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PoolSharing {
    /// Max-min on each activity's threads (v1): a one-thread stage keeps its thread while
    /// wide stages share the rest.
    #[default]
    ByActivity,
    /// Every runnable thread gets the same share, as Linux's CFS scheduler gives
    /// unpinned threads of equal priority: every stage bound by the pool slows by the
    /// same fraction, `threads / sum of threads wanted`.
    PerThread,
}

impl PoolSharing {
    /// Parses a scenario name: "by-activity" or "per-thread".
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "by-activity" => Some(Self::ByActivity),
            "per-thread" => Some(Self::PerThread),
            _ => None,
        }
    }

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ByActivity => "by-activity",
            Self::PerThread => "per-thread",
        }
    }
}

/// Compute throughput of a pool's threads as more of them are active: physical cores x
/// threads per core, what a second SMT thread adds, and the throughput per core vs
/// active cores (all-core frequency falls below single-core boost).
#[derive(Debug, Clone, PartialEq)]
pub struct CpuThroughput {
    /// Physical cores under the pool's threads.
    pub physical_cores: u32,
    /// Hardware threads per core (1 without SMT).
    pub threads_per_core: u32,
    /// Both SMT siblings busy, total / one alone (1: no gain, 2: perfect).
    pub smt_yield: f64,
    /// (active cores, throughput per core relative to one core alone), sorted by cores;
    /// piecewise linear, held flat outside.
    pub per_core: Vec<(f64, f64)>,
}

impl CpuThroughput {
    /// Checks the numbers; an error message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.physical_cores == 0 || self.threads_per_core == 0 {
            return Err("physical_cores and threads_per_core must be >= 1".into());
        }
        if !(1.0..=self.threads_per_core as f64).contains(&self.smt_yield) {
            return Err(format!(
                "smt_yield {} must be between 1 and threads_per_core ({})",
                self.smt_yield, self.threads_per_core
            ));
        }
        if self.per_core.is_empty() {
            return Err("per_core needs at least one (active cores, relative) point".into());
        }
        for (i, &(n, r)) in self.per_core.iter().enumerate() {
            if !(n >= 1.0 && n.is_finite() && r > 0.0 && r.is_finite()) {
                return Err(format!(
                    "point {i}: ({n}, {r}) needs active cores >= 1 and relative > 0"
                ));
            }
            if i > 0 && n <= self.per_core[i - 1].0 {
                return Err(format!("point {i}: active cores must rise"));
            }
        }
        Ok(())
    }

    /// Relative throughput of one core with `cores` cores active.
    fn per_core_at(&self, cores: f64) -> f64 {
        let p = &self.per_core;
        if cores <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((n0, r0), (n1, r1)) = (w[0], w[1]);
            if cores <= n1 {
                return r0 + (r1 - r0) * (cores - n0) / (n1 - n0);
            }
        }
        p[p.len() - 1].1
    }

    /// Compute throughput of one thread with `threads` threads active (relative to one
    /// thread alone on an idle host). Threads fill one per core first, then SMT siblings:
    /// a core running two threads yields `smt_yield`, shared by both.
    pub fn per_thread(&self, threads: f64) -> f64 {
        let n = threads.max(1.0);
        let cores = self.physical_cores as f64;
        let busy_cores = n.min(cores);
        let shared = (n - cores).clamp(0.0, cores * (self.threads_per_core as f64 - 1.0));
        // Cores running siblings: each extra thread pairs with a lone one.
        let paired = shared.min(cores);
        let total =
            self.per_core_at(busy_cores) * ((busy_cores - paired) + paired * self.smt_yield);
        total / n.min(cores * self.threads_per_core as f64) / self.per_core_at(1.0)
    }
}

/// What one job does: a DAG of stages, some repeated per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// How many partitions a job has (stages with `per_partition` run once for each).
    pub partitions: u32,
    /// Stages in topological order (every stage's `after` points to earlier stages).
    pub stages: Vec<Stage>,
}

/// One step of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Unique name.
    pub name: String,
    /// Runs once per partition (true) or once per job (false).
    pub per_partition: bool,
    /// Stages that must finish before this one becomes ready.
    pub after: Vec<StageId>,
    /// Standalone duration (running alone on an idle host).
    pub duration: Duration,
    /// Resources held from this stage's start until the end of `Hold::until`.
    pub holds: Vec<Hold>,
    /// Rates drawn while running at standalone speed.
    pub demands: Vec<Demand>,
    /// Fraction of the standalone time that is DRAM-latency bound, in [0, 1].
    pub latency_bound_frac: f64,
    /// Fraction of the standalone time that is compute bound, in [0, 1 -
    /// latency_bound_frac]: it slows with its pool's per-thread throughput
    /// ([`Pool::cpu`]) as more threads are active. 0: never.
    pub compute_bound_frac: f64,
    /// Share of its DRAM bytes that are writes, for a latency curve with a write-fraction
    /// axis. None: a DMA's direction decides (host-to-device reads host memory: 0,
    /// device-to-host writes it: 1), else the curve's own mix.
    pub dram_write_frac: Option<f64>,
    /// A thread that drives the stage from the host (launches, synchronisation, host-side
    /// work) without holding a pool share: None for none.
    pub host_thread: Option<HostThread>,
    /// This stage is GPU kernel work (counts toward the true GPU duty cycle).
    pub gpu_kernel: bool,
    /// A pageable copy staged through a bounce buffer (its memcpy paces it); None for
    /// everything else.
    pub staged_copy: Option<StagedCopy>,
}

/// A host thread driving a stage (e.g. the thread that launches a GPU stage's kernels and
/// waits for them): for `bound_frac` of the stage's standalone time it must be on a CPU
/// of `pool` to make progress. Under a per-thread pool that wants `W` threads of `C`,
/// it gets `C / W` of a CPU, so that share of the stage stretches by `W / C`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostThread {
    /// The pool whose CPUs it runs on.
    pub pool: PoolId,
    /// Share of the stage's standalone time that needs the thread on a CPU, in (0, 1].
    pub bound_frac: f64,
}

/// A stage's standalone duration.
#[derive(Debug, Clone, PartialEq)]
pub enum Duration {
    /// Always the same, seconds.
    Fixed(f64),
    /// Exponential with the given mean, seconds.
    Exponential { mean_s: f64 },
    /// Normal, truncated at zero.
    Normal { mean_s: f64, std_s: f64 },
    /// Log-normal with the given mean and standard deviation of the duration itself.
    LogNormal { mean_s: f64, std_s: f64 },
    /// Uniform on [min_s, max_s].
    Uniform { min_s: f64, max_s: f64 },
    /// Gamma with shape k and scale theta (mean k*theta).
    Gamma { shape: f64, scale_s: f64 },
    /// Erlang-k with the given mean (a Gamma with integer shape).
    Erlang { k: u32, mean_s: f64 },
    /// Weibull with scale lambda and shape k.
    Weibull { scale_s: f64, shape: f64 },
}

impl Duration {
    /// Mean of the distribution in seconds.
    pub fn mean_s(&self) -> f64 {
        match *self {
            Duration::Fixed(s) => s,
            Duration::Exponential { mean_s } => mean_s,
            Duration::Normal { mean_s, .. } => mean_s,
            Duration::LogNormal { mean_s, .. } => mean_s,
            Duration::Uniform { min_s, max_s } => (min_s + max_s) / 2.0,
            Duration::Gamma { shape, scale_s } => shape * scale_s,
            Duration::Erlang { mean_s, .. } => mean_s,
            Duration::Weibull { scale_s, shape } => scale_s * gamma_fn(1.0 + 1.0 / shape),
        }
    }
}

/// Lanczos approximation of the Gamma function (for the Weibull mean).
fn gamma_fn(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma_fn(1.0 - x))
    } else {
        let x = x - 1.0;
        let mut a = C[0];
        let t = x + G + 0.5;
        for (i, c) in C.iter().enumerate().skip(1) {
            a += c / (x + i as f64);
        }
        (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
    }
}

/// A resource a stage holds (FIFO waiting when short).
#[derive(Debug, Clone, PartialEq)]
pub struct Hold {
    /// Which resource.
    pub resource: HoldResource,
    /// How much (cores, bytes, lock units).
    pub amount: u64,
    /// The stage at whose end it is released (often the holding stage itself).
    pub until: StageId,
}

/// Kinds of holdable resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HoldResource {
    /// CPU cores.
    Cores,
    /// Host RAM bytes.
    HostRam,
    /// VRAM bytes of the partition's GPU.
    Vram,
    /// A named lock.
    Lock(LockId),
}

/// A rate a stage draws while running at standalone speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    /// Which rate resource.
    pub target: RateTarget,
    /// Amount per second at standalone speed (GB/s, or threads for a pool, or GPU share).
    pub amount: f64,
}

/// Rate resources a stage can draw on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RateTarget {
    /// Host DRAM bandwidth, GB/s.
    Dram,
    /// A thread pool, threads.
    Pool(PoolId),
    /// Compute of the partition's GPU (1.0 = the whole GPU).
    GpuCompute,
    /// Host-to-device direction of the partition's GPU link, GB/s.
    PcieH2d,
    /// Device-to-host direction of the partition's GPU link, GB/s.
    PcieD2h,
}

/// How jobs arrive.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrivals {
    /// The arrival process.
    pub kind: ArrivalKind,
    /// Jobs to simulate in total (including warm-up).
    pub jobs: u64,
    /// The first jobs to complete are excluded from statistics.
    pub warmup_jobs: u64,
}

/// Arrival processes.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrivalKind {
    /// N jobs in flight; the next starts when one finishes.
    Closed { concurrency: u32 },
    /// Open-loop Poisson arrivals.
    Poisson { rate_per_s: f64 },
    /// Replayed arrival times in seconds (sorted ascending).
    Trace { times_s: Vec<f64> },
}

/// Where the real engine logs markers, which spans it reads as "GPU busy", and which
/// per-partition timers it prints (e.g. cuzk's CUZK_TIMING line).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Instrumentation {
    /// Named points at stage boundaries.
    pub markers: Vec<Marker>,
    /// Named spans between two markers.
    pub spans: Vec<Span>,
    /// Named intervals between two stage boundaries of one partition (or one job).
    pub timers: Vec<Timer>,
    /// First field of the timing log line, e.g. "CUZK_TIMING".
    pub timing_prefix: String,
    /// Sample period of the nvidia-smi view (`gpu.sampled_busy_frac`), seconds; None:
    /// [`DEFAULT_SMI_SAMPLE_PERIOD_S`].
    pub smi_sample_period_s: Option<f64>,
}

/// NVML's utilization.gpu is "percent of time over the past sample period during which
/// one or more kernels was executing"; its documentation (nvmlUtilization_t) gives the
/// sample period as between 1 s and 1/6 s depending on the product. The default takes
/// the shortest, 1/6 s.
pub const DEFAULT_SMI_SAMPLE_PERIOD_S: f64 = 1.0 / 6.0;

impl Instrumentation {
    /// The nvidia-smi view's sample period, seconds.
    pub fn smi_period_s(&self) -> f64 {
        self.smi_sample_period_s
            .unwrap_or(DEFAULT_SMI_SAMPLE_PERIOD_S)
    }
}

/// A timer: milliseconds from one stage boundary to another, printed per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Timer {
    /// Name as the real log prints it, e.g. "prep_msm_ms".
    pub name: String,
    /// Where it starts.
    pub from: (StageId, Edge),
    /// Where it stops.
    pub to: (StageId, Edge),
}

/// A log marker at a stage boundary.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Name as the real log prints it, e.g. "GPU_START".
    pub name: String,
    /// The stage it is attached to.
    pub stage: StageId,
    /// Which boundary of that stage.
    pub edge: Edge,
}

/// Boundaries of a stage instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Edge {
    /// Dependencies done; about to ask for its holds.
    Ready,
    /// Holds acquired; work begins.
    Start,
    /// Work done; holds due now released.
    End,
}

impl fmt::Display for Edge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Edge::Ready => "ready",
            Edge::Start => "start",
            Edge::End => "end",
        })
    }
}

/// A span between two markers of the same job (and partition, when both are per partition).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Name, e.g. "GPU".
    pub name: String,
    /// Opening marker.
    pub from: MarkerId,
    /// Closing marker.
    pub to: MarkerId,
    /// The real engine reports this span as "GPU busy" (counts in bracketed utilisation).
    pub gpu_busy: bool,
}

impl Model {
    /// Looks a stage up by name.
    pub fn stage_id(&self, name: &str) -> Option<StageId> {
        self.workload.stages.iter().position(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_curve_interpolates_and_clamps() {
        let c = LatencyCurve::new(vec![(0.0, 100.0), (0.5, 150.0), (1.0, 400.0)]).unwrap();
        assert_eq!(c.latency_ns(0.25), 125.0);
        assert_eq!(c.latency_ns(0.75), 275.0);
        assert_eq!(c.latency_ns(2.0), 400.0);
        assert_eq!(c.slowdown(1.0), 4.0);
    }

    #[test]
    fn offered_curve_rises_past_its_last_point_at_least_in_proportion() {
        // Last segment steeper than the ray through the origin: it is followed.
        let steep = LatencyCurve::offered(vec![(0.0, 100.0), (0.5, 110.0), (1.0, 300.0)]).unwrap();
        assert_eq!(steep.latency_ns(1.5), 490.0);
        // A flat last segment (noisy points pooled to one level): the ray, L_n u / u_n.
        let flat = LatencyCurve::offered(vec![(0.0, 134.0), (0.8, 188.0), (0.85, 188.0)]).unwrap();
        assert!((flat.latency_ns(1.1) - 188.0 * 1.1 / 0.85).abs() < 1e-9);
        assert_eq!(flat.latency_ns(0.85), 188.0);
        // Up to the last point nothing changes; a utilisation curve stays clamped.
        assert_eq!(flat.latency_ns(0.4), 134.0 + 54.0 * 0.5);
        let util = LatencyCurve::new(vec![(0.0, 134.0), (0.85, 188.0)]).unwrap();
        assert_eq!(util.latency_ns(1.1), 188.0);
    }

    #[test]
    fn copy_demands_follow_direction_and_buffer() {
        let link = PcieLink {
            h2d_gbps: 50.0,
            d2h_gbps: 40.0,
            duplex_gbps: None,
            pageable_h2d_gbps: 10.0,
            pageable_d2h_gbps: 8.0,
            h2d_dram_factor: 1.5,
            d2h_dram_factor: 1.25,
            pageable_copy_dram_factor: 2.0,
            pageable_h2d_staging: None,
            pageable_d2h_staging: None,
            latency_frac: Default::default(),
        };
        let copy = |dir, pinned| LinkCopy { dir, pinned };
        assert_eq!(link.copy_gbps(copy(CopyDir::H2d, true)), 50.0);
        assert_eq!(link.copy_gbps(copy(CopyDir::D2h, false)), 8.0);
        // Pinned: the DMA's DRAM bytes only.
        let d = link.copy_demand(copy(CopyDir::H2d, true), 50.0);
        assert_eq!(
            (d.link, d.link_gbps, d.dram_gbps),
            (RateTarget::PcieH2d, 50.0, 75.0)
        );
        // Pageable: the DMA's plus the memcpy's (one read, one write).
        let d = link.copy_demand(copy(CopyDir::D2h, false), 8.0);
        assert_eq!(
            (d.link, d.link_gbps, d.dram_gbps),
            (RateTarget::PcieD2h, 8.0, 26.0)
        );
        // A copy stretched over a longer stage asks proportionally less.
        let d = link.copy_demand(copy(CopyDir::H2d, false), 5.0);
        assert_eq!(d.dram_gbps, 17.5);
    }

    #[test]
    fn latency_curve_rejects_unsorted_points() {
        assert!(LatencyCurve::new(vec![(0.5, 100.0), (0.2, 150.0)]).is_err());
        assert!(LatencyCurve::new(vec![]).is_err());
        assert!(LatencyCurve::new(vec![(0.0, -1.0)]).is_err());
    }

    #[test]
    fn weibull_mean_uses_gamma_function() {
        // Weibull(scale 2, shape 1) is exponential with mean 2.
        let d = Duration::Weibull {
            scale_s: 2.0,
            shape: 1.0,
        };
        assert!((d.mean_s() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn smt_siblings_share_what_a_core_yields() {
        // 8 cores x 2 threads, a second sibling adds 25%, flat per-core throughput.
        // 12 threads: 4 cores run pairs (1.25 each), 4 run one thread: 9 / 12 = 0.75.
        // 16 threads: 8 x 1.25 / 16 = 0.625. Up to 8 threads: 1.
        let cpu = CpuThroughput {
            physical_cores: 8,
            threads_per_core: 2,
            smt_yield: 1.25,
            per_core: vec![(1.0, 1.0)],
        };
        assert!(cpu.validate().is_ok());
        assert_eq!(cpu.per_thread(8.0), 1.0);
        assert!((cpu.per_thread(12.0) - 0.75).abs() < 1e-12);
        assert!((cpu.per_thread(16.0) - 0.625).abs() < 1e-12);
        // All-core frequency: 0.9 per core with 8 active, on top of SMT.
        let freq = CpuThroughput {
            per_core: vec![(1.0, 1.0), (8.0, 0.9)],
            ..cpu
        };
        assert!((freq.per_thread(16.0) - 0.9 * 0.625).abs() < 1e-12);
        assert!(
            CpuThroughput {
                smt_yield: 3.0,
                ..freq
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn page_factor_and_write_mixes_shape_the_latency() {
        let base = LatencyCurve::new(vec![(0.0, 100.0), (1.0, 200.0)]).unwrap();
        let paged = base.clone().with_page_factor(1.8, 2.0).unwrap();
        assert!((paged.latency_ns(0.0) - 180.0).abs() < 1e-9);
        assert!((paged.latency_ns(0.5) - 150.0 * 1.9).abs() < 1e-9);
        assert!((paged.latency_ns(1.0) - 400.0).abs() < 1e-9);
        assert!(base.clone().with_page_factor(0.9, 1.0).is_err());
        // Write mix 0.5 at L = 100 + 300u beside the base (1/3): halfway at 5/12.
        let mixed = base
            .with_write_mixes(
                1.0 / 3.0,
                vec![(
                    0.5,
                    LatencyCurve::new(vec![(0.0, 100.0), (1.0, 400.0)]).unwrap(),
                )],
            )
            .unwrap();
        assert!((mixed.latency_ns_mix(1.0, Some(5.0 / 12.0)) - 300.0).abs() < 1e-9);
        assert_eq!(mixed.latency_ns_mix(1.0, None), 200.0);
        assert_eq!(mixed.latency_ns_mix(1.0, Some(0.9)), 400.0);
        assert_eq!(mixed.latency_ns_mix(1.0, Some(0.0)), 200.0);
    }
}
