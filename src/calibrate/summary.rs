//! What `bwsim calibrate` prints: host facts, settle rounds, bandwidth, the fitted
//! capacity, latency curves, PCIe, kernel models, contention fits and warnings.

use super::fit::{Fitted, contention::ContentionFit};
use super::measurements::Measurements;
use super::probe::stream;

/// `writeln!` into a String (which cannot fail).
macro_rules! w {
    ($out:expr, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($t)*);
    }};
}

/// The measurements and the fit of one calibration, as `bwsim calibrate` prints them
/// (the caller prints: stdout may be full or closed; the fit's warnings are the
/// caller's to print too, see [`warnings`]).
pub fn summary(m: &Measurements, f: &Fitted) -> String {
    let mut text = String::new();
    let out = &mut text;
    if let Some(h) = &m.host {
        w!(
            out,
            "host: {} CPUs, {}, THP {} (buffers {}advised MADV_HUGEPAGE; AnonHugePages +{} MiB)",
            h.cores,
            h.cpu_model,
            h.thp_mode(),
            if m.hugepages_advised { "" } else { "not " },
            m.anon_huge_bytes_gained >> 20
        );
    }
    if let Some(c) = m.chase_huge_coverage {
        w!(
            out,
            "pointer-chase buffer: {:.0}% huge-page backed",
            c * 100.0
        );
    }
    if let Some(line) = m.chase_candidates_line() {
        w!(out, "{line}");
    }
    for (i, r) in m.settle.iter().enumerate() {
        w!(
            out,
            "settle round {}: t {:.1} s, copy streams {:.1} GB/s, idle chase {:.0} ns",
            i + 1,
            r.t_s,
            r.stream_gbps,
            r.idle_ns
        );
    }
    w!(
        out,
        "bandwidth (DRAM GB/s, write-allocate counted; STREAM convention in brackets):"
    );
    for k in stream::Kernel::ALL {
        let row: Vec<String> = m
            .bandwidth
            .iter()
            .filter(|p| p.kernel == k)
            .map(|p| format!("{}t {:.1} [{:.1}]", p.threads, p.dram_gbps, p.stream_gbps))
            .collect();
        w!(out, "  {:5} {}", k.name(), row.join(", "));
    }
    w!(
        out,
        "DRAM capacity {:.1} GB/s ({})",
        f.capacity_gbps,
        f.capacity_basis
    );
    for (mix, c) in &f.curves {
        let row: Vec<String> = c
            .iter()
            .map(|(u, ns)| format!("{u:.2}:{ns:.0}ns"))
            .collect();
        w!(out, "  latency {mix:5} {}", row.join(" "));
    }
    w!(
        out,
        "latency_curve written from the {} mix",
        f.latency_curve_mix
    );
    for p in &m.pages {
        w!(
            out,
            "  pages pass {} {} x{}: {:.0} ns (streams {:.1} GB/s)",
            p.pass,
            if p.huge { "huge   " } else { "no-huge" },
            p.stream_threads,
            p.ns,
            p.stream_gbps
        );
    }
    let compute: Vec<String> = m
        .compute
        .iter()
        .map(|p| {
            format!(
                "{}{}:{:.0}",
                if p.kind == "scaling" { "" } else { &p.kind },
                p.cpus.len(),
                p.total_mops / p.cpus.len().max(1) as f64
            )
        })
        .collect();
    if !compute.is_empty() {
        w!(
            out,
            "  compute Mops/thread by threads: {}",
            compute.join(" ")
        );
    }
    if let Some(p) = &f.pcie {
        w!(
            out,
            "PCIe pinned h2d {:.1} d2h {:.1} both {} GB/s; pageable h2d {:.1} d2h {:.1}; DRAM \
             factors h2d {:.2} d2h {:.2} pageable copy {:.2}; pageable latency-bound h2d {:.2} \
             d2h {:.2}; pinned latency-bound h2d {:.2} d2h {:.2}",
            p.h2d_gbps,
            p.d2h_gbps,
            p.duplex_gbps.map_or("-".into(), |d| format!("{d:.1}")),
            p.pageable_h2d_gbps,
            p.pageable_d2h_gbps,
            p.h2d_dram_factor,
            p.d2h_dram_factor,
            p.pageable_copy_dram_factor,
            p.pageable_h2d_latency_frac,
            p.pageable_d2h_latency_frac,
            p.pinned_h2d_latency_frac,
            p.pinned_d2h_latency_frac
        );
        for n in &p.notes {
            w!(out, "  {n}");
        }
    }
    for d in &m.dma_stream {
        w!(
            out,
            "  dma {} {} x{} {}: streams {:.1} -> {:.1} GB/s, dma {:.1} -> {:.1} GB/s",
            d.dir,
            if d.pinned { "pinned" } else { "pageable" },
            d.stream_threads,
            d.mix.name(),
            d.stream_alone_gbps,
            d.stream_with_gbps,
            d.dma_alone_gbps,
            d.dma_with_gbps
        );
    }
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let each = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join("/")
    };
    for p in &m.multi_pcie {
        w!(
            out,
            "  pcie {} on {} GPU(s) from GPU {}: h2d {:.1} ({}) d2h {:.1} ({}) GB/s",
            p.dir,
            p.gpus,
            p.first_gpu,
            sum(&p.h2d_gbps),
            each(&p.h2d_gbps),
            sum(&p.d2h_gbps),
            each(&p.d2h_gbps)
        );
    }
    for d in &m.multi_dma_stream {
        w!(
            out,
            "  dma {} pinned on {} GPUs x{} copy: streams {:.1} -> {:.1} GB/s, dma {:.1} GB/s in all",
            d.dir,
            d.gpus,
            d.stream_threads,
            d.stream_alone_gbps,
            d.stream_with_gbps,
            sum(&d.dma_with_gbps)
        );
    }
    for (v, k) in &f.ntt {
        w!(
            out,
            "NTT {v:13} a={:.4} ns*n*log2n b={:.2e} s, 2^27 {:.2} ms, rms resid {:.1}%",
            k.a_ns,
            k.b_s,
            k.seconds(27) * 1e3,
            k.rms_rel_residual * 100.0
        );
    }
    if let Some(k) = &f.msm {
        w!(
            out,
            "MSM model {} a={:.3} ns b={:.2e} s, model 2^26 {:.1} ms, 2^27 {:.1} ms, \
             rms resid {:.1}%",
            k.model,
            k.a_ns,
            k.b_s,
            k.seconds(26) * 1e3,
            k.seconds(27) * 1e3,
            k.rms_rel_residual * 100.0
        );
    }
    contention(&f.contention, out);
    if m.skipped.is_empty() {
        w!(out, "skipped: nothing");
    } else {
        for s in &m.skipped {
            w!(out, "skipped: {s}");
        }
    }
    text
}

fn contention(c: &ContentionFit, out: &mut String) {
    for (mix, curve) in &c.offered_latency {
        let row: Vec<String> = curve
            .points
            .iter()
            .map(|p| {
                format!(
                    "{:.2}->{:.2}:{:.0}ns",
                    p.offered_load, p.achieved_load, p.latency_ns.median
                )
            })
            .collect();
        w!(
            out,
            "  offered->achieved load: latency, {mix} (write fraction {:.2}): {}",
            curve.write_fraction,
            row.join(" ")
        );
    }
    if let Some(p) = &c.pages {
        w!(
            out,
            "page-size factor (no-huge / huge chase): idle {:.2} ({:.0} vs {:.0} ns), loaded \
             x{} {:.2}",
            p.idle_factor,
            p.idle_nohuge_ns.median,
            p.idle_huge_ns.median,
            p.loaded_stream_threads,
            p.loaded_factor
        );
    }
    if !c.compute.is_empty() {
        let row: Vec<String> = c
            .compute
            .iter()
            .map(|r| format!("{}:{:.2}", r.threads, r.relative))
            .collect();
        w!(
            out,
            "compute per-thread throughput vs threads: {}",
            row.join(" ")
        );
    }
    if let Some(y) = c.smt_yield {
        w!(out, "SMT yield (both siblings / one): {y:.2}");
    }
    for (dir, d) in &c.dma {
        w!(
            out,
            "DMA {dir}: policy {} (DMA -{:.0}%, streams -{:.0}% over {} runs), DRAM factor {}",
            d.policy,
            d.dma_slowdown.median * 100.0,
            d.stream_slowdown.median * 100.0,
            d.runs,
            d.dram_factor.map_or("-".into(), |s| format!(
                "{:.2} (spread {:.0}%)",
                s.median,
                s.rel_spread * 100.0
            ))
        );
    }
    for (dir, s) in &c.staging {
        w!(
            out,
            "pageable {dir} staging: setup {:.2} ms + bytes / {:.1} GB/s",
            s.setup_s * 1e3,
            s.gbps
        );
    }
    for u in &c.unresolved {
        w!(out, "not pinned down: {u}");
    }
}

/// The fit's warnings, one line each, as `bwsim calibrate` prints them on stderr.
pub fn warnings(f: &Fitted) -> Vec<String> {
    f.contention
        .warnings
        .iter()
        .map(|w| format!("WARNING: {w}"))
        .collect()
}
