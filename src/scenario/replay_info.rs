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
}

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
    }
    Ok(out)
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
}
