//! The keys a calibration file describes its host with: every `[hardware]` key `bwsim
//! calibrate` writes ([`HOST_KEYS`]), what a host takes where a calibration lacks one, and
//! which `[params]` names are the calibration's measurements ([`is_measured_param`]).
//!
//! `--calibration FILE` ([`super::load_with_calibration`]) takes every key below from the
//! file, or, where the file lacks it, the typical value stated here (the scenario layer's
//! own default for an absent key), never from a file the scenario includes. The list is
//! checked against what `bwsim calibrate` writes (`calibrate::file`'s tests): a key it
//! starts writing fails them until it is listed here.

use toml::Table;

use super::rules::Rules;
use crate::model::{MemcpyPace, PcieLink};

/// What a host takes for a key of [`HOST_KEYS`] that the calibration file lacks.
#[derive(Clone, Copy)]
pub enum WhenAbsent {
    /// No typical value: the calibration must give it where it gives the table holding
    /// it (`[hardware.gpu]` itself where the scenario's work needs a GPU).
    Required,
    /// The scenario layer's default for an absent key, as the run's note says it.
    Typical(fn(Rules) -> String),
    /// Off unless given, and calibrate writes it commented out: its absence is the
    /// normal state of a calibration, and no note says so.
    OptIn,
}

/// One key a calibration describes.
pub struct HostKey {
    /// Dotted path, `hardware.` first.
    pub path: &'static str,
    /// A table whose keys are listed on their own (taken key by key, never whole);
    /// otherwise a key, taken whole with anything below it.
    pub table: bool,
    /// What the host takes where the calibration lacks it.
    pub when_absent: WhenAbsent,
    /// Whether the key is read at all, given the calibration's table that holds it (a
    /// staging memcpy's exponent only with the latency-bound pace).
    pub read_when: fn(&Table) -> bool,
}

const fn key(path: &'static str, when_absent: WhenAbsent) -> HostKey {
    HostKey {
        path,
        table: false,
        when_absent,
        read_when: always,
    }
}

const fn table(path: &'static str, when_absent: WhenAbsent) -> HostKey {
    HostKey {
        table: true,
        ..key(path, when_absent)
    }
}

fn always(_: &Table) -> bool {
    true
}

/// The memcpy pace a staging table states (absent: latency-bound, the scenario layer's).
fn pace(t: &Table) -> Option<MemcpyPace> {
    match t.get("memcpy_pace") {
        None => Some(MemcpyPace::LatencyBound),
        Some(v) => v.as_str().and_then(MemcpyPace::parse),
    }
}

fn latency_bound(t: &Table) -> bool {
    pace(t) == Some(MemcpyPace::LatencyBound)
}

fn beside_streams(t: &Table) -> bool {
    pace(t) == Some(MemcpyPace::BesideStreams)
}

use WhenAbsent::{OptIn, Required, Typical};

/// Every `[hardware]` key `bwsim calibrate` writes, tables before their keys.
pub const HOST_KEYS: &[HostKey] = &[
    key("hardware.cpu_cores", Required),
    table(
        "hardware.cpu",
        Typical(|_| {
            "none: no per-core throughput curve (compute-bound work keeps its speed at \
             any count of busy threads)"
                .into()
        }),
    ),
    key(
        "hardware.cpu.physical_cores",
        Typical(|_| "cpu_cores / threads_per_core".into()),
    ),
    key("hardware.cpu.threads_per_core", Typical(|_| "1".into())),
    key("hardware.cpu.smt_yield", Typical(|_| "1".into())),
    key("hardware.cpu.per_core_throughput", Required),
    table("hardware.dram", Required),
    key("hardware.dram.capacity_gbps", Required),
    key("hardware.dram.latency_curve", Required),
    key(
        "hardware.dram.latency_load",
        Typical(|r| match r.latency_on_offered_load() {
            true => "\"offered\"".into(),
            false => "\"utilisation\"".into(),
        }),
    ),
    key(
        "hardware.dram.lines_in_flight_per_thread",
        Typical(|r| match r.lines_in_flight_per_thread() {
            Some(n) => format!("{n} (the typical streaming thread's)"),
            None => "none (no per-thread bound)".into(),
        }),
    ),
    key(
        "hardware.dram.dma_h2d",
        Typical(|r| format!("{{ policy = \"{}\" }}", r.dma_policies().0.name())),
    ),
    key(
        "hardware.dram.dma_d2h",
        Typical(|r| format!("{{ policy = \"{}\" }}", r.dma_policies().1.name())),
    ),
    table("hardware.gpu", Required),
    key("hardware.gpu.count", Typical(|_| "1".into())),
    key("hardware.gpu.vram_gib", Required),
    key("hardware.gpu.pcie_h2d_gbps", Required),
    key("hardware.gpu.pcie_d2h_gbps", Required),
    key(
        "hardware.gpu.pcie_duplex_gbps",
        Typical(|_| "none (each direction keeps its rate with the other busy)".into()),
    ),
    key(
        "hardware.gpu.pageable_h2d_gbps",
        Typical(|_| format!("{} x pcie_h2d_gbps", PcieLink::DEFAULT_PAGEABLE_SHARE)),
    ),
    key(
        "hardware.gpu.pageable_d2h_gbps",
        Typical(|_| format!("{} x pcie_d2h_gbps", PcieLink::DEFAULT_PAGEABLE_SHARE)),
    ),
    key(
        "hardware.gpu.h2d_dram_factor",
        Typical(|_| PcieLink::DEFAULT_DMA_DRAM_FACTOR.to_string()),
    ),
    key(
        "hardware.gpu.d2h_dram_factor",
        Typical(|_| PcieLink::DEFAULT_DMA_DRAM_FACTOR.to_string()),
    ),
    key(
        "hardware.gpu.pageable_copy_dram_factor",
        Typical(|_| PcieLink::DEFAULT_PAGEABLE_COPY_DRAM_FACTOR.to_string()),
    ),
    key(
        "hardware.gpu.pinned_h2d_latency_frac",
        Typical(|r| r.copy_latency_frac().pinned_h2d.to_string()),
    ),
    key(
        "hardware.gpu.pinned_d2h_latency_frac",
        Typical(|r| r.copy_latency_frac().pinned_d2h.to_string()),
    ),
    key(
        "hardware.gpu.pageable_h2d_latency_frac",
        Typical(|r| r.copy_latency_frac().pageable_h2d.to_string()),
    ),
    key(
        "hardware.gpu.pageable_d2h_latency_frac",
        Typical(|r| r.copy_latency_frac().pageable_d2h.to_string()),
    ),
    table(
        "hardware.gpu.pageable_staging",
        Typical(|_| "none: pageable copies at one rate (pageable_*_gbps), no CPU staging".into()),
    ),
    table(
        "hardware.gpu.pageable_staging.h2d",
        Typical(|_| "none: pageable H2D copies at one rate (pageable_h2d_gbps)".into()),
    ),
    key(
        "hardware.gpu.pageable_staging.h2d.setup_s",
        Typical(|_| "0 s".into()),
    ),
    key("hardware.gpu.pageable_staging.h2d.memcpy_gbps", Required),
    key(
        "hardware.gpu.pageable_staging.h2d.memcpy_pace",
        Typical(|_| "\"latency-bound\"".into()),
    ),
    HostKey {
        read_when: latency_bound,
        ..key(
            "hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent",
            Typical(|_| "1 (Little's law)".into()),
        )
    },
    HostKey {
        read_when: beside_streams,
        ..key(
            "hardware.gpu.pageable_staging.h2d.memcpy_beside_streams",
            Required,
        )
    },
    table(
        "hardware.gpu.pageable_staging.d2h",
        Typical(|_| "none: pageable D2H copies at one rate (pageable_d2h_gbps)".into()),
    ),
    key(
        "hardware.gpu.pageable_staging.d2h.setup_s",
        Typical(|_| "0 s".into()),
    ),
    key("hardware.gpu.pageable_staging.d2h.memcpy_gbps", Required),
    key(
        "hardware.gpu.pageable_staging.d2h.memcpy_pace",
        Typical(|_| "\"latency-bound\"".into()),
    ),
    HostKey {
        read_when: latency_bound,
        ..key(
            "hardware.gpu.pageable_staging.d2h.memcpy_latency_exponent",
            Typical(|_| "1 (Little's law)".into()),
        )
    },
    HostKey {
        read_when: beside_streams,
        ..key(
            "hardware.gpu.pageable_staging.d2h.memcpy_beside_streams",
            Required,
        )
    },
    table(
        "hardware.gpu.cpu_load",
        Typical(|r| match r.kernel_cpu_load() {
            true => "none: GPU kernels keep their time beside busy CPU threads (there is \
                     no typical curve)"
                .into(),
            false => "none (rules v1 read none)".into(),
        }),
    ),
    key("hardware.gpu.cpu_load.busy_per_cpu", Required),
    key("hardware.gpu.cpu_load.kernels", Required),
    key(
        "hardware.gpu.cpu_load.threads",
        Typical(|_| "none: a kernel's host side adds no runnable thread".into()),
    ),
    key("hardware.gpu.cpu_load.next_to_streaming", OptIn),
    key("hardware.gpu.cpu_load.next_to_chasing", OptIn),
];

/// `[hardware]` keys that are the scenario's work, never a host's measurement: a
/// calibration file holding one is refused.
pub const SCENARIO_HARDWARE_KEYS: &[&str] = &[
    "hardware.host_ram_gib",
    "hardware.host_ram",
    "hardware.locks",
    "hardware.pools",
];

/// Whether `[params]` name `name` is one `bwsim calibrate` writes: a measured value of
/// the host (kernel times and fits, a thread's DRAM rate, the idle latency, each copy's
/// latency share), as opposed to a scenario's own knob.
pub fn is_measured_param(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "dram_idle_latency_ns",
        "h_ntt_2p27_s",
        "pinned_h2d_latency_frac",
        "pinned_d2h_latency_frac",
        "pageable_h2d_latency_frac",
        "pageable_d2h_latency_frac",
    ];
    // `2p27_s`: a time at a size of 2^27.
    let sized = |s: &str| {
        (s.strip_prefix("2p").and_then(|s| s.strip_suffix("_s")))
            .is_some_and(|lg| !lg.is_empty() && lg.bytes().all(|b| b.is_ascii_digit()))
    };
    // `a_ns`, `b_s` or a sized time, after a kernel's name and variant.
    let fit_or_sized = |s: &str| s == "a_ns" || s == "b_s" || sized(s);
    let ident =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if EXACT.contains(&name) {
        return true;
    }
    if let Some(kernel) = name
        .strip_prefix("cpu_")
        .and_then(|s| s.strip_suffix("_thread_gbps"))
    {
        return ident(kernel);
    }
    if let Some(rest) = name.strip_prefix("msm_") {
        return fit_or_sized(rest);
    }
    if let Some(rest) = name.strip_prefix("ntt_") {
        // `ntt_a_ns`, `ntt_2p27_s`, or a variant's: `ntt_inv_nr_a_ns`, `ntt_inv_nr_2p27_s`.
        if fit_or_sized(rest) {
            return true;
        }
        let variant = (rest.strip_suffix("_a_ns"))
            .or_else(|| rest.strip_suffix("_b_s"))
            .or_else(|| {
                (rest.rfind("_2p"))
                    .filter(|&i| sized(&rest[i + 1..]))
                    .map(|i| &rest[..i])
            });
        return variant.is_some_and(ident);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_params_are_calibrates_and_not_a_scenarios_knobs() {
        for name in [
            "dram_idle_latency_ns",
            "cpu_copy_thread_gbps",
            "cpu_triad_thread_gbps",
            "pinned_h2d_latency_frac",
            "pageable_d2h_latency_frac",
            "ntt_a_ns",
            "ntt_b_s",
            "ntt_2p27_s",
            "ntt_fwd_coset_rn_a_ns",
            "ntt_inv_nr_2p27_s",
            "h_ntt_2p27_s",
            "msm_a_ns",
            "msm_b_s",
            "msm_2p20_s",
        ] {
            assert!(is_measured_param(name), "{name}");
        }
        for name in [
            "workers",
            "pinned",
            "chase_s",
            "prep_msm_s",
            "tail_msm_s",
            "msm_count",
            "msm_2p_s",
            "ntt_s",
            "ntt__a_ns",
            "ntt_x_2pa_s",
            "cpu__thread_gbps",
            "pcie_h2d_gbps",
            "host_dram_gbps",
        ] {
            assert!(!is_measured_param(name), "{name}");
        }
    }

    /// Tables come before their keys, each path once, and every key sits in a listed
    /// table (or `[hardware]` itself): the report walks the list in that order.
    #[test]
    fn the_list_is_a_tree_in_order() {
        let mut seen: Vec<&str> = Vec::new();
        for k in HOST_KEYS {
            assert!(!seen.contains(&k.path), "{} twice", k.path);
            let parent = k.path.rsplit_once('.').map(|(p, _)| p).unwrap();
            assert!(
                parent == "hardware"
                    || HOST_KEYS
                        .iter()
                        .any(|t| t.table && t.path == parent && seen.contains(&t.path)),
                "{}: its table {parent} is not listed before it",
                k.path
            );
            seen.push(k.path);
        }
        for k in SCENARIO_HARDWARE_KEYS {
            assert!(!seen.contains(k), "{k}");
        }
    }
}
