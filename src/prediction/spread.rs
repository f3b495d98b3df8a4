//! How far each host key a prediction rests on may be off, and how a step of one is
//! written: the [`HostSpread`] an interval propagates through the engine.

use crate::model::MemcpyPace;
use crate::scenario::Loaded;

/// A host key (or a group that moves together) whose uncertainty an interval carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostKey {
    /// `hardware.dram.capacity_gbps`.
    DramCapacity,
    /// Every latency of the curve (`hardware.dram.latency_scale`).
    LatencyIdle,
    /// Each latency's rise above idle (`hardware.dram.latency_rise_scale`).
    LatencyRise,
    /// `hardware.dram.lines_in_flight_per_thread`.
    LinesInFlight,
    /// The pageable copy rates and their staging memcpy rates, together.
    PageableRate,
    /// A latency-bound staging memcpy's `memcpy_latency_exponent` (an absolute spread).
    MemcpyExponent,
    /// `h2d_dram_factor` and `d2h_dram_factor`, together.
    DmaFactor,
}

impl HostKey {
    /// Every key, in the order reports list them.
    pub const ALL: [HostKey; 7] = [
        HostKey::DramCapacity,
        HostKey::LatencyIdle,
        HostKey::LatencyRise,
        HostKey::LinesInFlight,
        HostKey::PageableRate,
        HostKey::MemcpyExponent,
        HostKey::DmaFactor,
    ];

    /// Its name in reports and in the data file.
    pub fn name(self) -> &'static str {
        match self {
            HostKey::DramCapacity => "dram_capacity",
            HostKey::LatencyIdle => "latency_idle",
            HostKey::LatencyRise => "latency_rise",
            HostKey::LinesInFlight => "lines_in_flight",
            HostKey::PageableRate => "pageable_rate",
            HostKey::MemcpyExponent => "memcpy_exponent",
            HostKey::DmaFactor => "dma_factor",
        }
    }

    /// The key named `name` in the data file.
    pub fn from_name(name: &str) -> Option<HostKey> {
        HostKey::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The `--set` overrides that move this key by `sd` standard deviations of `spread`
    /// from where `model` has it (relative keys by a factor `exp(sd x spread)`, the
    /// exponent by `sd x spread`); empty where the model has nothing the key moves.
    pub fn step(self, loaded: &Loaded, spread: f64, sd: f64) -> Vec<String> {
        let factor = (sd * spread).exp();
        let hw = &loaded.model.hardware;
        let dram_modelled = hw.dram.capacity_gbps.is_finite();
        let Some(link) = hw.gpus.first().map(|g| &g.link) else {
            return match self {
                HostKey::DramCapacity
                | HostKey::LatencyIdle
                | HostKey::LatencyRise
                | HostKey::LinesInFlight => self.dram_step(loaded, factor, dram_modelled),
                _ => Vec::new(),
            };
        };
        match self {
            HostKey::DramCapacity
            | HostKey::LatencyIdle
            | HostKey::LatencyRise
            | HostKey::LinesInFlight => self.dram_step(loaded, factor, dram_modelled),
            HostKey::PageableRate => {
                let mut sets = vec![
                    format!(
                        "hardware.gpu.pageable_h2d_gbps={}",
                        link.pageable_h2d_gbps * factor
                    ),
                    format!(
                        "hardware.gpu.pageable_d2h_gbps={}",
                        link.pageable_d2h_gbps * factor
                    ),
                ];
                for (dir, st) in [
                    ("h2d", &link.pageable_h2d_staging),
                    ("d2h", &link.pageable_d2h_staging),
                ] {
                    if let Some(st) = st {
                        sets.push(format!(
                            "hardware.gpu.pageable_staging.{dir}.memcpy_gbps={}",
                            st.memcpy_gbps * factor
                        ));
                    }
                }
                sets
            }
            HostKey::MemcpyExponent => (link.pageable_h2d_staging.iter())
                .filter(|st| st.memcpy_pace == MemcpyPace::LatencyBound)
                .map(|st| {
                    let k = (st.latency_exponent + sd * spread)
                        .clamp(0.0, crate::model::PageableStaging::MAX_LATENCY_EXPONENT);
                    format!("hardware.gpu.pageable_staging.h2d.memcpy_latency_exponent={k}")
                })
                .collect(),
            HostKey::DmaFactor => vec![
                format!(
                    "hardware.gpu.h2d_dram_factor={}",
                    link.h2d_dram_factor * factor
                ),
                format!(
                    "hardware.gpu.d2h_dram_factor={}",
                    link.d2h_dram_factor * factor
                ),
            ],
        }
    }

    fn dram_step(self, loaded: &Loaded, factor: f64, dram_modelled: bool) -> Vec<String> {
        if !dram_modelled {
            return Vec::new();
        }
        let dram = &loaded.model.hardware.dram;
        let (scale, rise) = loaded.summary.latency_scaling;
        match self {
            HostKey::DramCapacity => {
                vec![format!(
                    "hardware.dram.capacity_gbps={}",
                    dram.capacity_gbps * factor
                )]
            }
            HostKey::LatencyIdle => vec![format!("hardware.dram.latency_scale={}", scale * factor)],
            HostKey::LatencyRise => vec![format!(
                "hardware.dram.latency_rise_scale={}",
                rise * factor
            )],
            HostKey::LinesInFlight => (dram.sharing.lines_in_flight_per_thread.iter())
                .map(|n| format!("hardware.dram.lines_in_flight_per_thread={}", n * factor))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// One key's spread: the standard deviation of its log between hosts of one kind (of the
/// value itself for [`HostKey::MemcpyExponent`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub key: HostKey,
    pub sd: f64,
}

/// Every key's spread, with where the numbers come from.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpread {
    pub spreads: Vec<Spread>,
    /// What they were measured on (or why they are estimates).
    pub basis: String,
}
