//! The DRAM system: its bandwidth, how streams share it, and its loaded-latency curve.

use super::model_error::{CurveError, LoadAxis};

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
    /// Builds a curve from points sorted by utilisation. Returns an error when the
    /// points are empty, unsorted, outside [0, 1] or have non-positive latency.
    pub fn new(points: Vec<(f64, f64)>) -> Result<Self, CurveError> {
        let axis = LoadAxis::Utilisation;
        if points.is_empty() {
            return Err(CurveError::NoPoints { axis });
        }
        for (point, &(value, ns)) in points.iter().enumerate() {
            if !(0.0..=1.0).contains(&value) || !value.is_finite() {
                return Err(CurveError::UtilisationOutOfRange { point, value });
            }
            if !(ns > 0.0 && ns.is_finite()) {
                return Err(CurveError::LatencyNotPositive { point, ns });
            }
            if point > 0 && value <= points[point - 1].0 {
                return Err(CurveError::NotRising { point, axis, value });
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
    pub fn offered(points: Vec<(f64, f64)>) -> Result<Self, CurveError> {
        let axis = LoadAxis::OfferedLoad;
        if points.is_empty() {
            return Err(CurveError::NoPoints { axis });
        }
        for (point, &(value, ns)) in points.iter().enumerate() {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(CurveError::OfferedLoadOutOfRange { point, value });
            }
            if !(ns > 0.0 && ns.is_finite()) {
                return Err(CurveError::LatencyNotPositive { point, ns });
            }
            if point > 0 && value <= points[point - 1].0 {
                return Err(CurveError::NotRising { point, axis, value });
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
    ) -> Result<Self, CurveError> {
        let mut curves = vec![(base, self.points.clone())];
        for (write_frac, c) in others {
            if c.by_offered_load != self.by_offered_load {
                return Err(CurveError::MixOnAnotherAxis { write_frac });
            }
            curves.push((write_frac, c.points));
        }
        for &(wf, _) in &curves {
            if !(0.0..=1.0).contains(&wf) {
                return Err(CurveError::WriteFracOutOfRange(wf));
            }
        }
        curves.sort_by(|a, b| a.0.total_cmp(&b.0));
        if curves.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(CurveError::SameWriteFrac);
        }
        self.mixes = Some(Box::new(WriteMixes { base, curves }));
        Ok(self)
    }

    /// Multiplies latency by the 4 KiB-page factor: `idle` at load 0 rising linearly to
    /// `loaded` at load 1 (held beyond). Both must be >= 1.
    pub fn with_page_factor(mut self, idle: f64, loaded: f64) -> Result<Self, CurveError> {
        if !(idle >= 1.0 && loaded >= 1.0 && idle.is_finite() && loaded.is_finite()) {
            return Err(CurveError::PageFactor { idle, loaded });
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
    fn latency_curve_rejects_unsorted_points() {
        assert!(LatencyCurve::new(vec![(0.5, 100.0), (0.2, 150.0)]).is_err());
        assert!(LatencyCurve::new(vec![]).is_err());
        assert!(LatencyCurve::new(vec![(0.0, -1.0)]).is_err());
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
