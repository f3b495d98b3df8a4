//! Small builders for hand-made models in tests, and a command runner with a deadline.
#![allow(dead_code)]

use bwsim::model::*;

/// A host with `cores` cores, 1 TiB RAM, DRAM of `dram_gbps` with a flat latency curve,
/// no GPUs, no locks, no pools.
pub fn host(cores: u32, dram_gbps: f64) -> Hardware {
    Hardware {
        cpu_cores: cores,
        host_ram_bytes: 1 << 40,
        dram: Dram {
            capacity_gbps: dram_gbps,
            latency: LatencyCurve::flat(),
            efficiency_loss_per_stream: 0.0,
            sharing: Default::default(),
        },
        gpus: vec![],
        locks: vec![],
        pools: vec![],
    }
}

/// A per-job stage with a duration and nothing else.
pub fn stage(name: &str, duration: Duration) -> Stage {
    Stage {
        name: name.into(),
        per_partition: false,
        after: vec![],
        duration,
        holds: vec![],
        demands: vec![],
        latency_bound_frac: 0.0,
        compute_bound_frac: 0.0,
        dram_write_frac: None,
        host_thread: None,
        cpu_load: None,
        gpu_kernel: false,
        staged_copy: None,
    }
}

/// A one-partition model around `hardware` and `stages`.
pub fn model(hardware: Hardware, stages: Vec<Stage>, arrivals: Arrivals, seed: u64) -> Model {
    Model {
        name: "test".into(),
        seed,
        hardware,
        workload: Workload {
            job_name: "job".into(),
            partitions: 1,
            stages,
        },
        arrivals,
        instrumentation: Instrumentation::default(),
    }
}

pub fn poisson(rate_per_s: f64, jobs: u64, warmup_jobs: u64) -> Arrivals {
    Arrivals {
        kind: ArrivalKind::Poisson { rate_per_s },
        jobs,
        warmup_jobs,
    }
}

pub fn closed(concurrency: u32, jobs: u64, warmup_jobs: u64) -> Arrivals {
    Arrivals {
        kind: ArrivalKind::Closed { concurrency },
        jobs,
        warmup_jobs,
    }
}

/// A queue with `servers` servers (a lock of that capacity held by the single stage).
pub fn queue_model(servers: u64, service: Duration, arrivals: Arrivals, seed: u64) -> Model {
    let mut hw = host(1, 100.0);
    hw.locks.push(Lock {
        name: "server".into(),
        capacity: servers,
        per_gpu: false,
    });
    let mut s = stage("service", service);
    s.holds.push(Hold {
        resource: HoldResource::Lock(0),
        amount: 1,
        until: 0,
    });
    model(hw, vec![s], arrivals, seed)
}

/// A processor-sharing server: one pool of 1 thread, the stage draws 1 thread.
pub fn ps_model(service: Duration, arrivals: Arrivals, seed: u64) -> Model {
    let mut hw = host(1, 100.0);
    hw.pools.push(Pool {
        name: "cpu".into(),
        threads: 1.0,
        sharing: Default::default(),
        cpu: None,
    });
    let mut s = stage("service", service);
    s.demands.push(Demand {
        target: RateTarget::Pool(0),
        amount: 1.0,
    });
    model(hw, vec![s], arrivals, seed)
}

/// Erlang C: probability an arrival waits in M/M/c with offered load a = lambda/mu.
pub fn erlang_c(c: u32, a: f64) -> f64 {
    let mut sum = 0.0;
    let mut term = 1.0; // a^k / k!
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        sum += term;
    }
    let last = term * a / c as f64; // a^c / c!
    let rho = a / c as f64;
    let top = last / (1.0 - rho);
    top / (sum + top)
}

/// Runs `cmd` with stdin closed, failing the test if it has not returned within `limit`
/// (a hang, or cost growing faster than the input); its output is collected through
/// files, so a large one cannot block it.
pub fn output_within(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    let d = tempfile::tempdir().unwrap();
    let (o, e) = (d.path().join("o"), d.path().join("e"));
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap());
    let mut child = cmd.spawn().unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("bwsim did not return within {limit:?}: {cmd:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: std::fs::read(&o).unwrap(),
        stderr: std::fs::read(&e).unwrap(),
    }
}

/// The files git tracks under the repository root that match `pathspecs` (every file for
/// none), or None where git cannot list them (a source tarball: nothing tracked to check).
pub fn tracked_files(pathspecs: &[&str]) -> Option<Vec<String>> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z", "--"])
        .args(pathspecs)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())?;
    Some(
        String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// Every what-if step as `run`'s bottleneck and compare's and sweep's cells write it:
/// "CPU threads +25%", ..., "GPUs +1".
pub fn what_if_steps() -> Vec<String> {
    (bwsim::analysis::knob::Resource::ALL.iter())
        .map(|r| r.with_step())
        .collect()
}
