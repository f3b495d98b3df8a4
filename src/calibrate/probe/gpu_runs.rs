//! The GPU-side probes of one calibration, through the probe harness: verification, NTT
//! and MSM timings (alone and next to busy CPUs), PCIe copy rates, and DMA copy loops
//! next to streaming threads.

use super::cpu_load::NeighbourKind;
use super::harness::{GpuProbe, check_verify, num};
use super::plan::{Plan, bar};
use super::stream::{Kernel, Workers};
use crate::calibrate::error::Result;
use crate::calibrate::measurements::{
    DmaAlonePoint, DmaStreamPoint, GpuInfo, Measurements, MsmPoint, NttPoint, PciePoint,
};

fn gpu_info(probe: &GpuProbe) -> GpuInfo {
    let i = &probe.info;
    let s = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let u = |k: &str| i.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let driver_version = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        // One line per GPU: every GPU of a host runs the same driver; keep the first.
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    GpuInfo {
        name: s("gpu"),
        compute_capability: s("cc"),
        sms: u("sms"),
        vram_bytes: u("vram_bytes"),
        driver_api: u("driver_api"),
        runtime_api: u("runtime_api"),
        driver_version,
        verification: String::new(),
    }
}

/// Runs one PCIe copy loop; returns (h2d, d2h) GB/s.
pub fn pcie_once(
    probe: &mut GpuProbe,
    dir: &str,
    pinned: bool,
    secs: f64,
    mib: u64,
) -> Result<(f64, f64)> {
    let cmd = format!("pcie {dir} {} {secs} {mib}", pinned as u8);
    let v = probe.request(&cmd)?;
    Ok((num(&v, "h2d_gbps")?, num(&v, "d2h_gbps")?))
}

/// GPU probes: verification, NTT and MSM timings, PCIe, DMA vs streams.
pub fn gpu_probes(
    m: &mut Measurements,
    plan: &Plan,
    probe: &mut GpuProbe,
    workers: &Workers,
) -> Result<()> {
    let mut info = gpu_info(probe);
    let pb = bar(1, "verify");
    let v = probe.request("verify")?;
    info.verification = v.to_string();
    pb.finish_with_message("NTT round trips and MSM vs blst");
    check_verify(&v)?;
    m.gpu = Some(info);

    let pb = bar(plan.ntt_lgs.len() as u64, "ntt");
    for &lg in &plan.ntt_lgs {
        pb.set_message(format!("2^{lg}"));
        let v = probe.request(&format!("ntt {lg} {}", plan.ntt_reps))?;
        if let Some(ms) = v.get("ms").and_then(|x| x.as_object()) {
            for (variant, t) in ms {
                if let Some(t) = t.as_f64() {
                    m.ntt.push(NttPoint {
                        lg,
                        variant: variant.clone(),
                        ms: t,
                    });
                }
            }
        }
        pb.inc(1);
    }
    pb.finish_with_message("done");

    // Largest first: the harness allocates the host points once for the largest size.
    let pb = bar(plan.msm_lgs.len() as u64, "msm");
    let mut lgs = plan.msm_lgs.clone();
    lgs.sort_unstable_by(|a, b| b.cmp(a));
    for lg in lgs {
        pb.set_message(format!("2^{lg}"));
        let v = probe.request(&format!("msm {lg} {}", plan.msm_reps))?;
        m.msm.push(MsmPoint {
            lg,
            ms: num(&v, "ms")?,
        });
        pb.inc(1);
    }
    m.msm.sort_by_key(|p| p.lg);
    pb.finish_with_message("done");

    // Unpinned, as the kernel timings above: a kernel's host threads go where the
    // scheduler puts them.
    super::cpu_load::cpu_load_probe(m, plan, probe)?;
    // Refinements of the spinning curve: a failure here is reported, not fatal.
    for kind in [NeighbourKind::Streaming, NeighbourKind::Chasing] {
        if let Err(e) = super::cpu_load::msms_next_to(m, plan, probe, kind) {
            (m.skipped).push(format!("MSMs next to {} threads: {e}", kind.label()));
        }
    }

    // From here on copies run next to streams: keep the harness's threads off their cores.
    probe.pin(&super::harness::harness_cpus())?;
    let configs = [
        ("h2d", true),
        ("d2h", true),
        ("both", true),
        ("h2d", false),
        ("d2h", false),
        ("both", false),
    ];
    let pb = bar(configs.len() as u64, "pcie");
    for (dir, pinned) in configs {
        pb.set_message(format!(
            "{dir} {}",
            if pinned { "pinned" } else { "pageable" }
        ));
        let (h, d) = pcie_once(probe, dir, pinned, plan.pcie_secs, plan.pcie_mib)?;
        m.pcie.push(PciePoint {
            dir: dir.into(),
            pinned,
            mib: plan.pcie_mib,
            h2d_gbps: h,
            d2h_gbps: d,
        });
        pb.inc(1);
    }
    pb.finish_with_message("done");

    dma_probe(m, plan, probe, workers)?;
    super::multi_gpu::multi_gpu_probes(m, plan, probe, workers)
}

/// DMA copy loops alone and next to k copy streams, per pass (interleaved: odd passes
/// run the configurations in reverse order). Pinned copies use `plan.pcie_mib` and
/// `plan.dma_threads`; pageable copies each of `plan.pageable_mibs` and
/// `plan.pageable_threads` (and `plan.pageable_neighbour_threads`, kept in
/// `pageable_beside_streams`). Both sides' rates are recorded for every run.
fn dma_probe(
    m: &mut Measurements,
    plan: &Plan,
    probe: &mut GpuProbe,
    workers: &Workers,
) -> Result<()> {
    let mut configs: Vec<(&str, bool, u64, Vec<usize>)> = Vec::new();
    for dir in ["h2d", "d2h"] {
        configs.push((dir, true, plan.pcie_mib, plan.dma_threads.clone()));
    }
    let pageable: Vec<usize> = (plan.pageable_threads.iter())
        .chain(&plan.pageable_neighbour_threads)
        .copied()
        .collect();
    for &mib in &plan.pageable_mibs {
        for dir in ["h2d", "d2h"] {
            configs.push((dir, false, mib, pageable.clone()));
        }
    }
    let runs: usize = configs.iter().map(|c| 1 + c.3.len()).sum();
    let pb = bar((runs * plan.lat_passes) as u64, "dma+streams");
    for pass in 0..plan.lat_passes {
        let mut order = configs.clone();
        if pass % 2 == 1 {
            order.reverse();
        }
        for (dir, pinned, mib, threads) in order {
            let kind = if pinned { "pinned" } else { "pageable" };
            let key = if dir == "h2d" { "h2d_gbps" } else { "d2h_gbps" };
            let secs_key = if dir == "h2d" { "h2d_s" } else { "d2h_s" };
            let cmd = format!("pcie {dir} {} {} {mib}", pinned as u8, plan.dma_secs);
            pb.set_message(format!("{dir} {kind} {mib} MiB alone"));
            let v = probe.request(&cmd)?;
            let alone = num(&v, key)?;
            m.dma_alone.push(DmaAlonePoint {
                pass,
                dir: dir.into(),
                pinned,
                mib,
                gbps: alone,
                seconds: num(&v, secs_key).unwrap_or(plan.dma_secs),
            });
            pb.inc(1);
            for &asked in &threads {
                let k = asked.min(workers.len().saturating_sub(1));
                pb.set_message(format!("{dir} {kind} {mib} MiB x{k}"));
                let mix = Kernel::Copy;
                workers.run(1..1 + k, Some(mix));
                std::thread::sleep(plan.warm);
                let s0 = workers.snapshot();
                std::thread::sleep(plan.dur);
                let s1 = workers.snapshot();
                let stream_alone = s1.gbps_since(&s0);
                probe.begin(&cmd)?;
                let s0 = workers.snapshot();
                let v = probe.end(&cmd);
                let s1 = workers.snapshot();
                workers.idle();
                let v = v?;
                let into = if !pinned && plan.pageable_neighbour_threads.contains(&asked) {
                    &mut m.pageable_beside_streams
                } else {
                    &mut m.dma_stream
                };
                into.push(DmaStreamPoint {
                    dir: dir.into(),
                    pinned,
                    mix,
                    stream_threads: k,
                    stream_alone_gbps: stream_alone,
                    stream_with_gbps: s1.gbps_since(&s0),
                    dma_alone_gbps: alone,
                    dma_with_gbps: num(&v, key)?,
                    mib,
                    pass,
                    dma_seconds: num(&v, secs_key).unwrap_or(plan.dma_secs),
                });
                pb.inc(1);
            }
        }
    }
    pb.finish_with_message("done");
    Ok(())
}
