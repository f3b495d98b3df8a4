//! The short human summary `bwsim check` prints.

use std::fmt::Write;

use crate::model::{ArrivalKind, Duration, HoldResource, Model, RateTarget};

use super::Loaded;
use super::units::GIB;
use super::values::{UNLIMITED_DRAM, UNLIMITED_RAM};

pub fn render(l: &Loaded) -> String {
    let m = &l.model;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "scenario {:?} ({}), seed {}",
        m.name,
        l.source.display(),
        m.seed
    );
    if let Some(d) = &l.summary.description {
        let _ = writeln!(o, "  {}", d.trim());
    }
    if l.summary.files.len() > 1 {
        let inc: Vec<String> = l.summary.files[..l.summary.files.len() - 1]
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let _ = writeln!(o, "includes: {}", inc.join(", "));
    }
    for s in &l.summary.sets {
        let _ = writeln!(o, "--set {s}");
    }
    hardware(&mut o, m);
    stages(&mut o, m);
    arrivals(&mut o, m);
    instrumentation(&mut o, m);
    if !l.params.is_empty() {
        let _ = writeln!(o, "knobs ([params]; change with --set params.NAME=VALUE):");
        let w = l.params.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in &l.params {
            let changed = if p.value != p.default {
                format!(" (default {})", p.default)
            } else {
                String::new()
            };
            let _ = writeln!(o, "  {:w$} = {}{changed}  {}", p.name, p.value, p.doc);
        }
    }
    if !l.summary.host_scaling.is_empty() {
        let _ = writeln!(
            o,
            "stage times scaled from [workload.measured_on] to this host ({}):",
            l.summary.host_scaling.len()
        );
        for line in &l.summary.host_scaling {
            let _ = writeln!(o, "  {line}");
        }
    }
    for w in &l.summary.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

fn gib(b: u64) -> String {
    let s = format!("{:.3}", b as f64 / GIB);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s} GiB")
}

/// Seconds in a readable unit: "1.5 s", "40 ms", "12.5 us".
fn secs(x: f64) -> String {
    let (v, unit) = if x >= 1.0 || x == 0.0 {
        (x, "s")
    } else if x >= 1e-3 {
        (x * 1e3, "ms")
    } else {
        (x * 1e6, "us")
    };
    let t = format!("{v:.3}");
    format!("{} {unit}", t.trim_end_matches('0').trim_end_matches('.'))
}

fn hardware(o: &mut String, m: &Model) {
    let h = &m.hardware;
    let pts = h.dram.latency.points();
    let lat = if pts.len() > 1 {
        format!(
            ", latency {} ns idle -> {} ns at {:.0}% load",
            pts[0].1,
            pts[pts.len() - 1].1,
            pts[pts.len() - 1].0 * 100.0
        )
    } else {
        ", flat latency".into()
    };
    let ram = if h.host_ram_bytes == UNLIMITED_RAM {
        "host RAM not modelled".to_string()
    } else {
        format!("{} host RAM", gib(h.host_ram_bytes))
    };
    let dram = if h.dram.capacity_gbps == UNLIMITED_DRAM {
        "DRAM not modelled".to_string()
    } else {
        format!("DRAM {:.1} GB/s{lat}", h.dram.capacity_gbps)
    };
    let _ = writeln!(o, "hardware: {} cores, {ram}, {dram}", h.cpu_cores);
    if let Some(g) = h.gpus.first() {
        let l = &g.link;
        let _ = writeln!(
            o,
            "  {} GPU(s), {} VRAM each; PCIe pinned h2d {} / d2h {} GB/s, pageable {} / {} GB/s{}",
            h.gpus.len(),
            gib(g.vram_bytes),
            l.h2d_gbps,
            l.d2h_gbps,
            l.pageable_h2d_gbps,
            l.pageable_d2h_gbps,
            l.duplex_gbps
                .map(|d| format!(", duplex {d} GB/s"))
                .unwrap_or_default()
        );
        for (dir, st) in [
            ("h2d", &l.pageable_h2d_staging),
            ("d2h", &l.pageable_d2h_staging),
        ] {
            if let Some(st) = st {
                let _ = writeln!(
                    o,
                    "  pageable {dir} staged: setup {} s + bytes at min(memcpy {} GB/s, DMA), memcpy {}{}",
                    st.setup_s,
                    st.memcpy_gbps,
                    st.memcpy_pace.name(),
                    match (&st.beside_streams, st.latency_exponent) {
                        (Some(c), _) => format!(
                            ", rate / alone by streaming threads per CPU beside it: {}",
                            (c.points().iter())
                                .map(|(x, r)| format!("{x} -> {r}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        (None, 1.0) => String::new(),
                        (None, e) => format!(" as (L(0)/L)^{e}"),
                    }
                );
            }
        }
    } else {
        let _ = writeln!(o, "  no GPU");
    }
    if !h.locks.is_empty() {
        let locks: Vec<String> = h
            .locks
            .iter()
            .map(|l| {
                format!(
                    "{} ({}{})",
                    l.name,
                    l.capacity,
                    if l.per_gpu { " per GPU" } else { "" }
                )
            })
            .collect();
        let _ = writeln!(o, "  locks: {}", locks.join(", "));
    }
    if !h.pools.is_empty() {
        let pools: Vec<String> = h
            .pools
            .iter()
            .map(|p| format!("{} ({} threads)", p.name, p.threads))
            .collect();
        let _ = writeln!(o, "  pools: {}", pools.join(", "));
    }
}

fn dist(d: &Duration) -> &'static str {
    match d {
        Duration::Fixed(_) => "fixed",
        Duration::Exponential { .. } => "exp",
        Duration::Normal { .. } => "normal",
        Duration::LogNormal { .. } => "lognormal",
        Duration::Uniform { .. } => "uniform",
        Duration::Gamma { .. } => "gamma",
        Duration::Erlang { .. } => "erlang",
        Duration::Weibull { .. } => "weibull",
    }
}

fn stages(o: &mut String, m: &Model) {
    let w = &m.workload;
    let _ = writeln!(
        o,
        "workload: {} partition(s) per job, {} stages (topological order; standalone means)",
        w.partitions,
        w.stages.len()
    );
    let width = w.stages.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in &w.stages {
        let mut parts = vec![format!(
            "{} {}",
            secs(s.duration.mean_s()),
            dist(&s.duration)
        )];
        parts.push(
            if s.per_partition {
                "per partition"
            } else {
                "per job"
            }
            .into(),
        );
        if !s.after.is_empty() {
            let a: Vec<&str> = s.after.iter().map(|&i| w.stages[i].name.as_str()).collect();
            parts.push(format!("after {}", a.join(", ")));
        }
        for h in &s.holds {
            let what = match h.resource {
                HoldResource::Cores => format!("{} cores", h.amount),
                HoldResource::HostRam => format!("{} RAM", gib(h.amount)),
                HoldResource::Vram => format!("{} VRAM", gib(h.amount)),
                HoldResource::Lock(id) => {
                    format!("{} x {}", h.amount, m.hardware.locks[id].name)
                }
            };
            let until = if h.until == w.stages.iter().position(|x| x.name == s.name).unwrap_or(0) {
                String::new()
            } else {
                format!(" until {} ends", w.stages[h.until].name)
            };
            parts.push(format!("holds {what}{until}"));
        }
        for d in &s.demands {
            parts.push(match d.target {
                RateTarget::Dram => format!("DRAM {:.2} GB/s", d.amount),
                RateTarget::PcieH2d => format!("PCIe h2d {:.2} GB/s", d.amount),
                RateTarget::PcieD2h => format!("PCIe d2h {:.2} GB/s", d.amount),
                RateTarget::GpuCompute => format!("GPU {}", d.amount),
                RateTarget::Pool(p) => {
                    format!("{} threads of {}", d.amount, m.hardware.pools[p].name)
                }
            });
        }
        if s.latency_bound_frac > 0.0 {
            parts.push(format!(
                "{:.0}% latency-bound",
                s.latency_bound_frac * 100.0
            ));
        }
        if s.gpu_kernel {
            parts.push("GPU kernel".into());
        }
        let _ = writeln!(o, "  {:width$}  {}", s.name, parts.join("; "));
    }
}

fn arrivals(o: &mut String, m: &Model) {
    let a = &m.arrivals;
    let kind = match &a.kind {
        ArrivalKind::Closed { concurrency } => format!("closed loop, {concurrency} jobs in flight"),
        ArrivalKind::Poisson { rate_per_s } => format!("Poisson, {rate_per_s} jobs/s"),
        ArrivalKind::Trace { times_s } => format!(
            "trace of {} arrivals over {}",
            times_s.len(),
            secs(times_s.last().copied().unwrap_or(0.0))
        ),
    };
    let _ = writeln!(
        o,
        "arrivals: {kind}; {} jobs, first {} are warm-up",
        a.jobs, a.warmup_jobs
    );
}

fn instrumentation(o: &mut String, m: &Model) {
    let i = &m.instrumentation;
    if i.markers.is_empty() {
        return;
    }
    let ms: Vec<String> = i
        .markers
        .iter()
        .map(|mk| {
            format!(
                "{} at {}:{}",
                mk.name, m.workload.stages[mk.stage].name, mk.edge
            )
        })
        .collect();
    let _ = writeln!(o, "markers: {}", ms.join(", "));
    for s in &i.spans {
        let _ = writeln!(
            o,
            "span {}: {} .. {}{}",
            s.name,
            i.markers[s.from].name,
            i.markers[s.to].name,
            if s.gpu_busy {
                " (counts as GPU busy)"
            } else {
                ""
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn seconds_read_naturally() {
        assert_eq!(secs(1.5), "1.5 s");
        assert_eq!(secs(0.04), "40 ms");
        assert_eq!(secs(0.0000125), "12.5 us");
        assert_eq!(secs(0.0), "0 s");
    }

    #[test]
    fn summary_lists_hardware_stages_arrivals_and_knobs() {
        let text = r#"
            [params]
            n = { default = 3, doc = "jobs in flight" }
            [hardware]
            cpu_cores = 8
            host_ram_gib = 64
            dram = { capacity_gbps = 100, latency_curve = [[0, 90], [1, 270]] }
            [hardware.pools]
            msm = 4
            [[workload.stages]]
            name = "b"
            after = ["a"]
            duration_s = "40 ms"
            pool = { name = "msm", threads = 2 }
            [[workload.stages]]
            name = "a"
            duration = { dist = "exponential", mean_s = 1.5 }
            cores = 2
            holds = [{ resource = "host_ram", gib = 14, until = "b" }]
            dram_gbps = 20
            latency_bound_frac = 0.25
            [arrivals]
            kind = "closed"
            concurrency = "$n"
            jobs = 10
        "#;
        let l = crate::scenario::load_str(text, Path::new("x.toml"), &[]).unwrap();
        let s = l.summary();
        for want in [
            "8 cores, 64 GiB host RAM, DRAM 100.0 GB/s, latency 90 ns idle -> 270 ns",
            "pools: msm (4 threads)",
            "a  1.5 s exp; per partition; holds 2 cores; holds 14 GiB RAM until b ends; DRAM 20.00 GB/s; 25% latency-bound",
            "b  40 ms fixed; per partition; after a; 2 threads of msm",
            "closed loop, 3 jobs in flight; 10 jobs",
            "n = 3  jobs in flight",
        ] {
            assert!(s.contains(want), "missing {want:?} in\n{s}");
        }
    }
}
