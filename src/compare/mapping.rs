//! How a host profile becomes `--set` overrides of a scenario, in one place:
//!
//! | host | scenario key |
//! |---|---|
//! | `cpu.threads` | `hardware.cpu_cores`, and `hardware.pools.cpu` when the scenario has a `cpu` pool. A stage asking for more threads than that: with `[workload.measured_on]` it runs on the pool and its time stretches (the scenario layer scales it); without, it gets `workload.stages.<name>.pool.threads` = the host's threads, its time unchanged |
//! | `cpu.cores`, `cpu.threads`, `cpu.smt_yield` | when the scenario has `[hardware.cpu]` or the host gives clocks: `hardware.cpu.physical_cores` = cores, `threads_per_core` = threads / cores, `smt_yield` the host's, else the scenario's lowered to threads per core |
//! | `cpu.boost_ghz`, `cpu.all_core_ghz`, `cpu.per_core_throughput` | `hardware.cpu.per_core_throughput`: as given, else a line from (1, 1) to (cores, all-core / boost) |
//! | `cpu.boost_ghz` x `cpu.ipc` | `hardware.cpu.core_speed` (GHz of a Zen 4 core) |
//! | `dram.ram_gib` | `params.host_ram_gib` when the scenario declares that knob (it may reserve resident data from it), else `hardware.host_ram_gib` |
//! | DRAM bandwidth | `hardware.dram.capacity_gbps` = channels x MT/s x 8 B x efficiency (or `measured_gbps`) |
//! | `gpu.count`, `gpu.vram_gib`, `gpu.kernel_speed` | `hardware.gpu.count` (and `params.gpus` when declared), `vram_gib`, `kernel_speed` (SMs x boost clock against the RTX 5070 Ti, one rule for every GPU: [`super::host::KERNEL_SPEED_RULE`]); `gpu.kernel_speed_rel_sd` maps onto nothing: prediction intervals read it from the profile |
//! | PCIe generation x lanes | `params.pcie_gbps` when declared, else `hardware.gpu.pcie_h2d_gbps` and `pcie_d2h_gbps` |
//!
//! The work stays the scenario's; a scenario that states where its stage times were
//! measured (`[workload.measured_on]`) has them carried to the host's cores, clocks and
//! GPU by the scenario layer. The latency curve, DMA factors and staging stay the
//! scenario's.

use super::host::HostProfile;

/// What a scenario offers to be overridden: its `[params]` knob names and pool names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScenarioKnobs {
    /// Declared `[params]` names.
    pub params: Vec<String>,
    /// Thread pool names of `[hardware.pools]`.
    pub pools: Vec<String>,
    /// Stages that draw threads of the `cpu` pool, with how many.
    pub cpu_pool_stages: Vec<(String, f64)>,
    /// The SMT yield of the scenario's `[hardware.cpu]`, when it has one.
    pub smt_yield: Option<f64>,
    /// The scenario says where its stage times were measured (`[workload.measured_on]`),
    /// so they scale to the host.
    pub measured_on: bool,
}

impl ScenarioKnobs {
    /// What the loaded scenario offers: its knobs, pools, the stages on its `cpu` pool,
    /// its SMT yield and whether it says where its stage times were measured.
    pub fn of(loaded: &crate::scenario::Loaded) -> ScenarioKnobs {
        let pools = &loaded.model.hardware.pools;
        ScenarioKnobs {
            params: loaded.params.iter().map(|p| p.name.clone()).collect(),
            pools: pools.iter().map(|p| p.name.clone()).collect(),
            cpu_pool_stages: cpu_pool_stages(&loaded.model),
            smt_yield: pools
                .iter()
                .find_map(|p| p.cpu.as_ref().map(|c| c.smt_yield)),
            measured_on: loaded.summary.measured_on.is_some(),
        }
    }

    fn has_param(&self, name: &str) -> bool {
        self.params.iter().any(|p| p == name)
    }
}

/// Stages drawing threads of the pool named `cpu`, with how many.
fn cpu_pool_stages(model: &crate::model::Model) -> Vec<(String, f64)> {
    let Some(cpu) = model.hardware.pools.iter().position(|p| p.name == "cpu") else {
        return Vec::new();
    };
    model
        .workload
        .stages
        .iter()
        .filter_map(|s| {
            s.demands
                .iter()
                .find(|d| d.target == crate::model::RateTarget::Pool(cpu))
                .map(|d| (s.name.clone(), d.amount))
        })
        .collect()
}

/// Writes a number as a TOML value: integers without a fraction.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The `--set KEY=VALUE` overrides that put `host` under `knobs`' scenario.
pub fn host_overrides(host: &HostProfile, knobs: &ScenarioKnobs) -> Vec<String> {
    let mut sets = vec![format!("hardware.cpu_cores={}", host.cpu.threads)];
    if knobs.pools.iter().any(|p| p == "cpu") {
        sets.push(format!("hardware.pools.cpu={}", host.cpu.threads));
        // A scenario that says where it was measured stretches a wide stage itself.
        if !knobs.measured_on {
            for (stage, threads) in &knobs.cpu_pool_stages {
                if *threads > f64::from(host.cpu.threads) {
                    sets.push(format!(
                        "workload.stages.{stage}.pool.threads={}",
                        host.cpu.threads
                    ));
                }
            }
        }
    }
    sets.extend(cpu_overrides(host, knobs));
    let ram_key = if knobs.has_param("host_ram_gib") {
        "params.host_ram_gib"
    } else {
        "hardware.host_ram_gib"
    };
    sets.push(format!("{ram_key}={}", num(host.dram.ram_gib)));
    sets.push(format!(
        "hardware.dram.capacity_gbps={}",
        num((host.dram_gbps() * 1000.0).round() / 1000.0)
    ));
    // A scenario that sizes itself by a `gpus` knob (cores, RAM, proofs in flight per
    // GPU) gets the host's count through it too.
    if knobs.has_param("gpus") {
        sets.push(format!("params.gpus={}", host.gpu.count));
    }
    sets.push(format!("hardware.gpu.count={}", host.gpu.count));
    sets.push(format!("hardware.gpu.vram_gib={}", num(host.gpu.vram_gib)));
    if let Some(k) = host.gpu.kernel_speed {
        sets.push(format!("hardware.gpu.kernel_speed={}", num(k)));
    }
    let pcie = num((host.pcie_gbps() * 1000.0).round() / 1000.0);
    if knobs.has_param("pcie_gbps") {
        sets.push(format!("params.pcie_gbps={pcie}"));
    } else {
        sets.push(format!("hardware.gpu.pcie_h2d_gbps={pcie}"));
        sets.push(format!("hardware.gpu.pcie_d2h_gbps={pcie}"));
    }
    sets
}

/// `[hardware.cpu]`: cores and SMT where the scenario models them or the host gives a
/// clock curve, the curve, and one core's speed.
fn cpu_overrides(host: &HostProfile, knobs: &ScenarioKnobs) -> Vec<String> {
    let mut sets = Vec::new();
    let curve = host.cpu.per_core_curve();
    if knobs.smt_yield.is_some() || curve.is_some() {
        let per_core = (host.cpu.threads / host.cpu.cores).max(1);
        sets.push(format!("hardware.cpu.physical_cores={}", host.cpu.cores));
        sets.push(format!("hardware.cpu.threads_per_core={per_core}"));
        let smt_yield = match (host.cpu.smt_yield, knobs.smt_yield) {
            (Some(y), _) => Some(y),
            (None, Some(y)) if y > f64::from(per_core) => Some(f64::from(per_core)),
            _ => None,
        };
        if let Some(y) = smt_yield {
            sets.push(format!("hardware.cpu.smt_yield={}", num(y)));
        }
    }
    if let Some(curve) = curve {
        let points: Vec<String> = curve
            .iter()
            .map(|&(n, r)| format!("[{}, {}]", num(n), num((r * 1e4).round() / 1e4)))
            .collect();
        sets.push(format!(
            "hardware.cpu.per_core_throughput=[{}]",
            points.join(", ")
        ));
    }
    if let Some(speed) = host.cpu.core_speed() {
        sets.push(format!(
            "hardware.cpu.core_speed={}",
            num((speed * 1e4).round() / 1e4)
        ));
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::host::{Cost, Cpu, DramSpec, GpuSpec};

    fn host() -> HostProfile {
        HostProfile {
            name: "h".into(),
            description: String::new(),
            cpu: Cpu {
                model: "c".into(),
                cores: 96,
                threads: 192,
                boost_ghz: None,
                all_core_ghz: None,
                ipc: None,
                smt_yield: None,
                per_core_throughput: None,
            },
            dram: DramSpec {
                ram_gib: 755.0,
                channels: Some(8),
                mts: Some(5200),
                efficiency: Some(0.75),
                measured_gbps: None,
            },
            gpu: GpuSpec {
                model: "g".into(),
                count: 2,
                vram_gib: 16.0,
                pcie_gen: 5,
                pcie_lanes: None,
                measured_pcie_gbps: Some(53.0),
                kernel_speed: None,
                kernel_speed_rel_sd: 0.0,
            },
            cost: Cost {
                price_usd: Some(1.0),
                power_w: None,
                hourly_usd: None,
            },
        }
    }

    #[test]
    fn knobs_win_over_hardware_keys_where_declared() {
        let knobs = ScenarioKnobs {
            params: vec!["host_ram_gib".into(), "pcie_gbps".into()],
            pools: vec!["cpu".into(), "groth16".into()],
            cpu_pool_stages: vec![("spmv".into(), 96.0), ("big".into(), 256.0)],
            smt_yield: None,
            measured_on: false,
        };
        assert_eq!(
            host_overrides(&host(), &knobs),
            [
                "hardware.cpu_cores=192",
                "hardware.pools.cpu=192",
                "workload.stages.big.pool.threads=192",
                "params.host_ram_gib=755",
                "hardware.dram.capacity_gbps=249.6",
                "hardware.gpu.count=2",
                "hardware.gpu.vram_gib=16",
                "params.pcie_gbps=53",
            ]
        );
        let bare = host_overrides(&host(), &ScenarioKnobs::default());
        assert!(bare.contains(&"hardware.host_ram_gib=755".to_string()));
        assert!(bare.contains(&"hardware.gpu.pcie_h2d_gbps=53".to_string()));
        assert!(!bare.iter().any(|s| s.starts_with("hardware.pools")));
        assert!(!bare.iter().any(|s| s.starts_with("hardware.cpu.")));
    }

    #[test]
    fn a_scenario_with_a_cpu_model_gets_the_hosts_cores_and_smt() {
        let knobs = ScenarioKnobs {
            smt_yield: Some(1.15),
            ..ScenarioKnobs::default()
        };
        let sets = host_overrides(&host(), &knobs);
        assert!(sets.contains(&"hardware.cpu.physical_cores=96".to_string()));
        assert!(sets.contains(&"hardware.cpu.threads_per_core=2".to_string()));
        assert!(!sets.iter().any(|s| s.starts_with("hardware.cpu.smt_yield")));
        // 16 cores without SMT: one thread per core, and a second thread yields nothing.
        let mut no_smt = host();
        no_smt.cpu.cores = 16;
        no_smt.cpu.threads = 16;
        let sets = host_overrides(&no_smt, &knobs);
        assert!(sets.contains(&"hardware.cpu.threads_per_core=1".to_string()));
        assert!(sets.contains(&"hardware.cpu.smt_yield=1".to_string()));
    }

    #[test]
    fn a_loaded_scenario_offers_its_knobs_pools_and_cpu_pool_stages() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/c2-32g-cuzk.toml");
        let loaded = crate::scenario::load(&path, &[]).unwrap();
        let knobs = ScenarioKnobs::of(&loaded);
        assert!(knobs.has_param("synthesis_concurrency"));
        assert!(knobs.pools.iter().any(|p| p == "cpu"));
        assert!(knobs.measured_on);
        assert!(knobs.smt_yield.is_some());
        let spmv = knobs.cpu_pool_stages.iter().find(|(s, _)| s == "spmv");
        assert!(spmv.is_some_and(|(_, threads)| *threads > 1.0), "{knobs:?}");
    }
}
