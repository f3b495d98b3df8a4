//! The 32 GiB C2 reference scenarios reproduce what was reported on the real system
//! (docs/reference/c2-pipeline.md, issue 3). Tolerances are stated per assertion. The
//! scenario's free parameters were fitted over the concurrency curve and the RAM tiers
//! (tests/c2_fit.rs holds every fitted target within its band); this file holds the
//! qualitative claims: the instrumentation gap, the curve's shape, RAM queueing.

use std::path::Path;

use bwsim::analysis::report::Report;
use bwsim::run::run_model;
use bwsim::scenario;

const CUZK: &str = "scenarios/c2-32g-cuzk.toml";
const STOCK: &str = "scenarios/c2-32g-stock.toml";

fn run(path: &str, sets: &[&str]) -> Report {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = scenario::load(Path::new(path), &sets).unwrap_or_else(|e| panic!("{e}"));
    run_model(&loaded.model).expect("runs")
}

fn stage<'a>(r: &'a Report, name: &str) -> &'a bwsim::analysis::report::StageStats {
    r.stages
        .iter()
        .find(|s| s.name == name)
        .expect("stage exists")
}

#[test]
fn uncontended_gpu_region_matches_the_phase9_timers() {
    // One synthesis at a time: the GPU region runs alone.
    let r = run(
        CUZK,
        &[
            "params.synthesis_concurrency=1",
            "arrivals.jobs=3",
            "arrivals.warmup_jobs=1",
        ],
    );
    let mean = |n: &str| stage(&r, n).mean_s;
    // ntt_msm_h 690 ms, batch_add 650 ms, tail_msm 83 ms, gpu_total 1824 ms [S]: within 3%.
    let ntt_msm_h = mean("ntt") + mean("h_msm");
    let gpu_total =
        mean("gpu_setup") + mean("upload_abc") + ntt_msm_h + mean("batch_add") + mean("tail_msm");
    for (what, got, want) in [
        ("ntt_msm_h", ntt_msm_h, 0.690),
        ("batch_add", mean("batch_add"), 0.650),
        ("tail_msm", mean("tail_msm"), 0.083),
        ("gpu_total", gpu_total, 1.824),
    ] {
        assert!(
            (got - want).abs() / want < 0.03,
            "{what}: {got:.3} s vs {want} s"
        );
    }
}

#[test]
fn c15_shows_the_instrumentation_gap_and_the_reported_throughput() {
    let r = run(CUZK, &[]);
    // Reported: ~43 s/proof (fitted: within 15%).
    assert!(
        (r.seconds_per_job - 43.0).abs() / 43.0 < 0.15,
        "{} s/proof",
        r.seconds_per_job
    );
    // Reported: brackets ~90% busy (within 0.15), true kernel duty far lower (users saw
    // ~50% by power draw): at most 60%, and at least 0.3 below the brackets.
    assert!(
        r.gpu_bracketed_busy_frac > 0.75,
        "bracketed {}",
        r.gpu_bracketed_busy_frac
    );
    assert!(r.gpu_true_busy_frac < 0.6, "true {}", r.gpu_true_busy_frac);
    assert!(r.gpu_bracketed_busy_frac - r.gpu_true_busy_frac > 0.3);
    // The GPU could do far better: the contention-free pipeline is GPU-bound near 18-20 s.
    let ideal = r.ideal_seconds_per_job.expect("ideal computed");
    assert!(
        ideal < 0.6 * r.seconds_per_job,
        "ideal {ideal} vs {}",
        r.seconds_per_job
    );
    // And the verdict names the host, not the GPU: DRAM. The fit over the concurrency
    // curve (docs/model-v2.md, "C2 reference: published vs model") puts the inflation
    // between c = 5 and c = 15 on loaded latency: witness threads at 18 GB/s (inside what
    // one measured thread draws) with dependent misses, on a DRAM that interleaves about
    // 20 scattered streams. Sharing the cores alone (an SpMV on all 192 threads) made
    // low concurrency 10-17% slower than the reference box's runs there.
    assert_eq!(r.bottleneck.resource, "dram", "{:?}", r.bottleneck);
}

#[test]
fn cpu_stages_inflate_two_to_twelve_times_from_low_to_high_concurrency() {
    let low = run(CUZK, &["params.synthesis_concurrency=2"]);
    let high = run(CUZK, &["params.synthesis_concurrency=20"]);
    for name in ["spmv", "prep_msm", "b_g2_msm"] {
        let (l, h) = (stage(&low, name).inflation, stage(&high, name).inflation);
        assert!(l < 1.5, "{name} at c=2 already inflated {l:.2}x");
        assert!((2.0..=12.0).contains(&h), "{name} at c=20 inflated {h:.2}x");
    }
    // The host's DRAM, not the GPU (see the c = 15 test).
    assert_eq!(high.bottleneck.resource, "dram");
}

#[test]
fn concurrency_sweep_rises_flattens_then_degrades_and_ram_grows() {
    let cs = [1, 5, 10, 15, 18, 22, 30];
    let reports: Vec<Report> = cs
        .iter()
        .map(|c| {
            run(
                CUZK,
                &[
                    &format!("params.synthesis_concurrency={c}"),
                    "arrivals.jobs=24",
                ],
            )
        })
        .collect();
    let spj: Vec<f64> = reports.iter().map(|r| r.seconds_per_job).collect();
    let best = spj.iter().cloned().fold(f64::INFINITY, f64::min);
    let best_at = cs[spj.iter().position(|&s| s == best).unwrap()];
    // Rising: c=1 is synthesis-bound and far slower than the best.
    assert!(spj[0] > 3.0 * best, "{spj:?}");
    // The best lies in the middle of the range, not at its end.
    assert!((10..=22).contains(&best_at), "best at c={best_at}: {spj:?}");
    // Degrading: c=30 is more than 3% slower than the best.
    assert!(spj[6] > best * 1.03, "{spj:?}");
    // RAM peak grows with concurrency up to the point where RAM itself is full.
    let ram: Vec<f64> = reports.iter().map(|r| r.ram_peak_gib).collect();
    for w in ram.windows(2).take(4) {
        assert!(w[1] > w[0], "RAM peak should grow: {ram:?}");
    }
}

#[test]
fn a_host_too_small_for_the_concurrency_queues_on_ram_and_says_so() {
    // At the flagship's c = 15 (at c = 20 the roomy host loses about as much to DRAM as
    // the small one to its RAM queue, so the two come within 10% of each other).
    let roomy = run(CUZK, &[]);
    let small = run(CUZK, &["params.host_ram_gib=256"]);
    assert!(small.ram_peak_gib <= small.ram_capacity_gib + 1e-9);
    assert!(
        small
            .notes
            .iter()
            .any(|n| n.starts_with("host_ram has too little free")
                || n.starts_with("host_ram is full")),
        "expected a host RAM note, got {:?}",
        small.notes
    );
    assert!(small.seconds_per_job > roomy.seconds_per_job * 1.1);
}

#[test]
fn stock_path_matches_the_reported_batch_timings() {
    let r = run(STOCK, &[]);
    // 88.9 s per proof, GPU 34.0 s, synthesis 54.7 s [S]: within 5% (nothing was fitted
    // to these; the stock scenario reuses the cuzk scenario's estimates).
    assert!(
        (r.seconds_per_job - 88.9).abs() / 88.9 < 0.05,
        "{} s/proof",
        r.seconds_per_job
    );
    assert!((r.gpu_bracketed_seconds_per_job - 34.0).abs() / 34.0 < 0.05);
    assert!((stage(&r, "synthesize").mean_s - 54.7).abs() / 54.7 < 0.05);
    // Peak RSS ~200 GiB measured with the SRS [S]: partitions alone hold ~155 GiB.
    assert!((r.ram_peak_gib - 155.0).abs() < 1.0);
}

#[test]
fn timeline_log_brackets_reproduce_bracketed_busy_frac() {
    // Write the log through the CLI, as a user would, then recompute the bracketed
    // utilisation from its GPU_START..GPU_END lines alone (cuzk's format: whole-ms
    // offsets, `worker=W,partition=P` details). With no warm-up the report's window is
    // [0, last completion]; the log's 1 ms resolution bounds the difference.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("timeline.log");
    let out = assert_cmd::Command::cargo_bin("bwsim")
        .unwrap()
        .args([
            "run",
            CUZK,
            "--format",
            "json",
            "--no-ideal",
            "--set",
            "arrivals.warmup_jobs=0",
            "--timeline-log",
        ])
        .arg(&log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();

    let mut open: std::collections::HashMap<(String, String), f64> = Default::default();
    let mut intervals: Vec<(f64, f64)> = Vec::new();
    let mut timing_lines = 0;
    for line in text.lines() {
        if let Some(timers) = line.strip_prefix("CUZK_TIMING: ") {
            timing_lines += usize::from(timers.contains("gpu_total_ms="));
            continue;
        }
        if !line.starts_with("TIMELINE,") {
            assert!(line.contains("GPU worker started"), "{line}");
            continue;
        }
        let f: Vec<&str> = line.splitn(5, ',').collect();
        let partition = f[4]
            .split(',')
            .find(|kv| kv.starts_with("partition="))
            .unwrap_or("")
            .to_string();
        let (t_ms, event, key) = (
            f[1].parse::<f64>().unwrap(),
            f[2],
            (f[3].to_string(), partition),
        );
        match event {
            "GPU_START" => {
                open.insert(key, t_ms);
            }
            "GPU_END" => {
                intervals.push((open.remove(&key).expect("GPU_END after GPU_START"), t_ms))
            }
            _ => {}
        }
    }
    assert!(open.is_empty());
    assert_eq!(
        timing_lines, 300,
        "one gpu_total_ms per partition (30 proofs x 10)"
    );
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut union_ms, mut cur) = (0.0, (f64::NEG_INFINITY, f64::NEG_INFINITY));
    for (a, b) in intervals {
        if a > cur.1 {
            union_ms += (cur.1 - cur.0).max(0.0);
            cur = (a, b);
        } else {
            cur.1 = cur.1.max(b);
        }
    }
    union_ms += cur.1 - cur.0;
    let window_s = report["window_s"].as_f64().unwrap();
    let from_log = union_ms / 1e3 / window_s;
    let reported = report["gpu"]["bracketed_busy_frac"].as_f64().unwrap();
    assert!(
        (from_log - reported).abs() < 1e-3,
        "log {from_log} vs report {reported}"
    );
}

#[test]
fn h200_scenario_takes_its_host_from_the_calibration() {
    let loaded = scenario::load(Path::new("scenarios/c2-32g-h200.toml"), &[]).unwrap();
    let hw = &loaded.model.hardware;
    // Values measured by `bwsim calibrate` on the H200 host, through the include.
    assert_eq!(hw.cpu_cores, 16);
    assert!((hw.dram.capacity_gbps - 168.89).abs() < 0.01);
    assert!((hw.gpus[0].link.h2d_gbps - 55.3371).abs() < 1e-3);
    let h_msm = loaded
        .model
        .workload
        .stages
        .iter()
        .find(|s| s.name == "h_msm")
        .unwrap();
    assert!((h_msm.duration.mean_s() - 1.11282).abs() < 1e-5);
    // 16 vCPUs and 58 GiB for partitions: the CPU side, not the H200, limits it.
    let r = run_model(&loaded.model).unwrap();
    assert!(
        r.gpu_true_busy_frac < 0.2,
        "true GPU busy {}",
        r.gpu_true_busy_frac
    );
    assert!(
        r.bottleneck.resource.contains("cpu") || r.bottleneck.resource == "host_ram",
        "{:?}",
        r.bottleneck
    );
}

#[test]
fn the_ideal_run_has_no_core_contention() {
    // The refit slows compute-bound stages as other threads share their cores. The
    // contention-free run must not: there every thread computes as fast as alone.
    let loaded = scenario::load(Path::new(CUZK), &[]).unwrap();
    assert!(loaded.model.hardware.pools.iter().any(|p| p.cpu.is_some()));
    let ideal = bwsim::run::uncontended(&loaded.model);
    assert!(ideal.hardware.pools.iter().all(|p| p.cpu.is_none()));
    let mut with_cores = ideal.clone();
    for (p, orig) in with_cores
        .hardware
        .pools
        .iter_mut()
        .zip(&loaded.model.hardware.pools)
    {
        p.cpu = orig.cpu.clone();
    }
    let free = run_model(&ideal).unwrap().seconds_per_job;
    let shared = run_model(&with_cores).unwrap().seconds_per_job;
    // GPU-bound floor: 10 partitions x the 1.81 s mutex region (setup, upload, NTT + H,
    // batch addition, tails) = 18.1 s, plus the barrier's waits for prep_msm.
    assert!((18.0..22.0).contains(&free), "ideal {free} s/proof");
    assert!(
        free < 0.9 * shared,
        "ideal {free} vs with core sharing {shared}"
    );
}
