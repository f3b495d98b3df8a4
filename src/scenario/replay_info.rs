//! What `bwsim replay` needs from a scenario beyond the [`Model`]: each transfer as the
//! file wrote it (direction, bytes, pinned) and the real GPU kernel a stage names with
//! `gpu_kernel_kind`. The simulator never reads this.

use crate::model::Model;

use super::error::{ErrorKind, Locator, ScenarioError, join_index, join_key};
use super::schema::WorkloadSpec;
use super::units::{Dim, GB, GIB};
use super::values::qty;

pub use crate::model::CopyDir;

/// A stage's PCIe transfer as written in the scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferInfo {
    /// Which way.
    pub dir: CopyDir,
    /// Bytes moved per stage instance.
    pub bytes: u64,
    /// Pinned host buffer (DMA) or pageable (staged through the driver's bounce buffer).
    pub pinned: bool,
    /// The stage's kernel reads these bytes from host memory itself as it runs (an MSM
    /// given host points, as supraseal's are): no separate copy runs beside it.
    pub read_by_kernel: bool,
}

/// Bytes of one affine BLS12-381 G1 point (x and y, 48 B each): what an MSM of 2^lg
/// points reads when its points are in host memory.
pub const G1_AFFINE_BYTES: u64 = 96;

/// The real kernel a GPU stage runs on replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// sppark NTTs over 2^lg BLS12-381 scalars (inverse NR then forward coset RN, as
    /// supraseal's H phase), repeated until the stage's standalone time is filled.
    Ntt { lg: u32 },
    /// sppark G1 Pippenger MSM of 2^lg points (points on the device).
    Msm { lg: u32 },
    /// A device-resident spin kernel of the stage's standalone duration.
    Spin,
}

/// Smallest and largest log2 sizes accepted for `ntt:` and `msm:` kernels.
pub const KERNEL_LG_RANGE: std::ops::RangeInclusive<u32> = 10..=28;

/// What `ntt:LG`, `msm:LG` and `spin` allow, said after each [`KernelKindError`].
const KERNEL_KINDS_ALLOWED: &str =
    "allowed: \"ntt:LG\", \"msm:LG\" (LG = log2 of the size, 10..=28) or \"spin\"";

/// A `kernel` value that names no kernel: the value as written, what is wrong with it,
/// then what is allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelKindError {
    /// Neither `spin` nor `kind:LG`.
    #[error("{written:?} is not a kernel kind; {KERNEL_KINDS_ALLOWED}")]
    NotAKind {
        /// The value as written.
        written: String,
    },
    /// The size after the colon is not a whole number.
    #[error("{written:?}: the size {size:?} is not a whole number; {KERNEL_KINDS_ALLOWED}")]
    SizeNotWhole {
        /// The value as written.
        written: String,
        /// The size part.
        size: String,
    },
    /// The size is outside [`KERNEL_LG_RANGE`].
    #[error("{written:?}: LG {lg} is out of range; {KERNEL_KINDS_ALLOWED}")]
    SizeOutOfRange {
        /// The value as written.
        written: String,
        /// The log2 size.
        lg: u32,
    },
    /// The part before the colon is neither `ntt` nor `msm`.
    #[error("{kernel:?} is not a kernel; {KERNEL_KINDS_ALLOWED}")]
    UnknownKernel {
        /// The kernel named.
        kernel: String,
    },
}

impl KernelKind {
    /// Parses `"ntt:25"`, `"msm:24"` or `"spin"`.
    pub fn parse(text: &str) -> Result<KernelKind, KernelKindError> {
        let t = text.trim();
        if t == "spin" {
            return Ok(KernelKind::Spin);
        }
        let written = || text.to_string();
        let Some((kind, lg)) = t.split_once(':') else {
            return Err(KernelKindError::NotAKind { written: written() });
        };
        let lg: u32 = lg
            .trim()
            .parse()
            .map_err(|_| KernelKindError::SizeNotWhole {
                written: written(),
                size: lg.to_string(),
            })?;
        if !KERNEL_LG_RANGE.contains(&lg) {
            return Err(KernelKindError::SizeOutOfRange {
                written: written(),
                lg,
            });
        }
        match kind.trim() {
            "ntt" => Ok(KernelKind::Ntt { lg }),
            "msm" => Ok(KernelKind::Msm { lg }),
            other => Err(KernelKindError::UnknownKernel {
                kernel: other.to_string(),
            }),
        }
    }

    /// The text form, as `parse` reads it.
    pub fn label(&self) -> String {
        match self {
            KernelKind::Ntt { lg } => format!("ntt:{lg}"),
            KernelKind::Msm { lg } => format!("msm:{lg}"),
            KernelKind::Spin => "spin".into(),
        }
    }
}

/// Replay facts of one stage.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageReplayInfo {
    /// The stage's PCIe copy, if any.
    pub transfer: Option<TransferInfo>,
    /// The kernel of a GPU stage (`gpu_kernel = true`): `gpu_kernel_kind`, else spin.
    pub kernel: Option<KernelKind>,
}

/// Collects the replay facts of every stage, indexed like `model.workload.stages`.
/// `gpu_kernel_kind` is checked here: it must parse and needs `gpu_kernel = true`.
pub fn collect(
    w: &WorkloadSpec,
    model: &Model,
    loc: &Locator,
) -> Result<Vec<StageReplayInfo>, ScenarioError> {
    let mut out = vec![StageReplayInfo::default(); model.workload.stages.len()];
    for (i, s) in w.stages.iter().enumerate() {
        let key = join_index("workload.stages", i);
        let Some(id) = model.stage_id(&s.name) else {
            continue;
        };
        let info = &mut out[id];
        if let Some(t) = &s.transfer {
            let dir = if t.dir == "d2h" {
                CopyDir::D2h
            } else {
                CopyDir::H2d
            };
            let bytes = match (&t.gb, &t.gib) {
                (Some(q), _) => qty(q, Dim::Size, GB, &join_key(&key, "transfer.gb"), loc)?,
                (_, Some(q)) => qty(q, Dim::Size, GIB, &join_key(&key, "transfer.gib"), loc)?,
                _ => 0.0,
            };
            info.transfer = Some(TransferInfo {
                dir,
                bytes: bytes.round() as u64,
                pinned: t.pinned.unwrap_or(true),
                read_by_kernel: t.read_by_kernel.unwrap_or(false),
            });
        }
        let gpu_kernel = s.gpu_kernel.unwrap_or(false);
        match &s.gpu_kernel_kind {
            Some(text) => {
                let k = join_key(&key, "gpu_kernel_kind");
                if !gpu_kernel {
                    return Err(loc.error(
                        ErrorKind::Value,
                        &k,
                        "only GPU kernels name a kernel kind; set gpu_kernel = true or remove gpu_kernel_kind",
                    ));
                }
                info.kernel = Some(
                    KernelKind::parse(text)
                        .map_err(|e| loc.error(ErrorKind::Value, &k, e.to_string()))?,
                );
            }
            None if gpu_kernel => info.kernel = Some(KernelKind::Spin),
            None => {}
        }
        if let Some(t) = info.transfer
            && t.read_by_kernel
        {
            check_read_by_kernel(t, info.kernel, &join_key(&key, "transfer"), loc)?;
        }
    }
    Ok(out)
}

/// A transfer `read_by_kernel` must be what an MSM of the stage reads: an upload of its
/// points, 2^LG x 96 B (within 1%, so a size written in GB to three digits passes).
fn check_read_by_kernel(
    t: TransferInfo,
    kernel: Option<KernelKind>,
    key: &str,
    loc: &Locator,
) -> Result<(), ScenarioError> {
    let k = join_key(key, "read_by_kernel");
    let Some(KernelKind::Msm { lg }) = kernel else {
        return Err(loc.error(
            ErrorKind::Value,
            &k,
            "only an MSM reads its points from host memory; set gpu_kernel = true and gpu_kernel_kind = \"msm:LG\", or remove read_by_kernel",
        ));
    };
    if t.dir != CopyDir::H2d {
        return Err(loc.error(
            ErrorKind::Value,
            &k,
            "an MSM reads its points host to device; set dir = \"h2d\" or remove read_by_kernel",
        ));
    }
    let points = (1u64 << lg) * G1_AFFINE_BYTES;
    if (t.bytes as f64 - points as f64).abs() > 0.01 * points as f64 {
        return Err(loc.error(
            ErrorKind::Value,
            &k,
            format!(
                "the transfer moves {:.4} GB, but msm:{lg} reads 2^{lg} points of {G1_AFFINE_BYTES} B = {:.4} GB; give gb = {:.4} or remove read_by_kernel",
                t.bytes as f64 / 1e9,
                points as f64 / 1e9,
                points as f64 / 1e9
            ),
        ));
    }
    Ok(())
}

/// A one-GPU scenario of one GPU stage running `kind` for `duration_s` with the
/// transfer `transfer` (an inline table), `jobs` jobs one at a time: the fixture of the
/// tests of `read_by_kernel`, here and in the replay's executor.
#[cfg(test)]
pub(crate) fn one_msm_stage(kind: &str, duration_s: f64, transfer: &str, jobs: u32) -> String {
    format!(
        r#"
[hardware]
cpu_cores = 2
host_ram_gib = 4
dram = {{ capacity_gbps = 50 }}
[hardware.gpu]
count = 1
vram_gib = 4
pcie_h2d_gbps = 50
pcie_d2h_gbps = 50
[[workload.stages]]
name = "msm"
duration_s = {duration_s}
gpu_kernel = true
gpu_kernel_kind = "{kind}"
transfer = {transfer}
[arrivals]
kind = "closed"
concurrency = 1
jobs = {jobs}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_kinds_parse_and_print() {
        assert_eq!(KernelKind::parse("ntt:25"), Ok(KernelKind::Ntt { lg: 25 }));
        assert_eq!(
            KernelKind::parse(" msm:24 "),
            Ok(KernelKind::Msm { lg: 24 })
        );
        assert_eq!(KernelKind::parse("spin"), Ok(KernelKind::Spin));
        assert_eq!(KernelKind::Msm { lg: 20 }.label(), "msm:20");
        for bad in ["ntt", "ntt:x", "fft:20", "msm:40", "ntt:9"] {
            let e = KernelKind::parse(bad).unwrap_err().to_string();
            assert!(e.contains("allowed"), "{bad}: {e}");
        }
        assert_eq!(
            KernelKind::parse("fft:20"),
            Err(KernelKindError::UnknownKernel {
                kernel: "fft".into()
            })
        );
        assert_eq!(
            KernelKind::parse("msm:40").unwrap_err().to_string(),
            "\"msm:40\": LG 40 is out of range; allowed: \"ntt:LG\", \"msm:LG\" (LG = log2 \
             of the size, 10..=28) or \"spin\""
        );
    }

    #[test]
    fn a_transfer_read_by_its_kernel_must_be_an_msms_points() {
        let load = |kind: &str, transfer: &str| {
            crate::scenario::load_str(
                &one_msm_stage(kind, 0.2, transfer, 1),
                std::path::Path::new("s.toml"),
                &[],
            )
        };
        // 2^24 points of 96 B, written as the mini C2 writes them.
        let l = load(
            "msm:24",
            r#"{ dir = "h2d", gb = 1.61, pinned = true, read_by_kernel = true }"#,
        )
        .unwrap();
        let t = l.replay[0].transfer.unwrap();
        assert!(t.read_by_kernel && t.pinned);
        let refused = |kind: &str, transfer: &str, says: &str| {
            let e = load(kind, transfer).unwrap_err().to_string();
            assert!(
                e.contains("workload.stages[0].transfer.read_by_kernel") && e.contains(says),
                "{e}"
            );
        };
        refused(
            "msm:24",
            r#"{ dir = "h2d", gb = 1.2, read_by_kernel = true }"#,
            "msm:24 reads 2^24 points of 96 B = 1.6106 GB; give gb = 1.6106",
        );
        refused(
            "ntt:24",
            r#"{ dir = "h2d", gb = 1.61, read_by_kernel = true }"#,
            "only an MSM reads its points",
        );
        refused(
            "msm:24",
            r#"{ dir = "d2h", gb = 1.61, read_by_kernel = true }"#,
            "set dir = \"h2d\"",
        );
    }
}
