//! Host profiles: what a machine one might buy is made of (CPU cores and threads, DRAM
//! channels x MT/s, RAM, GPU model and count with PCIe generation, price, power), read
//! from TOML and checked so that a bad file names the file, the key, the problem and
//! what is allowed (exit 2), as scenario errors do.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A host profile that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {}{message}", file.display(), if key.is_empty() { String::new() } else { format!("{key}: ") })]
pub struct HostError {
    /// The host file.
    pub file: PathBuf,
    /// Dotted key (empty for whole-file problems).
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// A host profile, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostProfile {
    /// Short name (table rows, chart labels).
    pub name: String,
    /// One line on what it is.
    #[serde(default)]
    pub description: String,
    /// The CPU.
    pub cpu: Cpu,
    /// Host memory.
    pub dram: DramSpec,
    /// The GPUs.
    pub gpu: GpuSpec,
    /// What it costs.
    pub cost: Cost,
}

/// CPU cores, threads and clocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    /// Model name.
    pub model: String,
    /// Physical cores.
    pub cores: u32,
    /// Hardware threads (cores x SMT).
    pub threads: u32,
    /// One core's clock alone (single-core boost), GHz.
    pub boost_ghz: Option<f64>,
    /// Every core's clock with all of them busy, GHz.
    pub all_core_ghz: Option<f64>,
    /// Work per clock relative to a Zen 4 core (default 1).
    pub ipc: Option<f64>,
    /// Both SMT siblings busy, total / one alone (default: the scenario's, at most
    /// threads per core).
    pub smt_yield: Option<f64>,
    /// Throughput per core vs active cores, relative to one core alone; replaces the
    /// line from (1, 1) to (cores, all_core_ghz / boost_ghz).
    pub per_core_throughput: Option<Vec<(f64, f64)>>,
}

impl Cpu {
    /// One core alone, in the scenarios' `core_speed` unit: GHz x work per clock
    /// relative to Zen 4.
    pub fn core_speed(&self) -> Option<f64> {
        self.boost_ghz.map(|g| g * self.ipc.unwrap_or(1.0))
    }

    /// Throughput per core vs active cores: as given, or a line from one core at its
    /// boost to all cores at the all-core clock.
    pub fn per_core_curve(&self) -> Option<Vec<(f64, f64)>> {
        if let Some(p) = &self.per_core_throughput {
            return Some(p.clone());
        }
        let (boost, all) = (self.boost_ghz?, self.all_core_ghz?);
        if self.cores <= 1 {
            return Some(vec![(1.0, 1.0)]);
        }
        Some(vec![(1.0, 1.0), (f64::from(self.cores), all / boost)])
    }
}

/// Host memory: size, and bandwidth either from its channels or as measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramSpec {
    /// Installed RAM, GiB.
    pub ram_gib: f64,
    /// Populated DDR channels.
    pub channels: Option<u32>,
    /// Transfer rate, MT/s.
    pub mts: Option<u32>,
    /// Sustained / theoretical bandwidth (default [`DEFAULT_DRAM_EFFICIENCY`]).
    pub efficiency: Option<f64>,
    /// Sustained bandwidth measured on the host (`bwsim calibrate`), GB/s; replaces
    /// channels x MT/s x 8 B x efficiency.
    pub measured_gbps: Option<f64>,
}

/// GPUs and their PCIe links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    /// Model name.
    pub model: String,
    /// How many.
    pub count: u32,
    /// Memory per GPU, GiB.
    pub vram_gib: f64,
    /// PCIe generation (3, 4, 5 or 6).
    pub pcie_gen: u32,
    /// Lanes per GPU (default 16).
    pub pcie_lanes: Option<u32>,
    /// Pinned copy rate measured on the host, GB/s per direction; replaces the rate
    /// derived from generation and lanes.
    pub measured_pcie_gbps: Option<f64>,
    /// Proving-kernel speed (NTT, MSM) relative to an RTX 5070 Ti running the same
    /// kernels (default 1): one rule for every GPU, [`KERNEL_SPEED_RULE`].
    pub kernel_speed: Option<f64>,
    /// The uncertainty of `kernel_speed`, as a relative standard deviation (from 0 up to,
    /// not including, 1; default [`DEFAULT_KERNEL_SPEED_REL_SD`]): how far the GPU's
    /// kernels may run from the speed stated, relative to the unit. 0 for the unit itself.
    /// A stage timed on one GPU and carried to another is uncertain by both GPUs' (about
    /// the root of the sum of their squares), and not at all when the two are one GPU.
    /// Prediction intervals read it.
    #[serde(default = "default_kernel_speed_rel_sd")]
    pub kernel_speed_rel_sd: f64,
}

fn default_kernel_speed_rel_sd() -> f64 {
    DEFAULT_KERNEL_SPEED_REL_SD
}

/// Purchase price and power, or an hourly rent (which includes power).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// Purchase price, US dollars.
    pub price_usd: Option<f64>,
    /// Wall power under load, W.
    pub power_w: Option<f64>,
    /// Rent, US dollars per hour (cloud), instead of price and power.
    pub hourly_usd: Option<f64>,
}

/// How every host profile rates its GPU's kernel speed: published SMs x boost clock,
/// relative to the RTX 5070 Ti's 70 x 2.45 GHz. sppark's NTT and MSM, timed by `bwsim
/// calibrate` on 4 H100 and 22 H200 calibrations (132 SMs at 1.98 GHz both), ran
/// 1.0035x as long on the H100 over the sizes of a C2 proof, where the rule says 1
/// (`runs/tools/kernel_speed.py`).
pub const KERNEL_SPEED_RULE: &str =
    "published SMs x boost clock, relative to the RTX 5070 Ti's 70 x 2.45 GHz";

/// [E] The uncertainty of a kernel speed that a profile does not state one for, as a
/// relative standard deviation: that of the rule across GPU architectures. The one pair
/// measured (H100 and H200: the same SMs and clock, 1.4x the memory bandwidth) agrees
/// with the rule to 0.35%, but it cannot test what differs between architectures: per SM
/// and clock, Blackwell's GeForce SMs run 32-bit integer adds at twice Hopper's rate and
/// multiplies at the same, with under a third of the H200's DRAM bandwidth. A kernel bound by any
/// one of those would sit up to 2x from the rule; 0.25 puts that two to three standard
/// deviations out.
pub const DEFAULT_KERNEL_SPEED_REL_SD: f64 = 0.25;

/// Sustained / theoretical DRAM bandwidth when a host file gives none: 0.75, the C2
/// reference box's estimate (about 250 of 332.8 GB/s), inside the 70-90% that
/// loaded-latency benchmarks report for DDR5 servers.
pub const DEFAULT_DRAM_EFFICIENCY: f64 = 0.75;

/// Pinned copy rate / PCIe link rate per direction when a host file gives no measured
/// rate: 0.85, between the C2 reference (about 53 of 63 GB/s on PCIe 5.0 x16) and the
/// H200 host's calibration (55.3 of 63 GB/s).
pub const DEFAULT_PCIE_EFFICIENCY: f64 = 0.85;

/// Per-lane, per-direction PCIe rate in GB/s after line coding: 3.0 8 GT/s 128b/130b,
/// 4.0 16 GT/s, 5.0 32 GT/s, 6.0 64 GT/s (FLIT, counted as 2x 5.0).
pub fn pcie_lane_gbps(generation: u32) -> Option<f64> {
    match generation {
        3 => Some(8.0 * 128.0 / 130.0 / 8.0),
        4 => Some(16.0 * 128.0 / 130.0 / 8.0),
        5 => Some(32.0 * 128.0 / 130.0 / 8.0),
        6 => Some(2.0 * 32.0 * 128.0 / 130.0 / 8.0),
        _ => None,
    }
}

impl HostProfile {
    /// Sustained DRAM bandwidth, GB/s: measured, or channels x MT/s x 8 B x efficiency.
    pub fn dram_gbps(&self) -> f64 {
        match (self.dram.measured_gbps, self.dram.channels, self.dram.mts) {
            (Some(m), _, _) => m,
            (None, Some(ch), Some(mts)) => {
                f64::from(ch) * f64::from(mts) * 8.0 / 1000.0 * self.dram_efficiency()
            }
            _ => 0.0, // excluded by validate()
        }
    }

    /// The efficiency applied to the theoretical DRAM bandwidth.
    pub fn dram_efficiency(&self) -> f64 {
        self.dram.efficiency.unwrap_or(DEFAULT_DRAM_EFFICIENCY)
    }

    /// Pinned PCIe rate per direction per GPU, GB/s: measured, or lanes x lane rate x
    /// [`DEFAULT_PCIE_EFFICIENCY`].
    pub fn pcie_gbps(&self) -> f64 {
        match self.gpu.measured_pcie_gbps {
            Some(m) => m,
            None => {
                let lanes = f64::from(self.gpu.pcie_lanes.unwrap_or(16));
                lanes * pcie_lane_gbps(self.gpu.pcie_gen).unwrap_or(0.0) * DEFAULT_PCIE_EFFICIENCY
            }
        }
    }

    /// Checks every value; the first problem as an error.
    fn validate(&self, file: &Path) -> Result<(), HostError> {
        let err = |key: &str, message: String| HostError {
            file: file.to_path_buf(),
            key: key.into(),
            message,
        };
        let positive = |key: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(err(key, format!("{v} is not allowed; give a number > 0")))
            }
        };
        if self.name.trim().is_empty() {
            return Err(err("name", "is empty; give the host a short name".into()));
        }
        if self.cpu.cores == 0 {
            return Err(err("cpu.cores", "0 is not allowed; give at least 1".into()));
        }
        if self.cpu.threads < self.cpu.cores
            || u64::from(self.cpu.threads) > 8 * u64::from(self.cpu.cores)
        {
            return Err(err(
                "cpu.threads",
                format!(
                    "{} with {} cores; give cores x threads per core (1 to 8 per core)",
                    self.cpu.threads, self.cpu.cores
                ),
            ));
        }
        for (key, v) in [
            ("cpu.boost_ghz", self.cpu.boost_ghz),
            ("cpu.all_core_ghz", self.cpu.all_core_ghz),
            ("cpu.ipc", self.cpu.ipc),
            ("gpu.kernel_speed", self.gpu.kernel_speed),
        ] {
            if let Some(v) = v {
                positive(key, v)?;
            }
        }
        if let (Some(b), Some(a)) = (self.cpu.boost_ghz, self.cpu.all_core_ghz)
            && a > b
        {
            return Err(err(
                "cpu.all_core_ghz",
                format!("{a} is above boost_ghz {b}; all cores busy run at most one core's boost"),
            ));
        }
        if self.cpu.all_core_ghz.is_some() && self.cpu.boost_ghz.is_none() {
            return Err(err(
                "cpu.all_core_ghz",
                "given without boost_ghz; give both (the curve runs from one core's boost to the all-core clock)".into(),
            ));
        }
        if let Some(y) = self.cpu.smt_yield {
            let per_core = f64::from(self.cpu.threads / self.cpu.cores.max(1));
            if !(y >= 1.0 && y <= per_core) {
                return Err(err(
                    "cpu.smt_yield",
                    format!("{y}; give 1 to threads per core ({per_core})"),
                ));
            }
        }
        if let Some(p) = &self.cpu.per_core_throughput {
            let rising = p.windows(2).all(|w| w[1].0 > w[0].0);
            let sane = p
                .iter()
                .all(|&(n, r)| n >= 1.0 && n.is_finite() && r > 0.0 && r.is_finite());
            if p.is_empty() || !rising || !sane || p.len() > 1024 {
                return Err(err(
                    "cpu.per_core_throughput",
                    "give 1 to 1024 [active cores, relative] points, cores >= 1 and rising, relative > 0".into(),
                ));
            }
        }
        positive("dram.ram_gib", self.dram.ram_gib)?;
        match (self.dram.measured_gbps, self.dram.channels, self.dram.mts) {
            (Some(m), _, _) => positive("dram.measured_gbps", m)?,
            (None, Some(ch), Some(mts)) => {
                if !(1..=32).contains(&ch) {
                    return Err(err("dram.channels", format!("{ch}; give 1 to 32")));
                }
                if !(800..=20000).contains(&mts) {
                    return Err(err("dram.mts", format!("{mts}; give 800 to 20000 MT/s")));
                }
            }
            _ => {
                return Err(err(
                    "dram",
                    "no bandwidth; give channels and mts (with optional efficiency), or \
                     measured_gbps"
                        .into(),
                ));
            }
        }
        if let Some(e) = self.dram.efficiency
            && !(e > 0.0 && e <= 1.0)
        {
            return Err(err(
                "dram.efficiency",
                format!("{e}; give a fraction in (0, 1]"),
            ));
        }
        if !(1..=16).contains(&self.gpu.count) {
            return Err(err(
                "gpu.count",
                format!("{}; give 1 to 16", self.gpu.count),
            ));
        }
        positive("gpu.vram_gib", self.gpu.vram_gib)?;
        if pcie_lane_gbps(self.gpu.pcie_gen).is_none() {
            return Err(err(
                "gpu.pcie_gen",
                format!("{}; give 3, 4, 5 or 6", self.gpu.pcie_gen),
            ));
        }
        if let Some(l) = self.gpu.pcie_lanes
            && ![1, 2, 4, 8, 16].contains(&l)
        {
            return Err(err("gpu.pcie_lanes", format!("{l}; give 1, 2, 4, 8 or 16")));
        }
        if let Some(m) = self.gpu.measured_pcie_gbps {
            positive("gpu.measured_pcie_gbps", m)?;
        }
        let sd = self.gpu.kernel_speed_rel_sd;
        if !(0.0..1.0).contains(&sd) {
            return Err(err(
                "gpu.kernel_speed_rel_sd",
                format!("{sd}; give a relative standard deviation from 0 up to (not) 1"),
            ));
        }
        match (self.cost.price_usd, self.cost.hourly_usd) {
            (Some(_), Some(_)) => {
                return Err(err(
                    "cost",
                    "both price_usd and hourly_usd; give a purchase price (with power_w) or \
                     an hourly rent, not both"
                        .into(),
                ));
            }
            (None, None) => {
                return Err(err(
                    "cost",
                    "no price; give price_usd (purchase, with power_w) or hourly_usd (rent)".into(),
                ));
            }
            (Some(p), None) => positive("cost.price_usd", p)?,
            (None, Some(h)) => positive("cost.hourly_usd", h)?,
        }
        if let Some(w) = self.cost.power_w {
            if self.cost.hourly_usd.is_some() {
                return Err(err(
                    "cost.power_w",
                    "given with hourly_usd; a rent includes power, drop power_w".into(),
                ));
            }
            positive("cost.power_w", w)?;
        }
        Ok(())
    }
}

/// Reads and checks a host profile.
pub fn load_host(file: &Path) -> Result<HostProfile, HostError> {
    let whole = |message: String| HostError {
        file: file.to_path_buf(),
        key: String::new(),
        message,
    };
    if !file.is_file() {
        return Err(whole(
            "not a readable file; give a host profile (TOML)".into(),
        ));
    }
    let text = crate::input_file::read_text(file, crate::input_file::MAX_TOML_BYTES)
        .map_err(|e| whole(format!("cannot read: {e}")))?;
    let de = toml::Deserializer::parse(&text).map_err(|e| whole(e.message().to_string()))?;
    let host: HostProfile = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        HostError {
            file: file.to_path_buf(),
            key: if key == "." { String::new() } else { key },
            message: e.into_inner().message().to_string(),
        }
    })?;
    host.validate(file)?;
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "box"
[cpu]
model = "x"
cores = 8
threads = 16
[dram]
ram_gib = 64
channels = 2
mts = 4800
[gpu]
model = "g"
count = 1
vram_gib = 16
pcie_gen = 4
[cost]
price_usd = 3000
power_w = 400
"#;

    fn load(text: &str) -> Result<HostProfile, HostError> {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("h.toml");
        std::fs::write(&f, text).unwrap();
        load_host(&f)
    }

    #[test]
    fn a_good_profile_gives_its_rates() {
        let h = load(GOOD).unwrap();
        // No kernel speed stated: the unit's, as uncertain as the rule across GPUs.
        assert_eq!(h.gpu.kernel_speed, None);
        assert_eq!(h.gpu.kernel_speed_rel_sd, DEFAULT_KERNEL_SPEED_REL_SD);
        let stated = load(&GOOD.replace(
            "pcie_gen = 4",
            "pcie_gen = 4\nkernel_speed = 1.5\nkernel_speed_rel_sd = 0.05",
        ))
        .unwrap();
        assert_eq!(
            (stated.gpu.kernel_speed, stated.gpu.kernel_speed_rel_sd),
            (Some(1.5), 0.05)
        );
        assert!((h.dram_gbps() - 2.0 * 4800.0 * 8.0 / 1000.0 * 0.75).abs() < 1e-9);
        assert!((h.pcie_gbps() - 16.0 * 16.0 * 128.0 / 130.0 / 8.0 * 0.85).abs() < 1e-9);
    }

    #[test]
    fn bad_profiles_name_the_key_and_what_is_allowed() {
        let cases = [
            (
                "pcie_gen = 4",
                "pcie_gen = 7",
                "gpu.pcie_gen",
                "give 3, 4, 5 or 6",
            ),
            (
                "threads = 16",
                "threads = 4",
                "cpu.threads",
                "1 to 8 per core",
            ),
            (
                "mts = 4800",
                "mts = 4800\nspeed = 1",
                "dram.speed",
                "unknown field `speed`",
            ),
            ("channels = 2\n", "", "dram", "give channels and mts"),
            (
                "power_w = 400",
                "power_w = 400\nhourly_usd = 2",
                "cost",
                "not both",
            ),
            (
                "ram_gib = 64",
                "ram_gib = -1",
                "dram.ram_gib",
                "give a number > 0",
            ),
            ("count = 1", "count = \"one\"", "gpu.count", "invalid type"),
            (
                "pcie_gen = 4",
                "pcie_gen = 4\nkernel_speed_rel_sd = 1.5",
                "gpu.kernel_speed_rel_sd",
                "from 0 up to (not) 1",
            ),
        ];
        for (from, to, key, allowed) in cases {
            let e = load(&GOOD.replace(from, to)).unwrap_err();
            assert_eq!(e.key, key, "{e}");
            let text = e.to_string();
            assert!(text.contains(allowed) && text.contains("h.toml"), "{text}");
        }
    }
}
