//! What can go wrong in `bwsim replay`, as one typed error: the user's input (a point
//! that does not fit, a plan too long, a results folder that is not free, a replay.json
//! that is not one: [`ReplayInputError`], exit 2), the engine, a chart or an output
//! write (their own kinds), the GPU harness ([`GpuError`]: which request, what failed)
//! or the replay itself (a stall, a thread: exit 1). Context ("simulating x.toml at
//! ...") wraps the cause as its source, so messages read `context: cause` and the cause
//! decides the exit code.

use std::fmt::Display;
use std::path::PathBuf;

use crate::engine::EngineError;
use crate::input_file::InputError;
use crate::output::OutputError;
use crate::plot::PlotError;
use crate::scenario::ScenarioError;
use crate::sweep::SpecError;

use super::plan::GIB;

/// Bad input to `bwsim replay` that the scenario loader cannot see (exit code 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayInputError {
    /// A point needs more host RAM or GPU memory than there is.
    #[error("{}", does_not_fit(.point, *.memory, *.needs_bytes, *.limit_bytes))]
    DoesNotFit {
        /// The point's `--set`s (empty: the scenario as it is).
        point: Vec<String>,
        /// Which memory.
        memory: Memory,
        /// What the point needs, bytes.
        needs_bytes: f64,
        /// What this host (or `--host-ram-gib`) or the GPU has, bytes.
        limit_bytes: f64,
    },
    /// The replay runs in real time and would take longer than `--max-hours`.
    #[error("{}", too_long(*.expected_s, *.limit_s, *.points_counted, *.points_total, *.runs))]
    TooLong {
        /// The expected wall time of the points counted, x runs, seconds.
        expected_s: f64,
        /// `--max-hours`, in seconds.
        limit_s: f64,
        /// The points counted so far (planning stops at the first that passes the limit).
        points_counted: usize,
        /// The points of `--param`.
        points_total: usize,
        /// `--replications`.
        runs: u32,
    },
    /// The results folder holds another replay's results, which bwsim cannot make again.
    #[error("{}", folder_taken(.dir, .repredicted_from.as_deref(), *.has_logs))]
    FolderTaken {
        /// The `--out` folder.
        dir: PathBuf,
        /// The replay its replay.json says it re-predicted, if it is a re-prediction.
        repredicted_from: Option<String>,
        /// Whether measured TIMELINE logs lie beside it.
        has_logs: bool,
    },
    /// A replay.json read back (`--repredict DIR`) that is not one a replay writes: the
    /// file, the key, what is wrong.
    #[error(transparent)]
    ReplayFile(#[from] InputError),
}

/// The memory a replay point takes, of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// Host RAM: RAM permits at their simulated peak, kernel and copy buffers.
    HostRam,
    /// GPU memory: VRAM permits at their simulated peak, kernel working sets.
    Vram,
}

fn does_not_fit(point: &[String], memory: Memory, needs: f64, limit: f64) -> String {
    let what = if point.is_empty() {
        "the scenario".to_string()
    } else {
        format!("point {}", point.join(" "))
    };
    let (needs, limit) = (needs / GIB, limit / GIB);
    match memory {
        Memory::HostRam => format!(
            "{what} needs {needs:.1} GiB of host RAM (RAM permits at their simulated peak + \
             kernel and copy buffers), but this host has {limit:.1} GiB; lower the \
             concurrency or the RAM holds (or pass --host-ram-gib if MemTotal understates it)"
        ),
        Memory::Vram => format!(
            "{what} needs {needs:.1} GiB of GPU memory (VRAM permits at their simulated peak \
             + kernel working sets), but the GPU has {limit:.1} GiB; lower the concurrency, \
             the VRAM holds or the kernel sizes"
        ),
    }
}

fn too_long(expected_s: f64, limit_s: f64, counted: usize, total: usize, runs: u32) -> String {
    let hours = expected_s / 3600.0;
    let what = if counted < total {
        format!(
            "more than {hours:.1} h (the first {counted} of its {total} points alone, x {runs} \
             run(s))"
        )
    } else {
        format!("about {hours:.1} h ({counted} point(s) x {runs} run(s))")
    };
    format!(
        "the replay would take {what}, above the limit of {:.1} h; lower arrivals.jobs \
         (with --set) or the points, or raise the limit with --max-hours",
        limit_s / 3600.0
    )
}

fn folder_taken(dir: &std::path::Path, repredicted_from: Option<&str>, has_logs: bool) -> String {
    format!(
        "{}: holds the results of another replay (replay.json{}); bwsim does not write over \
         them, so give a new or empty --out folder",
        dir.display(),
        match (repredicted_from, has_logs) {
            (Some(f), _) => format!(", re-predicted from {f}"),
            (None, true) => " and its measured timeline logs".to_string(),
            (None, false) => String::new(),
        }
    )
}

/// The GPU replay harness failed: what was asked of it and what went wrong. Its CUDA
/// calls run in the harness process, which answers each request with the error it met.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No harness to start: this bwsim has none embedded and none was given.
    #[error(
        "bwsim was built without the `cuda` feature (rebuild with `cargo build --release \
         --features cuda`, or pass --gpu-harness PATH to a harness built by gpu/build.sh)"
    )]
    NotBuiltIn,
    /// The embedded harness could not be written out to a temporary file.
    #[error("could not write the embedded GPU replay harness")]
    WriteEmbedded(#[source] std::io::Error),
    /// The harness process could not be started.
    #[error("could not start {}", .path.display())]
    Spawn {
        /// The harness.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The harness has no `stdin` or `stdout` pipe.
    #[error("the GPU replay harness has no {0}")]
    NoPipe(&'static str),
    /// The GPU a harness should see could not be chosen (`CUDA_VISIBLE_DEVICES`).
    #[error("GPU {gpu} of {gpus}: {why}")]
    DeviceChoice {
        /// The GPU's index in the model.
        gpu: usize,
        /// The model's GPUs.
        gpus: usize,
        /// Why.
        why: String,
    },
    /// The harness did not say it was ready in time.
    #[error("the GPU replay harness did not start within {within_s} s")]
    NoStart {
        /// The wait, seconds.
        within_s: u64,
    },
    /// The harness exited before it said it was ready.
    #[error("the GPU replay harness exited before it was ready")]
    ExitedAtStart,
    /// The harness started but found no CUDA GPU it can use.
    #[error("no usable CUDA GPU ({reason})")]
    NoGpu {
        /// The harness's reason (the CUDA or NVML error).
        reason: String,
    },
    /// A request failed in the harness: `request` is the line sent (its first word the
    /// call: copy, ntt, msm, spin, alloc, free, prepare, nvml_start, ...).
    #[error("GPU harness `{request}` failed: {error}")]
    Call {
        /// The request.
        request: String,
        /// The harness's error (the failing CUDA call and its message).
        error: String,
    },
    /// The harness exited while a request waited for its reply.
    #[error("GPU harness `{request}` failed: the GPU replay harness exited")]
    Exited {
        /// The request.
        request: String,
    },
    /// A request got no reply in time.
    #[error("GPU harness `{request}` gave no reply within {within_s} s")]
    NoReply {
        /// The request.
        request: String,
        /// The wait, seconds.
        within_s: u64,
    },
    /// The harness stopped reading its requests.
    #[error("the GPU replay harness stopped reading requests")]
    StoppedReading(#[source] std::io::Error),
    /// A reply lacks a value the request returns.
    #[error("GPU harness reply to `{request}` lacks `{key}`: {reply}")]
    BadReply {
        /// The request.
        request: String,
        /// The missing key.
        key: &'static str,
        /// The reply, as JSON.
        reply: String,
    },
}

/// An error of `bwsim replay`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A point that does not fit this host, a scenario replay cannot drive.
    #[error(transparent)]
    Input(#[from] ReplayInputError),
    /// A bad `--param` SPEC.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The scenario (or the calibration merged over it) does not load.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The engine refused the prediction.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Writing an output failed or its location was refused.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The comparison chart could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A system call failed (starting the harness, creating a folder).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The GPU harness failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The replay ran past its time limit: stalled, or far slower than predicted.
    #[error(
        "the replay did not finish within {limit_s:.0} s (stalled, or far slower than predicted)"
    )]
    TimedOut {
        /// The limit, seconds.
        limit_s: f64,
    },
    /// The replay's own machinery failed: its executor, a copy thread, the hold table.
    #[error(transparent)]
    Executor(#[from] ExecutorFault),
    /// Where the cause happened, in words; the cause follows as source.
    #[error("{what}")]
    At {
        /// Where, in words.
        what: String,
        /// What went wrong there.
        #[source]
        source: Box<ReplayError>,
    },
}

/// Bad input said in the project's plain shape (file, key, problem) is replay's input.
impl From<InputError> for ReplayError {
    fn from(e: InputError) -> Self {
        ReplayError::Input(ReplayInputError::ReplayFile(e))
    }
}

impl ReplayError {
    /// The same error, said to have happened at `what`.
    pub fn at(self, what: impl Display) -> ReplayError {
        ReplayError::At {
            what: what.to_string(),
            source: Box::new(self),
        }
    }
}

/// An error and its causes, `a: b: c`, as the top level prints them: for a failure
/// whose message carries another error (a failed stage, a warning).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// The result of replay's functions.
pub type Result<T, E = ReplayError> = std::result::Result<T, E>;

/// `what: cause`, the cause kept as the source.
pub trait Context<T> {
    /// Fails with `what` over the cause.
    fn context(self, what: impl Display) -> Result<T>;
    /// As `context`, the message built only on failure.
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T, E: Into<ReplayError>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|e| e.into().at(what))
    }
    fn with_context<D: Display>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| e.into().at(what()))
    }
}

/// The replay's own machinery failed: never the input's fault, nor the GPU harness's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorFault {
    /// An executor was run a second time.
    #[error("an executor runs once")]
    RanTwice,
    /// The arrival rate gives no exponential distribution.
    #[error("Poisson arrivals: {0}")]
    PoissonArrivals(rand_distr::ExpError),
    /// A GPU stage in a replay without a GPU.
    #[error("the stage needs a GPU, and this replay has none")]
    NoGpu,
    /// A stage's copy thread panicked.
    #[error("copy thread panicked")]
    CopyThreadPanicked,
    /// A request came after the hold table was closed.
    #[error("the hold table is closed")]
    HoldTableClosed,
    /// The hold table's thread is gone.
    #[error("the hold table stopped")]
    HoldTableStopped,
    /// The replay was aborted while a job waited for its holds.
    #[error("replay aborted while waiting for holds")]
    AbortedWaitingForHolds,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusals keep the words they had as one string: what, how much, what to do.
    #[test]
    fn input_errors_read_as_before_from_their_parts() {
        let fit = ReplayInputError::DoesNotFit {
            point: vec!["params.proofs_in_flight=4".into()],
            memory: Memory::Vram,
            needs_bytes: 3.0 * GIB,
            limit_bytes: 2.0 * GIB,
        };
        assert_eq!(
            fit.to_string(),
            "point params.proofs_in_flight=4 needs 3.0 GiB of GPU memory (VRAM permits at \
             their simulated peak + kernel working sets), but the GPU has 2.0 GiB; lower the \
             concurrency, the VRAM holds or the kernel sizes"
        );
        let whole = ReplayInputError::DoesNotFit {
            point: vec![],
            memory: Memory::HostRam,
            needs_bytes: 8.0 * GIB,
            limit_bytes: 4.0 * GIB,
        };
        assert!(
            whole
                .to_string()
                .starts_with("the scenario needs 8.0 GiB of host RAM"),
            "{whole}"
        );
        let long = |counted| ReplayInputError::TooLong {
            expected_s: 7200.0,
            limit_s: 3600.0,
            points_counted: counted,
            points_total: 10,
            runs: 2,
        };
        assert_eq!(
            long(10).to_string(),
            "the replay would take about 2.0 h (10 point(s) x 2 run(s)), above the limit of \
             1.0 h; lower arrivals.jobs (with --set) or the points, or raise the limit with \
             --max-hours"
        );
        assert!(
            long(3)
                .to_string()
                .contains("more than 2.0 h (the first 3 of its 10 points alone, x 2 run(s))")
        );
        let taken = ReplayInputError::FolderTaken {
            dir: PathBuf::from("out"),
            repredicted_from: Some("runs/a".into()),
            has_logs: true,
        };
        assert_eq!(
            taken.to_string(),
            "out: holds the results of another replay (replay.json, re-predicted from \
             runs/a); bwsim does not write over them, so give a new or empty --out folder"
        );
    }

    /// Context stays a chain over the typed cause, which still decides the kind.
    #[test]
    fn a_gpu_failure_under_context_keeps_its_cause() {
        let e = ReplayError::from(GpuError::NoReply {
            request: "msm 24 3".into(),
            within_s: 300,
        })
        .at("stage \"h_msm\" of job 2");
        assert_eq!(
            chain(&e),
            "stage \"h_msm\" of job 2: GPU harness `msm 24 3` gave no reply within 300 s"
        );
        let ReplayError::At { source, .. } = &e else {
            panic!("no context: {e:?}")
        };
        assert!(matches!(
            **source,
            ReplayError::Gpu(GpuError::NoReply { .. })
        ));
    }
}
