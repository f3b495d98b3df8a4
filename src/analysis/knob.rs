//! The bottleneck as a knob: what one step more of each candidate resource buys, and
//! which buys most. The what-if runs themselves are [`crate::run::what_if`]'s; this module
//! only compares their results.

/// A resource a buyer or an operator can add a step of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// CPU hardware threads: every thread pool, the cores stages hold, the physical cores.
    Threads,
    /// Host RAM that stages hold.
    HostRam,
    /// DRAM bandwidth (more or faster channels).
    Dram,
    /// Every GPU's PCIe link, both directions, pinned and pageable.
    Pcie,
    /// One more GPU like the others.
    Gpus,
}

/// How much bigger a stepped continuous resource is: 25% (2 more of 8 channels, 48 more
/// of 192 threads).
pub const STEP_FACTOR: f64 = 1.25;

/// A what-if must be at least this much faster to name a knob (below it: noise of one
/// seed, or nothing to gain).
pub const MIN_GAIN: f64 = 0.005;

impl Resource {
    /// Every candidate, in report order.
    pub const ALL: [Resource; 5] = [
        Resource::Threads,
        Resource::HostRam,
        Resource::Dram,
        Resource::Pcie,
        Resource::Gpus,
    ];

    /// Its key in JSON reports.
    pub fn key(self) -> &'static str {
        match self {
            Resource::Threads => "threads",
            Resource::HostRam => "host_ram",
            Resource::Dram => "dram",
            Resource::Pcie => "pcie",
            Resource::Gpus => "gpus",
        }
    }

    /// Its name in text reports.
    pub fn label(self) -> &'static str {
        match self {
            Resource::Threads => "CPU threads",
            Resource::HostRam => "host RAM",
            Resource::Dram => "DRAM bandwidth",
            Resource::Pcie => "PCIe",
            Resource::Gpus => "GPUs",
        }
    }

    /// The step, as the report prints it.
    pub fn step(self) -> &'static str {
        match self {
            Resource::Gpus => "+1",
            _ => "+25%",
        }
    }

    /// The resource with its step: "DRAM bandwidth +25%", "GPUs +1".
    pub fn with_step(self) -> String {
        format!("{} {}", self.label(), self.step())
    }
}

/// One what-if's result.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    /// What was stepped.
    pub resource: Resource,
    /// Seconds per job with the step (NaN when no job finished).
    pub seconds_per_job: f64,
    /// 1 - seconds_per_job / base: the share of time per job the step saves (negative:
    /// slower).
    pub gain: f64,
}

/// Every candidate's what-if against the run it steps from.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    /// Seconds per job of the run as it is.
    pub base_seconds_per_job: f64,
    /// One per candidate, in [`Resource::ALL`] order (a candidate the model lacks, e.g.
    /// GPUs on a CPU-only model, is left out, and so is one whose run failed).
    pub what_ifs: Vec<WhatIf>,
    /// The candidates whose stepped run failed, with the engine's reason: each is that
    /// step's failure, never the run's.
    pub failed: Vec<FailedStep>,
}

/// A what-if step whose run failed.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedStep {
    /// What was stepped.
    pub resource: Resource,
    /// Why its run failed, as the engine said it.
    pub reason: String,
}

impl Knobs {
    /// Compares each (resource, seconds per job with its step) with the base.
    pub fn new(base_seconds_per_job: f64, results: Vec<(Resource, f64)>) -> Self {
        let what_ifs = (results.into_iter())
            .map(|(resource, s)| {
                let gain = 1.0 - s / base_seconds_per_job;
                WhatIf {
                    resource,
                    seconds_per_job: s,
                    gain: if gain.is_finite() { gain } else { 0.0 },
                }
            })
            .collect();
        Self {
            base_seconds_per_job,
            what_ifs,
            failed: Vec::new(),
        }
    }

    /// This what-if's share of all the gains (only gains count; they add up to 1 when
    /// any step gains).
    pub fn share(&self, w: &WhatIf) -> f64 {
        let total: f64 = self.what_ifs.iter().map(|w| w.gain.max(0.0)).sum();
        if total > 0.0 {
            w.gain.max(0.0) / total
        } else {
            0.0
        }
    }

    /// The what-if of one resource, if it ran.
    pub fn of(&self, resource: Resource) -> Option<&WhatIf> {
        self.what_ifs.iter().find(|w| w.resource == resource)
    }

    /// The knob: the what-if that saves most, if any saves at least [`MIN_GAIN`]. Ties go
    /// to the first in [`Resource::ALL`] order.
    pub fn knob(&self) -> Option<&WhatIf> {
        let mut best: Option<&WhatIf> = None;
        for w in &self.what_ifs {
            if best.is_none_or(|b| w.gain > b.gain) {
                best = Some(w);
            }
        }
        best.filter(|w| w.gain >= MIN_GAIN)
    }

    /// The knob in a table cell: "GPUs +1 saves 6.1%", or that no step saves enough.
    pub fn short_verdict(&self) -> String {
        match self.knob() {
            Some(w) => format!("{} saves {:.1}%", w.resource.with_step(), w.gain * 100.0),
            None => format!("no one step saves {:.1}%", MIN_GAIN * 100.0),
        }
    }

    /// One line naming the knob, or saying that no step buys anything; `job` is the
    /// scenario's word for a job.
    pub fn verdict(&self, job: &str) -> String {
        match self.knob() {
            Some(w) => format!(
                "{}: {:.1}% less time per {job}, the most of any one step ({:.0}% of what the steps buy together)",
                w.resource.with_step(),
                w.gain * 100.0,
                self.share(w) * 100.0
            ),
            None => format!(
                "no step of one resource saves {:.1}% or more: the pipeline's own structure (locks, dependencies, concurrency settings) limits it",
                MIN_GAIN * 100.0
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knob_is_the_step_that_saves_most_and_shares_add_to_one() {
        let k = Knobs::new(
            10.0,
            vec![
                (Resource::Threads, 9.0),
                (Resource::HostRam, 7.0),
                (Resource::Dram, 10.5),
                (Resource::Pcie, 10.0),
            ],
        );
        let knob = k.knob().expect("RAM saves 30%");
        assert_eq!(knob.resource, Resource::HostRam);
        assert!((knob.gain - 0.3).abs() < 1e-12);
        let shares: Vec<f64> = k.what_ifs.iter().map(|w| k.share(w)).collect();
        assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((shares[1] - 0.75).abs() < 1e-12, "{shares:?}");
        assert_eq!(shares[2], 0.0, "a slower step has no share");
        assert!(
            k.verdict("job")
                .starts_with("host RAM +25%: 30.0% less time per job"),
            "{}",
            k.verdict("job")
        );
    }

    #[test]
    fn no_knob_when_no_step_saves_enough() {
        let k = Knobs::new(
            10.0,
            vec![(Resource::Threads, 9.99), (Resource::Gpus, 11.0)],
        );
        assert_eq!(k.knob(), None);
        assert!(
            k.verdict("job").starts_with("no step"),
            "{}",
            k.verdict("job")
        );
        // The one step that gains at all holds every share of the gains, knob or not.
        let shares: Vec<f64> = k.what_ifs.iter().map(|w| k.share(w)).collect();
        assert_eq!(shares, [1.0, 0.0]);
        let none = Knobs::new(10.0, vec![(Resource::Gpus, 11.0)]);
        assert_eq!(none.share(&none.what_ifs[0]), 0.0);
    }
}
