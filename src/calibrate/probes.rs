//! Runs the probes of one calibration: host bandwidth and loaded latency, then (when a
//! GPU probe harness and a GPU are there) kernels, PCIe rates and DMA-vs-stream runs.

use super::compute::{hash_rates, spread_order};
use super::data::{
    BwPoint, ComputePoint, DmaAlonePoint, DmaStreamPoint, GpuInfo, LatPoint, Measurements,
    MsmPoint, NttPoint, PagePoint, PciePoint, SettlePoint, StandalonePoint,
};
use super::gpu::{GpuProbe, check_verify, num};
use super::latency::Chaser;
use super::stream::{Kernel, Workers};
use super::sys::{HostInfo, PageAdvice, allowed_cpus, meminfo_bytes, smt_groups};
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
    /// Passes over the contention probes (loaded latency, page size, DMA next to
    /// streams); interleaved, so spreads across passes can be computed.
    pub lat_passes: usize,
    /// Length of each standalone-stream measurement (per worker and mix).
    pub standalone_dur: Duration,
    /// Streaming threads behind the loaded point of the page-size probe.
    pub page_loaded_threads: usize,
    /// Thread counts of the compute-bound probe.
    pub compute_threads: Vec<usize>,
    /// Length of each compute-bound measurement.
    pub compute_dur: Duration,
    /// Seconds per DMA loop next to streams.
    pub dma_secs: f64,
    /// Streaming threads next to pageable copies (0 is measured anyway).
    pub pageable_threads: Vec<usize>,
    /// Pageable copy sizes, MiB.
    pub pageable_mibs: Vec<u64>,
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
        let half = (n / 2).max(1).min(dma);
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
                standalone_dur: Duration::from_millis(20),
                page_loaded_threads: bg.min(1),
                compute_threads: upto(&[1], n),
                compute_dur: Duration::from_millis(20),
                dma_secs: 0.2,
                pageable_threads: vec![],
                pageable_mibs: vec![64],
            },
            Mode::Quick => Plan {
                array_bytes: 256 << 20,
                chase_bytes: 1 << 30,
                bw_threads: upto(&[1, 2, 4, 8, 12], n),
                lat_threads: upto(&[0, 1, 2, 4, 6, 8, 11], bg),
                dma_threads: upto(&[half], dma),
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
                standalone_dur: Duration::from_millis(150),
                page_loaded_threads: half.min(bg),
                compute_threads: upto(&[1, 2, 4, 8], n),
                compute_dur: Duration::from_millis(200),
                dma_secs: 0.6,
                pageable_threads: vec![half],
                pageable_mibs: vec![64, 1024],
            },
            Mode::Full => Plan {
                array_bytes: 256 << 20,
                chase_bytes: 2 << 30,
                bw_threads: upto(&[1, 2, 3, 4, 6, 8, 10, 12, 14], n),
                lat_threads: upto(&[0, 1, 2, 3, 4, 6, 8, 10, 12, 14], bg),
                dma_threads: upto(&[2, 4, 8], dma),
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
                standalone_dur: Duration::from_millis(250),
                page_loaded_threads: half.min(bg),
                compute_threads: (1..=n).collect(),
                compute_dur: Duration::from_millis(300),
                dma_secs: 1.0,
                pageable_threads: vec![half],
                pageable_mibs: vec![64, 1024],
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
    standalone_probe(m, plan, workers);
    loaded_latency_probe(m, plan, workers, chaser)?;
    Ok(())
}

/// Each worker alone, per latency mix: the standalone demand behind the offered load.
fn standalone_probe(m: &mut Measurements, plan: &Plan, workers: &Workers) {
    let pb = bar(
        (workers.len() * Kernel::LATENCY_MIXES.len()) as u64,
        "standalone",
    );
    let warm = plan.warm.min(Duration::from_millis(50));
    for mix in Kernel::LATENCY_MIXES {
        for (i, &cpu) in workers.cpus().iter().enumerate() {
            pb.set_message(format!("{} cpu{cpu}", mix.name()));
            workers.run(i..i + 1, Some(mix));
            std::thread::sleep(warm);
            let s0 = workers.snapshot();
            std::thread::sleep(plan.standalone_dur);
            let s1 = workers.snapshot();
            workers.idle();
            m.standalone.push(StandalonePoint {
                mix,
                cpu,
                gbps: s1.gbps_since(&s0),
            });
            pb.inc(1);
        }
    }
    pb.finish_with_message("done");
}

/// Standalone GB/s of the worker on `cpu` running `mix` (0 if not measured).
fn standalone_of(m: &Measurements, mix: Kernel, cpu: usize) -> f64 {
    m.standalone
        .iter()
        .find(|p| p.mix == mix && p.cpu == cpu)
        .map_or(0.0, |p| p.gbps)
}

/// Pointer chase while k streams run each latency mix, k up to all CPUs but the
/// chaser's; per point the streams' standalone demand (offered load) and achieved rates.
fn loaded_latency_probe(
    m: &mut Measurements,
    plan: &Plan,
    workers: &Workers,
    chaser: &Chaser,
) -> anyhow::Result<()> {
    // Passes interleave the mixes and rotate their order, so slow drifts of the host's
    // memory speed spread over all curves; the fit takes medians per point.
    let mixes = Kernel::LATENCY_MIXES;
    let pb = bar(
        (plan.lat_threads.len() * mixes.len() * plan.lat_passes) as u64,
        "latency",
    );
    for pass in 0..plan.lat_passes {
        for &k in &plan.lat_threads {
            let mut order = mixes;
            order.rotate_left(pass % mixes.len());
            if pass % 2 == 1 {
                order.reverse();
            }
            for mix in order {
                pb.set_message(format!("{} x{k} pass {pass}", mix.name()));
                let k = k.min(workers.len().saturating_sub(1));
                workers.run(1..1 + k, Some(mix));
                std::thread::sleep(plan.warm);
                let e0 = workers.snapshot_each();
                let s0 = workers.snapshot();
                let ns = chaser.measure(plan.dur)?;
                let s1 = workers.snapshot();
                let e1 = workers.snapshot_each();
                workers.idle();
                let stream = if k == 0 { 0.0 } else { s1.gbps_since(&s0) };
                let chase_gbps = 64.0 / ns;
                let cpus: Vec<usize> = workers.cpus()[1..1 + k].to_vec();
                let standalone: Vec<f64> = cpus.iter().map(|&c| standalone_of(m, mix, c)).collect();
                m.latency.push(LatPoint {
                    mix,
                    stream_threads: k,
                    stream_gbps: stream,
                    total_gbps: stream + chase_gbps,
                    ns,
                    pass,
                    stream_each_gbps: (1..1 + k).map(|i| e1[i].gbps_since(&e0[i])).collect(),
                    offered_gbps: standalone.iter().sum(),
                    stream_standalone_gbps: standalone,
                    stream_cpus: cpus,
                });
                pb.inc(1);
            }
        }
    }
    pb.finish_with_message("done");
    Ok(())
}

/// The pointer chase over a MADV_HUGEPAGE and a MADV_NOHUGEPAGE buffer (same size as the
/// main chase), idle and next to `plan.page_loaded_threads` copy streams, per pass.
pub fn page_size_probe(m: &mut Measurements, plan: &Plan, workers: &Workers) -> anyhow::Result<()> {
    let cpu = workers.cpus().first().copied().unwrap_or(0);
    let before = meminfo_bytes("AnonHugePages").unwrap_or(0);
    let no_huge = Chaser::start_with(cpu, plan.chase_bytes, PageAdvice::NoHuge, 0x5eed)?;
    m.nohuge_anon_huge_bytes_gained = meminfo_bytes("AnonHugePages")
        .unwrap_or(0)
        .saturating_sub(before);
    let huge = Chaser::start_with(cpu, plan.chase_bytes, PageAdvice::Huge, 0x5eed)?;
    let loads: Vec<usize> = if plan.page_loaded_threads > 0 {
        vec![0, plan.page_loaded_threads]
    } else {
        vec![0]
    };
    let pb = bar((plan.lat_passes * loads.len() * 2) as u64, "page size");
    for pass in 0..plan.lat_passes {
        for &k in &loads {
            let k = k.min(workers.len().saturating_sub(1));
            let order = if pass % 2 == 0 {
                [true, false]
            } else {
                [false, true]
            };
            for is_huge in order {
                pb.set_message(format!("{} x{k}", if is_huge { "huge" } else { "no-huge" }));
                let chaser = if is_huge { &huge } else { &no_huge };
                let mix = Kernel::Copy;
                workers.run(1..1 + k, Some(mix));
                std::thread::sleep(plan.warm);
                let s0 = workers.snapshot();
                let ns = chaser.measure(plan.dur)?;
                let s1 = workers.snapshot();
                workers.idle();
                m.pages.push(PagePoint {
                    pass,
                    huge: is_huge,
                    mix,
                    stream_threads: k,
                    stream_gbps: if k == 0 { 0.0 } else { s1.gbps_since(&s0) },
                    ns,
                });
                pb.inc(1);
            }
        }
    }
    pb.finish_with_message("done");
    Ok(())
}

/// The compute-bound hash loop on the first k CPUs (one per core first), then one SMT
/// sibling alone and both siblings of each of up to two cores.
pub fn compute_probe(m: &mut Measurements, plan: &Plan) {
    let groups = smt_groups(&allowed_cpus());
    let order = spread_order(&groups);
    let pairs: Vec<&Vec<usize>> = groups.iter().filter(|g| g.len() >= 2).take(2).collect();
    let pb = bar(
        (plan.compute_threads.len() + 2 * pairs.len()) as u64,
        "compute",
    );
    let mut record = |kind: &str, cpus: Vec<usize>| {
        pb.set_message(format!("{kind} x{}", cpus.len()));
        let per = hash_rates(&cpus, plan.compute_dur);
        m.compute.push(ComputePoint {
            kind: kind.into(),
            total_mops: per.iter().sum(),
            per_thread_mops: per,
            cpus,
        });
        pb.inc(1);
    };
    for &k in &plan.compute_threads {
        let k = k.min(order.len());
        if k > 0 {
            record("scaling", order[..k].to_vec());
        }
    }
    for g in &pairs {
        record("smt_one", vec![g[0]]);
        record("smt_pair", vec![g[0], g[1]]);
    }
    pb.finish_with_message("done");
    m.smt_groups = groups;
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

    dma_probe(m, plan, probe, workers)
}

/// DMA copy loops alone and next to k copy streams, per pass (interleaved: odd passes
/// run the configurations in reverse order). Pinned copies use `plan.pcie_mib` and
/// `plan.dma_threads`; pageable copies each of `plan.pageable_mibs` and
/// `plan.pageable_threads`. Both sides' rates are recorded for every run.
fn dma_probe(
    m: &mut Measurements,
    plan: &Plan,
    probe: &mut GpuProbe,
    workers: &Workers,
) -> anyhow::Result<()> {
    let mut configs: Vec<(&str, bool, u64, &[usize])> = Vec::new();
    for dir in ["h2d", "d2h"] {
        configs.push((dir, true, plan.pcie_mib, &plan.dma_threads));
    }
    for &mib in &plan.pageable_mibs {
        for dir in ["h2d", "d2h"] {
            configs.push((dir, false, mib, &plan.pageable_threads));
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
            for &k in threads {
                let k = k.min(workers.len().saturating_sub(1));
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
                m.dma_stream.push(DmaStreamPoint {
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
        assert_eq!(p.bw_threads, vec![1, 2, 3, 4, 6, 8, 10, 12, 14, 16]);
        assert_eq!(p.dma_threads, vec![2, 4, 8, 14]);
        let p = Plan::new(Mode::Tiny, 1);
        assert_eq!(p.lat_threads, vec![0]);
    }

    #[test]
    fn tiny_host_probes_run() {
        let mut m = Measurements::default();
        let plan = Plan::new(Mode::Tiny, allowed_cpus().len());
        let (w, c) = start_host(&mut m, &plan, false).unwrap();
        host_probes(&mut m, &plan, &w, &c).unwrap();
        assert_eq!(m.bandwidth.len(), plan.bw_threads.len() * 4);
        assert_eq!(
            m.latency.len(),
            plan.lat_threads.len() * 3 * plan.lat_passes
        );
        assert_eq!(m.standalone.len(), w.len() * 3);
        for p in &m.latency {
            assert_eq!(p.stream_standalone_gbps.len(), p.stream_threads);
            assert_eq!(p.stream_each_gbps.len(), p.stream_threads);
            assert!(p.offered_gbps >= 0.0 && p.offered_gbps.is_finite());
        }
        page_size_probe(&mut m, &plan, &w).unwrap();
        assert!(m.pages.iter().any(|p| p.huge) && m.pages.iter().any(|p| !p.huge));
        compute_probe(&mut m, &plan);
        assert!(m.compute.iter().all(|p| p.total_mops > 0.0));
        assert!(m.bandwidth.iter().all(|p| p.dram_gbps > 0.0));
        assert!(m.latency.iter().all(|p| p.ns > 0.0));
        let f = super::super::fit::fit(&m).unwrap();
        assert!(f.capacity_gbps > 0.0);
        assert!(crate::model::LatencyCurve::new(f.latency_curve).is_ok());
    }
}
