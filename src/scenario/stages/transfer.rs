//! A stage's `transfer`: a PCIe copy's standalone time, the link and DRAM it draws, and
//! a pageable copy's staging.

use crate::model::{CopyDir, Duration, LinkCopy, RateTarget, StagedCopy};
use crate::scenario::error::{ErrorKind, ScenarioError};
use crate::scenario::schema::TransferSpec;
use crate::scenario::units::{Dim, GB, GIB};
use crate::scenario::values::{one_of, qty};

use super::StageCx;

/// What a `transfer` makes of a stage.
pub(super) struct CopyStage {
    /// Standalone time.
    pub(super) duration: Duration,
    /// The link direction drawn, and at what rate.
    pub(super) link: RateTarget,
    pub(super) link_gbps: f64,
    /// DRAM drawn by the DMA, GB/s.
    pub(super) dram_gbps: f64,
    /// A pageable copy's staging (None: pinned, or the one-rate rule).
    pub(super) staged: Option<StagedCopy>,
    /// The share of a copy alone that waits on DRAM latency (0 for a kernel's stream).
    pub(super) latency_frac: f64,
    pub(super) pinned: bool,
}

impl StageCx<'_> {
    /// A `transfer`: its standalone time (the copy alone, or the stage's own duration
    /// when longer: a kernel streaming its inputs), the link and DRAM it draws, and its
    /// staging.
    pub(super) fn transfer(
        &self,
        t: &TransferSpec,
        duration: Option<Duration>,
    ) -> Result<CopyStage, ScenarioError> {
        let loc = self.loc;
        self.need_gpu("transfer", "a PCIe transfer")?;
        let link = &self.hw.gpus[0].link;
        let pinned = t.pinned.unwrap_or(true);
        let dir = match t.dir.as_str() {
            "h2d" => CopyDir::H2d,
            "d2h" => CopyDir::D2h,
            other => {
                return Err(self.err(
                    ErrorKind::Value,
                    "transfer.dir",
                    format!(
                        "{other:?} is not a direction; use \"h2d\" (host to device) or \"d2h\""
                    ),
                ));
            }
        };
        let copy = LinkCopy { dir, pinned };
        let rate = link.copy_gbps(copy);
        let (kg, kgib) = (self.k("transfer.gb"), self.k("transfer.gib"));
        let bytes = match one_of((&t.gb, &kg), (&t.gib, &kgib), loc)? {
            Some((q, 0)) => qty(q, Dim::Size, GB, &kg, loc)?,
            Some((q, _)) => qty(q, Dim::Size, GIB, &kgib, loc)?,
            None => {
                return Err(self.err(
                    ErrorKind::MissingKey,
                    "transfer.gb",
                    "missing; give the bytes moved as gb = 1.5 or gib = 2 (or a size string)",
                ));
            }
        };
        // Alone, a copy runs at the link's rate. With a duration too (a kernel that
        // streams its inputs, e.g. an MSM reading SRS points), the stage lasts the
        // longer of the two and draws the link at bytes / standalone time.
        let copy_s = link.copy_seconds(copy, bytes / GB);
        let mut latency_frac = 0.0;
        let (standalone, rate) = match duration {
            Some(d) if d.mean_s() > copy_s => {
                let r = bytes / GB / d.mean_s();
                (d, r)
            }
            // A staged copy draws its bytes over setup + streaming.
            Some(Duration::Fixed(_)) | None if link.staging(copy).is_some() => {
                (Duration::Fixed(copy_s), bytes / GB / copy_s)
            }
            Some(Duration::Fixed(_)) | None => {
                latency_frac = link.latency_frac.of(copy);
                (Duration::Fixed(copy_s), rate)
            }
            Some(_) => {
                return Err(self.err(
                    ErrorKind::Value,
                    "transfer",
                    format!(
                        "the stage's mean duration is shorter than its copy alone ({copy_s:.4} s at {rate} GB/s); give a fixed duration_s or none"
                    ),
                ));
            }
        };
        let staged = link.staged_copy(copy, bytes / GB, standalone.mean_s());
        let demand = link.copy_demand(copy, rate);
        Ok(CopyStage {
            duration: standalone,
            link: demand.link,
            link_gbps: demand.link_gbps,
            dram_gbps: demand.dram_gbps,
            staged,
            latency_frac,
            pinned,
        })
    }
}
