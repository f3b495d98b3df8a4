//! A validation experiment as data: its setup (streams, chase, a copy loop, a pipeline)
//! and its outcome (measured or predicted), as stored in validate.json.

use crate::calibrate::probe::stream::Kernel;
use crate::model::{CopyDir, LinkCopy};

/// A PCIe copy activity: one copy loop on each of `gpus` GPUs at once.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Copy {
    /// Which way it copies (stored as `h2d = true | false`).
    #[serde(rename = "h2d", with = "dir_as_h2d")]
    pub dir: CopyDir,
    /// Pinned host buffer (else pageable).
    pub pinned: bool,
    /// GPUs copying at once, each its own loop (absent in files from one-GPU days: 1).
    #[serde(default = "one_gpu", skip_serializing_if = "is_one_gpu")]
    pub gpus: u32,
}

impl Copy {
    /// One copy loop on one GPU.
    pub fn one(dir: CopyDir, pinned: bool) -> Copy {
        Copy {
            dir,
            pinned,
            gpus: 1,
        }
    }
}

/// A copy's direction in validate.json: the `h2d` flag it has always been.
mod dir_as_h2d {
    use crate::model::CopyDir;

    pub fn serialize<S: serde::Serializer>(dir: &CopyDir, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(*dir == CopyDir::H2d)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CopyDir, D::Error> {
        let h2d: bool = serde::Deserialize::deserialize(d)?;
        Ok(if h2d { CopyDir::H2d } else { CopyDir::D2h })
    }
}

fn one_gpu() -> u32 {
    1
}

fn is_one_gpu(g: &u32) -> bool {
    *g == 1
}

/// A validation experiment's setup.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setup {
    /// Streaming threads' kernel and count.
    pub streams: Option<(Kernel, usize)>,
    /// A pointer-chase victim runs.
    pub chase: bool,
    /// A PCIe copy loop runs throughout.
    pub dma: Option<Copy>,
    /// An upload / NTT / download loop runs: (log2 size, pinned host buffers).
    pub pipe: Option<(u32, bool)>,
}

/// Predicted (or measured) outcomes; None where the setup has no such activity.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// Streams' DRAM GB/s.
    pub stream_gbps: Option<f64>,
    /// Pointer-chase ns per access.
    pub chase_ns: Option<f64>,
    /// The DMA loop's GB/s (with several GPUs, the mean of their loops).
    pub dma_gbps: Option<f64>,
    /// Pipeline iteration, ms.
    pub pipe_iter_ms: Option<f64>,
    /// Pipeline upload, ms.
    pub pipe_h2d_ms: Option<f64>,
}

impl From<Copy> for LinkCopy {
    fn from(c: Copy) -> Self {
        LinkCopy {
            dir: c.dir,
            pinned: c.pinned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_stored_with_its_h2d_flag() {
        for (dir, json) in [
            (CopyDir::H2d, r#"{"h2d":true,"pinned":true}"#),
            (CopyDir::D2h, r#"{"h2d":false,"pinned":true}"#),
        ] {
            let copy = Copy::one(dir, true);
            assert_eq!(serde_json::to_string(&copy).unwrap(), json);
            assert_eq!(serde_json::from_str::<Copy>(json).unwrap(), copy);
        }
    }
}
