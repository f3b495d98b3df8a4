//! Draws a chart twice, to PNG and SVG, each written atomically.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::font::ensure_fonts;
use crate::output::{write_atomic, write_atomic_with};
use crate::plot::error::Result;

/// A chart that can draw itself on any plotters backend.
pub trait Chart {
    /// Canvas size in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws on a white canvas.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<()>
    where
        DB::ErrorType: 'static;
}

/// Writes `<dir>/<stem>.png` and `<dir>/<stem>.svg`; returns both paths.
pub fn render(chart: &impl Chart, dir: &Path, stem: &str) -> Result<Vec<PathBuf>> {
    ensure_fonts();
    let size = chart.size();
    let png = dir.join(format!("{stem}.png"));
    write_atomic_with(&png, |tmp| -> Result<()> {
        let root = BitMapBackend::new(tmp, size).into_drawing_area();
        root.fill(&WHITE)?;
        chart.draw(&root)?;
        root.present()?;
        Ok(())
    })?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        chart.draw(&root)?;
        root.present()?;
    }
    let svg_path = dir.join(format!("{stem}.svg"));
    write_atomic(&svg_path, svg.as_bytes())?;
    Ok(vec![png, svg_path])
}
