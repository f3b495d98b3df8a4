//! Predictions of the validation experiments by the bwsim engine itself: each
//! experiment is a workload run on the host exactly as a scenario that includes the
//! calibration gets it ([`Calib::host`]), and is simulated with
//! [`crate::engine::simulate`].
//!
//! To read a steady rate off a run, the activity being measured is given a short
//! standalone duration (1 s) while the others run far longer; its elapsed time then
//! reflects the sharing it met. The pipeline is unrolled into a chain of iterations.
//! Copy streams are `n` threads each drawing the one-thread rate; they slow as latency
//! rises through the lines in flight each keeps (Little's law), as calibrate's
//! bandwidth-vs-threads curve does.

use super::calib::Calib;
use super::experiment::{Copy, Outcome, Setup};
use crate::calibrate::error::{ExperimentError, Result};
use crate::engine::{Observer, StageRecord, simulate};
use crate::model::{
    ArrivalKind, Arrivals, CACHE_LINE_BYTES, CopyDir, Demand, Duration, Gpu, Hold, HoldResource,
    Instrumentation, LinkCopy, Lock, Model, RateTarget, Stage, StageId, Workload,
};

const SHORT_S: f64 = 1.0;
const LONG_S: f64 = 1.0e5;
const PIPE_ITERS: usize = 8;
/// The per-GPU lock that puts one instance of a multi-GPU DMA on each GPU.
const DMA_SLOT: &str = "dma_slot";

/// Every finished instance's (start, end), per stage (a per-GPU DMA has one per GPU).
#[derive(Default)]
struct Records(Vec<Vec<(f64, f64)>>);

impl Observer for Records {
    fn stage_finished(&mut self, r: &StageRecord) {
        let i = r.stage_ref.stage;
        if self.0.len() <= i {
            self.0.resize(i + 1, Vec::new());
        }
        self.0[i].push((r.start.as_secs(), r.end.as_secs()));
    }
}

fn stage(name: &str, secs: f64, demands: Vec<Demand>, lat: f64, after: Vec<StageId>) -> Stage {
    Stage {
        name: name.into(),
        per_partition: false,
        after,
        duration: Duration::Fixed(secs),
        holds: vec![],
        demands,
        latency_bound_frac: lat,
        compute_bound_frac: 0.0,
        dram_write_frac: None,
        host_thread: None,
        cpu_load: None,
        gpu_kernel: false,
        staged_copy: None,
    }
}

/// Share of a stream kernel's DRAM bytes that are writes (write-allocate counted as a
/// read): read 0, copy 8 of 24 B, triad 8 of 32 B, write (a fill) 8 of 16 B.
fn write_fraction(k: crate::calibrate::probe::stream::Kernel) -> f64 {
    use crate::calibrate::probe::stream::Kernel;
    match k {
        Kernel::Read => 0.0,
        Kernel::Copy => 1.0 / 3.0,
        Kernel::Triad => 0.25,
        Kernel::Write => 0.5,
    }
}

impl Calib {
    /// The experiment's model on `gpus` GPUs (each with the calibrated link; a per-GPU
    /// `dma_slot` lock spreads a per-GPU DMA's instances one to a GPU): the calibrated
    /// host, with cores and memory enough that only the shared rates limit.
    fn model(&self, stages: Vec<Stage>, gpus: u32) -> Model {
        let mut hardware = self.host.clone();
        hardware.cpu_cores = 1024;
        hardware.host_ram_bytes = 1 << 40;
        hardware.pools = vec![];
        hardware.gpus = (self.link().iter())
            .flat_map(|l| {
                (0..gpus.max(1)).map(|g| Gpu {
                    name: format!("gpu{g}"),
                    vram_bytes: 1 << 40,
                    link: (*l).clone(),
                })
            })
            .collect();
        hardware.locks = vec![Lock {
            name: DMA_SLOT.into(),
            capacity: 1,
            per_gpu: true,
        }];
        Model {
            name: "validate".into(),
            seed: 1,
            hardware,
            workload: Workload {
                job_name: "job".into(),
                partitions: gpus.max(1),
                stages,
            },
            arrivals: Arrivals {
                kind: ArrivalKind::Closed { concurrency: 1 },
                jobs: 1,
                warmup_jobs: 0,
            },
            instrumentation: Instrumentation::default(),
        }
    }

    /// A copy stage as the scenario layer builds a `transfer` lasting `secs` standalone:
    /// a staged pageable copy is paced by its memcpy (its bytes drawn over setup +
    /// streaming); any other waits on DRAM latency by its kind's calibrated share.
    fn copy_stage(&self, name: &str, c: Copy, secs: f64, after: Vec<StageId>) -> Option<Stage> {
        let l = self.link()?;
        let copy = LinkCopy::from(c);
        let staging = l.staging(copy).copied();
        let rate = l.copy_gbps(copy);
        // A staged copy's standalone time holds its setup: its bytes are what streams.
        let (gb, d, lat) = match staging {
            Some(st) => {
                let gb = rate * (secs - st.setup_s).max(0.0);
                (gb, l.copy_demand(copy, gb / secs), 0.0)
            }
            None => (
                rate * secs,
                l.copy_demand(copy, rate),
                l.latency_frac.of(copy),
            ),
        };
        let mut s = stage(name, secs, d.demands(), lat, after);
        s.staged_copy = l.staged_copy(copy, gb, secs);
        Some(s)
    }

    fn copy_rate(&self, c: Copy) -> Option<f64> {
        Some(self.link()?.copy_gbps(c.into()))
    }

    /// Standalone seconds of one pipeline copy of `gb` GB (a staged copy's setup included).
    fn copy_secs(&self, c: Copy, gb: f64) -> Option<f64> {
        Some(self.link()?.copy_seconds(c.into(), gb))
    }

    /// Simulates the stages on `gpus` GPUs; per stage, every instance's (start, end).
    fn run(&self, stages: Vec<Stage>, gpus: u32) -> Result<Vec<Vec<(f64, f64)>>> {
        let n = stages.len();
        let model = self.model(stages, gpus);
        let mut rec = Records::default();
        let summary = simulate(&model, &mut rec)?;
        if let Some(why) = summary.stalled {
            return Err(ExperimentError::Stalled(why).into());
        }
        rec.0.resize(n, Vec::new());
        if rec.0.iter().any(Vec::is_empty) {
            return Err(ExperimentError::StageUnfinished.into());
        }
        Ok(rec.0)
    }

    /// Predicts an experiment with the engine.
    pub fn predict_engine(&self, s: &Setup) -> Result<Outcome> {
        let l0 = self.idle_latency_ns();
        // n threads, each at the one-thread rate alone.
        let (demand, threads) = match s.streams {
            Some((k, n)) => {
                let one = (self.meas.bw_at(k, 1)).ok_or(ExperimentError::NoBandwidth(k.name()))?;
                (one * n as f64, n as u64)
            }
            None => (0.0, 0),
        };
        let chase_gbps = CACHE_LINE_BYTES / l0;
        let pipe = match s.pipe {
            Some((lg, pinned)) => {
                let bytes = (lg as f64).exp2() * 32.0 / 1e9;
                let kern = |v: &str| {
                    self.ntt
                        .get(v)
                        .map(|f| f.seconds(lg))
                        .ok_or_else(|| ExperimentError::NoNttModel(v.to_string()))
                };
                let k_s = kern("inv_nr")? + kern("fwd_coset_rn")?;
                Some((bytes, pinned, k_s))
            }
            None => None,
        };
        // Builds the experiment with `short` naming the activity given SHORT_S and the
        // pipeline unrolled `iters` times; returns the stages and the pipe's indices.
        let build = |short: &str, iters: usize| -> Result<(Vec<Stage>, Vec<usize>)> {
            let dur = |who: &str| if who == short { SHORT_S } else { LONG_S };
            let mut st = Vec::new();
            if s.streams.is_some() {
                let mut streams = stage(
                    "streams",
                    dur("streams"),
                    vec![Demand {
                        target: RateTarget::Dram,
                        amount: demand,
                    }],
                    0.0,
                    vec![],
                );
                streams.dram_write_frac = s.streams.map(|(k, _)| write_fraction(k));
                if threads > 0 {
                    streams.holds.push(Hold {
                        resource: HoldResource::Cores,
                        amount: threads,
                        until: 0,
                    });
                }
                st.push(streams);
            }
            if s.chase {
                let mut chase = stage(
                    "chase",
                    dur("chase"),
                    vec![Demand {
                        target: RateTarget::Dram,
                        amount: chase_gbps,
                    }],
                    1.0,
                    vec![],
                );
                chase.dram_write_frac = Some(0.0);
                st.push(chase);
            }
            if let Some(c) = s.dma {
                let secs = if short == "dma" { SHORT_S } else { LONG_S };
                let mut dma = self
                    .copy_stage("dma", c, secs, vec![])
                    .ok_or(ExperimentError::NoPcieLink)?;
                if c.gpus > 1 {
                    // One loop per GPU: per partition, each partition bound to its own GPU
                    // by the per-GPU slot it holds.
                    dma.per_partition = true;
                    dma.holds.push(Hold {
                        resource: HoldResource::Lock(0),
                        amount: 1,
                        until: st.len(),
                    });
                }
                st.push(dma);
            }
            let mut pipe_idx = Vec::new();
            if let Some((bytes, pinned, k_s)) = pipe {
                let up = Copy::one(CopyDir::H2d, pinned);
                let down = Copy::one(CopyDir::D2h, pinned);
                let t_up = self.copy_secs(up, bytes).unwrap_or(bytes);
                let t_down = self.copy_secs(down, bytes).unwrap_or(bytes);
                let mut prev: Vec<StageId> = vec![];
                for i in 0..iters {
                    let a = st.len();
                    st.push(
                        self.copy_stage(&format!("up{i}"), up, t_up, prev.clone())
                            .ok_or(ExperimentError::NoPcieLink)?,
                    );
                    let mut k = stage(
                        &format!("ntt{i}"),
                        k_s,
                        vec![Demand {
                            target: RateTarget::GpuCompute,
                            amount: 1.0,
                        }],
                        0.0,
                        vec![a],
                    );
                    k.gpu_kernel = true;
                    st.push(k);
                    st.push(
                        self.copy_stage(&format!("down{i}"), down, t_down, vec![a + 1])
                            .ok_or(ExperimentError::NoPcieLink)?,
                    );
                    pipe_idx.extend([a, a + 1, a + 2]);
                    prev = vec![a + 2];
                }
            }
            Ok((st, pipe_idx))
        };
        let gpus = s.dma.map_or(1, |c| c.gpus.max(1));
        let elapsed = |r: &[Vec<(f64, f64)>], i: usize| r[i][0].1 - r[i][0].0;
        let mut out = Outcome::default();
        // With a pipeline, the other activities are measured over many iterations.
        let many = PIPE_ITERS * 10;
        if s.streams.is_some() {
            let (st, _) = build("streams", many)?;
            let r = self.run(st, gpus)?;
            out.stream_gbps = Some(demand * SHORT_S / elapsed(&r, 0));
        }
        if s.chase {
            let (st, _) = build("chase", many)?;
            let i = st.iter().position(|x| x.name == "chase").unwrap_or(0);
            let r = self.run(st, gpus)?;
            out.chase_ns = Some(l0 * elapsed(&r, i) / SHORT_S);
        }
        if let Some(c) = s.dma {
            let (st, _) = build("dma", 0)?;
            let i = st.iter().position(|x| x.name == "dma").unwrap_or(0);
            let r = self.run(st, gpus)?;
            let rate = self.copy_rate(c).unwrap_or(0.0);
            // Several GPUs: the mean of their loops' rates, as measured.
            let rates: Vec<f64> = r[i].iter().map(|(a, b)| rate * SHORT_S / (b - a)).collect();
            out.dma_gbps = Some(rates.iter().sum::<f64>() / rates.len() as f64);
        }
        if pipe.is_some() {
            let (st, idx) = build("pipe", PIPE_ITERS)?;
            let r = self.run(st, gpus)?;
            let first = r[idx[0]][0].0;
            let last = r[idx[idx.len() - 1]][0].1;
            out.pipe_iter_ms = Some((last - first) / PIPE_ITERS as f64 * 1e3);
            let ups: f64 = idx.iter().step_by(3).map(|&i| elapsed(&r, i)).sum();
            out.pipe_h2d_ms = Some(ups / PIPE_ITERS as f64 * 1e3);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::probe::stream::Kernel;
    use crate::calibrate::validate::steady_state_tests::fixtures::calib;
    use crate::model::LatencyCurve;

    #[test]
    fn engine_shares_dram_and_reports_rates() {
        let c = calib();
        let s = Setup {
            streams: Some((Kernel::Copy, 8)),
            chase: true,
            dma: Some(Copy::one(CopyDir::H2d, true)),
            pipe: None,
        };
        let e = c.predict_engine(&s).unwrap();
        // 120 GB/s of streams + 50 of DMA + the chase on 120: DRAM is full, the chase
        // sees the curve's top, and nothing runs faster than standalone.
        let total = e.stream_gbps.unwrap() + e.dma_gbps.unwrap() + 64.0 / 100.0;
        assert!((total - 120.0).abs() < 1.0, "{e:?}");
        assert!(e.stream_gbps.unwrap() <= 120.0 && e.dma_gbps.unwrap() <= 50.0);
        assert!((e.chase_ns.unwrap() - 300.0).abs() < 1.0, "{e:?}");
        // Idle host: the chase at idle latency.
        let idle = c
            .predict_engine(&Setup {
                streams: None,
                chase: true,
                dma: None,
                pipe: None,
            })
            .unwrap();
        assert!((idle.chase_ns.unwrap() - 100.0).abs() < 2.0, "{idle:?}");
    }

    #[test]
    fn streams_slow_through_the_lines_each_thread_keeps() {
        // Copy: 20 GB/s on 1 thread; capacity 120; offered-load curve L = 100 + 200u.
        // Eight threads want 160 GB/s. Keeping only what their one-thread rate implies at
        // idle latency (20 x 100 / 64 = 31.25 lines), each runs at 100 / L of its rate:
        // x (100 + 200 x 160 x / 120) = 100 gives x = 0.4530, 72.5 GB/s. With 70.3125
        // lines each (4,500 bytes, 45 GB/s at idle latency), a thread alone streams 20/45
        // of its time and that share waits on latency: x (5/9 + 4/9 (1 + 8x/3)) = 1, so
        // (32/27) x^2 + x - 1 = 0 and x = 0.58893, 94.2 GB/s.
        let mut c = calib();
        c.host.dram.latency = LatencyCurve::offered(vec![(0.0, 100.0), (1.0, 300.0)]).unwrap();
        let streams = |c: &Calib| {
            c.predict_engine(&Setup {
                streams: Some((Kernel::Copy, 8)),
                chase: false,
                dma: None,
                pipe: None,
            })
            .unwrap()
            .stream_gbps
            .unwrap()
        };
        c.host.dram.sharing.lines_in_flight_per_thread = Some(1.0);
        let idle_lines = streams(&c);
        let x = (-100.0 + (100.0f64 * 100.0 + 4.0 * (800.0 / 3.0) * 100.0).sqrt()) / (1600.0 / 3.0);
        assert!((idle_lines - 160.0 * x).abs() < 1e-3, "{idle_lines}");
        c.host.dram.sharing.lines_in_flight_per_thread = Some(70.3125);
        let a = 32.0 / 27.0;
        let x = (-1.0 + (1.0f64 + 4.0 * a).sqrt()) / (2.0 * a);
        assert!((streams(&c) - 160.0 * x).abs() < 1e-3, "{}", streams(&c));
    }

    #[test]
    fn dma_on_several_gpus_shares_dram_one_loop_per_gpu() {
        // Links of 50 GB/s, DRAM factor 1, DRAM 120 GB/s (v1 rules: equal speed fractions).
        let c = calib();
        let dma = |gpus: u32, streams: Option<(Kernel, usize)>| {
            c.predict_engine(&Setup {
                streams,
                chase: false,
                dma: Some(Copy {
                    dir: CopyDir::H2d,
                    pinned: true,
                    gpus,
                }),
                pipe: None,
            })
            .unwrap()
        };
        // Two loops ask 100 of 120: each keeps its link's 50.
        let two = dma(2, None);
        assert!((two.dma_gbps.unwrap() - 50.0).abs() < 0.01, "{two:?}");
        // Three ask 150 of 120: each gets 120 / 3 = 40.
        let three = dma(3, None);
        assert!((three.dma_gbps.unwrap() - 40.0).abs() < 0.01, "{three:?}");
        // Two loops next to 4 copy threads (80 GB/s as one activity): 180 asked of 120,
        // max-min water-filling gives each of the three activities 40 (all ask more).
        let mixed = dma(2, Some((Kernel::Copy, 4)));
        assert!((mixed.dma_gbps.unwrap() - 40.0).abs() < 0.05, "{mixed:?}");
        assert!(
            (mixed.stream_gbps.unwrap() - 40.0).abs() < 0.05,
            "{mixed:?}"
        );
        // One GPU's loop next to the same streams: 130 asked of 120; water-filling gives
        // the DMA its 50 (under the equal 60) and the streams the remaining 70.
        let one = dma(1, Some((Kernel::Copy, 4)));
        assert!((one.dma_gbps.unwrap() - 50.0).abs() < 0.05, "{one:?}");
        assert!((one.stream_gbps.unwrap() - 70.0).abs() < 0.05, "{one:?}");
    }
}
