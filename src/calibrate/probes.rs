//! Runs the probes of one calibration: host bandwidth and loaded latency, then (when a
//! GPU probe harness and a GPU are there) kernels, PCIe rates and DMA-vs-stream runs.

use super::data::{
    BwPoint, DmaStreamPoint, GpuInfo, LatPoint, Measurements, MsmPoint, NttPoint, PciePoint,
    SettlePoint,
};
use super::gpu::{GpuProbe, check_verify, num};
use super::latency::Chaser;
use super::stream::{Kernel, Workers};
use super::sys::{HostInfo, allowed_cpus, meminfo_bytes};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// How long and how big the probes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Seconds; small buffers (CI tests). Numbers are cache-bound, not DRAM.
    Tiny,
    /// Under 2 minutes.
    Quick,
    /// Under 10 minutes.
    Full,
}

impl Mode {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Tiny => "tiny",
            Mode::Quick => "quick",
            Mode::Full => "full",
        }
    }
}

/// Sizes, durations and sweep points derived from a mode and the core count.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Bytes per array (three per streaming thread).
    pub array_bytes: usize,
    /// Pointer-chase buffer bytes.
    pub chase_bytes: usize,
    /// Thread counts of the bandwidth sweep.
    pub bw_threads: Vec<usize>,
    /// Streaming threads behind the pointer chase.
    pub lat_threads: Vec<usize>,
    /// Streaming threads for the DMA-vs-stream runs.
    pub dma_threads: Vec<usize>,
    /// Warm-up before each measurement.
    pub warm: Duration,
    /// Length of each measurement.
    pub dur: Duration,
    /// Seconds per PCIe copy loop.
    pub pcie_secs: f64,
    /// MiB per PCIe copy.
    pub pcie_mib: u64,
    /// NTT sizes (log2).
    pub ntt_lgs: Vec<u32>,
    /// MSM sizes (log2).
    pub msm_lgs: Vec<u32>,
    /// Timed repetitions per NTT size.
    pub ntt_reps: u32,
    /// Timed repetitions per MSM size.
    pub msm_reps: u32,
    /// Longest settling phase before measuring.
    pub settle_max: Duration,
    /// Passes over the loaded-latency sweep (medians are fitted).
    pub lat_passes: usize,
}

fn upto(list: &[usize], max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = list.iter().copied().filter(|&k| k <= max).collect();
    if !v.contains(&max) {
        v.push(max);
    }
    v.sort_unstable();
    v.dedup();
    v
}

impl Plan {
    /// The plan for `mode` on a host with `cores` CPUs.
    pub fn new(mode: Mode, cores: usize) -> Self {
        let n = cores.max(1);
        let bg = n.saturating_sub(1); // the chase owns one CPU
        let dma = n.saturating_sub(2).max(1); // and the GPU harness another
        match mode {
            Mode::Tiny => Plan {
                array_bytes: 2 << 20,
                chase_bytes: 8 << 20,
                bw_threads: upto(&[1], n),
                lat_threads: upto(&[0], bg),
                dma_threads: upto(&[], dma),
                warm: Duration::from_millis(5),
                dur: Duration::from_millis(40),
                pcie_secs: 0.2,
                pcie_mib: 64,
                ntt_lgs: vec![12, 14],
                msm_lgs: vec![12, 14],
                ntt_reps: 2,
                msm_reps: 2,
                settle_max: Duration::ZERO,
                lat_passes: 1,
            },
            Mode::Quick => Plan {
                array_bytes: 256 << 20,
                chase_bytes: 1 << 30,
                bw_threads: upto(&[1, 2, 4, 8, 12], n),
                lat_threads: upto(&[0, 1, 2, 4, 6, 8, 11], bg),
                dma_threads: upto(&[], dma),
                warm: Duration::from_millis(100),
                dur: Duration::from_millis(400),
                pcie_secs: 1.0,
                pcie_mib: 1024,
                ntt_lgs: (20..=27).collect(),
                msm_lgs: (20..=26).collect(),
                ntt_reps: 5,
                msm_reps: 3,
                settle_max: Duration::from_secs(15),
                lat_passes: 1,
            },
            Mode::Full => Plan {
                array_bytes: 256 << 20,
                chase_bytes: 2 << 30,
                bw_threads: (1..=n).collect(),
                lat_threads: (0..=bg).collect(),
                dma_threads: upto(&[4, 8], dma),
                warm: Duration::from_millis(150),
                dur: Duration::from_millis(1000),
                pcie_secs: 2.0,
                pcie_mib: 2048,
                ntt_lgs: (20..=27).collect(),
                msm_lgs: (20..=27).collect(),
                ntt_reps: 10,
                msm_reps: 5,
                settle_max: Duration::from_secs(40),
                lat_passes: 2,
            },
        }
    }
}

/// A progress bar for one probe (hidden when stderr is not a terminal).
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:>14} [{bar:30}] {pos}/{len} {elapsed} {msg}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(what.to_string());
    pb
}

/// Runs all streams (copy) and an idle chase in rounds until two consecutive rounds
/// agree within 3% (at least three rounds) or `plan.settle_max` has passed. Freshly
/// mapped memory on a VM (nested page tables, host huge pages) is slower for a while.
pub fn settle(
    m: &mut Measurements,
    plan: &Plan,
    workers: &Workers,
    chaser: &Chaser,
) -> anyhow::Result<()> {
    if plan.settle_max.is_zero() {
        return Ok(());
    }
    let t0 = std::time::Instant::now();
    let pb = bar(plan.settle_max.as_secs(), "settle");
    let round = Duration::from_millis(700);
    loop {
        let gbps = workers.measure(
            workers.len().saturating_sub(1),
            Kernel::Copy,
            Duration::from_millis(50),
            round,
        );
        let ns = chaser.measure(Duration::from_millis(300))?;
        let t = t0.elapsed();
        m.settle.push(SettlePoint {
            t_s: t.as_secs_f64(),
            stream_gbps: gbps,
            idle_ns: ns,
        });
        pb.set_position(t.as_secs());
        pb.set_message(format!("{gbps:.1} GB/s, idle {ns:.0} ns"));
        let n = m.settle.len();
        if n >= 3 {
            let (a, b) = (&m.settle[n - 2], &m.settle[n - 1]);
            let close = |x: f64, y: f64| (x - y).abs() <= 0.03 * x.abs().max(y.abs());
            if close(a.stream_gbps, b.stream_gbps) && close(a.idle_ns, b.idle_ns) {
                break;
            }
        }
        if t >= plan.settle_max {
            m.skipped.push(format!(
                "settling: memory speed still moving after {:.0} s; measuring anyway",
                t.as_secs_f64()
            ));
            break;
        }
    }
    pb.finish_with_message("done");
    Ok(())
}

/// Host memory probes: fills `m.bandwidth` and `m.latency`.
pub fn host_probes(
    m: &mut Measurements,
    plan: &Plan,
    workers: &Workers,
    chaser: &Chaser,
) -> anyhow::Result<()> {
    let pb = bar(
        (plan.bw_threads.len() * Kernel::ALL.len()) as u64,
        "bandwidth",
    );
    for kernel in Kernel::ALL {
        for &k in &plan.bw_threads {
            pb.set_message(format!("{} x{k}", kernel.name()));
            let dram = workers.measure(k.min(workers.len()), kernel, plan.warm, plan.dur);
            m.bandwidth.push(BwPoint {
                kernel,
                threads: k,
                dram_gbps: dram,
                stream_gbps: dram * kernel.stream_fraction(),
            });
            pb.inc(1);
        }
    }
    pb.finish_with_message("done");
    // Passes interleave the mixes and alternate their order, so slow drifts of the
    // host's memory speed spread over both curves; the fit takes medians per point.
    let pb = bar(
        (plan.lat_threads.len() * 2 * plan.lat_passes) as u64,
        "latency",
    );
    for pass in 0..plan.lat_passes {
        for &k in &plan.lat_threads {
            let mixes = if pass % 2 == 0 {
                [Kernel::Read, Kernel::Copy]
            } else {
                [Kernel::Copy, Kernel::Read]
            };
            for mix in mixes {
                pb.set_message(format!("{} x{k}", mix.name()));
                let k = k.min(workers.len().saturating_sub(1));
                workers.run(1..1 + k, Some(mix));
                std::thread::sleep(plan.warm);
                let s0 = workers.snapshot();
                let ns = chaser.measure(plan.dur)?;
                let s1 = workers.snapshot();
                workers.idle();
                let stream = if k == 0 { 0.0 } else { s1.gbps_since(&s0) };
                let chase_gbps = 64.0 / ns;
                m.latency.push(LatPoint {
                    mix,
                    stream_threads: k,
                    stream_gbps: stream,
                    total_gbps: stream + chase_gbps,
                    ns,
                });
                pb.inc(1);
            }
        }
    }
    pb.finish_with_message("done");
    Ok(())
}

fn gpu_info(probe: &GpuProbe) -> GpuInfo {
    let i = &probe.info;
    let s = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    let u = |k: &str| i.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let driver_version = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
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
) -> anyhow::Result<(f64, f64)> {
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
) -> anyhow::Result<()> {
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

    // From here on copies run next to streams: keep the harness's threads off their cores.
    probe.pin(&super::gpu::harness_cpus())?;
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

    let dma_cfg = [("h2d", true), ("d2h", true), ("h2d", false), ("d2h", false)];
    let pb = bar(
        (dma_cfg.len() * plan.dma_threads.len()) as u64,
        "dma+streams",
    );
    for (dir, pinned) in dma_cfg {
        let alone = m
            .pcie
            .iter()
            .find(|p| p.dir == dir && p.pinned == pinned)
            .map(|p| if dir == "h2d" { p.h2d_gbps } else { p.d2h_gbps })
            .unwrap_or(0.0);
        for &k in &plan.dma_threads {
            let k = k.min(workers.len().saturating_sub(1));
            pb.set_message(format!(
                "{dir} {} x{k}",
                if pinned { "pinned" } else { "pageable" }
            ));
            let mix = Kernel::Copy;
            workers.run(1..1 + k, Some(mix));
            std::thread::sleep(plan.warm);
            let s0 = workers.snapshot();
            std::thread::sleep(plan.dur);
            let s1 = workers.snapshot();
            let stream_alone = s1.gbps_since(&s0);
            let cmd = format!(
                "pcie {dir} {} {} {}",
                pinned as u8, plan.pcie_secs, plan.pcie_mib
            );
            probe.begin(&cmd)?;
            let s0 = workers.snapshot();
            let v = probe.end(&cmd);
            let s1 = workers.snapshot();
            workers.idle();
            let v = v?;
            let dma = num(&v, if dir == "h2d" { "h2d_gbps" } else { "d2h_gbps" })?;
            m.dma_stream.push(DmaStreamPoint {
                dir: dir.into(),
                pinned,
                mix,
                stream_threads: k,
                stream_alone_gbps: stream_alone,
                stream_with_gbps: s1.gbps_since(&s0),
                dma_alone_gbps: alone,
                dma_with_gbps: dma,
            });
            pb.inc(1);
        }
    }
    pb.finish_with_message("done");
    Ok(())
}

/// Starts the streaming workers (one per allowed CPU) and the pointer chaser (CPU 0),
/// recording host facts and huge-page use in `m`.
pub fn start_host(
    m: &mut Measurements,
    plan: &Plan,
    hugepages: bool,
) -> anyhow::Result<(Workers, Chaser)> {
    let host = HostInfo::gather();
    let cpus = allowed_cpus();
    let before = meminfo_bytes("AnonHugePages").unwrap_or(0);
    let pb = bar(2, "allocate");
    pb.set_message(format!(
        "{} threads x 3 x {} MiB",
        cpus.len(),
        plan.array_bytes >> 20
    ));
    let workers = Workers::start(&cpus, plan.array_bytes, hugepages)?;
    pb.inc(1);
    pb.set_message(format!("pointer chase {} MiB", plan.chase_bytes >> 20));
    let chaser = Chaser::start(cpus[0], plan.chase_bytes, hugepages, 0x5eed)?;
    pb.inc(1);
    pb.finish_with_message("done");
    let after = meminfo_bytes("AnonHugePages").unwrap_or(0);
    m.host = Some(host);
    m.hugepages_advised = hugepages;
    m.anon_huge_bytes_gained = after.saturating_sub(before);
    m.stream_array_bytes = workers.array_bytes as u64;
    m.chase_bytes = chaser.bytes as u64;
    Ok((workers, chaser))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_respect_core_count() {
        let p = Plan::new(Mode::Quick, 4);
        assert_eq!(p.bw_threads, vec![1, 2, 4]);
        assert_eq!(p.lat_threads, vec![0, 1, 2, 3]);
        let p = Plan::new(Mode::Full, 16);
        assert_eq!(p.bw_threads.len(), 16);
        assert_eq!(p.dma_threads, vec![4, 8, 14]);
        let p = Plan::new(Mode::Tiny, 1);
        assert_eq!(p.lat_threads, vec![0]);
    }

    #[test]
    fn tiny_host_probes_run() {
        let mut m = Measurements::default();
        let plan = Plan::new(Mode::Tiny, allowed_cpus().len());
        let (w, c) = start_host(&mut m, &plan, false).unwrap();
        host_probes(&mut m, &plan, &w, &c).unwrap();
        assert_eq!(m.bandwidth.len(), plan.bw_threads.len() * 3);
        assert_eq!(
            m.latency.len(),
            plan.lat_threads.len() * 2 * plan.lat_passes
        );
        assert!(m.bandwidth.iter().all(|p| p.dram_gbps > 0.0));
        assert!(m.latency.iter().all(|p| p.ns > 0.0));
        let f = super::super::fit::fit(&m).unwrap();
        assert!(f.capacity_gbps > 0.0);
        assert!(crate::model::LatencyCurve::new(f.latency_curve).is_ok());
    }
}
