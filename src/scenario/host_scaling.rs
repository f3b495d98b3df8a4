//! Stage times are stated for the host they were measured on (`[workload.measured_on]`);
//! this module carries them to the host the scenario runs on (`[hardware]`).
//!
//! A CPU stage's work rate on a host is `threads x per_thread(threads) x core_speed`:
//! the threads it gets, what each yields with that many busy (SMT siblings, all-core
//! frequency: [`CpuThroughput::per_thread`]) and the speed of one core alone. Its time
//! outside DRAM latency scales by the rate it was measured at over the rate it gets; its
//! latency-bound share by the threads it was measured with over the threads it gets
//! (fewer threads, fewer misses in flight; the engine stretches it further with the
//! running host's loaded latency). Its DRAM bytes stay, so its draw follows its new
//! time. A GPU kernel's
//! time scales by the measured GPU's kernel speed over the running GPU's. Transfers take
//! the running host's link; other stages keep their time.

use crate::model::{CpuThroughput, Duration};

use super::error::{ErrorKind, Locator, ScenarioError};
use super::schema::HardwareSpec;
use super::schema::MeasuredOnSpec;
use super::values::positive;

/// How fast a host's cores compute: its CPU curve (None: every thread as fast as one
/// alone) and one core's speed alone, in the scenario's own unit.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuSpeed {
    /// Threads per core, SMT yield and all-core curve.
    pub throughput: Option<CpuThroughput>,
    /// One core alone: clock x work per clock, in any unit both hosts share.
    pub core_speed: f64,
}

impl CpuSpeed {
    /// Work per second of `threads` busy threads, in `core_speed` units; threads beyond
    /// the hardware threads add nothing.
    fn rate(&self, threads: f64) -> f64 {
        let (running, per_thread) = match &self.throughput {
            Some(c) => (
                threads.min(f64::from(c.physical_cores * c.threads_per_core)),
                c.per_thread(threads),
            ),
            None => (threads, 1.0),
        };
        running * per_thread * self.core_speed
    }
}

/// The measured-on host and the running host.
#[derive(Debug, Clone, PartialEq)]
pub struct HostScaling {
    /// Where the stage times were measured.
    pub measured: CpuSpeed,
    /// Where the scenario runs.
    pub running: CpuSpeed,
    /// Kernel speed of the GPU the kernel times were measured on.
    pub measured_gpu: f64,
    /// Kernel speed of the running host's GPU.
    pub running_gpu: f64,
}

/// What a stage's standalone time is spent on, for scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StageWork {
    /// Threads on the CPU: measured with `asked`, running with `granted` (fewer where
    /// the running pool is smaller).
    Cpu { asked: f64, granted: f64 },
    /// A stage driven by one host thread for `frac` of its time (launches, setup).
    HostThread { frac: f64 },
    /// GPU kernels.
    GpuKernel,
    /// Transfers, waits, bookkeeping: the running host's rates already apply.
    Other,
}

/// A stage whose standalone time was carried to the running host.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledStage {
    /// The stage.
    pub stage: String,
    /// Mean standalone time where it was measured, s.
    pub measured_s: f64,
    /// Mean standalone time here, s.
    pub here_s: f64,
    /// What it is spent on.
    pub work: StageWork,
}

impl ScaledStage {
    /// here / measured.
    pub fn factor(&self) -> f64 {
        self.here_s / self.measured_s
    }
}

impl std::fmt::Display for ScaledStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.work {
            StageWork::Cpu { asked, granted } if asked != granted => {
                format!("{asked} threads measured, {granted} here")
            }
            StageWork::Cpu { .. } | StageWork::HostThread { .. } => "CPU speed".into(),
            StageWork::GpuKernel => "GPU kernel speed".into(),
            StageWork::Other => "unchanged".into(),
        };
        write!(
            f,
            "{}: {:.3} s as measured -> {:.3} s here (x{:.2}, {why})",
            self.stage,
            self.measured_s,
            self.here_s,
            self.factor()
        )
    }
}

/// A stage's standalone time and shares on the running host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageScale {
    /// Running standalone time / measured standalone time.
    pub time: f64,
    /// DRAM-latency-bound share of the new standalone time.
    pub latency_frac: f64,
    /// Compute-bound share of the new standalone time.
    pub compute_frac: f64,
    /// Host-thread share of the new standalone time.
    pub host_thread_frac: Option<f64>,
}

impl HostScaling {
    /// No scaling: both hosts the same.
    pub fn same(cpu: CpuSpeed, gpu: f64) -> Self {
        Self {
            measured: cpu.clone(),
            running: cpu,
            measured_gpu: gpu,
            running_gpu: gpu,
        }
    }

    /// How much slower (> 1) or faster a CPU stage's non-latency time runs here.
    pub fn cpu_factor(&self, asked: f64, granted: f64) -> f64 {
        self.measured.rate(asked) / self.running.rate(granted)
    }

    /// How much slower (> 1) or faster a kernel runs here.
    pub fn gpu_factor(&self) -> f64 {
        self.measured_gpu / self.running_gpu
    }

    /// Scales a stage whose latency-bound share is `latency_frac` and compute-bound
    /// share `compute_frac` (both of the measured standalone time).
    pub fn stage(&self, work: StageWork, latency_frac: f64, compute_frac: f64) -> StageScale {
        let unchanged = StageScale {
            time: 1.0,
            latency_frac,
            compute_frac,
            host_thread_frac: None,
        };
        match work {
            StageWork::Other => unchanged,
            StageWork::GpuKernel => StageScale {
                time: self.gpu_factor(),
                ..unchanged
            },
            StageWork::Cpu { asked, granted } => {
                let f = self.cpu_factor(asked, granted);
                // Fewer threads keep fewer misses in flight: the latency share stretches
                // by the thread ratio alone (the running host's loaded latency is the
                // engine's); the rest by the work rate.
                let misses = asked / granted;
                if f == 1.0 && misses == 1.0 {
                    return unchanged;
                }
                let time = (1.0 - latency_frac) * f + latency_frac * misses;
                StageScale {
                    time,
                    latency_frac: latency_frac * misses / time,
                    compute_frac: compute_frac * f / time,
                    host_thread_frac: None,
                }
            }
            StageWork::HostThread { frac } => {
                let f = self.cpu_factor(1.0, 1.0);
                if f == 1.0 {
                    return unchanged;
                }
                let time = (1.0 - frac) + frac * f;
                StageScale {
                    time,
                    host_thread_frac: Some(frac * f / time),
                    ..unchanged
                }
            }
        }
    }
}

/// The scaling from `[workload.measured_on]` to `[hardware]`; `running_cpu` is the
/// running host's CPU curve as built. A key `measured_on` leaves out is the running
/// host's.
pub fn from_spec(
    measured_on: Option<&MeasuredOnSpec>,
    hw: &HardwareSpec,
    running_cpu: Option<&CpuThroughput>,
    loc: &Locator,
) -> Result<HostScaling, ScenarioError> {
    let core_speed = match hw.cpu.as_ref().and_then(|c| c.core_speed) {
        Some(v) => positive(v, "hardware.cpu.core_speed", "one core's speed", loc)?,
        None => 1.0,
    };
    let gpu = match hw.gpu.as_ref().and_then(|g| g.kernel_speed) {
        Some(v) => positive(v, "hardware.gpu.kernel_speed", "a GPU's kernel speed", loc)?,
        None => 1.0,
    };
    let running = CpuSpeed {
        throughput: running_cpu.cloned(),
        core_speed,
    };
    let Some(m) = measured_on else {
        return Ok(HostScaling::same(running, gpu));
    };
    let key = |k: &str| format!("workload.measured_on.{k}");
    let measured_core = match m.core_speed {
        Some(v) => positive(v, &key("core_speed"), "one core's speed", loc)?,
        None => core_speed,
    };
    let measured_gpu = match m.gpu_kernel_speed {
        Some(v) => positive(v, &key("gpu_kernel_speed"), "a GPU's kernel speed", loc)?,
        None => gpu,
    };
    let states_cpu = m.physical_cores.is_some()
        || m.threads_per_core.is_some()
        || m.smt_yield.is_some()
        || m.per_core_throughput.is_some();
    let throughput = if !states_cpu {
        running_cpu.cloned()
    } else {
        let base = running_cpu.cloned();
        let per_core = match (&m.per_core_throughput, &base) {
            (Some(p), _) => p.clone(),
            (None, Some(b)) => b.per_core.clone(),
            (None, None) => {
                return Err(loc.error(
                    ErrorKind::MissingKey,
                    &key("per_core_throughput"),
                    "needs per_core_throughput = [[active cores, relative], ...] (the running host has no [hardware.cpu] curve to take it from)",
                ));
            }
        };
        let threads_per_core = m
            .threads_per_core
            .or(base.as_ref().map(|b| b.threads_per_core))
            .unwrap_or(1);
        let cpu = CpuThroughput {
            physical_cores: m
                .physical_cores
                .or(base.as_ref().map(|b| b.physical_cores))
                .unwrap_or(hw.cpu_cores / threads_per_core.max(1))
                .max(1),
            threads_per_core,
            smt_yield: m
                .smt_yield
                .or(base.as_ref().map(|b| b.smt_yield))
                .unwrap_or(1.0),
            per_core,
        };
        cpu.validate()
            .map_err(|msg| loc.error(ErrorKind::Value, "workload.measured_on", msg.to_string()))?;
        Some(cpu)
    };
    Ok(HostScaling {
        measured: CpuSpeed {
            throughput,
            core_speed: measured_core,
        },
        running,
        measured_gpu,
        running_gpu: gpu,
    })
}

/// `d` with every time parameter multiplied by `k` (shapes kept).
pub fn scaled(d: Duration, k: f64) -> Duration {
    if k == 1.0 {
        return d;
    }
    match d {
        Duration::Fixed(s) => Duration::Fixed(s * k),
        Duration::Exponential { mean_s } => Duration::Exponential { mean_s: mean_s * k },
        Duration::Normal { mean_s, std_s } => Duration::Normal {
            mean_s: mean_s * k,
            std_s: std_s * k,
        },
        Duration::LogNormal { mean_s, std_s } => Duration::LogNormal {
            mean_s: mean_s * k,
            std_s: std_s * k,
        },
        Duration::Uniform { min_s, max_s } => Duration::Uniform {
            min_s: min_s * k,
            max_s: max_s * k,
        },
        Duration::Gamma { shape, scale_s } => Duration::Gamma {
            shape,
            scale_s: scale_s * k,
        },
        Duration::Erlang { k: n, mean_s } => Duration::Erlang {
            k: n,
            mean_s: mean_s * k,
        },
        Duration::Weibull { scale_s, shape } => Duration::Weibull {
            scale_s: scale_s * k,
            shape,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zen(cores: u32, all_core: f64, speed: f64) -> CpuSpeed {
        CpuSpeed {
            throughput: Some(CpuThroughput {
                physical_cores: cores,
                threads_per_core: 2,
                smt_yield: 1.2,
                per_core: vec![(1.0, 1.0), (f64::from(cores), all_core)],
            }),
            core_speed: speed,
        }
    }

    #[test]
    fn the_same_host_scales_nothing() {
        let s = HostScaling::same(zen(96, 0.6, 5.0), 1.0);
        let scale = s.stage(
            StageWork::Cpu {
                asked: 192.0,
                granted: 192.0,
            },
            0.5,
            0.2,
        );
        assert_eq!(scale.time, 1.0);
        assert_eq!((scale.latency_frac, scale.compute_frac), (0.5, 0.2));
        assert_eq!(scaled(Duration::Fixed(3.5), 1.0), Duration::Fixed(3.5));
    }

    #[test]
    fn a_wide_stage_on_fewer_cores_stretches_by_the_work_rate() {
        // Measured: 96 cores x 2 threads at 0.6 of one core, yield 1.2, speed 5:
        // rate(192) = 96 x 0.6 x 1.2 x 5 = 345.6. Running: 32 cores x 2 at 0.8, speed 5:
        // rate(64) = 32 x 0.8 x 1.2 x 5 = 153.6. Factor 2.25.
        let s = HostScaling {
            measured: zen(96, 0.6, 5.0),
            running: zen(32, 0.8, 5.0),
            measured_gpu: 1.0,
            running_gpu: 1.0,
        };
        let f = s.cpu_factor(192.0, 64.0);
        assert!((f - 345.6 / 153.6).abs() < 1e-12, "{f}");
        // Half latency bound: that half stretches by the threads, 192 / 64 = 3, the other
        // half by 2.25: 0.5 x 3 + 0.5 x 2.25 = 2.625 in all.
        let scale = s.stage(
            StageWork::Cpu {
                asked: 192.0,
                granted: 64.0,
            },
            0.5,
            0.25,
        );
        assert!((scale.time - 2.625).abs() < 1e-12);
        assert!((scale.latency_frac - 1.5 / 2.625).abs() < 1e-12);
        assert!((scale.compute_frac - 0.25 * 2.25 / 2.625).abs() < 1e-12);
    }

    #[test]
    fn one_thread_follows_the_core_speed_and_kernels_the_gpu() {
        let s = HostScaling {
            measured: zen(96, 0.6, 5.1),
            running: zen(8, 0.9, 3.4),
            measured_gpu: 1.0,
            running_gpu: 2.0,
        };
        let one = s.stage(
            StageWork::Cpu {
                asked: 1.0,
                granted: 1.0,
            },
            0.0,
            0.0,
        );
        assert!((one.time - 1.5).abs() < 1e-12);
        assert_eq!(s.stage(StageWork::GpuKernel, 0.0, 0.0).time, 0.5);
        assert_eq!(s.stage(StageWork::Other, 0.3, 0.0).time, 1.0);
        let setup = s.stage(StageWork::HostThread { frac: 1.0 }, 0.0, 0.0);
        assert!((setup.time - 1.5).abs() < 1e-12);
        assert_eq!(setup.host_thread_frac, Some(1.0));
        let n = scaled(
            Duration::Normal {
                mean_s: 2.0,
                std_s: 0.5,
            },
            1.5,
        );
        assert_eq!(
            n,
            Duration::Normal {
                mean_s: 3.0,
                std_s: 0.75
            }
        );
    }
}
