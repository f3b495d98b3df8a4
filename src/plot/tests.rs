//! Rendering tests: the embedded font really draws, and the timeline renders.

use plotters::prelude::*;

use super::font::{FAMILY, ensure_fonts};

/// Text must produce ink: without a registered font, ab_glyph draws nothing (or fails).
#[test]
fn embedded_font_draws_text() {
    ensure_fonts();
    let (w, h) = (200u32, 60u32);
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.draw(&Text::new(
            "Throughput 123",
            (5, 20),
            (FAMILY, 24).into_font().color(&BLACK),
        ))
        .unwrap();
        root.present().unwrap();
    }
    let dark = buf.chunks(3).filter(|p| p[0] < 128).count();
    assert!(dark > 150, "only {dark} dark pixels: text did not render");
}

#[test]
fn timeline_renders_png_and_svg() {
    let rec = crate::trace::tests::sample_recorder();
    let dir = tempfile::tempdir().unwrap();
    let files = super::timeline_plot(&rec, dir.path(), "timeline").unwrap();
    assert_eq!(files.len(), 2);
    let png = std::fs::read(&files[0]).unwrap();
    let img = image::load_from_memory(&png).unwrap();
    assert_eq!(img.width(), 1400);
    let svg = std::fs::read_to_string(&files[1]).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("synthesis #1") && svg.contains("gpu0"));
}
