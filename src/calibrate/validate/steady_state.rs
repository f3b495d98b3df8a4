//! Predictions of the validation experiments from a calibration alone, with the model's
//! sharing rules: every activity runs at a fraction x in [0, 1] of its standalone speed;
//! the x are max-min fair over the rate constraints (DRAM, each PCIe direction), as in
//! the engine; latency-bound work sees L(u) at DRAM utilisation u.
//!
//! The experiments are steady (constant sets of activities, or a repeating sequence of
//! phases), so one max-min solve per phase gives the fluid engine's answer directly.

use super::calib::Calib;
use super::experiment::{Copy, Outcome, Setup};

/// One rate constraint: capacity and the draw of each activity at standalone speed.
#[derive(Debug, Clone)]
pub struct Constraint {
    /// Capacity (GB/s).
    pub cap: f64,
    /// Per activity, what it draws at x = 1.
    pub w: Vec<f64>,
}

/// Max-min fair speeds x_i in [0, 1] by progressive filling.
pub fn max_min(n: usize, cons: &[Constraint]) -> Vec<f64> {
    let mut x = vec![0.0; n];
    let mut frozen = vec![false; n];
    loop {
        let active: Vec<usize> = (0..n).filter(|&i| !frozen[i]).collect();
        if active.is_empty() {
            return x;
        }
        let mut level = 1.0f64;
        let mut tight: Option<usize> = None;
        for (ci, c) in cons.iter().enumerate() {
            let used: f64 = (0..n).filter(|&i| frozen[i]).map(|i| c.w[i] * x[i]).sum();
            let act: f64 = active.iter().map(|&i| c.w[i]).sum();
            if act <= 0.0 {
                continue;
            }
            let l = ((c.cap - used) / act).max(0.0);
            if l < level {
                level = l;
                tight = Some(ci);
            }
        }
        for &i in &active {
            x[i] = level;
        }
        match tight {
            None => return x,
            Some(ci) => {
                let mut any = false;
                for &i in &active {
                    if cons[ci].w[i] > 0.0 {
                        frozen[i] = true;
                        any = true;
                    }
                }
                if !any {
                    return x;
                }
            }
        }
    }
}

struct Phase {
    secs_alone: f64,
    copy: Option<Copy>,
}

impl Calib {
    fn copy_rates(&self, c: Copy) -> Option<(f64, f64)> {
        let l = self.link.as_ref()?;
        let (rate, f) = match (c.h2d, c.pinned) {
            (true, true) => (l.h2d_gbps, l.h2d_dram_factor),
            (false, true) => (l.d2h_gbps, l.d2h_dram_factor),
            (true, false) => (
                l.pageable_h2d_gbps,
                l.h2d_dram_factor + l.pageable_copy_dram_factor,
            ),
            (false, false) => (
                l.pageable_d2h_gbps,
                l.d2h_dram_factor + l.pageable_copy_dram_factor,
            ),
        };
        Some((rate, rate * f))
    }

    /// Latency at utilisation `u` of traffic whose write fraction is `w`. Single-curve
    /// model: the calibration's `latency_curve`. Mix-aware: interpolates between the
    /// read-only (w = 0) and the copy (w = 1/3) curves, clamped.
    fn lat(&self, u: f64, w: f64, mix_aware: bool) -> f64 {
        match (&self.mix_curves, mix_aware) {
            (Some((r, c)), true) => {
                let t = (w * 3.0).clamp(0.0, 1.0);
                let lr = r.latency_ns(u);
                lr + t * (c.latency_ns(u) - lr)
            }
            _ => self.curve.latency_ns(u),
        }
    }

    /// Solves one steady phase: streams (DRAM demand `s`, write fraction `ws`) plus an
    /// optional copy. A pageable copy's CPU memcpy is partly latency bound: its speed is
    /// also capped by 1 / ((1 - phi) + phi * L(u) / L(u_alone)), u_alone being its own
    /// utilisation when it ran alone (already in its standalone rate); solved as a fixed
    /// point with u. Returns (stream GB/s, copy GB/s, DRAM utilisation, write fraction).
    fn solve(&self, s: f64, ws: f64, copy: Option<Copy>, mix: bool) -> (f64, f64, f64, f64) {
        let (rate, dram) = copy.and_then(|c| self.copy_rates(c)).unwrap_or((0.0, 0.0));
        let (phi, wc) = match copy {
            Some(c) if !c.pinned => {
                if c.h2d {
                    (self.pageable_latency_frac.0, 1.0 / 3.0)
                } else {
                    (self.pageable_latency_frac.1, 2.0 / 3.0)
                }
            }
            Some(c) => (0.0, if c.h2d { 0.0 } else { 1.0 }),
            None => (0.0, 0.0),
        };
        let cap = self.capacity_gbps;
        let cons = vec![Constraint {
            cap,
            w: vec![s, dram],
        }];
        // The copy's own link limit is its standalone rate (x <= 1 covers it).
        let x = max_min(2, &cons);
        let (mut xs, mut xc) = (x[0], x[1]);
        let wfrac = |xs: f64, xc: f64| {
            let tot = s * xs + dram * xc;
            if tot > 0.0 {
                (ws * s * xs + wc * dram * xc) / tot
            } else {
                0.0
            }
        };
        let mut u = ((s * xs + dram * xc) / cap).clamp(0.0, 1.0);
        if phi > 0.0 {
            let l_alone = self.lat((dram / cap).clamp(0.0, 1.0), wc, mix);
            for _ in 0..30 {
                let ratio = (self.lat(u, wfrac(xs, xc), mix) / l_alone).max(1.0);
                let cap_lat = 1.0 / ((1.0 - phi) + phi * ratio);
                xc = x[1].min(cap_lat);
                // Whatever the copy leaves, the streams may take (up to standalone).
                xs = ((cap - dram * xc) / s.max(1e-12)).clamp(0.0, 1.0);
                u = ((s * xs + dram * xc) / cap).clamp(0.0, 1.0);
            }
        }
        (s * xs, rate * xc, u, wfrac(xs, xc))
    }

    /// Chase latency at utilisation u, including the chase's own traffic (a fixed point).
    fn chase_ns(&self, u_other: f64, w: f64, mix: bool) -> f64 {
        let mut ns = self.lat(u_other, w, mix);
        for _ in 0..20 {
            let u = (u_other + 64.0 / ns / self.capacity_gbps).min(1.0);
            ns = self.lat(u, w, mix);
        }
        ns
    }

    /// Predicts an experiment with the model as it is (one latency curve).
    pub fn predict(&self, s: &Setup) -> anyhow::Result<Outcome> {
        self.predict_with(s, false)
    }

    /// Predicts an experiment; `mix_aware` picks the latency by the traffic's write
    /// fraction from the per-mix curves (when the calibration has them).
    pub fn predict_with(&self, s: &Setup, mix_aware: bool) -> anyhow::Result<Outcome> {
        let mix = mix_aware;
        let ws = match s.streams {
            Some((k, _)) => k.write_fraction(),
            None => 0.0,
        };
        let demand = match s.streams {
            Some((k, n)) => self
                .meas
                .bw_at(k, n)
                .ok_or_else(|| anyhow::anyhow!("calibration has no {} bandwidth", k.name()))?,
            None => 0.0,
        };
        let mut out = Outcome::default();
        if let Some((lg, pinned)) = s.pipe {
            let bytes = (lg as f64).exp2() * 32.0 / 1e9;
            let up = Copy::one(true, pinned);
            let down = Copy::one(false, pinned);
            let (r_up, _) = self
                .copy_rates(up)
                .ok_or_else(|| anyhow::anyhow!("calibration has no PCIe link"))?;
            let (r_down, _) = self
                .copy_rates(down)
                .ok_or_else(|| anyhow::anyhow!("calibration has no PCIe link"))?;
            let kern = |v: &str| {
                self.ntt
                    .get(v)
                    .map(|f| f.seconds(lg))
                    .ok_or_else(|| anyhow::anyhow!("calibration has no {v} NTT model"))
            };
            let phases = [
                Phase {
                    secs_alone: bytes / r_up,
                    copy: Some(up),
                },
                Phase {
                    secs_alone: kern("inv_nr")? + kern("fwd_coset_rn")?,
                    copy: None,
                },
                Phase {
                    secs_alone: bytes / r_down,
                    copy: Some(down),
                },
            ];
            let (mut t, mut sb, mut lat) = (0.0, 0.0, 0.0);
            for (i, p) in phases.iter().enumerate() {
                let (stream, copy_rate, u, w) = self.solve(demand, ws, p.copy, mix);
                let secs = match p.copy {
                    Some(c) => {
                        let (r, _) = self.copy_rates(c).unwrap_or((1.0, 0.0));
                        p.secs_alone * r / copy_rate.max(1e-12)
                    }
                    None => p.secs_alone,
                };
                if i == 0 {
                    out.pipe_h2d_ms = Some(secs * 1e3);
                }
                t += secs;
                sb += stream * secs;
                lat += self.chase_ns(u, w, mix) * secs;
            }
            out.pipe_iter_ms = Some(t * 1e3);
            if s.streams.is_some() {
                out.stream_gbps = Some(sb / t);
            }
            if s.chase {
                out.chase_ns = Some(lat / t);
            }
            return Ok(out);
        }
        let (stream, copy_rate, u, w) = self.solve(demand, ws, s.dma, mix);
        if s.streams.is_some() {
            out.stream_gbps = Some(stream);
        }
        if s.dma.is_some() {
            out.dma_gbps = Some(copy_rate);
        }
        if s.chase {
            out.chase_ns = Some(self.chase_ns(u, w, mix));
        }
        Ok(out)
    }
}

/// Test fixtures shared by this module's and `engine_predict`'s tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::calibrate::measurements::{BwPoint, Measurements};
    use crate::calibrate::probe::stream::Kernel;
    use crate::model::{LatencyCurve, PcieLink};
    use std::collections::BTreeMap;

    /// A small calibration shared by the prediction tests (engine and steady state).
    pub(crate) fn calib() -> Calib {
        let mut meas = Measurements::default();
        for (t, b) in [(1, 20.0), (4, 80.0), (8, 120.0)] {
            meas.bandwidth.push(BwPoint {
                kernel: Kernel::Copy,
                threads: t,
                dram_gbps: b,
                stream_gbps: b,
            });
        }
        Calib {
            capacity_gbps: 120.0,
            curve: LatencyCurve::new(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap(),
            link: Some(PcieLink {
                h2d_gbps: 50.0,
                d2h_gbps: 50.0,
                duplex_gbps: None,
                pageable_h2d_gbps: 10.0,
                pageable_d2h_gbps: 10.0,
                h2d_dram_factor: 1.0,
                d2h_dram_factor: 1.0,
                pageable_copy_dram_factor: 2.0,
            }),
            meas,
            ntt: BTreeMap::new(),
            pageable_latency_frac: (0.0, 0.0),
            mix_curves: None,
            v2: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::calib;
    use super::*;
    use crate::calibrate::probe::stream::Kernel;

    #[test]
    fn max_min_equal_shares_and_bounds() {
        // Two flows of 60 on a capacity of 100: each runs at 100/120.
        let x = max_min(
            2,
            &[Constraint {
                cap: 100.0,
                w: vec![60.0, 60.0],
            }],
        );
        assert!((x[0] - 100.0 / 120.0).abs() < 1e-12 && (x[1] - x[0]).abs() < 1e-12);
        // Plenty of capacity: both at standalone speed.
        let x = max_min(
            2,
            &[Constraint {
                cap: 1000.0,
                w: vec![60.0, 60.0],
            }],
        );
        assert_eq!(x, vec![1.0, 1.0]);
        // A flow crossing a tighter second constraint is limited by it; the other
        // takes what is left.
        let x = max_min(
            2,
            &[
                Constraint {
                    cap: 100.0,
                    w: vec![80.0, 80.0],
                },
                Constraint {
                    cap: 20.0,
                    w: vec![0.0, 80.0],
                },
            ],
        );
        assert!((x[1] - 0.25).abs() < 1e-12);
        assert!((x[0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn dma_and_streams_share_dram() {
        let c = calib();
        let o = c
            .predict(&Setup {
                streams: Some((Kernel::Copy, 8)),
                chase: true,
                dma: Some(Copy::one(true, true)),
                pipe: None,
            })
            .unwrap();
        // 120 + 50 demanded on 120: x = 120/170 for both.
        let x = 120.0 / 170.0;
        assert!((o.stream_gbps.unwrap() - 120.0 * x).abs() < 1e-9);
        assert!((o.dma_gbps.unwrap() - 50.0 * x).abs() < 1e-9);
        assert!((o.chase_ns.unwrap() - 300.0).abs() < 1e-9);
        // Idle host: chase at idle latency plus its own small traffic.
        let o = c
            .predict(&Setup {
                streams: None,
                chase: true,
                dma: None,
                pipe: None,
            })
            .unwrap();
        assert!(o.chase_ns.unwrap() < 102.0);
    }
}
