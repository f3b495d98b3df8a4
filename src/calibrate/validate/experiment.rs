//! A validation experiment as data: its setup (streams, chase, a copy loop, a pipeline)
//! and its outcome (measured or predicted), as stored in validate.json.

use crate::calibrate::probe::stream::Kernel;
use crate::model::{CopyDir, LinkCopy};

/// A PCIe copy activity.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Copy {
    /// Host to device (else device to host).
    pub h2d: bool,
    /// Pinned host buffer (else pageable).
    pub pinned: bool,
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
    /// The DMA loop's GB/s.
    pub dma_gbps: Option<f64>,
    /// Pipeline iteration, ms.
    pub pipe_iter_ms: Option<f64>,
    /// Pipeline upload, ms.
    pub pipe_h2d_ms: Option<f64>,
}

impl From<Copy> for LinkCopy {
    fn from(c: Copy) -> Self {
        LinkCopy {
            dir: if c.h2d { CopyDir::H2d } else { CopyDir::D2h },
            pinned: c.pinned,
        }
    }
}
