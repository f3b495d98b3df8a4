//! Sizing a CPU stage by running it alone once at the start of a replay.
//!
//! [`KernelHost::work_for`] sizes work from rates measured as the best of a few probe
//! passes, so a stage run alone tends to take a little longer than its stated time (in
//! accuracy run 7, 1.03-1.09x for five stages of six). A trial runs the stage's work alone,
//! and [`StageSizing::from_trial`] turns the gap into a correction that keeps the stage's
//! stated time and, as far as the time allows, its stated DRAM bytes.

use super::{CpuStageShape, CpuWork, HostRates, KernelHost, ThreadWork};
use std::time::Instant;

/// A per-stage correction of [`KernelHost::work_for`], in shares of the stage's standalone
/// time so that it applies to every instance's sampled time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageSizing {
    /// Arithmetic added to each thread (negative: taken away), as a share of the
    /// standalone time.
    pub compute_shift_frac: f64,
    /// Factor on the memory parts (chase steps, stream and fill bytes); below 1 only when
    /// taking away all the arithmetic was not enough.
    pub memory_scale: f64,
}

impl StageSizing {
    /// No correction: [`KernelHost::work_for`] as it is.
    pub const IDENTITY: StageSizing = StageSizing {
        compute_shift_frac: 0.0,
        memory_scale: 1.0,
    };

    /// The correction for `work`, sized for `stated_s` alone, that took `measured_s` alone.
    /// The excess (measured - stated) comes out of the arithmetic (a shortfall is added to
    /// it); what the arithmetic cannot absorb comes out of the memory parts, scaled so
    /// that they take the whole stated time: the memory parts took `measured_s - compute`,
    /// so they are scaled by `stated_s / (measured_s - compute)`.
    pub fn from_trial(
        work: &CpuWork,
        stated_s: f64,
        measured_s: f64,
        rates: &HostRates,
    ) -> StageSizing {
        if !(stated_s > 0.0 && measured_s.is_finite() && measured_s > 0.0) {
            return StageSizing::IDENTITY;
        }
        let compute_s = work.per_thread.compute_iters as f64 / rates.compute_iters_per_s;
        let excess_s = measured_s - stated_s;
        if excess_s <= compute_s {
            return StageSizing {
                compute_shift_frac: -excess_s / stated_s,
                memory_scale: 1.0,
            };
        }
        // Here measured - compute > stated > 0.
        StageSizing {
            compute_shift_frac: -compute_s / stated_s,
            memory_scale: stated_s / (measured_s - compute_s),
        }
    }
}

/// What a stage's trial found, for the replay's report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizingTrial {
    /// The stage's stated standalone time, seconds.
    pub stated_s: f64,
    /// The time alone of the work sized from the probe rates (mean of two runs), seconds.
    pub as_sized_s: f64,
    /// The time alone of the corrected work (one run), seconds.
    pub after_s: f64,
    /// The correction.
    pub sizing: StageSizing,
}

/// Runs of the uncorrected work in a trial; their mean, not their best, since a stage
/// meets the host as it typically is.
const TRIAL_RUNS: u32 = 2;

impl KernelHost {
    /// [`KernelHost::work_for`] corrected by `sizing`; memory taken away by the correction
    /// is counted in [`CpuWork::dropped_dram_bytes`].
    pub fn work_for_sized(&self, shape: &CpuStageShape, sizing: &StageSizing) -> CpuWork {
        let work = self.work_for(shape);
        let w = work.per_thread;
        let scale = sizing.memory_scale.clamp(0.0, 1.0);
        let shift_iters = sizing.compute_shift_frac
            * shape.standalone_s.max(0.0)
            * self.rates.compute_iters_per_s;
        let scaled = |n: u64| (n as f64 * scale).round() as u64;
        let per_thread = ThreadWork {
            chase_steps: scaled(w.chase_steps),
            stream_bytes: scaled(w.stream_bytes),
            fill_bytes: scaled(w.fill_bytes),
            compute_iters: (w.compute_iters as f64 + shift_iters).max(0.0).round() as u64,
        };
        // A filled byte is two DRAM bytes (read for ownership, written).
        let dram_per_thread = |t: &ThreadWork| (t.stream_bytes + 2 * t.fill_bytes) as f64;
        let lost = (dram_per_thread(&w) - dram_per_thread(&per_thread)) * work.threads as f64;
        CpuWork {
            per_thread,
            dropped_dram_bytes: work.dropped_dram_bytes + lost.max(0.0),
            ..work
        }
    }

    /// Runs the stage's work alone: twice as sized from the probe rates, then once
    /// corrected. Takes about three times the stage's standalone time.
    pub fn size_stage(&self, shape: &CpuStageShape) -> SizingTrial {
        let work = self.work_for(shape);
        let as_sized_s =
            (0..TRIAL_RUNS).map(|_| self.timed_run(&work)).sum::<f64>() / TRIAL_RUNS as f64;
        let sizing = StageSizing::from_trial(&work, shape.standalone_s, as_sized_s, &self.rates);
        let after_s = self.timed_run(&self.work_for_sized(shape, &sizing));
        SizingTrial {
            stated_s: shape.standalone_s,
            as_sized_s,
            after_s,
            sizing,
        }
    }

    /// The correction for stage `name` (none when it had no trial).
    pub fn sizing_of(&self, name: &str) -> StageSizing {
        self.sizings
            .get(name)
            .copied()
            .unwrap_or(StageSizing::IDENTITY)
    }

    /// Keeps `sizing` for stage `name`: its instances' work is corrected by it.
    pub fn set_sizing(&mut self, name: &str, sizing: StageSizing) {
        self.sizings.insert(name.to_string(), sizing);
    }

    fn timed_run(&self, work: &CpuWork) -> f64 {
        let t0 = Instant::now();
        self.run(work);
        t0.elapsed().as_secs_f64()
    }
}
