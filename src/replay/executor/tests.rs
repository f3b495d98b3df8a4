use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration as StdDuration;

use super::*;
use crate::engine::Scope;
use crate::replay::kernels::{BufferSizes, StageSizing};
use crate::replay::plan::stage_plans;
use crate::scenario::load_str;
use crate::trace::recorder::StageInstance;

/// A GPU that sleeps for its work and counts what it was given.
struct FakeGpu {
    kernels: AtomicU32,
    copies: AtomicU32,
    msms_reading_host: AtomicU32,
    live_allocs: AtomicU32,
}

impl FakeGpu {
    fn new() -> FakeGpu {
        FakeGpu {
            kernels: AtomicU32::new(0),
            copies: AtomicU32::new(0),
            msms_reading_host: AtomicU32::new(0),
            live_allocs: AtomicU32::new(0),
        }
    }
}

impl GpuBackend for FakeGpu {
    fn copy(&self, _t: &TransferInfo) -> Result<f64, GpuError> {
        self.copies.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(StdDuration::from_millis(2));
        Ok(0.002)
    }
    fn kernel(&self, _k: KernelKind, standalone_s: f64) -> Result<f64, GpuError> {
        self.kernels.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(StdDuration::from_secs_f64(standalone_s));
        Ok(standalone_s)
    }
    fn msm_reading_host(&self, _m: MsmFromHost, standalone_s: f64) -> Result<f64, GpuError> {
        self.msms_reading_host.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(StdDuration::from_secs_f64(standalone_s));
        Ok(standalone_s)
    }
    fn alloc(&self, _bytes: u64) -> Result<u64, GpuError> {
        self.live_allocs.fetch_add(1, Ordering::Relaxed);
        Ok(1)
    }
    fn free(&self, _handle: u64) {
        self.live_allocs.fetch_sub(1, Ordering::Relaxed);
    }
}

#[test]
fn poisson_arrivals_are_the_ones_the_engine_simulates() {
    // The engine reports each job's arrival; a replay of the same model must see
    // the same times (the engine's stream, seeded as the engine seeds it).
    struct Arrived(Vec<f64>);
    impl crate::engine::Observer for Arrived {
        fn job_arrived(&mut self, t: SimTime, _job: u64) {
            self.0.push(t.as_secs());
        }
    }
    let scenario = r#"
seed = 42
[hardware]
cpu_cores = 4
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[[workload.stages]]
name = "s"
duration_s = 0.001
[arrivals]
kind = "poisson"
rate_per_s = 5
jobs = 50
"#;
    let l = load_str(scenario, Path::new("t.toml"), &[]).unwrap();
    let mut simulated = Arrived(Vec::new());
    crate::engine::simulate(&l.model, &mut simulated).unwrap();
    assert_eq!(simulated.0.len(), 50);
    let replayed = engine_arrivals(&l.model.arrivals.kind, l.model.seed, 50);
    assert_eq!(replayed, simulated.0);
    // Another seed, other arrivals.
    assert_ne!(engine_arrivals(&l.model.arrivals.kind, 43, 50), replayed);
}

#[test]
fn the_engines_fan_out_and_releases_order_the_real_instances() {
    // split (per job, holds the one lock until merge) -> work (per partition) ->
    // merge (per job): two jobs in flight, zero-time stages, so only the plan's
    // dependencies and the lock order them.
    let scenario = r#"
[hardware]
cpu_cores = 4
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[hardware.locks]
line = { capacity = 1 }
[workload]
partitions = 3
[[workload.stages]]
name = "split"
per_partition = false
duration_s = 0
holds = [{ resource = "line", until = "merge" }]
[[workload.stages]]
name = "work"
after = ["split"]
duration_s = 0
[[workload.stages]]
name = "merge"
per_partition = false
after = ["work"]
duration_s = 0
[arrivals]
kind = "closed"
concurrency = 2
jobs = 4
"#;
    let l = load_str(scenario, Path::new("t.toml"), &[]).unwrap();
    let plans = stage_plans(&l.model, &l.replay);
    let cpu = KernelHost::new(BufferSizes::TEST, 2);
    let rec = Executor::new(&l.model, &plans, &cpu, vec![])
        .unwrap()
        .run(60.0)
        .unwrap();
    assert_eq!(rec.jobs.len(), 4);
    let of = |job: u64, stage: usize| -> Vec<&StageInstance> {
        (rec.stages.iter())
            .filter(|s| s.job == job && s.stage == stage)
            .collect()
    };
    let mut holders = Vec::new();
    for job in 0..4 {
        let (split, work, merge) = (of(job, 0), of(job, 1), of(job, 2));
        assert_eq!((split.len(), merge.len()), (1, 1), "job {job}");
        assert_eq!(split[0].scope, Scope::Job);
        let mut scopes: Vec<Scope> = work.iter().map(|w| w.scope).collect();
        scopes.sort();
        assert_eq!(scopes, (0..3).map(Scope::Partition).collect::<Vec<_>>());
        for w in &work {
            assert!(w.start >= split[0].end && merge[0].start >= w.end);
        }
        holders.push((split[0].start, merge[0].end));
    }
    // The lock is held from each split's start to its merge's end: never two at once.
    holders.sort();
    for pair in holders.windows(2) {
        assert!(pair[1].0 >= pair[0].1, "lock held twice: {pair:?}");
    }
}

/// Two GPUs, a mutex per GPU, VRAM per partition: partitions spread over both GPUs.
const TWO_GPUS: &str = r#"
[hardware]
cpu_cores = 4
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[hardware.gpu]
count = 2
vram_gib = 1
pcie_h2d_gbps = 25
pcie_d2h_gbps = 25
[hardware.locks]
gpu_mutex = { capacity = 1, per_gpu = true }
[workload]
partitions = 4
[[workload.stages]]
name = "prep"
duration_s = 0.001
cores = 1
[[workload.stages]]
name = "up"
after = ["prep"]
transfer = { dir = "h2d", gb = 0.001, pinned = true }
holds = [{ resource = "vram", gib = 0.4, until = "kernel" }]
[[workload.stages]]
name = "kernel"
after = ["up"]
duration_s = 0.03
gpu_kernel = true
holds = [{ resource = "gpu_mutex" }]
[arrivals]
kind = "closed"
concurrency = 2
jobs = 3
"#;

#[test]
fn partitions_bind_to_gpus_and_their_work_runs_on_that_gpu() {
    let l = load_str(TWO_GPUS, Path::new("t.toml"), &[]).unwrap();
    let plans = stage_plans(&l.model, &l.replay);
    let cpu = KernelHost::new(BufferSizes::TEST, 2);
    let (g0, g1) = (FakeGpu::new(), FakeGpu::new());
    let exec = Executor::new(&l.model, &plans, &cpu, vec![&g0, &g1]).unwrap();
    let rec = exec.run(60.0).unwrap();
    assert_eq!(rec.jobs.len(), 3);
    let (k0, k1) = (
        g0.kernels.load(Ordering::Relaxed),
        g1.kernels.load(Ordering::Relaxed),
    );
    // 3 jobs x 4 partitions; VRAM for two 0.4 GiB partitions per GPU forces both in use.
    assert_eq!(k0 + k1, 12);
    assert!(k0 > 0 && k1 > 0, "both GPUs work: {k0} / {k1}");
    assert_eq!(g0.live_allocs.load(Ordering::Relaxed), 0);
    assert_eq!(g1.live_allocs.load(Ordering::Relaxed), 0);
    // Every kernel ran on the GPU its partition was bound to when it started.
    let kernel = l
        .model
        .workload
        .stages
        .iter()
        .position(|s| s.name == "kernel");
    for s in rec.stages.iter().filter(|s| Some(s.stage) == kernel) {
        assert!(s.gpu.is_some(), "a kernel instance without a GPU: {s:?}");
    }
    let per_gpu = |g: u32| rec.kernels.iter().filter(|k| k.gpu == g).count() as u32;
    assert_eq!((per_gpu(0), per_gpu(1)), (k0, k1));
    // One mutex per GPU: kernels on one GPU never overlap.
    for g in 0..2 {
        let mut iv: Vec<_> = rec.kernels.iter().filter(|k| k.gpu == g).collect();
        iv.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        for w in iv.windows(2) {
            assert!(
                w[1].start_s >= w[0].end_s - 0.002,
                "GPU {g} overlaps: {w:?}"
            );
        }
    }
}

#[test]
fn an_msm_reading_host_points_is_one_request_without_a_copy_beside_it() {
    let scenario = |read_by_kernel: bool| {
        crate::scenario::replay_info::one_msm_stage(
            "msm:12",
            0.004,
            &format!(
                r#"{{ dir = "h2d", gb = 0.000393216, pinned = false, read_by_kernel = {read_by_kernel} }}"#
            ),
            2,
        )
    };
    let run = |read_by_kernel: bool| {
        let l = load_str(&scenario(read_by_kernel), Path::new("t.toml"), &[]).unwrap();
        let plans = stage_plans(&l.model, &l.replay);
        let cpu = KernelHost::new(BufferSizes::TEST, 1);
        let gpu = FakeGpu::new();
        let rec = Executor::new(&l.model, &plans, &cpu, vec![&gpu])
            .unwrap()
            .run(60.0)
            .unwrap();
        let n = |c: &AtomicU32| c.load(Ordering::Relaxed);
        let dram: f64 = rec.dram_bytes.iter().map(|(_, b)| b).sum();
        (
            n(&gpu.kernels),
            n(&gpu.copies),
            n(&gpu.msms_reading_host),
            rec.kernels.len(),
            dram,
        )
    };
    // The MSM reads its 2^12 x 96 B points itself: no copy, no plain kernel.
    let (kernels, copies, from_host, spans, dram) = run(true);
    assert_eq!((kernels, copies, from_host, spans), (0, 0, 2, 2));
    assert!((dram - 2.0 * 393_216.0).abs() < 1.0, "{dram}");
    // Without the flag: a kernel with a copy beside it.
    let (kernels, copies, from_host, spans, _) = run(false);
    assert_eq!((kernels, copies, from_host, spans), (2, 2, 0, 2));
}

#[test]
fn a_cpu_stage_runs_the_work_its_trial_corrected() {
    let scenario = r#"
[hardware]
cpu_cores = 2
host_ram_gib = 4
dram = { capacity_gbps = 50 }
[[workload.stages]]
name = "crunch"
duration_s = 0.02
dram_gb = 0.001
[arrivals]
kind = "closed"
concurrency = 1
jobs = 2
"#;
    let l = load_str(scenario, Path::new("t.toml"), &[]).unwrap();
    let plans = stage_plans(&l.model, &l.replay);
    let streamed = |cpu: &KernelHost| -> f64 {
        let rec = Executor::new(&l.model, &plans, cpu, vec![])
            .unwrap()
            .run(60.0)
            .unwrap();
        rec.dram_bytes.iter().map(|(_, b)| b).sum()
    };
    let mut cpu = KernelHost::new(BufferSizes::TEST, 1);
    let as_planned = streamed(&cpu);
    assert!((as_planned - 2.0e6).abs() < 10.0, "{as_planned}");
    // A trial that found the memory parts twice as slow as the probe rates say.
    cpu.set_sizing(
        "crunch",
        StageSizing {
            compute_shift_frac: 0.0,
            memory_scale: 0.5,
        },
    );
    let sized = streamed(&cpu);
    assert!((sized - 1.0e6).abs() < 10.0, "{sized}");
}
