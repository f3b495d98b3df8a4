//! Client for the GPU probe harness (`gpu/probe.cu`): a subprocess that runs the real
//! sppark kernels and PCIe copies and answers one JSON line per command.
//!
//! With the `cuda` feature the harness is built by `build.rs` and embedded in the bwsim
//! binary; `--gpu-probe PATH` (or `BWSIM_GPU_PROBE`) points to a separately built one.

use crate::calibrate::error::{CalibrateError, ProbeError, Result};
use serde_json::Value;
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

#[cfg(feature = "cuda")]
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bwsim-gpu-probe"));

/// Where the harness comes from, or why there is none.
pub enum Source {
    /// An executable on disk.
    Path(PathBuf),
    /// Written out from the bytes embedded at build time (kept until dropped).
    Embedded(tempfile::TempPath),
    /// No harness: the reason, for the skip report.
    Missing(String),
}

/// Finds the harness: an explicit path, then `BWSIM_GPU_PROBE`, then the embedded one.
pub fn locate(explicit: Option<&Path>) -> Source {
    if let Some(p) = explicit {
        return Source::Path(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("BWSIM_GPU_PROBE") {
        return Source::Path(PathBuf::from(p));
    }
    embedded()
}

#[cfg(feature = "cuda")]
fn embedded() -> Source {
    use std::os::unix::fs::PermissionsExt;
    let write = || -> std::io::Result<tempfile::TempPath> {
        let mut f = tempfile::Builder::new()
            .prefix("bwsim-gpu-probe-")
            .tempfile()?;
        f.write_all(EMBEDDED)?;
        f.flush()?;
        let path = f.into_temp_path();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        Ok(path)
    };
    match write() {
        Ok(p) => Source::Embedded(p),
        Err(e) => Source::Missing(format!("could not write the embedded GPU probe: {e}")),
    }
}

#[cfg(not(feature = "cuda"))]
fn embedded() -> Source {
    Source::Missing(
        "bwsim was built without the `cuda` feature (rebuild with `cargo build --release \
         --features cuda`, or pass --gpu-probe PATH to a harness built by gpu/build.sh)"
            .into(),
    )
}

/// A running harness.
pub struct GpuProbe {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    _source: Source,
    /// The executable, to start a sibling on another GPU.
    exe: PathBuf,
    /// CUDA devices the harness saw at start-up (its `ready` line).
    pub devices: usize,
    /// The `info` reply (GPU name, driver, VRAM, ...).
    pub info: Value,
}

/// Why GPU probes did not run.
#[derive(Debug)]
pub struct Skip(pub String);

impl GpuProbe {
    /// Starts the harness, pinned to `cpus` (empty: anywhere; see also [`GpuProbe::pin`]).
    /// `Err(Skip)` when there is no harness or no usable GPU.
    pub fn start(source: Source, cpus: &[usize]) -> Result<Self, Skip> {
        Self::start_on(source, cpus, None)
    }

    /// Another harness of the same executable that sees only CUDA device `device` (a
    /// `CUDA_VISIBLE_DEVICES` entry): one process per GPU, as a prover's GPU workers are.
    pub fn sibling(&self, device: &str, cpus: &[usize]) -> Result<Self, Skip> {
        Self::start_on(Source::Path(self.exe.clone()), cpus, Some(device))
    }

    fn start_on(source: Source, cpus: &[usize], device: Option<&str>) -> Result<Self, Skip> {
        let path: PathBuf = match &source {
            Source::Path(p) => p.clone(),
            Source::Embedded(p) => p.to_path_buf(),
            Source::Missing(why) => return Err(Skip(why.clone())),
        };
        let mut cmd = Command::new(&path);
        if let Some(d) = device {
            cmd.env("CUDA_VISIBLE_DEVICES", d);
        }
        if !cpus.is_empty() {
            use std::os::unix::process::CommandExt;
            let cpus = cpus.to_vec();
            // SAFETY: only async-signal-safe libc calls between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    for &c in &cpus {
                        libc::CPU_SET(c, &mut set);
                    }
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                    Ok(())
                });
            }
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Skip(format!("could not start {}: {e}", path.display())))?;
        let stdin = child.stdin.take().ok_or_else(|| Skip("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Skip("no stdout".into()))?;
        let mut lines = BufReader::new(stdout).lines();
        let first = read_json(&mut lines).map_err(|e| Skip(format!("GPU probe: {e}")))?;
        if first.get("ok") != Some(&Value::Bool(true)) {
            let err = first
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("unknown error");
            let _ = child.wait();
            return Err(Skip(format!("no usable CUDA GPU ({err})")));
        }
        let devices = first.get("devices").and_then(Value::as_u64).unwrap_or(1) as usize;
        let mut p = Self {
            child,
            stdin,
            lines,
            _source: source,
            exe: path,
            devices,
            info: Value::Null,
        };
        p.info = p
            .request("info")
            .map_err(|e| Skip(format!("GPU info: {e}")))?;
        Ok(p)
    }

    /// Pins every thread of the harness (CUDA's and sppark's included) to `cpus`, so
    /// that its copy threads stay off the streaming threads' cores. Kernel timings are
    /// taken unpinned: sppark's MSM finishes on a host thread pool.
    pub fn pin(&self, cpus: &[usize]) -> Result<()> {
        if cpus.is_empty() {
            return Ok(());
        }
        let dir = format!("/proc/{}/task", self.child.id());
        let tasks =
            std::fs::read_dir(&dir).map_err(|error| ProbeError::HarnessThreads { dir, error })?;
        // SAFETY: cpu_set_t is plain data, fully initialised before use.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus {
            // SAFETY: c < CPU_SETSIZE (it came from the affinity mask).
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        for t in tasks.flatten() {
            if let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                // SAFETY: plain syscall on a thread id; failure (thread gone) is ignored.
                unsafe {
                    libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
            }
        }
        Ok(())
    }

    /// Sends one command and returns its reply (an error if the reply says `ok: false`).
    pub fn request(&mut self, cmd: &str) -> Result<Value> {
        self.send(cmd)?;
        self.reply(cmd)
    }

    /// Sends a command that first announces `{"event":"begin"}`; returns once it has.
    pub fn begin(&mut self, cmd: &str) -> Result<()> {
        self.send(cmd)?;
        let v = read_json(&mut self.lines)?;
        if v.get("event").and_then(Value::as_str) == Some("begin") {
            return Ok(());
        }
        Err(reply_error(cmd, &v))
    }

    /// Waits for the result of a command started with [`GpuProbe::begin`].
    pub fn end(&mut self, cmd: &str) -> Result<Value> {
        self.reply(cmd)
    }

    fn send(&mut self, cmd: &str) -> Result<()> {
        writeln!(self.stdin, "{cmd}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| ProbeError::HarnessStoppedReading(e).into())
    }

    fn reply(&mut self, cmd: &str) -> Result<Value> {
        loop {
            let v = read_json(&mut self.lines)?;
            if v.get("event").is_some() {
                continue;
            }
            if v.get("ok") == Some(&Value::Bool(true)) {
                return Ok(v);
            }
            return Err(reply_error(cmd, &v));
        }
    }
}

fn reply_error(cmd: &str, v: &Value) -> CalibrateError {
    let err = v
        .get("error")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string());
    ProbeError::HarnessRefused {
        command: cmd.to_string(),
        error: err,
    }
    .into()
}

fn read_json(lines: &mut Lines<BufReader<ChildStdout>>) -> Result<Value> {
    loop {
        let line = lines
            .next()
            .ok_or(ProbeError::HarnessExited)?
            .map_err(ProbeError::HarnessOutput)?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if !t.starts_with('{') {
            // sppark or the driver may print plain lines; pass them on.
            eprintln!("gpu-probe: {t}");
            continue;
        }
        return serde_json::from_str(t).map_err(|error| {
            ProbeError::HarnessLine {
                line: t.to_string(),
                error,
            }
            .into()
        });
    }
}

impl Drop for GpuProbe {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

/// CPUs for the harness: the first and the last allowed CPU. Streams use CPUs 1..n-1
/// at most and the pointer chase CPU 0, so the harness's copy threads get a core of
/// their own instead of time-sharing one with a streaming thread.
pub fn harness_cpus() -> Vec<usize> {
    let c = super::sys::allowed_cpus();
    if c.len() < 3 {
        return Vec::new();
    }
    vec![c[0], c[c.len() - 1]]
}

/// Reads a number field, with a clear error.
pub fn num(v: &Value, key: &str) -> Result<f64> {
    v.get(key).and_then(Value::as_f64).ok_or_else(|| {
        ProbeError::ReplyLacks {
            key: key.to_string(),
            reply: v.clone(),
        }
        .into()
    })
}

/// Fails unless the harness's `verify` reply says everything matched.
pub fn check_verify(v: &Value) -> Result<()> {
    if v.get("all_ok") == Some(&Value::Bool(true)) {
        Ok(())
    } else {
        Err(ProbeError::KernelsWrong(v.clone()).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_source_is_a_skip_with_reason() {
        let r = GpuProbe::start(Source::Missing("no harness".into()), &[]);
        assert!(matches!(r, Err(Skip(ref s)) if s == "no harness"));
    }

    #[test]
    fn nonexistent_path_is_a_skip() {
        let r = GpuProbe::start(Source::Path("/nonexistent/bwsim-gpu-probe".into()), &[]);
        assert!(r.is_err());
    }

    #[cfg(feature = "cuda")]
    #[test]
    fn embedded_probe_runs_or_skips_cleanly() {
        match GpuProbe::start(locate(None), &[]) {
            Ok(mut p) => {
                let v = p.request("verify").unwrap();
                check_verify(&v).unwrap();
            }
            Err(Skip(why)) => eprintln!("skipping GPU test: {why}"),
        }
    }
}
