//! Client of the GPU replay harness (`gpu/replay.cu`): a child process per GPU that runs
//! real PCIe copies, sppark NTT/MSM and spin kernels, each request on its own CUDA
//! stream so that copies and kernels overlap as in the pipeline, and samples NVML.
//!
//! Protocol: one request per stdin line, `<id> <command> <args...>`; one JSON reply per
//! stdout line carrying the same `"id"`. Replies arrive in completion order, so a
//! reader thread routes them to the waiting caller. Every wait has a timeout; if the
//! harness exits, every caller gets an error instead of hanging.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::error::{Context, GpuError, Result, chain};
use serde_json::Value;

use crate::scenario::replay_info::{KernelKind, TransferInfo};

use super::executor::GpuBackend;
use super::plan::MsmFromHost;

#[cfg(feature = "cuda")]
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bwsim-gpu-replay"));

/// Longest wait for one reply: generous (a large MSM or a 10 GB pageable copy under
/// load takes seconds), but a hung harness still ends the replay.
const REPLY_TIMEOUT: Duration = Duration::from_secs(300);

/// Longest wait for the harness to say it is ready (it loads CUDA and NVML first).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Where the harness is: `--gpu-harness PATH`, `BWSIM_GPU_REPLAY`, else the embedded one.
/// `Err` says why there is none (no `cuda` feature).
pub fn locate(explicit: Option<&Path>) -> Result<HarnessPath, GpuError> {
    if let Some(p) = explicit {
        return Ok(HarnessPath::Disk(p.to_path_buf()));
    }
    if let Some(p) = std::env::var_os("BWSIM_GPU_REPLAY") {
        return Ok(HarnessPath::Disk(PathBuf::from(p)));
    }
    embedded()
}

/// An executable harness.
pub enum HarnessPath {
    /// On disk.
    Disk(PathBuf),
    /// Written out from the embedded bytes (deleted when dropped).
    Temp(tempfile::TempPath),
}

impl HarnessPath {
    fn path(&self) -> &Path {
        match self {
            HarnessPath::Disk(p) => p,
            HarnessPath::Temp(p) => p,
        }
    }
}

#[cfg(feature = "cuda")]
fn embedded() -> Result<HarnessPath, GpuError> {
    use std::os::unix::fs::PermissionsExt;
    let write = || -> std::io::Result<tempfile::TempPath> {
        let mut f = tempfile::Builder::new()
            .prefix("bwsim-gpu-replay-")
            .tempfile()?;
        f.write_all(EMBEDDED)?;
        f.flush()?;
        let path = f.into_temp_path();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        Ok(path)
    };
    write()
        .map(HarnessPath::Temp)
        .map_err(GpuError::WriteEmbedded)
}

#[cfg(not(feature = "cuda"))]
fn embedded() -> Result<HarnessPath, GpuError> {
    Err(GpuError::NotBuiltIn)
}

/// Starts one harness per GPU of the model, harness `i` seeing only GPU `i`: the `i`-th
/// entry of the caller's `CUDA_VISIBLE_DEVICES`, else CUDA device `i`. One GPU keeps the
/// process's default device. Each harness is then a one-GPU process, as a prover's GPU
/// workers are, and NVML follows it by PCI bus id.
pub fn start_harnesses(path: HarnessPath, gpus: usize) -> Result<Vec<GpuHarness>> {
    let path = Arc::new(path);
    if gpus <= 1 {
        return Ok(vec![GpuHarness::start(path, None)?]);
    }
    (0..gpus)
        .map(|i| {
            let device = crate::calibrate::probe::sys::visible_device(i, gpus)
                .map_err(|why| GpuError::DeviceChoice { gpu: i, gpus, why })?;
            GpuHarness::start(path.clone(), Some(&device))
                .with_context(|| format!("GPU {i} of {gpus} (CUDA device {device})"))
        })
        .collect()
}

/// Why a request got no `ok` reply, as the reader thread tells its caller.
enum Refused {
    /// The harness answered with an error.
    Error(String),
    /// The harness exited first.
    Exited,
}

type Waiters = Arc<Mutex<HashMap<u64, Sender<Result<Value, Refused>>>>>;

/// A running harness.
pub struct GpuHarness {
    child: Mutex<Child>,
    stdin: Mutex<ChildStdin>,
    waiters: Waiters,
    next_id: AtomicU64,
    _path: Arc<HarnessPath>,
    /// The `info` reply: GPU name, VRAM, driver, whether NVML loaded.
    pub info: Value,
    /// Measured standalone time of each kernel kind used, seconds (see [`Self::prepare`]).
    kernel_s: Mutex<HashMap<String, f64>>,
}

/// NVML samples of one replay point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NvmlSamples {
    /// `(seconds since nvml_start, utilization.gpu %, power W)`.
    pub samples: Vec<(f64, f64, f64)>,
}

impl GpuHarness {
    /// Starts the harness on the GPU `device` names (a `CUDA_VISIBLE_DEVICES` entry; None:
    /// the process's default GPU). `Err` with the reason when it cannot start or finds no
    /// GPU.
    pub fn start(path: Arc<HarnessPath>, device: Option<&str>) -> Result<GpuHarness, GpuError> {
        let mut cmd = Command::new(path.path());
        if let Some(d) = device {
            cmd.env("CUDA_VISIBLE_DEVICES", d);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|source| GpuError::Spawn {
                path: path.path().to_path_buf(),
                source,
            })?;
        let stdin = child.stdin.take().ok_or(GpuError::NoPipe("stdin"))?;
        let stdout = child.stdout.take().ok_or(GpuError::NoPipe("stdout"))?;
        let waiters: Waiters = Arc::new(Mutex::new(HashMap::new()));
        let (first_tx, first_rx) = channel::<Value>();
        {
            let waiters = waiters.clone();
            std::thread::spawn(move || {
                let mut first = Some(first_tx);
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let t = line.trim();
                    if !t.starts_with('{') {
                        if !t.is_empty() {
                            eprintln!("gpu-replay: {t}");
                        }
                        continue;
                    }
                    let Ok(v) = serde_json::from_str::<Value>(t) else {
                        eprintln!("gpu-replay: bad line: {t}");
                        continue;
                    };
                    if let Some(tx) = first.take() {
                        let _ = tx.send(v);
                        continue;
                    }
                    let Some(id) = v.get("id").and_then(Value::as_u64) else {
                        eprintln!("gpu-replay: reply without id: {t}");
                        continue;
                    };
                    let reply = if v.get("ok") == Some(&Value::Bool(true)) {
                        Ok(v)
                    } else {
                        Err(Refused::Error(
                            v.get("error")
                                .and_then(Value::as_str)
                                .unwrap_or("unknown error")
                                .to_string(),
                        ))
                    };
                    if let Some(tx) = waiters.lock().expect("poisoned").remove(&id) {
                        let _ = tx.send(reply);
                    }
                }
                // The harness is gone: fail every waiter now rather than at its timeout.
                for (_, tx) in waiters.lock().expect("poisoned").drain() {
                    let _ = tx.send(Err(Refused::Exited));
                }
            });
        }
        let first = first_rx.recv_timeout(START_TIMEOUT).map_err(|e| match e {
            RecvTimeoutError::Timeout => GpuError::NoStart {
                within_s: START_TIMEOUT.as_secs(),
            },
            RecvTimeoutError::Disconnected => GpuError::ExitedAtStart,
        })?;
        if first.get("ok") != Some(&Value::Bool(true)) {
            let _ = child.wait();
            return Err(GpuError::NoGpu {
                reason: first
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string(),
            });
        }
        let mut h = GpuHarness {
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            waiters,
            next_id: AtomicU64::new(1),
            _path: path,
            info: Value::Null,
            kernel_s: Mutex::new(HashMap::new()),
        };
        h.info = h.request("info")?;
        Ok(h)
    }

    /// Sends `command args` and waits for its reply.
    pub fn request(&self, command: &str) -> Result<Value, GpuError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = channel();
        self.waiters.lock().expect("poisoned").insert(id, tx);
        {
            let mut stdin = self.stdin.lock().expect("poisoned");
            writeln!(stdin, "{id} {command}")
                .and_then(|()| stdin.flush())
                .map_err(GpuError::StoppedReading)?;
        }
        let request = || command.to_string();
        match rx.recv_timeout(REPLY_TIMEOUT) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(Refused::Error(error))) => Err(GpuError::Call {
                request: request(),
                error,
            }),
            Ok(Err(Refused::Exited)) => Err(GpuError::Exited { request: request() }),
            Err(_) => {
                self.waiters.lock().expect("poisoned").remove(&id);
                Err(GpuError::NoReply {
                    request: request(),
                    within_s: REPLY_TIMEOUT.as_secs(),
                })
            }
        }
    }

    /// Device memory in bytes (total) as the harness reports it.
    pub fn vram_bytes(&self) -> Option<f64> {
        self.info.get("vram_bytes").and_then(Value::as_f64)
    }

    /// Prepares each kernel kind (buffers, MSM points) and measures one run of it
    /// alone, so that a stage can repeat it to fill its standalone time.
    pub fn prepare(&self, kinds: &[KernelKind]) -> Result<(), GpuError> {
        for k in kinds {
            let request = match k {
                KernelKind::Ntt { lg } => format!("prepare ntt {lg}"),
                KernelKind::Msm { lg } => format!("prepare msm {lg}"),
                KernelKind::Spin => continue,
            };
            let ms = num(&request, &self.request(&request)?, "ms")?;
            self.record_alone(k.label(), ms / 1e3);
        }
        Ok(())
    }

    /// Prepares each MSM that reads its points from host memory (its sppark instance, a
    /// pageable copy of the points) and measures one run of it alone.
    pub fn prepare_from_host(&self, msms: &[MsmFromHost]) -> Result<(), GpuError> {
        for m in msms {
            let request = format!("prepare msm_host {} {}", m.lg, u8::from(m.pinned));
            let ms = num(&request, &self.request(&request)?, "ms")?;
            self.record_alone(m.label(), ms / 1e3);
        }
        Ok(())
    }

    /// The measured standalone time of one run of an MSM reading host points, seconds.
    pub fn from_host_alone_s(&self, m: MsmFromHost) -> Option<f64> {
        self.alone_s(&m.label())
    }

    /// The measured standalone time of one run of `k`, seconds.
    pub fn kernel_alone_s(&self, k: KernelKind) -> Option<f64> {
        self.alone_s(&k.label())
    }

    /// Keeps what one run of the kernel `label` names took alone, seconds.
    fn record_alone(&self, label: String, s: f64) {
        self.kernel_s.lock().expect("poisoned").insert(label, s);
    }

    /// What one run of the kernel `label` names took alone, seconds.
    fn alone_s(&self, label: &str) -> Option<f64> {
        self.kernel_s.lock().expect("poisoned").get(label).copied()
    }

    /// Starts NVML sampling every `period_ms` (utilization.gpu and power).
    pub fn nvml_start(&self, period_ms: u32) -> Result<(), GpuError> {
        self.request(&format!("nvml_start {period_ms}")).map(|_| ())
    }

    /// Stops sampling and returns the samples.
    pub fn nvml_stop(&self) -> Result<NvmlSamples, GpuError> {
        let v = self.request("nvml_stop")?;
        let samples = v
            .get("samples")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| {
                        let s = s.as_array()?;
                        Some((
                            s.first()?.as_f64()?,
                            s.get(1)?.as_f64()?,
                            s.get(2)?.as_f64()?,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(NvmlSamples { samples })
    }
}

/// The number `key` of the reply `v` to `request`.
fn num(request: &str, v: &Value, key: &'static str) -> Result<f64, GpuError> {
    v.get(key)
        .and_then(Value::as_f64)
        .ok_or_else(|| GpuError::BadReply {
            request: request.to_string(),
            key,
            reply: v.to_string(),
        })
}

/// Sends `request` to `h` and reads the device time of its reply, seconds.
fn device_s(h: &GpuHarness, request: &str) -> Result<f64, GpuError> {
    Ok(num(request, &h.request(request)?, "gpu_ms")? / 1e3)
}

impl GpuBackend for GpuHarness {
    fn copy(&self, t: &TransferInfo) -> Result<f64, GpuError> {
        let request = format!("copy {} {} {}", t.dir.name(), t.bytes, u8::from(t.pinned));
        device_s(self, &request)
    }

    fn kernel(&self, k: KernelKind, standalone_s: f64) -> Result<f64, GpuError> {
        let request = match k {
            KernelKind::Spin => format!("spin {}", (standalone_s * 1e6).round() as u64),
            KernelKind::Ntt { lg } | KernelKind::Msm { lg } => {
                let one = self.kernel_alone_s(k).unwrap_or(standalone_s).max(1e-6);
                let reps = (standalone_s / one).round().max(1.0) as u64;
                let name = if matches!(k, KernelKind::Ntt { .. }) {
                    "ntt"
                } else {
                    "msm"
                };
                format!("{name} {lg} {reps}")
            }
        };
        device_s(self, &request)
    }

    fn msm_reading_host(&self, m: MsmFromHost, standalone_s: f64) -> Result<f64, GpuError> {
        // Repeated as the MSM alone would be: the stage's standalone time is the kernel's.
        let one = self
            .kernel_alone_s(KernelKind::Msm { lg: m.lg })
            .or_else(|| self.from_host_alone_s(m))
            .unwrap_or(standalone_s)
            .max(1e-6);
        let reps = (standalone_s / one).round().max(1.0) as u64;
        device_s(
            self,
            &format!("msm_host {} {reps} {}", m.lg, u8::from(m.pinned)),
        )
    }

    fn alloc(&self, bytes: u64) -> Result<u64, GpuError> {
        let request = format!("alloc {bytes}");
        let v = self.request(&request)?;
        v.get("handle")
            .and_then(Value::as_u64)
            .ok_or_else(|| GpuError::BadReply {
                request,
                key: "handle",
                reply: v.to_string(),
            })
    }

    fn free(&self, handle: u64) {
        if let Err(e) = self.request(&format!("free {handle}")) {
            eprintln!("warning: {}", chain(&e));
        }
    }
}

impl Drop for GpuHarness {
    fn drop(&mut self) {
        if let Ok(mut s) = self.stdin.lock() {
            let _ = writeln!(s, "0 quit");
            let _ = s.flush();
        }
        if let Ok(mut c) = self.child.lock() {
            // Give it a moment to free the device, then make sure it is gone.
            for _ in 0..50 {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_harness_is_an_error_not_a_panic() {
        let r = GpuHarness::start(
            Arc::new(HarnessPath::Disk("/nonexistent/bwsim-gpu-replay".into())),
            None,
        );
        match r {
            Err(GpuError::Spawn { path, .. }) => {
                assert_eq!(path, Path::new("/nonexistent/bwsim-gpu-replay"))
            }
            Err(e) => panic!("not a spawn failure: {e}"),
            Ok(_) => panic!("a missing harness started"),
        }
    }

    /// A harness that exits before its ready line is said to have exited, at once
    /// (not after the start timeout).
    #[test]
    fn a_harness_that_exits_at_start_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("quits.sh");
        std::fs::write(&script, "#!/bin/sh\nexit 3\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let r = GpuHarness::start(Arc::new(HarnessPath::Disk(script)), None);
        assert!(matches!(r, Err(GpuError::ExitedAtStart)), "{:?}", r.err());
    }

    /// A fake harness (a shell script) speaking the protocol: replies out of order
    /// are routed by id, and a harness that exits fails the waiting caller.
    #[test]
    fn replies_are_routed_by_id_and_exit_fails_waiters() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("fake.sh");
        std::fs::write(
            &script,
            r#"#!/bin/sh
echo '{"ok":true,"ready":true}'
while read id cmd rest; do
  case "$cmd" in
    info) echo "{\"id\":$id,\"ok\":true,\"gpu\":\"fake\",\"vram_bytes\":1000}" ;;
    copy) echo "{\"id\":$id,\"ok\":true,\"gpu_ms\":2.5}" ;;
    prepare) echo "{\"id\":$id,\"ok\":true,\"ms\":100}" ;;
    msm_host) set -- $rest; echo "{\"id\":$id,\"ok\":true,\"gpu_ms\":$2$3}" ;;
    die) exit 0 ;;
    *) echo "{\"id\":$id,\"ok\":false,\"error\":\"unknown $cmd\"}" ;;
  esac
done
"#,
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let h = GpuHarness::start(Arc::new(HarnessPath::Disk(script)), None).unwrap();
        assert_eq!(h.vram_bytes(), Some(1000.0));
        let t = TransferInfo {
            dir: crate::model::CopyDir::H2d,
            bytes: 10,
            pinned: true,
            read_by_kernel: false,
        };
        assert_eq!(h.copy(&t).unwrap(), 0.0025);
        // An MSM reading host points repeats as the MSM alone (100 ms) fills 0.3 s, and
        // says pageable: the fake answers reps then the pinned flag as its milliseconds.
        h.prepare(&[KernelKind::Msm { lg: 20 }]).unwrap();
        let m = MsmFromHost {
            lg: 20,
            pinned: false,
        };
        assert_eq!(h.msm_reading_host(m, 0.3).unwrap(), 0.030);
        match h.request("bogus") {
            Err(GpuError::Call { request, error }) => {
                assert_eq!(
                    (request.as_str(), error.as_str()),
                    ("bogus", "unknown bogus")
                )
            }
            r => panic!("not the harness's own error: {r:?}"),
        }
        match h.request("die") {
            Err(e @ GpuError::Exited { .. }) => {
                assert_eq!(
                    e.to_string(),
                    "GPU harness `die` failed: the GPU replay harness exited"
                )
            }
            r => panic!("not an exit: {r:?}"),
        }
    }
}
