//! Trace recorder and exporter tests on a hand-fed synthetic run.

use super::*;
use crate::engine::observer::{HoldResourceInfo, RateKind, RateResourceInfo};
use crate::engine::{Loss, Observer, Scope, StageRecord, StageRef};
use crate::time::SimTime;

fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000)
}

/// Two jobs: synthesis on CPU (overlapping), then a GPU kernel on gpu0, with markers
/// GPU_START/GPU_END around the kernel and DRAM usage rising while both synthesise.
pub(crate) fn sample_recorder() -> TraceRecorder {
    let mut rec = TraceRecorder {
        scenario: "demo".into(),
        stage_names: vec!["synthesis".into(), "msm".into()],
        gpu_names: vec!["gpu0".into()],
        marker_names: vec!["GPU_START".into(), "GPU_END".into()],
        stage_kinds: vec![StageKind::Host, StageKind::Kernel],
        marker_per_partition: vec![false, false],
        bracket_spans: vec![BracketSpan {
            name: "GPU".into(),
            from: 0,
            to: 1,
        }],
        warmup_jobs: 1,
        ..Default::default()
    };
    rec.resources(
        &[
            RateResourceInfo {
                name: "dram".into(),
                kind: RateKind::Dram,
                capacity: 100.0,
                gpu: None,
            },
            RateResourceInfo {
                name: "gpu0.pcie_h2d".into(),
                kind: RateKind::PcieH2d,
                capacity: 25.0,
                gpu: Some(0),
            },
        ],
        &[HoldResourceInfo {
            name: "cores".into(),
            capacity: 8,
            resource: crate::model::HoldResource::Cores,
            gpu: None,
        }],
    );
    let rec_of = |job, stage, start, end, gpu| StageRecord {
        stage_ref: StageRef {
            job,
            scope: if stage == 0 {
                Scope::Partition(0)
            } else {
                Scope::Job
            },
            stage,
        },
        ready: ms(start),
        start: ms(start),
        end: ms(end),
        standalone_s: (end - start) as f64 * 1e-3 / 2.0,
        gpu,
        lost: Loss::default(),
        blocked_on: None,
    };
    rec.rates_changed(ms(0), &[40.0, 0.0], 1.0);
    rec.rates_changed(ms(0), &[60.0, 0.0], 1.0); // same instant: replaces
    rec.rates_changed(ms(100), &[100.0, 0.0], 2.0);
    rec.rates_changed(ms(100), &[100.0, 0.0], 2.0);
    rec.stage_finished(&rec_of(0, 0, 0, 1000, None));
    rec.marker(ms(1000), 0, 0, Scope::Job, Some(0));
    rec.rates_changed(ms(1000), &[50.0, 10.0], 1.2);
    rec.stage_finished(&rec_of(1, 0, 100, 1500, None));
    rec.stage_finished(&rec_of(0, 1, 1000, 1800, Some(0)));
    rec.marker(ms(1800), 1, 0, Scope::Job, Some(0));
    rec.marker(ms(1800), 0, 1, Scope::Job, Some(0));
    rec.stage_finished(&rec_of(1, 1, 1800, 2500, Some(0)));
    rec.marker(ms(2500), 1, 1, Scope::Job, Some(0));
    rec.rates_changed(ms(2500), &[0.0, 0.0], 1.0);
    rec.hold_changed(ms(0), 0, 4, 0);
    rec.hold_changed(ms(0), 0, 8, 1); // same instant: replaces
    rec.hold_changed(ms(1500), 0, 4, 0);
    rec.finished(ms(2500));
    rec
}

#[test]
fn recorder_keeps_one_sample_per_instant_and_drops_repeats() {
    let rec = sample_recorder();
    let times: Vec<u64> = rec
        .samples
        .iter()
        .map(|s| s.t.nanos() / 1_000_000)
        .collect();
    assert_eq!(times, [0, 100, 1000, 2500]);
    assert_eq!(rec.samples[0].usage[0], 60.0);
    assert_eq!(rec.stages.len(), 4);
    assert_eq!(rec.end_s(), 2.5);
}

#[test]
fn lanes_put_gpus_first_and_pack_overlaps() {
    let rec = sample_recorder();
    let layout = assign_lanes(&rec);
    let labels: Vec<String> = layout.lanes.iter().map(Lane::label).collect();
    // GPU kernels do not overlap: one lane, as do the brackets around them. Syntheses
    // overlap: two lanes.
    assert_eq!(
        labels,
        [
            "gpu0 brackets",
            "gpu0 kernels",
            "synthesis #0",
            "synthesis #1"
        ]
    );
    assert_eq!(layout.lane_of, [2, 3, 1, 1]);
    assert_eq!(layout.bracket_lane_of, [0, 0]);
}

/// Host work run by a GPU worker (prep_msm, b_g2_msm, finalize) is on a lane named after
/// its stage, not on the GPU's.
#[test]
fn host_stages_bound_to_a_gpu_stay_off_its_lanes() {
    let mut rec = sample_recorder();
    rec.stage_kinds = vec![StageKind::Host, StageKind::Host];
    let layout = assign_lanes(&rec);
    let labels: Vec<String> = layout.lanes.iter().map(Lane::label).collect();
    assert_eq!(
        labels,
        ["gpu0 brackets", "synthesis #0", "synthesis #1", "msm"]
    );
    assert!(rec.stages.iter().any(|s| s.gpu == Some(0) && s.stage == 1));
}

#[test]
fn brackets_pair_their_markers_and_the_warm_up_ends_at_the_first_completion() {
    let rec = sample_recorder();
    let b = brackets(&rec);
    let spans: Vec<(u64, u64, u64)> = (b.iter())
        .map(|b| {
            (
                b.job,
                b.start.nanos() / 1_000_000,
                b.end.nanos() / 1_000_000,
            )
        })
        .collect();
    assert_eq!(spans, [(0, 1000, 1800), (1, 1800, 2500)]);
    // Job 0 completes at 1.8 s (its msm's end): the one warm-up job.
    assert_eq!(warmup_end(&rec), Some(ms(1800)));
    let w = steady_window(&rec, &b).unwrap();
    assert_eq!((w.start_s, w.end_s), (1.8, 2.5));
    assert_eq!(w.what, "1 bracket of gpu0");
}

/// A job-level closing marker closes every partition's bracket of its job.
#[test]
fn a_job_level_close_ends_every_partition_bracket() {
    let mut rec = TraceRecorder {
        marker_per_partition: vec![true, false],
        bracket_spans: vec![BracketSpan {
            name: "GPU".into(),
            from: 0,
            to: 1,
        }],
        ..Default::default()
    };
    rec.marker(ms(10), 0, 7, Scope::Partition(0), Some(0));
    rec.marker(ms(20), 0, 7, Scope::Partition(1), Some(1));
    rec.marker(ms(50), 1, 7, Scope::Job, Some(0));
    let b = brackets(&rec);
    let got: Vec<(Scope, u32, u64)> = (b.iter())
        .map(|b| (b.scope, b.gpu, b.start.nanos() / 1_000_000))
        .collect();
    assert_eq!(
        got,
        [(Scope::Partition(0), 0, 10), (Scope::Partition(1), 1, 20)]
    );
    assert!(b.iter().all(|b| b.end == ms(50)));
}

#[test]
fn chrome_trace_has_slices_counters_and_markers() {
    let rec = sample_recorder();
    let text = serde_json::to_string(&chrome_trace(&rec)).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ev = doc["traceEvents"].as_array().unwrap();
    let count = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!(count("X"), 4);
    assert_eq!(count("i"), 4);
    // Counters emit changes only: DRAM 4, PCIe 3 (0, 10, 0), latency slowdown 4,
    // cores 2.
    assert_eq!(count("C"), 13);
    let cores: Vec<_> = ev.iter().filter(|e| e["name"] == "cores (cores)").collect();
    assert_eq!(cores[0]["args"]["in use"], 8.0);
    assert_eq!(cores[0]["args"]["waiting"], 1);
    let synth = ev
        .iter()
        .find(|e| e["ph"] == "X" && e["args"]["job"] == 1 && e["name"] == "synthesis")
        .unwrap();
    assert_eq!(synth["ts"], 100_000.0);
    assert_eq!(synth["dur"], 1_400_000.0);
    assert_eq!(synth["tid"], 4);
    assert_eq!(synth["args"]["inflation"], 2.0);
    let dram = ev
        .iter()
        .find(|e| e["ph"] == "C" && e["name"] == "dram (GB/s)")
        .unwrap();
    assert_eq!(dram["args"]["GB/s"], 60.0);
    let names: Vec<&str> = ev
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["gpu0 kernels", "synthesis #0", "synthesis #1", "markers"]
    );
    // Brackets: async slices named after their GPU and span, opened and closed.
    let opened: Vec<_> = ev.iter().filter(|e| e["ph"] == "b").collect();
    assert_eq!(opened.len(), 2);
    assert_eq!(opened[1]["name"], "gpu0 GPU");
    assert_eq!(opened[1]["ts"], 1_800_000.0);
    assert_eq!(count("e"), 2);
    // Flows: per job, its partition's synthesis then the job's msm, each step bound to
    // its slice's track.
    let flow: Vec<(&str, u64)> = (ev.iter())
        .filter(|e| e["cat"] == "flow" && e["name"] == "job 1 partition 0")
        .map(|e| (e["ph"].as_str().unwrap(), e["tid"].as_u64().unwrap()))
        .collect();
    assert_eq!(flow, [("s", 4), ("f", 2)]);
    assert_eq!(count("s") + count("f"), 4);
}

#[test]
fn timeline_log_lines_in_time_order() {
    let rec = sample_recorder();
    let text = render_log(timeline_records(&rec));
    assert_eq!(
        text,
        "INFO cuzk_core::engine: pipeline GPU worker started worker_id=0 gpu=0 sub_id=0\n\
         TIMELINE,1000,GPU_START,0,worker=0\n\
         TIMELINE,1800,GPU_START,1,worker=0\n\
         TIMELINE,1800,GPU_END,0,worker=0,gpu_ms=800\n\
         TIMELINE,1800,JOB_DONE,0,\n\
         TIMELINE,2500,GPU_END,1,worker=0,gpu_ms=700\n\
         TIMELINE,2500,JOB_DONE,1,\n"
    );
}

#[test]
fn exporters_write_files() {
    let rec = sample_recorder();
    let dir = tempfile::tempdir().unwrap();
    write_chrome_trace(&rec, &dir.path().join("trace.json")).unwrap();
    write_timeline_log(&rec, &dir.path().join("timeline.log")).unwrap();
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("trace.json")).unwrap()).unwrap();
    assert!(t["traceEvents"].is_array());
    let log = std::fs::read_to_string(dir.path().join("timeline.log")).unwrap();
    assert_eq!(log.lines().count(), 7);
}

/// A real run of the bundled demo with both file exports (the timeline plot is tested
/// through `bwsim run --plot`).
#[test]
fn demo_run_exports_trace_log_and_timeline() {
    let model = crate::scenario::load(
        std::path::Path::new("scenarios/demo.toml"),
        &["arrivals.jobs=20".into()],
    )
    .unwrap()
    .model;
    let dir = tempfile::tempdir().unwrap();
    let mut rec = TraceRecorder::new(&model);
    let report =
        crate::run::run_model_with(&model, crate::run::RunOptions::default(), &mut rec).unwrap();
    assert_eq!(report.jobs_completed, 20);
    let files = [
        dir.path().join("trace.json"),
        dir.path().join("timeline.log"),
    ];
    write_chrome_trace(&rec, &files[0]).unwrap();
    write_timeline_log(&rec, &files[1]).unwrap();

    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let ev = doc["traceEvents"].as_array().unwrap();
    let slices = ev.iter().filter(|e| e["ph"] == "X").count();
    // Each job: 2 partitions x 4 per-partition stages + 1 finalize.
    assert_eq!(slices, 20 * 9);
    assert!(
        ev.iter()
            .any(|e| e["ph"] == "C" && e["name"] == "dram (GB/s)")
    );

    let log = std::fs::read_to_string(&files[1]).unwrap();
    let starts = log.lines().filter(|l| l.contains(",GPU_START,")).count();
    assert_eq!(starts, 40, "one GPU_START per partition");
    let times: Vec<u64> = log
        .lines()
        .filter_map(|l| l.strip_prefix("TIMELINE,"))
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        times.len(),
        80 + 20,
        "GPU_START and GPU_END per partition, JOB_DONE per job"
    );
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "not in time order");
    let workers = log
        .lines()
        .filter(|l| l.contains("GPU worker started"))
        .count();
    assert!(workers >= 1 && log.lines().count() == 100 + workers);
}
