//! Measuring a host: CPU probes (streams, pointer chase, compute loop), the GPU probe
//! harness and the runs made through it.
//!
//! - [`sys`]: host facts, thread pinning, first-touched buffers.
//! - [`stream`]: STREAM-like read / copy / triad workers (how bytes are counted).
//! - [`latency`]: pointer chase for idle and loaded latency.
//! - [`compute`]: compute-bound hash loop (throughput vs active threads, SMT).
//! - [`cpu_load`]: GPU kernels timed next to busy CPU threads.
//! - [`harness`]: the CUDA probe harness (real sppark NTT and MSM, PCIe copies).
//! - [`plan`]: mode, sizes and durations of one calibration's probes.
//! - [`host`]: the CPU-side probe runs; [`gpu_runs`]: the GPU-side ones;
//!   [`multi_gpu`]: the same on several GPUs at once.

pub mod compute;
pub mod cpu_load;
pub mod gpu_runs;
pub mod harness;
pub mod host;
pub mod latency;
pub mod multi_gpu;
pub mod plan;
pub mod stream;
pub mod sys;
