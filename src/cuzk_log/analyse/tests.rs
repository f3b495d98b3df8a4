use super::*;

fn analysed(text: &str, warmup_jobs: usize) -> LogAnalysis {
    let mut log = ParsedLog::default();
    log.add_text("t.log", text);
    analyse(
        &log,
        &AnalyseOptions {
            warmup_jobs,
            ..AnalyseOptions::default()
        },
    )
}

#[test]
fn brackets_gaps_and_stages() {
    let a = analysed(
        "TIMELINE,0,SYNTH_START,j0,partition=0\n\
         TIMELINE,0,SYNTH_START,j0,partition=1\n\
         TIMELINE,40,SYNTH_END,j0,partition=0,synth_ms=40\n\
         TIMELINE,40,GPU_START,j0,worker=0,partition=0\n\
         TIMELINE,60,GPU_END,j0,worker=0,partition=0,gpu_ms=15\n\
         TIMELINE,60,SYNTH_END,j0,partition=1,synth_ms=60\n\
         TIMELINE,70,GPU_START,j0,worker=1,partition=1\n\
         TIMELINE,100,GPU_END,j0,worker=1,partition=1,gpu_ms=30\n",
        0,
    );
    assert_eq!(a.window_ms, (0.0, 100.0));
    assert_eq!(a.gpus, 1, "workers 0 and 1 share GPU 0 by cuzk's default");
    assert!((a.gpu_bracketed_busy_frac - 0.5).abs() < 1e-12);
    assert!((a.gpu_engine_busy_frac.unwrap() - 0.45).abs() < 1e-12);
    assert_eq!(a.gpu_gap_ms.as_ref().unwrap().mean, 10.0);
    let synth = &a.stages[0];
    assert_eq!(synth.name, "SYNTH");
    assert_eq!(synth.duration_ms.as_ref().unwrap().p50, 40.0);
    assert_eq!(synth.max_in_flight, 2);
    assert!((synth.mean_in_flight - 1.0).abs() < 1e-12); // 2x40 + 1x20 over 100
    assert_eq!(a.jobs_in_flight.max, 1);
    assert_eq!(a.gpus_busy, [(40.0, 1), (60.0, 0), (70.0, 1), (100.0, 0)]);
}

#[test]
fn workers_map_to_gpus_by_the_layout_and_busy_is_per_gpu() {
    // Workers 0,1 on GPU 0 and 2,3 on GPU 1 (two per device): GPU 0 busy 0..100, GPU 1
    // 50..100 of the 0..100 window.
    let text = "TIMELINE,0,GPU_START,a,worker=1,partition=0\n\
                TIMELINE,50,GPU_START,b,worker=2,partition=0\n\
                TIMELINE,100,GPU_END,a,worker=1,partition=0\n\
                TIMELINE,100,GPU_END,b,worker=2,partition=0\n";
    let a = analysed(text, 0);
    assert_eq!(a.gpus, 2);
    let busy: Vec<f64> = a.per_gpu.iter().map(|g| g.bracketed_busy_frac).collect();
    assert_eq!(busy, [1.0, 0.5]);
    assert!((a.gpu_bracketed_busy_frac - 0.75).abs() < 1e-12);
    // One worker per device: worker 1 is GPU 1, worker 2 GPU 2.
    let mut log = ParsedLog::default();
    log.add_text("t.log", text);
    let one = analyse(
        &log,
        &AnalyseOptions {
            warmup_jobs: 0,
            workers: WorkerLayout {
                per_gpu: 1,
                source: "test".into(),
                explicit: true,
            },
        },
    );
    // GPUs are those the log names: 1 and 2 (no GPU 0 is made up).
    assert_eq!(one.gpus, 2);
    let ids: Vec<u32> = one.per_gpu.iter().map(|g| g.gpu).collect();
    assert_eq!(ids, [1, 2]);
    // The log's own worker lines win over the layout.
    let mut log = ParsedLog::default();
    log.add_text(
        "t.log",
        &format!("GPU worker started worker_id=2 gpu=0 sub_id=2\n{text}"),
    );
    let own = analyse(&log, &AnalyseOptions::default());
    assert_eq!((own.gpus, own.per_gpu[0].bracketed_busy_frac), (1, 1.0));
    assert!(own.workers.source.contains("log"));
}

#[test]
fn the_window_opens_at_the_first_record_not_at_time_zero() {
    let a = analysed(
        "TIMELINE,100000,GPU_START,a,worker=0\nTIMELINE,100050,GPU_END,a,worker=0,gpu_ms=50\n\
         TIMELINE,100050,GPU_START,b,worker=0\nTIMELINE,100100,GPU_END,b,worker=0\n",
        0,
    );
    assert_eq!(a.window_ms, (100000.0, 100100.0));
    assert_eq!(a.gpu_bracketed_busy_frac, 1.0);
    assert_eq!(a.jobs_in_flight.median, 1);
}

#[test]
fn equal_timestamps_in_any_order_give_the_same_counts() {
    let lines = [
        "TIMELINE,0,SYNTH_START,a,partition=0",
        "TIMELINE,0,SYNTH_START,b,partition=0",
        "TIMELINE,10,SYNTH_END,a,partition=0",
        "TIMELINE,10,SYNTH_START,c,partition=0",
        "TIMELINE,10,SYNTH_END,b,partition=0",
        "TIMELINE,10,SYNTH_START,d,partition=0",
        "TIMELINE,20,SYNTH_END,c,partition=0",
        "TIMELINE,20,SYNTH_END,d,partition=0",
    ];
    let forward = analysed(&(lines.join("\n") + "\n"), 0);
    let mut rev = lines;
    rev[2..6].reverse();
    let backward = analysed(&(rev.join("\n") + "\n"), 0);
    for a in [&forward, &backward] {
        assert_eq!(a.stages[0].max_in_flight, 2);
        assert_eq!(a.jobs_in_flight.max, 2);
        assert_eq!(a.stages[0].unmatched_ends, 0);
    }
    assert_eq!(
        forward.stages[0].duration_ms,
        backward.stages[0].duration_ms
    );
    // A zero-length bracket logged end first still pairs.
    let z = analysed("TIMELINE,5,X_END,a,\nTIMELINE,5,X_START,a,\n", 0);
    assert_eq!(
        (z.stages[0].unmatched_starts, z.stages[0].unmatched_ends),
        (0, 0)
    );
}

#[test]
fn timers_straddling_the_window_start_are_clipped() {
    // Warm-up job w ends at 100; a gpu_total_ms of 80 logged at 120 (after b's start)
    // covers 40..120, of which 20 ms are in the 100..200 window.
    let a = analysed(
        "TIMELINE,0,GPU_START,w,worker=0\nTIMELINE,100,GPU_END,w,worker=0\n\
         TIMELINE,120,GPU_START,b,worker=0\n\
         CUZK_TIMING: gpu_tid=0 tail_msm_ms=5 gpu_total_ms=80\n\
         TIMELINE,200,GPU_END,b,worker=0\n",
        1,
    );
    assert_eq!(a.window_ms, (100.0, 200.0));
    assert!((a.gpu_timer_busy_frac.unwrap() - 0.2).abs() < 1e-12);
    assert_eq!(a.gpu_brackets.last().unwrap().timers.len(), 2);
    assert_eq!(a.timers[0].1.count, 1);
}

#[test]
fn many_distinct_names_stay_linear() {
    // 60k stage names and 150k timer names: quadratic bookkeeping took > 10 s.
    let mut text = String::new();
    for i in 0..60_000 {
        text.push_str(&format!(
            "TIMELINE,{i},S{i}_START,j,\nTIMELINE,{i},S{i}_END,j,\n"
        ));
    }
    text.push_str("TIMELINE,0,GPU_START,j,worker=0\n");
    for i in 0..150_000 {
        text.push_str(&format!("CUZK_TIMING: t{i}_ms=1\n"));
    }
    let a = analysed(&text, 0);
    assert_eq!(a.stages.len(), 60_001);
    assert_eq!(a.timers.len(), 150_000);
}

#[test]
fn unmatched_brackets_are_counted_and_open_gpu_runs_to_the_end() {
    let a = analysed(
        "TIMELINE,0,GPU_END,5,partition=0 gpu=0\n\
         TIMELINE,50,GPU_START,6,partition=0 gpu=0\n\
         TIMELINE,100,SYNTH_START,6,partition=1\n",
        0,
    );
    let gpu = a.stages.iter().find(|s| s.name == "GPU").unwrap();
    assert_eq!((gpu.unmatched_starts, gpu.unmatched_ends), (1, 1));
    assert!((a.gpu_bracketed_busy_frac - 0.5).abs() < 1e-12);
}

#[test]
fn warmup_jobs_move_the_window_and_empty_logs_are_zero() {
    let a = analysed(
        "TIMELINE,0,GPU_START,0,gpu=0\nTIMELINE,20,GPU_END,0,gpu=0\n\
         TIMELINE,30,GPU_START,1,gpu=0\nTIMELINE,40,GPU_END,1,gpu=0\n",
        1,
    );
    assert_eq!(a.window_ms, (20.0, 40.0));
    assert!((a.gpu_bracketed_busy_frac - 0.5).abs() < 1e-12);
    let e = analysed("", 0);
    assert_eq!((e.jobs, e.gpu_bracketed_busy_frac), (0, 0.0));
    assert!(e.stages.is_empty() && e.gpu_gap_ms.is_none());
}

#[test]
fn percentiles_by_nearest_rank() {
    let d = Distribution::of((1..=100).map(f64::from).collect()).unwrap();
    assert_eq!((d.p50, d.p90, d.p99, d.max), (50.0, 90.0, 99.0, 100.0));
}

#[test]
fn timing_lines_of_the_stderr_fixture_land_on_their_brackets() {
    let a = analysed(
        include_str!("../../../tests/fixtures/cuzk-logs/porep-1gpu-stderr.log"),
        0,
    );
    let timer = |b: &GpuBracket, name: &str| -> Vec<f64> {
        b.timers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, ms)| *ms)
            .collect()
    };
    let waits: Vec<Vec<f64>> = a
        .gpu_brackets
        .iter()
        .map(|b| timer(b, "mutex_wait_ms"))
        .collect();
    // A0 took the free GPU, A1 waited 1850 ms behind it, B0 1750 ms behind A1, B1 none.
    assert_eq!(waits, [[0.0], [1850.0], [1750.0], [0.0]]);
    for b in &a.gpu_brackets {
        assert_eq!(timer(b, "gpu_total_ms"), [1824.0], "{}", b.job);
        assert_eq!(timer(b, "b_g2_msm_ms"), [1700.0], "{}", b.job);
    }
    assert_eq!(a.gpu_brackets[1].gpu_ms, Some(3790.0));
}

/// A log of tied and interleaved records: per job and partition, brackets of GPU work
/// (some retried under the same key, some zero-length, some never closed or opened, on
/// workers that tie), synthesis and job-level records, at offsets that often coincide.
fn tangled_records(seed: u64) -> Vec<String> {
    use rand::Rng;
    let mut r = rand_pcg::Pcg64::new(seed.into(), 0xa02b_dbf7);
    let mut out = Vec::new();
    for j in 0..r.gen_range(2..6) {
        for p in 0..r.gen_range(1..4) {
            let mut t: u32 = r.gen_range(0..20);
            for _ in 0..r.gen_range(1..4) {
                let d: u32 = [0, 0, 1, 2, 5][r.gen_range(0..5)];
                let w: u32 = r.gen_range(0..4);
                let part = if r.gen_bool(0.8) {
                    format!(",partition={p}")
                } else {
                    String::new()
                };
                let (open, close) = match r.gen_range(0..8) {
                    0 => (true, false),
                    1 => (false, true),
                    _ => (true, true),
                };
                if open {
                    out.push(format!("TIMELINE,{t},GPU_START,j{j},worker={w}{part}"));
                }
                if close {
                    let end = t + d;
                    out.push(format!(
                        "TIMELINE,{end},GPU_END,j{j},worker={w}{part},gpu_ms={d}"
                    ));
                }
                let stage = ["SYNTH", "PREP"][r.gen_range(0..2)];
                let a: u32 = r.gen_range(0..20);
                let b = a + [0, 1, 3][r.gen_range(0..3)];
                out.push(format!("TIMELINE,{a},{stage}_START,j{j},partition={p}"));
                out.push(format!("TIMELINE,{b},{stage}_END,j{j},partition={p}"));
                t += r.gen_range(0..3);
            }
        }
        out.push(format!("TIMELINE,{},JOB_DONE,j{j},", r.gen_range(20..30)));
    }
    out
}

#[test]
fn any_order_of_the_same_records_gives_the_same_analysis() {
    use rand::seq::SliceRandom;
    for seed in 0..200 {
        let mut lines = tangled_records(seed);
        let mut r = rand_pcg::Pcg64::new(seed.into(), 7);
        let first = analysed(&(lines.join("\n") + "\n"), 1);
        for _ in 0..3 {
            lines.shuffle(&mut r);
            let again = analysed(&(lines.join("\n") + "\n"), 1);
            assert_eq!(first, again, "seed {seed}: {lines:#?}");
        }
    }
}

#[test]
fn interleaved_files_read_as_one_log() {
    // Two processes' records, in two files or in one file line by line alternating.
    let lines = tangled_records(3);
    let (a, b): (Vec<_>, Vec<_>) = lines.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let text = |v: Vec<(usize, &String)>| {
        let lines: Vec<&str> = v.into_iter().map(|(_, l)| l.as_str()).collect();
        lines.join("\n") + "\n"
    };
    let mut two = ParsedLog::default();
    two.add_text("a.log", &text(a));
    two.add_text("b.log", &text(b));
    let opts = AnalyseOptions::default();
    assert_eq!(
        analyse(&two, &opts),
        analysed(&(lines.join("\n") + "\n"), 0)
    );
}

#[test]
fn an_end_closes_the_start_of_its_own_worker() {
    // Two brackets of one job and partition (a retry) open at once on workers 0 and 2 (two
    // GPUs by cuzk's default layout); the end on worker 0 closes worker 0's.
    let a = analysed(
        "TIMELINE,0,GPU_START,j,worker=0,partition=0\n\
         TIMELINE,0,GPU_START,j,worker=2,partition=0\n\
         TIMELINE,10,GPU_END,j,worker=0,partition=0\n\
         TIMELINE,40,GPU_END,j,worker=2,partition=0\n",
        0,
    );
    let spans: Vec<(u32, Option<f64>)> =
        (a.gpu_brackets.iter()).map(|b| (b.gpu, b.end_ms)).collect();
    assert_eq!(spans, [(0, Some(10.0)), (1, Some(40.0))]);
}

#[test]
fn a_gpu_numbered_past_any_host_is_one_gpu_not_a_table_of_them() {
    let a = analysed(
        "TIMELINE,0,GPU_START,j,gpu=4294967295\nTIMELINE,10,GPU_END,j,gpu=4294967295\n\
         TIMELINE,0,GPU_START,k,worker=4294967295\nTIMELINE,5,GPU_END,k,worker=4294967295\n",
        0,
    );
    let ids: Vec<u32> = a.per_gpu.iter().map(|g| g.gpu).collect();
    assert_eq!(ids, [2147483647, 4294967295]);
    assert_eq!(a.gpus, 2);
    assert!((a.gpu_bracketed_busy_frac - 0.75).abs() < 1e-12);
}
