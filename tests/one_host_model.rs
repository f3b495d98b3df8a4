//! The calibration is the host model: a scenario written from the docs that includes a
//! calibration file and sets no model key predicts what `bwsim validate` predicts for the
//! same experiment. Both are built here: validate's prediction through its own API, the
//! scenario through `bwsim run --format json`, on the bundled H200 calibration.

use std::path::Path;

use bwsim::calibrate::probe::stream::Kernel;
use bwsim::calibrate::validate::experiment::{Copy, Setup};
use bwsim::calibrate::validate::load_calib;
use bwsim::model::CopyDir;

const SHORT_S: f64 = 1.0;
const LONG_S: f64 = 1.0e5;

/// Copy streams on `threads` threads, a pointer chase and a pinned H2D DMA loop, the one
/// named by `short` lasting SHORT_S alone and the others LONG_S: the experiment as a
/// user writes it (docs/calibrate.md), with nothing but the calibration's `[params]`.
fn scenario(threads: u32, short: &str) -> String {
    let secs = |who: &str| if who == short { SHORT_S } else { LONG_S };
    format!(
        r#"include = ["calibration/h200-host.toml"]
[hardware]
cpu_cores = 1024
host_ram_gib = 1024

[[workload.stages]]
name = "streams"
duration_s = {streams}
cores = {threads}
dram_gbps = "= {threads} * $cpu_copy_thread_gbps"
dram_write_frac = 0.3333333333333333

[[workload.stages]]
name = "chase"
duration_s = {chase}
dram_gbps = "= 64 / $dram_idle_latency_ns"
latency_bound_frac = 1.0
dram_write_frac = 0.0

[[workload.stages]]
name = "dma"
transfer = {{ dir = "h2d", gb = "= {dma} * $pcie_h2d_gbps" }}

[params]
pcie_h2d_gbps = {{ default = 55.3371, doc = "the calibration's pinned H2D rate" }}

[arrivals]
kind = "closed"
concurrency = 1
jobs = 1
warmup_jobs = 0
"#,
        streams = secs("streams"),
        chase = secs("chase"),
        dma = secs("dma"),
    )
}

/// The stage's mean seconds in a `bwsim run --format json` of `text`, written beside the
/// bundled scenarios so that its include resolves.
fn stage_seconds(text: &str, stage: &str) -> f64 {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let file = tempfile::Builder::new()
        .prefix(".one-host-model-")
        .suffix(".toml")
        .tempfile_in(&dir)
        .unwrap();
    std::fs::write(file.path(), text).unwrap();
    let out = assert_cmd::Command::cargo_bin("bwsim")
        .unwrap()
        .args([
            "run",
            "--format",
            "json",
            "--no-ideal",
            "--replications",
            "1",
            "--no-what-if",
        ])
        .arg(file.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    j["stages"][stage]["mean_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no stage {stage} in {j}"))
}

#[test]
fn a_scenario_including_the_calibration_predicts_what_validate_predicts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let calib = load_calib(&root.join("scenarios/calibration/h200-host.toml")).unwrap();
    let one_thread = calib.meas.bw_at(Kernel::Copy, 1).unwrap();
    for threads in [3u32, 7, 14] {
        let setup = Setup {
            streams: Some((Kernel::Copy, threads as usize)),
            chase: true,
            dma: Some(Copy::one(CopyDir::H2d, true)),
            pipe: None,
        };
        let validate = calib.predict_engine(&setup).unwrap();
        let streams_gbps = f64::from(threads) * one_thread * SHORT_S
            / stage_seconds(&scenario(threads, "streams"), "streams");
        let dma_gbps = 55.3371 * SHORT_S / stage_seconds(&scenario(threads, "dma"), "dma");
        let v_streams = validate.stream_gbps.unwrap();
        let v_dma = validate.dma_gbps.unwrap();
        // The scenario rounds the calibration's rates to 6 digits in [params]; nothing else
        // differs, so the two agree to far better than any measurement.
        assert!(
            (streams_gbps / v_streams - 1.0).abs() < 1e-4,
            "copy x{threads}: scenario streams {streams_gbps}, validate {v_streams}"
        );
        assert!(
            (dma_gbps / v_dma - 1.0).abs() < 1e-4,
            "copy x{threads}: scenario DMA {dma_gbps}, validate {v_dma}"
        );
    }
}

/// A calibration that measured kernels next to busy CPUs slows a GPU kernel stage by its
/// curve at the pools' runnable threads per CPU; without the table, or under rules v1,
/// the kernel keeps its time.
#[test]
fn a_kernel_next_to_busy_threads_takes_the_calibrations_cpu_load_curve() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let bundled = std::fs::read_to_string(dir.join("calibration/h200-host.toml")).unwrap();
    let with_curve = format!(
        "{bundled}\n[hardware.gpu.cpu_load]\nbusy_per_cpu = [0.0, 0.5, 1.0]\n\
         kernels = {{ \"msm:20\" = [1.0, 1.2, 2.0], \"msm:24\" = [1.0, 1.0, 1.1] }}\n"
    );
    let calib = tempfile::Builder::new()
        .prefix(".one-host-model-calib-")
        .suffix(".toml")
        .tempfile_in(&dir)
        .unwrap();
    std::fs::write(calib.path(), with_curve).unwrap();
    let name = calib.path().file_name().unwrap().to_str().unwrap();
    // 12 busy threads of 16 (0.75 per CPU) beside the kernel: 1.2 + 0.8 x 0.5 = 1.6.
    let scenario = |include: &str, rules: &str, kind: &str| {
        format!(
            r#"include = ["{include}"]
{rules}
[hardware]
host_ram_gib = 64
[hardware.pools]
cpu = 16

[[workload.stages]]
name = "busy"
duration_s = 1e5
pool = {{ name = "cpu", threads = 12 }}

[[workload.stages]]
name = "msm"
duration_s = 1.0
gpu_kernel = true
gpu_kernel_kind = "{kind}"

[arrivals]
kind = "closed"
concurrency = 1
jobs = 1
warmup_jobs = 0
"#
        )
    };
    let msm = |text: String| stage_seconds(&text, "msm");
    let measured = msm(scenario(name, "", "msm:20"));
    assert!((measured - 1.6).abs() < 1e-9, "{measured}");
    // The nearest measured size: 2^23 takes 2^24's curve, 1 + 0.1 x 0.5.
    let near = msm(scenario(name, "", "msm:23"));
    assert!((near - 1.05).abs() < 1e-9, "{near}");
    let v1 = msm(scenario(name, "rules = \"v1\"", "msm:20"));
    let none = msm(scenario("calibration/h200-host.toml", "", "msm:20"));
    assert_eq!((v1, none), (1.0, 1.0));
}
