//! PCIe links and host-device copies: rates, directions, staging and what a copy
//! draws from DRAM.

use super::demand::{Demand, RateTarget};
use super::stretch::stretch_at;

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
    /// A latency-bound memcpy's rate falls as `(L(0) / L)^exponent`: 1 is Little's law
    /// with the lines in flight of its idle rate; above 1 it also loses lines in flight
    /// as the host loads (a busy SMT sibling, a prefetcher that backs off); below 1 only
    /// part of its time waits on DRAM. `bwsim calibrate` measures it next to streams.
    pub latency_exponent: f64,
    /// A memcpy paced by its streaming neighbours: its rate over alone by the streaming
    /// threads per CPU beside it (None unless `memcpy_pace` is
    /// [`MemcpyPace::BesideStreams`]).
    pub beside_streams: Option<StreamNeighbourCurve>,
}

impl PageableStaging {
    /// The steepest slowdown a host model may state: at twice the idle latency the
    /// memcpy runs 16x slower, beyond anything measured.
    pub const MAX_LATENCY_EXPONENT: f64 = 4.0;
}

/// Whether a staging memcpy waits on DRAM latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemcpyPace {
    /// It waits on its loads: it runs at `memcpy_gbps x (L(0) / L)^exponent` as loaded
    /// latency `L` rises (exponent 1: the lines in flight of its idle rate, Little's law,
    /// like a CPU copy stream; see [`PageableStaging::latency_exponent`]).
    LatencyBound,
    /// Its stores are posted (nothing waits on them): latency does not slow it, only
    /// its DRAM share does.
    Posted,
    /// Its pace follows how many threads stream beside it, at any DRAM load, not
    /// latency ([`StreamNeighbourCurve`]). Measured so for the D2H memcpy, which reads
    /// the bounce buffer the DMA has just written; streams evicting those lines before
    /// it reads them would do it, but a VM does not show its cache to confirm.
    BesideStreams,
}

impl MemcpyPace {
    /// Parses a scenario name: "latency-bound" or "posted".
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "latency-bound" => Some(Self::LatencyBound),
            "posted" => Some(Self::Posted),
            "beside-streams" => Some(Self::BesideStreams),
            _ => None,
        }
    }

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Self::LatencyBound => "latency-bound",
            Self::Posted => "posted",
            Self::BesideStreams => "beside-streams",
        }
    }
}

/// A memcpy's rate over its rate alone by the streaming threads per CPU beside it:
/// piecewise linear from (0, 1) through the points, flat past the last. At most
/// [`StreamNeighbourCurve::MAX_POINTS`] points, so that it stays a plain value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamNeighbourCurve {
    /// (0, 1), then the measured points: read by [`stretch_at`] as they stand.
    points: [(f64, f64); Self::MAX_POINTS + 1],
    /// Measured points.
    len: usize,
}

impl StreamNeighbourCurve {
    /// The most points a curve holds (calibrate measures three or four).
    pub const MAX_POINTS: usize = 8;

    /// The curve through `points` (threads per CPU rising above 0, ratios in (0, 1]);
    /// None when empty, too long, or out of order or range.
    pub fn new(points: &[(f64, f64)]) -> Option<Self> {
        if points.is_empty() || points.len() > Self::MAX_POINTS {
            return None;
        }
        let mut last = 0.0;
        for &(x, r) in points {
            if !(x.is_finite() && x > last && r > 0.0 && r <= 1.0) {
                return None;
            }
            last = x;
        }
        let mut out = Self {
            points: [(0.0, 1.0); Self::MAX_POINTS + 1],
            len: points.len(),
        };
        out.points[1..=points.len()].copy_from_slice(points);
        Some(out)
    }

    /// Its measured points, fewest threads first.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points[1..=self.len]
    }

    /// The rate ratio at `per_cpu` streaming threads per CPU beside the memcpy.
    pub fn ratio_at(&self, per_cpu: f64) -> f64 {
        stretch_at(&self.points[..=self.len], per_cpu)
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
    /// See [`PageableStaging::latency_exponent`].
    pub latency_exponent: f64,
    /// See [`PageableStaging::beside_streams`].
    pub beside_streams: Option<StreamNeighbourCurve>,
}

impl StagedCopy {
    /// Whether the memcpy sets the copy's pace (else the DMA does).
    pub fn memcpy_bound(&self) -> bool {
        self.memcpy_headroom <= 1.0 + 1e-9
    }

    /// The stage's speed cap (fraction of standalone) when loaded latency is `slowdown`
    /// x idle and `beside` is its streaming neighbours' [`StagedCopy::neighbour_ratio`]:
    /// the streaming part runs at min(1, headroom / slowdown^exponent) when the memcpy is
    /// latency bound, at min(1, headroom x beside) when its neighbours pace it; the setup
    /// part at 1. `idle_lines` is the cache lines the memcpy keeps in flight alone on an
    /// idle host (its rate x L(0) / 64 B): however steep the exponent, it keeps at least
    /// one, so its rate never falls below 64 B / L (Little's law with one line).
    pub fn cap(&self, slowdown: f64, beside: f64, idle_lines: f64) -> f64 {
        let streaming = match self.memcpy_pace {
            MemcpyPace::LatencyBound => {
                // (Exponent 1 is Little's law; its division is kept bit for bit.)
                let slowed = if self.latency_exponent == 1.0 {
                    slowdown
                } else {
                    slowdown.powf(self.latency_exponent)
                };
                let slowed = slowed.min(slowdown * idle_lines.max(1.0));
                (self.memcpy_headroom / slowed).min(1.0)
            }
            MemcpyPace::Posted => 1.0,
            MemcpyPace::BesideStreams => (self.memcpy_headroom * beside).min(1.0),
        };
        if streaming >= 1.0 {
            return 1.0;
        }
        1.0 / (self.setup_frac + (1.0 - self.setup_frac) / streaming)
    }

    /// The memcpy's rate over alone with `per_cpu` other threads streaming per CPU of
    /// its pool (1 unless its neighbours pace it).
    pub fn neighbour_ratio(&self, per_cpu: f64) -> f64 {
        match (self.memcpy_pace, &self.beside_streams) {
            (MemcpyPace::BesideStreams, Some(c)) => c.ratio_at(per_cpu),
            _ => 1.0,
        }
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

impl CopyDir {
    /// Both directions, host to device first.
    pub const BOTH: [CopyDir; 2] = [CopyDir::H2d, CopyDir::D2h];

    /// Its short name, as logs, probes and files spell it.
    pub fn name(self) -> &'static str {
        match self {
            CopyDir::H2d => "h2d",
            CopyDir::D2h => "d2h",
        }
    }
}

impl std::fmt::Display for CopyDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
                latency_exponent: st.latency_exponent,
                beside_streams: st.beside_streams,
            });
        }
        Some(StagedCopy {
            setup_frac: st.setup_s / secs,
            memcpy_headroom: (st.memcpy_gbps * streaming_s / gb).max(1.0),
            memcpy_pace: st.memcpy_pace,
            latency_exponent: st.latency_exponent,
            beside_streams: st.beside_streams,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
