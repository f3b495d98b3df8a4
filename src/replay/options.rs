//! What `bwsim replay` was asked to do, as the command layer fills it from the flags.

use std::path::PathBuf;

use super::kernels::BufferSizes;

/// What `bwsim replay` was asked to do.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Scenario file.
    pub scenario: PathBuf,
    /// `--set KEY=VALUE` overrides for every point.
    pub sets: Vec<String>,
    /// `--param KEY=SPEC`: the points (None: one point, the scenario as it is).
    pub param: Option<String>,
    /// A calibration file merged over the scenario (its hardware and knobs win).
    pub calibration: Option<PathBuf>,
    /// Print the plan and the memory check, run nothing.
    pub dry_run: bool,
    /// Output folder (default `output/<scenario>/<timestamp>`).
    pub out: Option<PathBuf>,
    /// Replay runs per point.
    pub runs: u32,
    /// A GPU replay harness built by gpu/build.sh (default: the embedded one).
    pub gpu_harness: Option<PathBuf>,
    /// NVML sampling period, ms.
    pub nvml_period_ms: u32,
    /// Host RAM to plan against, bytes (default: this host's MemTotal).
    pub host_ram_bytes: Option<f64>,
    /// The longest replay to start, seconds of expected wall time over all points and runs.
    pub max_wall_s: f64,
    /// Kernel buffer sizes.
    pub buffers: BufferSizes,
}

impl ReplayOptions {
    /// Defaults for a scenario: one run per point, 200 ms NVML period, full buffers.
    pub fn new(scenario: impl Into<PathBuf>) -> ReplayOptions {
        ReplayOptions {
            scenario: scenario.into(),
            sets: Vec::new(),
            param: None,
            calibration: None,
            dry_run: false,
            out: None,
            runs: 1,
            gpu_harness: None,
            nvml_period_ms: 200,
            host_ram_bytes: None,
            max_wall_s: 4.0 * 3600.0,
            buffers: BufferSizes::REPLAY,
        }
    }
}
