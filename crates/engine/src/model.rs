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

/// Model v2 DRAM sharing rules. The default reproduces model v1 exactly.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DramSharing {
    /// Policy of a stage that moves data host-to-device (draws on a PCIe H2D direction).
    pub dma_h2d: DramPolicy,
    /// Policy of a stage that moves data device-to-host (draws on a PCIe D2H direction).
    pub dma_d2h: DramPolicy,
    /// Cache lines one CPU thread keeps in flight (Little's law): one thread draws at most
    /// `lines x 64 B / loaded latency`. None: no per-thread bound.
    pub lines_in_flight_per_thread: Option<f64>,
}

impl DramSharing {
    /// DRAM GB/s one thread can draw at `latency_ns` (None without a per-thread bound).
    pub fn thread_bound_gbps(&self, latency_ns: f64) -> Option<f64> {
        self.lines_in_flight_per_thread
            .map(|lines| lines * 64.0 / latency_ns)
    }
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
/// past its last point along its last segment: queues keep building.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyCurve {
    points: Vec<(f64, f64)>,
    by_offered_load: bool,
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
        })
    }

    /// Builds a curve of offered load (demand / capacity): points sorted by load, loads
    /// finite and >= 0 (above 1 allowed), latency positive; it extrapolates past its last
    /// point along the last segment (never below the last latency).
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
        }
    }

    /// The curve's points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Latency in ns at load `u` (utilisation: clamped to the curve's range; offered
    /// load: extrapolated past the last point along the last rising segment).
    pub fn latency_ns(&self, u: f64) -> f64 {
        let p = &self.points;
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
            return ln + ((ln - lm) / (un - um)).max(0.0) * (u - un);
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

impl PcieLink {
    /// DRAM bytes per byte of a pinned DMA, unless measured: one read (H2D) or one write
    /// (D2H).
    pub const DEFAULT_DMA_DRAM_FACTOR: f64 = 1.0;
    /// Extra DRAM bytes per byte of a pageable copy's memcpy, unless measured: one read
    /// and one write.
    pub const DEFAULT_PAGEABLE_COPY_DRAM_FACTOR: f64 = 2.0;
    /// A pageable copy's rate as a share of the pinned one, unless measured.
    pub const DEFAULT_PAGEABLE_SHARE: f64 = 0.25;

    /// A copy's standalone rate, GB/s: the pinned or pageable rate of its direction.
    pub fn copy_gbps(&self, c: LinkCopy) -> f64 {
        match (c.dir, c.pinned) {
            (CopyDir::H2d, true) => self.h2d_gbps,
            (CopyDir::D2h, true) => self.d2h_gbps,
            (CopyDir::H2d, false) => self.pageable_h2d_gbps,
            (CopyDir::D2h, false) => self.pageable_d2h_gbps,
        }
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
    /// This stage is GPU kernel work (counts toward the true GPU duty cycle).
    pub gpu_kernel: bool,
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
}
