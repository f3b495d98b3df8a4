//! The calibration file, read and written through one type, [`CalibrationFile`]:
//! `[hardware]` (cores, `[hardware.dram]`, `[hardware.gpu]`) and `[params]` that a scenario
//! can `include`, plus a `[calibration]` table with provenance, the fits with their
//! residuals, and every raw measurement.
//!
//! The `[hardware]` tables here are the form calibrate writes and reads back to render;
//! what each key means, its default when left out and the values it allows are the
//! scenario layer's alone: a calibration becomes a host model only as the host of a
//! scenario that includes it (`validate::load_calib`, and every scenario).
//!
//! One concern a file: `tables` (the tables as written), `from_fit` (the file for a fit:
//! its `[hardware]` values, lines in flight, DMA policies, `[params]`), `read` (text to
//! tables, read back as written), `render` (tables to commented text).

mod from_fit;
mod read;
mod render;
mod tables;
#[cfg(test)]
mod written_keys_tests;

pub use render::check_finite;
pub use tables::{
    CpuLoadTable, DramTable, GpuTable, HardwareTable, Param, Params, PolicyTable, Provenance,
};

use crate::calibrate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A whole calibration file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CalibrationFile {
    /// What a scenario including the file takes as its hardware.
    pub hardware: HardwareTable,
    /// Named values a scenario can use as `$name` (kernel times, per-thread rates).
    #[serde(default)]
    pub params: Params,
    /// Provenance, fits and raw measurements (the scenario loader ignores it).
    pub calibration: Provenance,
}

impl CalibrationFile {
    /// Renders the file and writes it atomically (temp file + rename).
    pub fn write(&self, path: &Path) -> Result<()> {
        let text = self.render()?;
        crate::output::write_atomic(path, text.as_bytes())?;
        Ok(())
    }
}
