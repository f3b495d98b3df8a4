use super::*;

/// A host with tiny buffers and the given streaming rates: 100 ns per chase step, fills
/// at 5 GB/s, 10^9 arithmetic iterations per second.
fn test_host(stream_gbps_per_thread: Vec<(u32, f64)>) -> KernelHost {
    KernelHost {
        chase: Backing::Heap(chase_cycle(16, 1)),
        stream: Backing::Heap(vec![0; 1024]),
        fills: vec![Mutex::new(Backing::Heap(vec![0; 64]))],
        chase_starts: AtomicUsize::new(0),
        slots: StreamSlots::new(1),
        rates: HostRates {
            chase_ns_per_step: 100.0,
            stream_gbps_per_thread,
            fill_dram_gbps: 5.0,
            compute_iters_per_s: 1e9,
        },
        sizings: HashMap::new(),
    }
}

#[test]
fn chase_cycle_visits_every_line_once() {
    let buf = chase_cycle(1000, 3);
    let mut seen = vec![false; 1000];
    let mut at = 0usize;
    for _ in 0..1000 {
        assert!(!seen[at]);
        seen[at] = true;
        at = buf[at * 16] as usize;
    }
    assert_eq!(at, 0);
}

#[test]
fn work_fills_the_standalone_time_in_shares() {
    let host = test_host(vec![(1, 10.0), (4, 5.0)]);
    let w = host.work_for(&CpuStageShape {
        standalone_s: 1.0,
        threads: 4,
        dram_bytes: 4.0e9,
        latency_frac: 0.5,
        write_frac: 0.0,
    });
    // 0.5 s chasing at 100 ns, 1 GB per thread at 5 GB/s = 0.2 s, 0.3 s compute.
    assert_eq!(w.per_thread.chase_steps, 5_000_000);
    assert_eq!(w.per_thread.stream_bytes, 1_000_000_000);
    assert_eq!(w.per_thread.compute_iters, 300_000_000);
    assert_eq!(w.dropped_dram_bytes, 0.0);
    // More bytes than fit: the rest is dropped, no compute left.
    let w = host.work_for(&CpuStageShape {
        standalone_s: 1.0,
        threads: 1,
        dram_bytes: 20.0e9,
        latency_frac: 0.0,
        write_frac: 0.0,
    });
    assert_eq!(w.per_thread.stream_bytes, 10_000_000_000);
    assert_eq!(w.per_thread.compute_iters, 0);
    assert!((w.dropped_dram_bytes - 10.0e9).abs() < 1.0);
    assert_eq!(host.rates.stream_gbps(2), 10.0 - 5.0 / 3.0);
}

#[test]
fn a_stage_asking_more_bytes_than_the_host_streams_is_named() {
    let host = test_host(vec![(1, 9.2)]);
    let fits = CpuStageShape {
        standalone_s: 0.8,
        threads: 1,
        dram_bytes: 6.0e9,
        latency_frac: 0.1,
        write_frac: 0.0,
    };
    let too_much = CpuStageShape {
        dram_bytes: 8.0e9,
        ..fits
    };
    // The same stage at two points of a replay, with another between: warned once.
    let w = host.shortfall_warnings([
        ("a", &fits),
        ("stream", &too_much),
        ("a", &fits),
        ("stream", &too_much),
    ]);
    assert_eq!(w.len(), 1, "{w:?}");
    // 0.72 s at 9.2 GB/s streams 6.624 GB of the 8.
    assert!(
        w[0].starts_with("stage stream: 1.38 of its 8.00 GB"),
        "{}",
        w[0]
    );
    assert!(w[0].contains("asks 11.1 GB/s"), "{}", w[0]);
}

#[test]
fn a_writing_stage_fills_its_share_at_the_fill_rate() {
    let host = test_host(vec![(1, 10.0)]);
    // 4 GB of DRAM bytes, a quarter writes: 1 GB filled (2 GB of DRAM traffic at
    // 5 GB/s = 0.4 s) and 2 GB read (0.2 s), 0.4 s of compute left.
    let w = host.work_for(&CpuStageShape {
        standalone_s: 1.0,
        threads: 1,
        dram_bytes: 4.0e9,
        latency_frac: 0.0,
        write_frac: 0.25,
    });
    assert_eq!(w.per_thread.fill_bytes, 1_000_000_000);
    assert_eq!(w.per_thread.stream_bytes, 2_000_000_000);
    assert_eq!(w.per_thread.compute_iters, 400_000_000);
    // Writes beyond half the bytes cannot be write-allocated fills: held at a half.
    let w = host.work_for(&CpuStageShape {
        standalone_s: 1.0,
        threads: 1,
        dram_bytes: 2.0e9,
        latency_frac: 0.0,
        write_frac: 0.9,
    });
    assert_eq!(w.per_thread.fill_bytes, 1_000_000_000);
    assert_eq!(w.per_thread.stream_bytes, 0);
}

#[test]
fn a_chase_goes_on_where_it_stopped_and_threads_start_apart() {
    let host = KernelHost::new(BufferSizes::TEST, 2);
    let lines = host.lines();
    // Two pieces of 100 steps end where one walk of 200 ends.
    let half = host.chase(0, 100);
    assert_eq!(host.chase(half, 100), host.chase(0, 200));
    assert_ne!(half, 0);
    // Successive threads start at different lines, all inside the buffer.
    let starts: Vec<usize> = (0..8).map(|_| host.chase_start()).collect();
    let mut distinct = starts.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8, "{starts:?}");
    assert!(starts.iter().all(|&s| s < lines));
}

#[test]
fn a_look_at_the_host_now_reads_a_chase_and_one_stream() {
    let host = KernelHost::new(BufferSizes::TEST, 1);
    let now = host.probe_now();
    assert!(now.chase_ns_per_step > 0.0 && now.chase_ns_per_step.is_finite());
    assert!(now.stream_gbps_one_thread > 0.0 && now.stream_gbps_one_thread.is_finite());
}

/// The shape of `work_fills_the_standalone_time_in_shares`: 0.5 s chasing, 0.2 s
/// streaming 1 GB per thread, 0.3 s of arithmetic.
fn half_latency_shape() -> CpuStageShape {
    CpuStageShape {
        standalone_s: 1.0,
        threads: 4,
        dram_bytes: 4.0e9,
        latency_frac: 0.5,
        write_frac: 0.0,
    }
}

#[test]
fn a_slow_trial_takes_its_excess_out_of_the_arithmetic() {
    let host = test_host(vec![(1, 10.0), (4, 5.0)]);
    let shape = half_latency_shape();
    let work = host.work_for(&shape);
    let sizing = StageSizing::from_trial(&work, 1.0, 1.1, &host.rates);
    assert!(
        (sizing.compute_shift_frac + 0.1).abs() < 1e-12,
        "{sizing:?}"
    );
    assert_eq!(sizing.memory_scale, 1.0);
    let sized = host.work_for_sized(&shape, &sizing);
    assert_eq!(sized.per_thread.compute_iters, 200_000_000);
    assert_eq!(sized.per_thread.chase_steps, work.per_thread.chase_steps);
    assert_eq!(sized.per_thread.stream_bytes, work.per_thread.stream_bytes);
    assert_eq!(sized.dropped_dram_bytes, 0.0);
}

#[test]
fn a_fast_trial_adds_its_shortfall_to_the_arithmetic() {
    let host = test_host(vec![(1, 10.0), (4, 5.0)]);
    let shape = half_latency_shape();
    let work = host.work_for(&shape);
    let sizing = StageSizing::from_trial(&work, 1.0, 0.9, &host.rates);
    let sized = host.work_for_sized(&shape, &sizing);
    assert_eq!(sized.per_thread.compute_iters, 400_000_000);
    assert_eq!(sized.per_thread.stream_bytes, work.per_thread.stream_bytes);
}

#[test]
fn an_excess_beyond_the_arithmetic_scales_the_memory_down_and_drops_its_bytes() {
    let host = test_host(vec![(1, 10.0), (4, 5.0)]);
    let shape = half_latency_shape();
    let work = host.work_for(&shape);
    // 1.5 s measured: no arithmetic left, and the memory parts, which took 1.5 - 0.3 =
    // 1.2 s, are scaled to take the stated 1.0 s.
    let sizing = StageSizing::from_trial(&work, 1.0, 1.5, &host.rates);
    assert!(
        (sizing.compute_shift_frac + 0.3).abs() < 1e-12,
        "{sizing:?}"
    );
    assert!(
        (sizing.memory_scale - 1.0 / 1.2).abs() < 1e-12,
        "{sizing:?}"
    );
    let sized = host.work_for_sized(&shape, &sizing);
    assert_eq!(sized.per_thread.compute_iters, 0);
    assert_eq!(sized.per_thread.chase_steps, 4_166_667);
    assert_eq!(sized.per_thread.stream_bytes, 833_333_333);
    assert_eq!(sized.dropped_dram_bytes, 4.0 * 166_666_667.0);
}

#[test]
fn a_sizing_applies_in_shares_of_each_instance_time() {
    let host = test_host(vec![(1, 10.0), (4, 5.0)]);
    let sizing = StageSizing {
        compute_shift_frac: -0.1,
        memory_scale: 1.0,
    };
    // An instance drawn at half the mean, its bytes halved as the executor does.
    let half = CpuStageShape {
        standalone_s: 0.5,
        dram_bytes: 2.0e9,
        ..half_latency_shape()
    };
    let sized = host.work_for_sized(&half, &sizing);
    assert_eq!(sized.per_thread.compute_iters, 100_000_000);
    assert_eq!(sized.per_thread.stream_bytes, 500_000_000);
}

#[test]
fn no_sizing_is_the_probe_rates_work() {
    let host = test_host(vec![(1, 10.0), (4, 5.0)]);
    let too_much = CpuStageShape {
        standalone_s: 1.0,
        threads: 1,
        dram_bytes: 20.0e9,
        latency_frac: 0.1,
        write_frac: 0.2,
    };
    for shape in [half_latency_shape(), too_much] {
        let identity = host.work_for_sized(&shape, &StageSizing::IDENTITY);
        assert_eq!(identity, host.work_for(&shape));
    }
    assert_eq!(host.sizing_of("never tried"), StageSizing::IDENTITY);
    // A trial that measured nothing usable corrects nothing.
    let work = host.work_for(&half_latency_shape());
    for measured in [f64::NAN, 0.0, f64::INFINITY] {
        let s = StageSizing::from_trial(&work, 1.0, measured, &host.rates);
        assert_eq!(s, StageSizing::IDENTITY);
    }
}

#[test]
fn a_trial_reports_its_stated_time_and_keeps_a_finite_correction() {
    let host = KernelHost::new(BufferSizes::TEST, 1);
    let shape = CpuStageShape {
        standalone_s: 0.01,
        threads: 1,
        dram_bytes: 1.0e6,
        latency_frac: 0.2,
        write_frac: 0.1,
    };
    let t = host.size_stage(&shape);
    assert_eq!(t.stated_s, 0.01);
    assert!(t.as_sized_s > 0.0 && t.after_s > 0.0);
    assert!(t.sizing.compute_shift_frac.is_finite());
    assert!(t.sizing.memory_scale > 0.0 && t.sizing.memory_scale <= 1.0);
}
