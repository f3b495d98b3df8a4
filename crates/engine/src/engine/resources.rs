//! The resource table: every rate resource (a constraint of the fluid model) and every
//! holdable instance the engine runs with, built once from the hardware, with typed ids.
//! Observers see the same tables, in the same order, through `Observer::resources`.

use crate::model::{Hardware, HoldResource, RateTarget};

use super::holdable::HoldSlot;
/// The typed index into this table's rates (defined beside the records observers see).
pub use super::ids::RateId;
use super::observer::{HoldResourceInfo, RateKind, RateResourceInfo};

/// The rate resources of one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuRates {
    /// Its compute (capacity 1 = the whole GPU).
    pub compute: RateId,
    /// Host-to-device direction of its PCIe link.
    pub h2d: RateId,
    /// Device-to-host direction of its PCIe link.
    pub d2h: RateId,
    /// Both directions together, when any GPU of the host declares a duplex limit.
    pub duplex: Option<RateId>,
}

/// Every resource of a run. Rate order: DRAM, pools, then per GPU compute, H2D, D2H
/// (+ duplex). Hold order: cores, host RAM, VRAM per GPU, then locks (per GPU or global).
#[derive(Debug, Clone)]
pub struct Resources {
    /// Rate resources, as observers see them.
    pub rates: Vec<RateResourceInfo>,
    /// Holdable instances, as observers see them.
    pub holds: Vec<HoldResourceInfo>,
    /// Host DRAM bandwidth.
    pub dram: RateId,
    /// Thread pools, by model pool id.
    pub pools: Vec<RateId>,
    /// Per GPU, by GPU index.
    pub gpus: Vec<GpuRates>,
    cores: HoldSlot,
    host_ram: HoldSlot,
    /// The per-GPU VRAM family (None without GPUs).
    vram: Option<HoldSlot>,
    /// Locks, by model lock id.
    locks: Vec<HoldSlot>,
}

impl Resources {
    /// Builds the table for `hw`.
    pub fn from_hardware(hw: &Hardware) -> Self {
        let mut rates = Vec::new();
        let rate = |rates: &mut Vec<RateResourceInfo>, info: RateResourceInfo| {
            rates.push(info);
            RateId::from_index(rates.len() - 1)
        };
        let dram = rate(
            &mut rates,
            RateResourceInfo {
                name: "dram".into(),
                kind: RateKind::Dram,
                capacity: hw.dram.capacity_gbps,
                gpu: None,
            },
        );
        let pools = hw
            .pools
            .iter()
            .map(|p| {
                rate(
                    &mut rates,
                    RateResourceInfo {
                        name: format!("pool:{}", p.name),
                        kind: RateKind::Pool,
                        capacity: p.threads,
                        gpu: None,
                    },
                )
            })
            .collect();
        let duplex = hw.gpus.iter().any(|g| g.link.duplex_gbps.is_some());
        let mut gpus = Vec::with_capacity(hw.gpus.len());
        for (g, gpu) in hw.gpus.iter().enumerate() {
            let mut push = |suffix: &str, kind, capacity| {
                rate(
                    &mut rates,
                    RateResourceInfo {
                        name: format!("{}.{suffix}", gpu.name),
                        kind,
                        capacity,
                        gpu: Some(g as u32),
                    },
                )
            };
            let compute = push("compute", RateKind::GpuCompute, 1.0);
            let h2d = push("pcie_h2d", RateKind::PcieH2d, gpu.link.h2d_gbps);
            let d2h = push("pcie_d2h", RateKind::PcieD2h, gpu.link.d2h_gbps);
            let duplex = duplex.then(|| {
                let both = gpu.link.h2d_gbps + gpu.link.d2h_gbps;
                push(
                    "pcie_duplex",
                    RateKind::PcieDuplex,
                    gpu.link.duplex_gbps.unwrap_or(both),
                )
            });
            gpus.push(GpuRates {
                compute,
                h2d,
                d2h,
                duplex,
            });
        }

        let mut holds = Vec::new();
        let hold = |holds: &mut Vec<HoldResourceInfo>, info: HoldResourceInfo| {
            holds.push(info);
            holds.len() - 1
        };
        let cores = HoldSlot::Global(hold(
            &mut holds,
            HoldResourceInfo {
                name: "cores".into(),
                capacity: hw.cpu_cores as u64,
                resource: HoldResource::Cores,
                gpu: None,
            },
        ));
        let host_ram = HoldSlot::Global(hold(
            &mut holds,
            HoldResourceInfo {
                name: "host_ram".into(),
                capacity: hw.host_ram_bytes,
                resource: HoldResource::HostRam,
                gpu: None,
            },
        ));
        let mut vram = None;
        for (g, gpu) in hw.gpus.iter().enumerate() {
            let i = hold(
                &mut holds,
                HoldResourceInfo {
                    name: format!("{}.vram", gpu.name),
                    capacity: gpu.vram_bytes,
                    resource: HoldResource::Vram,
                    gpu: Some(g as u32),
                },
            );
            vram.get_or_insert(HoldSlot::PerGpu(i));
        }
        let mut locks = Vec::with_capacity(hw.locks.len());
        for (l, lock) in hw.locks.iter().enumerate() {
            if lock.per_gpu {
                let mut first = None;
                for (g, gpu) in hw.gpus.iter().enumerate() {
                    let i = hold(
                        &mut holds,
                        HoldResourceInfo {
                            name: format!("{}@{}", lock.name, gpu.name),
                            capacity: lock.capacity,
                            resource: HoldResource::Lock(l),
                            gpu: Some(g as u32),
                        },
                    );
                    first.get_or_insert(i);
                }
                // Without GPUs the family is empty; stages holding it are refused.
                locks.push(HoldSlot::PerGpu(first.unwrap_or(holds.len())));
            } else {
                locks.push(HoldSlot::Global(hold(
                    &mut holds,
                    HoldResourceInfo {
                        name: lock.name.clone(),
                        capacity: lock.capacity,
                        resource: HoldResource::Lock(l),
                        gpu: None,
                    },
                )));
            }
        }
        Self {
            rates,
            holds,
            dram,
            pools,
            gpus,
            cores,
            host_ram,
            vram,
            locks,
        }
    }

    /// The capacities of the rate resources, in table order.
    pub fn capacities(&self) -> Vec<f64> {
        self.rates.iter().map(|r| r.capacity).collect()
    }

    /// Where a hold on `resource` is taken, or why it cannot be. Public so that a real
    /// executor (bwsim replay) lays out its holds exactly as the simulation does.
    pub fn hold_slot(&self, resource: HoldResource) -> Result<HoldSlot, MissingHold> {
        match resource {
            HoldResource::Cores => Ok(self.cores),
            HoldResource::HostRam => Ok(self.host_ram),
            HoldResource::Vram => self.vram.ok_or(MissingHold::NoGpu),
            HoldResource::Lock(l) => match self.locks.get(l) {
                None => Err(MissingHold::NoLock(l)),
                Some(HoldSlot::PerGpu(_)) if self.gpus.is_empty() => Err(MissingHold::NoGpu),
                Some(&slot) => Ok(slot),
            },
        }
    }

    /// The rate resources an activity bound to GPU `gpu` draws on for `target`: one, or
    /// two for a PCIe direction when the link also has a duplex limit. None when the
    /// target does not exist on this host.
    pub(super) fn rate_targets(
        &self,
        target: RateTarget,
        gpu: usize,
    ) -> Option<(RateId, Option<RateId>)> {
        let g = || self.gpus.get(gpu);
        Some(match target {
            RateTarget::Dram => (self.dram, None),
            RateTarget::Pool(p) => (*self.pools.get(p)?, None),
            RateTarget::GpuCompute => (g()?.compute, None),
            RateTarget::PcieH2d => (g()?.h2d, g()?.duplex),
            RateTarget::PcieD2h => (g()?.d2h, g()?.duplex),
        })
    }
}

/// Why a hold cannot be placed on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingHold {
    /// A per-GPU resource on a host without GPUs.
    NoGpu,
    /// The lock id does not exist.
    NoLock(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::*;

    fn gpu(name: &str, duplex: Option<f64>) -> Gpu {
        Gpu {
            name: name.into(),
            vram_bytes: 1 << 30,
            link: PcieLink {
                h2d_gbps: 25.0,
                d2h_gbps: 20.0,
                duplex_gbps: duplex,
                pageable_h2d_gbps: 10.0,
                pageable_d2h_gbps: 10.0,
                h2d_dram_factor: 1.0,
                d2h_dram_factor: 1.0,
                pageable_copy_dram_factor: 2.0,
                pageable_h2d_staging: None,
                pageable_d2h_staging: None,
                latency_frac: Default::default(),
            },
        }
    }

    fn hw(gpus: Vec<Gpu>) -> Hardware {
        Hardware {
            cpu_cores: 8,
            host_ram_bytes: 1 << 34,
            dram: Dram {
                capacity_gbps: 100.0,
                latency: LatencyCurve::flat(),
                efficiency_loss_per_stream: 0.0,
                sharing: Default::default(),
            },
            gpus,
            locks: vec![
                Lock {
                    name: "lock:a".into(),
                    capacity: 1,
                    per_gpu: true,
                },
                Lock {
                    name: "lock:b".into(),
                    capacity: 2,
                    per_gpu: false,
                },
            ],
            pools: vec![Pool {
                name: "p".into(),
                threads: 16.0,
                sharing: Default::default(),
                cpu: None,
            }],
        }
    }

    #[test]
    fn tables_have_the_documented_order_and_names() {
        let r = Resources::from_hardware(&hw(vec![gpu("gpu0", None), gpu("gpu1", Some(30.0))]));
        let names: Vec<_> = r.rates.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "dram",
                "pool:p",
                "gpu0.compute",
                "gpu0.pcie_h2d",
                "gpu0.pcie_d2h",
                "gpu0.pcie_duplex",
                "gpu1.compute",
                "gpu1.pcie_h2d",
                "gpu1.pcie_d2h",
                "gpu1.pcie_duplex"
            ]
        );
        // A GPU without its own duplex limit gets h2d + d2h.
        assert_eq!(r.rates[5].capacity, 45.0);
        assert_eq!(r.rates[9].capacity, 30.0);
        assert_eq!(r.rates[r.dram.index()].kind, RateKind::Dram);
        let holds: Vec<_> = r.holds.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            holds,
            [
                "cores",
                "host_ram",
                "gpu0.vram",
                "gpu1.vram",
                "lock:a@gpu0",
                "lock:a@gpu1",
                "lock:b"
            ]
        );
        assert_eq!(r.hold_slot(HoldResource::Vram), Ok(HoldSlot::PerGpu(2)));
        assert_eq!(r.hold_slot(HoldResource::Lock(0)), Ok(HoldSlot::PerGpu(4)));
        assert_eq!(r.hold_slot(HoldResource::Lock(1)), Ok(HoldSlot::Global(6)));
        assert_eq!(
            r.hold_slot(HoldResource::Lock(2)),
            Err(MissingHold::NoLock(2))
        );
        let g1 = r.gpus[1];
        assert_eq!(
            r.rate_targets(RateTarget::PcieD2h, 1),
            Some((g1.d2h, g1.duplex))
        );
        assert_eq!(r.rate_targets(RateTarget::Pool(1), 0), None);
    }

    #[test]
    fn without_gpus_per_gpu_resources_are_missing() {
        let r = Resources::from_hardware(&hw(vec![]));
        assert_eq!(r.rates.len(), 2);
        assert_eq!(r.hold_slot(HoldResource::Vram), Err(MissingHold::NoGpu));
        assert_eq!(r.hold_slot(HoldResource::Lock(0)), Err(MissingHold::NoGpu));
        assert_eq!(r.rate_targets(RateTarget::GpuCompute, 0), None);
        assert_eq!(r.rate_targets(RateTarget::Dram, 0), Some((r.dram, None)));
    }
}
