//! Stage times carried from one boot to another, as a buyer carries them: the work
//! measured alone on the boot they own (the profile), scaled to the boot they rent by
//! what a calibration of each says about one core's memory.
//!
//! A replay sized each CPU stage's work to run its stated time alone on its own boot.
//! That same work on the profile boot would have run `stated x r`, where `r` is the
//! ratio of the two boots' replay probes (the harness's own measure of what the stage
//! leans on). Host scaling then carries it back with the ratio of the two calibrations'
//! figures. The product of the two ratios is the stage time the buyer would state for
//! the rented boot; it differs from `stated` by what the calibrations missed.

use serde::Deserialize;

use super::AccuracyError;
use super::evidence::Probes;

/// What a calibration says about one core's memory: what host scaling carries stage
/// times by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreMemory {
    /// What one thread's read stream draws alone, GB/s: the cache lines it keeps in
    /// flight over the idle latency (`hardware.dram.lines_in_flight_per_thread` x 64 B /
    /// `params.dram_idle_latency_ns`), the model's own reading of one core's stream. (The
    /// calibration's copy figure, `cpu_copy_thread_gbps`, a copy mix with write-allocate,
    /// moved 1.0-2.0x against the replay probes' read stream between the committed
    /// boots, this figure 0.8-1.2x.)
    pub stream_gbps: f64,
    /// Unloaded DRAM latency, ns (`params.dram_idle_latency_ns`).
    pub idle_latency_ns: f64,
}

#[derive(Deserialize)]
struct Doc {
    hardware: Hw,
    params: Params,
}

#[derive(Deserialize)]
struct Hw {
    dram: Dram,
}

#[derive(Deserialize)]
struct Dram {
    lines_in_flight_per_thread: f64,
}

#[derive(Deserialize)]
struct Params {
    dram_idle_latency_ns: Param,
}

#[derive(Deserialize)]
struct Param {
    default: f64,
}

impl CoreMemory {
    /// Reads the figures from a calibration's text (as `calibrate` writes it).
    pub fn of_calibration(text: &str, file: &std::path::Path) -> Result<Self, AccuracyError> {
        let doc: Doc = toml::from_str(text).map_err(|e| {
            AccuracyError::file(
                file,
                format!(
                    "hardware.dram.lines_in_flight_per_thread and params.dram_idle_latency_ns: {e}"
                ),
            )
        })?;
        let idle = doc.params.dram_idle_latency_ns.default;
        Ok(Self {
            stream_gbps: doc.hardware.dram.lines_in_flight_per_thread * 64.0 / idle,
            idle_latency_ns: idle,
        })
    }
}

/// What a CPU stage's time leans on, by its name in the shapes and the mini C2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leans {
    /// Streaming DRAM bandwidth (copy, stream).
    Bandwidth,
    /// Dependent loads (chase).
    Latency,
    /// Arithmetic (the mini C2's synthesis, SpMV and CPU MSM stand-ins): no calibration
    /// figure measures it, so host scaling between two boots of VMs leaves it unchanged.
    Compute,
}

impl Leans {
    pub fn name(self) -> &'static str {
        match self {
            Leans::Bandwidth => "bandwidth",
            Leans::Latency => "latency",
            Leans::Compute => "compute",
        }
    }

    pub fn of_stage(stage: &str) -> Self {
        match stage {
            "copy" | "stream" => Leans::Bandwidth,
            "chase" => Leans::Latency,
            _ => Leans::Compute,
        }
    }
}

/// A boot as the transfer sees it: its replays' probes (the median over them) and its
/// calibration's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootProfile {
    pub probes: Probes,
    pub memory: CoreMemory,
}

/// The factor a stage's stated time takes when its work is profiled on `profile` and
/// carried to `target` by host scaling; `probes` are the target replay's own (its work
/// was sized with them).
pub fn stage_factor(
    leans: Leans,
    probes: &Probes,
    profile: &BootProfile,
    target: &BootProfile,
) -> f64 {
    match leans {
        // Slower streaming on the profile boot: its time there is longer by the probes'
        // ratio; host scaling then shortens it by the calibrations' ratio.
        Leans::Bandwidth => {
            (probes.stream_gbps / profile.probes.stream_gbps)
                * (profile.memory.stream_gbps / target.memory.stream_gbps)
        }
        Leans::Latency => {
            (profile.probes.chase_ns / probes.chase_ns)
                * (target.memory.idle_latency_ns / profile.memory.idle_latency_ns)
        }
        Leans::Compute => probes.compute_per_s / profile.probes.compute_per_s,
    }
}

/// The median of each probe over `probes`.
pub fn median_probes(probes: &[Probes]) -> Option<Probes> {
    let m = |f: fn(&Probes) -> f64| {
        crate::analysis::median::median(&probes.iter().map(f).collect::<Vec<_>>())
    };
    Some(Probes {
        stream_gbps: m(|p| p.stream_gbps)?,
        chase_ns: m(|p| p.chase_ns)?,
        compute_per_s: m(|p| p.compute_per_s)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot(stream: f64, chase: f64, compute: f64, cal_stream: f64, latency: f64) -> BootProfile {
        BootProfile {
            probes: Probes {
                stream_gbps: stream,
                chase_ns: chase,
                compute_per_s: compute,
            },
            memory: CoreMemory {
                stream_gbps: cal_stream,
                idle_latency_ns: latency,
            },
        }
    }

    #[test]
    fn calibrations_that_saw_what_the_probes_saw_carry_stage_times_exactly() {
        // The target streams 10% faster and chases 10% quicker, and both its probes and
        // its calibration say so: the carried stage time is the stated one.
        let profile = boot(9.0, 140.0, 4e8, 14.0, 150.0);
        let target = boot(9.9, 126.0, 4e8, 15.4, 135.0);
        for leans in [Leans::Bandwidth, Leans::Latency, Leans::Compute] {
            let f = stage_factor(leans, &target.probes, &profile, &target);
            assert!((f - 1.0).abs() < 1e-12, "{leans:?}: {f}");
        }
        // A calibration that missed the faster streaming leaves the carried time 10% long.
        let blind = boot(9.9, 126.0, 4e8, 14.0, 135.0);
        let f = stage_factor(Leans::Bandwidth, &blind.probes, &profile, &blind);
        assert!((f - 1.1).abs() < 1e-12, "{f}");
        // Compute has no calibration figure: a 20% faster core is missed in full.
        let fast = boot(9.0, 140.0, 4.8e8, 14.0, 150.0);
        let f = stage_factor(Leans::Compute, &fast.probes, &profile, &fast);
        assert!((f - 1.2).abs() < 1e-12, "{f}");
    }

    #[test]
    fn the_shapes_stages_lean_on_what_their_names_say() {
        assert_eq!(Leans::of_stage("copy"), Leans::Bandwidth);
        assert_eq!(Leans::of_stage("stream"), Leans::Bandwidth);
        assert_eq!(Leans::of_stage("chase"), Leans::Latency);
        assert_eq!(Leans::of_stage("witness"), Leans::Compute);
    }
}
