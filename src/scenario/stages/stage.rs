//! Building one stage, step by step: its time carried to this host, a transfer's copy,
//! its holds, its rate demands (DRAM, a pool's threads, a GPU share), the shares of its
//! time bound by latency and compute, its write share and host thread, and the DRAM it
//! needs declared. Each step checks its own keys, in the order errors are reported.

use std::collections::BTreeMap;

use crate::model::{CpuLoad, Demand, Duration, Hold, HoldResource, HostThread, RateTarget, Stage};
use crate::scenario::error::{ErrorKind, ScenarioError};
use crate::scenario::host_scaling::{ScaledStage, StageScale, StageWork, scaled};
use crate::scenario::replay_info::KernelKind;
use crate::scenario::schema::{HostThreadSpec, StageSpec};
use crate::scenario::units::{Dim, GB};
use crate::scenario::values::{UNLIMITED_DRAM, number, one_of, positive, qty};

use super::StageCx;

/// A stage's standalone time as written, carried to this host.
struct StageTime {
    /// The duration (None when only a transfer gives it).
    duration: Option<Duration>,
    /// What the time is spent on, for scaling.
    work: StageWork,
    /// How this host scales the stage (None while its shares are out of range, which a
    /// later step reports).
    scale: Option<StageScale>,
    /// Running time / measured time (1: unchanged).
    time_scale: f64,
    /// Set when the time was scaled.
    note: Option<ScaledStage>,
}

/// What a `transfer` adds to a stage beyond its duration.
#[derive(Default)]
struct CopyShares {
    /// The copy's latency-bound share, the stage's unless it gives its own.
    latency_frac: f64,
    staged_copy: Option<crate::model::StagedCopy>,
}

impl StageCx<'_> {
    /// Builds one stage, with a note when its time was scaled to this host; `after` and
    /// `until` still hold file-order indices.
    pub(super) fn stage(
        &self,
        s: &StageSpec,
    ) -> Result<(Stage, Option<ScaledStage>), ScenarioError> {
        let name = &s.name;
        let mut holds: Vec<Hold> = Vec::new();
        let mut demands: BTreeMap<RateTarget, f64> = BTreeMap::new();
        let mut time = self.time(s)?;
        let copy = self.copy(s, &mut time, &mut holds, &mut demands)?;
        let Some(duration) = time.duration.take() else {
            return Err(self.err(
                ErrorKind::MissingKey,
                "duration_s",
                format!(
                    "stage {name:?} has no duration; give duration_s (seconds or \"300 ms\"), duration = {{ dist = ... }}, or transfer"
                ),
            ));
        };
        let mean_s = duration.mean_s();
        // A kernel that waits on its copy lasts the copy's time here.
        if let Some(note) = &mut time.note {
            note.here_s = mean_s;
        }
        self.holds(s, &mut holds)?;
        if let Some(gbps) = self.dram_gbps(s, time.time_scale, mean_s)? {
            *demands.entry(RateTarget::Dram).or_default() += gbps;
        }
        if let Some((pool, threads)) = self.pool_threads(s)? {
            *demands.entry(RateTarget::Pool(pool)).or_default() += threads;
        }
        let gpu_kernel = s.gpu_kernel.unwrap_or(false);
        if let Some(share) = self.gpu_share(s, gpu_kernel)? {
            *demands.entry(RateTarget::GpuCompute).or_default() += share;
        }
        let (latency_bound_frac, compute_bound_frac) =
            self.bound_fracs(s, copy.latency_frac, &time)?;
        let dram_write_frac = self.dram_write_frac(s)?;
        let host_thread = match &s.host_thread {
            None => None,
            Some(h) => Some(HostThread {
                pool: self.host_thread_pool(h)?,
                bound_frac: (time.scale)
                    .and_then(|sc| sc.host_thread_frac)
                    .unwrap_or(h.frac),
            }),
        };
        let cpu_load = self.cpu_load(s, gpu_kernel)?;
        self.check_dram_declared(s, &demands, latency_bound_frac)?;
        let stage = Stage {
            name: name.clone(),
            per_partition: self.per_partition[self.i],
            after: Vec::new(),
            duration,
            holds,
            demands: demands
                .into_iter()
                .filter(|(_, a)| *a > 0.0)
                .map(|(target, amount)| Demand { target, amount })
                .collect(),
            latency_bound_frac,
            compute_bound_frac,
            dram_write_frac,
            host_thread,
            cpu_load,
            gpu_kernel,
            staged_copy: copy.staged_copy,
        };
        Ok((stage, time.note))
    }

    /// The duration as written (`duration_s` or `duration`), scaled to this host when the
    /// scenario says where it was measured.
    fn time(&self, s: &StageSpec) -> Result<StageTime, ScenarioError> {
        if s.duration_s.is_some() && s.duration.is_some() {
            return Err(self.err(
                ErrorKind::Value,
                "duration",
                "both duration_s and duration are given; use one",
            ));
        }
        let mut duration = match (&s.duration_s, &s.duration) {
            (Some(q), _) => Some(Duration::Fixed(self.seconds(q, "duration_s")?)),
            (_, Some(d)) => Some(self.dist(d)?),
            _ => None,
        };
        let (spec_latency, spec_compute) = (
            s.latency_bound_frac.unwrap_or(0.0),
            s.compute_bound_frac.unwrap_or(0.0),
        );
        let fracs_valid = (0.0..=1.0).contains(&spec_latency)
            && (0.0..=1.0 - spec_latency).contains(&spec_compute);
        let work = self.work(s);
        let scale = fracs_valid.then(|| self.scaling.stage(work, spec_latency, spec_compute));
        let mut note = None;
        let mut time_scale = 1.0;
        if let (Some(d), Some(k)) = (duration.clone(), scale.map(|sc| sc.time))
            && k != 1.0
        {
            let measured_s = d.mean_s();
            let to = scaled(d, k);
            time_scale = k;
            note = Some(ScaledStage {
                stage: s.name.clone(),
                measured_s,
                here_s: to.mean_s(),
                work,
            });
            duration = Some(to);
        }
        Ok(StageTime {
            duration,
            work,
            scale,
            time_scale,
            note,
        })
    }

    /// A `transfer`: the copy's time becomes the stage's, its link and DRAM rates are
    /// drawn, and a pageable copy holds a core for the driver's memcpy into the bounce
    /// buffer. A stage that is a copy alone waits on DRAM latency as its kind of copy
    /// does (unless it says otherwise); a staged copy's memcpy is paced in the solver.
    fn copy(
        &self,
        s: &StageSpec,
        time: &mut StageTime,
        holds: &mut Vec<Hold>,
        demands: &mut BTreeMap<RateTarget, f64>,
    ) -> Result<CopyShares, ScenarioError> {
        let Some(t) = &s.transfer else {
            return Ok(CopyShares::default());
        };
        let copy = self.transfer(t, time.duration.take())?;
        time.duration = Some(copy.duration);
        *demands.entry(copy.link).or_default() += copy.link_gbps;
        *demands.entry(RateTarget::Dram).or_default() += copy.dram_gbps;
        if !copy.pinned {
            holds.push(Hold {
                resource: HoldResource::Cores,
                amount: 1,
                until: self.i,
            });
        }
        Ok(CopyShares {
            latency_frac: copy.latency_frac,
            staged_copy: copy.staged,
        })
    }

    /// The `cores` shorthand and the `holds` list, added to `holds`; the stage's own
    /// holds together must fit.
    fn holds(&self, s: &StageSpec, holds: &mut Vec<Hold>) -> Result<(), ScenarioError> {
        let name = &s.name;
        if let Some(c) = s.cores
            && c > 0
        {
            if c > self.hw.cpu_cores {
                return Err(self.err(
                    ErrorKind::Capacity,
                    "cores",
                    format!(
                        "stage {name:?} needs {c} cores, but the host has {} (hardware.cpu_cores)",
                        self.hw.cpu_cores
                    ),
                ));
            }
            holds.push(Hold {
                resource: HoldResource::Cores,
                amount: u64::from(c),
                until: self.i,
            });
        }
        for (j, h) in s.holds.iter().enumerate() {
            holds.push(self.hold(h, j, name)?);
        }
        self.check_own_holds(name, holds)
    }

    /// The DRAM rate of `dram_gbps` (as measured: the same bytes over the scaled time)
    /// or `dram_gb` (bytes over the standalone time); None when neither adds any.
    fn dram_gbps(
        &self,
        s: &StageSpec,
        time_scale: f64,
        mean_s: f64,
    ) -> Result<Option<f64>, ScenarioError> {
        let loc = self.loc;
        let (kr, kb) = (self.k("dram_gbps"), self.k("dram_gb"));
        Ok(match one_of((&s.dram_gbps, &kr), (&s.dram_gb, &kb), loc)? {
            Some((q, 0)) => Some(qty(q, Dim::Rate, 1.0, &kr, loc)? / time_scale),
            Some((q, _)) => {
                let gb = qty(q, Dim::Size, GB, &kb, loc)? / GB;
                if gb > 0.0 && mean_s <= 0.0 {
                    return Err(self.err(
                        ErrorKind::Value,
                        "dram_gb",
                        "the stage's standalone duration is 0, so bytes per second is undefined; use dram_gbps",
                    ));
                }
                (gb > 0.0).then(|| gb / mean_s)
            }
            None => None,
        })
    }

    /// The `pool` a stage draws threads of, and how many (at most the pool's size; more
    /// only when the stage was measured elsewhere).
    fn pool_threads(&self, s: &StageSpec) -> Result<Option<(usize, f64)>, ScenarioError> {
        let Some(pu) = &s.pool else {
            return Ok(None);
        };
        let Some(pid) = self.hw.pools.iter().position(|p| p.name == pu.name) else {
            let pools: Vec<&str> = self.hw.pools.iter().map(|p| p.name.as_str()).collect();
            return Err(self.err(
                ErrorKind::Reference,
                "pool.name",
                format!(
                    "no pool named {:?}; pools: {}",
                    pu.name,
                    if pools.is_empty() {
                        "(none; declare [hardware.pools])".into()
                    } else {
                        pools.join(", ")
                    }
                ),
            ));
        };
        let size = self.hw.pools[pid].threads;
        let t = positive(
            pu.threads,
            &self.k("pool.threads"),
            "the threads a stage uses",
            self.loc,
        )?;
        if t > size && !self.measured_elsewhere {
            return Err(self.err(
                ErrorKind::Capacity,
                "pool.threads",
                format!(
                    "stage {:?} uses {t} threads of pool {:?}, which has {size}; to run it on fewer threads with its time stretched, say where it was measured in [workload.measured_on]",
                    s.name, pu.name
                ),
            ));
        }
        Ok(Some((pid, t.min(size))))
    }

    /// A GPU kernel's share of the GPU (`gpu_share`, default all of it); None for a
    /// stage that is no kernel, which may not give a share.
    fn gpu_share(&self, s: &StageSpec, gpu_kernel: bool) -> Result<Option<f64>, ScenarioError> {
        if !gpu_kernel {
            if s.gpu_share.is_some() {
                return Err(self.err(
                    ErrorKind::Value,
                    "gpu_share",
                    "only GPU kernels use a GPU share; set gpu_kernel = true or remove gpu_share",
                ));
            }
            return Ok(None);
        }
        self.need_gpu("gpu_kernel", "a GPU kernel")?;
        let share = s.gpu_share.unwrap_or(1.0);
        if !(share > 0.0 && share <= 1.0) {
            return Err(self.err(
                ErrorKind::Value,
                "gpu_share",
                format!("{share} is out of range; a kernel uses a fraction of the GPU in (0, 1]"),
            ));
        }
        Ok(Some(share))
    }

    /// The latency- and compute-bound shares of the standalone time: validated as
    /// written (a copy's latency share when the stage gives none), then those of the time
    /// on this host for a scaled CPU stage.
    fn bound_fracs(
        &self,
        s: &StageSpec,
        copy_latency_frac: f64,
        time: &StageTime,
    ) -> Result<(f64, f64), ScenarioError> {
        let latency_bound_frac = number(
            s.latency_bound_frac.unwrap_or(copy_latency_frac),
            0.0,
            1.0,
            &self.k("latency_bound_frac"),
            "the latency-bound fraction of the standalone time is in 0..=1",
            self.loc,
        )?;
        let compute_bound_frac = number(
            s.compute_bound_frac.unwrap_or(0.0),
            0.0,
            1.0 - latency_bound_frac,
            &self.k("compute_bound_frac"),
            "the compute-bound fraction is in 0..=1 and, with latency_bound_frac, sums to at most 1",
            self.loc,
        )?;
        Ok(match time.scale {
            Some(sc) if matches!(time.work, StageWork::Cpu { .. }) && sc.time != 1.0 => {
                (sc.latency_frac, sc.compute_frac)
            }
            _ => (latency_bound_frac, compute_bound_frac),
        })
    }

    /// `dram_write_frac`, checked.
    fn dram_write_frac(&self, s: &StageSpec) -> Result<Option<f64>, ScenarioError> {
        s.dram_write_frac
            .map(|w| {
                number(
                    w,
                    0.0,
                    1.0,
                    &self.k("dram_write_frac"),
                    "the write share of a stage's DRAM bytes is in 0..=1",
                    self.loc,
                )
            })
            .transpose()
    }

    /// A stage that uses DRAM (bytes, or time waiting on its latency) needs the host's
    /// DRAM declared.
    fn check_dram_declared(
        &self,
        s: &StageSpec,
        demands: &BTreeMap<RateTarget, f64>,
        latency_bound_frac: f64,
    ) -> Result<(), ScenarioError> {
        if self.hw.dram.capacity_gbps != UNLIMITED_DRAM {
            return Ok(());
        }
        let field = if demands.get(&RateTarget::Dram).is_some_and(|a| *a > 0.0) {
            Some(if s.transfer.is_some() {
                "transfer"
            } else if s.dram_gb.is_some() {
                "dram_gb"
            } else {
                "dram_gbps"
            })
        } else if latency_bound_frac > 0.0 {
            Some("latency_bound_frac")
        } else {
            None
        };
        match field {
            Some(field) => Err(self.err(
                ErrorKind::MissingKey,
                field,
                format!("stage {:?} uses DRAM, but the host's DRAM is not declared: add [hardware.dram] with capacity_gbps (or channels and mts)", s.name),
            )),
            None => Ok(()),
        }
    }

    /// What the stage's standalone time is spent on, as far as scaling goes; odd values
    /// that later checks refuse scale nothing.
    fn work(&self, s: &StageSpec) -> StageWork {
        if s.gpu_kernel == Some(true) {
            return StageWork::GpuKernel;
        }
        if s.transfer.is_some() {
            return StageWork::Other;
        }
        if let Some(pu) = &s.pool {
            return match self.hw.pools.iter().find(|p| p.name == pu.name) {
                Some(p) if pu.threads > 0.0 && pu.threads.is_finite() => StageWork::Cpu {
                    asked: pu.threads,
                    granted: pu.threads.min(p.threads),
                },
                _ => StageWork::Other,
            };
        }
        if let Some(c) = s.cores.filter(|&c| c > 0) {
            return StageWork::Cpu {
                asked: f64::from(c),
                granted: f64::from(c),
            };
        }
        match &s.host_thread {
            Some(h) if h.frac > 0.0 && h.frac <= 1.0 => StageWork::HostThread { frac: h.frac },
            _ => StageWork::Other,
        }
    }

    /// A GPU kernel's stretch next to busy CPU threads: the calibration's curve for its
    /// `gpu_kernel_kind`, loaded by every pool's threads (the kernel's host threads are
    /// not pinned). None for other stages, a spin kernel or a kind not measured.
    fn cpu_load(&self, s: &StageSpec, gpu_kernel: bool) -> Result<Option<CpuLoad>, ScenarioError> {
        let (true, Some(text)) = (gpu_kernel, &s.gpu_kernel_kind) else {
            return Ok(None);
        };
        let kind = KernelKind::parse(text)
            .map_err(|m| self.err(ErrorKind::Value, "gpu_kernel_kind", m.to_string()))?;
        Ok(self.kernel_load.load(kind).map(|l| CpuLoad {
            pools: (0..self.hw.pools.len()).collect(),
            stretch: l.stretch,
            threads: l.threads,
            by_neighbour: l.by_neighbour,
        }))
    }

    /// The pool a `host_thread` runs on, its share checked.
    fn host_thread_pool(&self, h: &HostThreadSpec) -> Result<usize, ScenarioError> {
        let Some(pool) = self.hw.pools.iter().position(|p| p.name == h.pool) else {
            let pools: Vec<&str> = self.hw.pools.iter().map(|p| p.name.as_str()).collect();
            return Err(self.err(
                ErrorKind::Reference,
                "host_thread.pool",
                format!(
                    "no pool named {:?}; pools: {}",
                    h.pool,
                    if pools.is_empty() {
                        "(none; declare [hardware.pools])".into()
                    } else {
                        pools.join(", ")
                    }
                ),
            ));
        };
        if !(h.frac > 0.0 && h.frac <= 1.0) {
            return Err(self.err(
                ErrorKind::Value,
                "host_thread.frac",
                format!(
                    "{} is out of range; the share of the stage's time its host thread needs a CPU is in (0, 1]",
                    h.frac
                ),
            ));
        }
        Ok(pool)
    }
}
