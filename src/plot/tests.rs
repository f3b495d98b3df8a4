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
    let names: Vec<_> = (files.iter())
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "timeline.png",
            "timeline.svg",
            "timeline_steady.png",
            "timeline_steady.svg"
        ]
    );
    let png = std::fs::read(&files[0]).unwrap();
    let img = image::load_from_memory(&png).unwrap();
    assert_eq!(img.width(), 1400);
    let svg = std::fs::read_to_string(&files[1]).unwrap();
    for text in ["synthesis #1", "gpu0 kernels", "gpu0 brackets", "warm-up"] {
        assert!(svg.starts_with("<svg") && svg.contains(text), "no {text:?}");
    }
    let steady = std::fs::read_to_string(&files[3]).unwrap();
    assert!(steady.contains("steady state, 1 bracket of gpu0"));
}

/// A fraction's band stops at 0 and 100% however wide its interval.
#[test]
fn bands_are_clamped_to_what_the_metric_can_take() {
    let pts = [(1.0, 95.0, 20.0), (2.0, 5.0, 20.0)];
    let (upper, lower) = super::common::band_edges(&pts, (0.0, 100.0));
    assert_eq!(upper, [(1.0, 100.0), (2.0, 25.0)]);
    assert_eq!(lower, [(1.0, 75.0), (2.0, 0.0)]);
}

/// A two-parameter grid: the GPU chart has one panel per value of the second parameter
/// (its heading names the value), draws the nvidia-smi view, and a 2-seed sweep carries
/// the few-seeds warning under its title.
#[test]
fn a_grid_gpu_chart_is_small_multiples_with_the_sampled_view() {
    use crate::analysis::keys;
    use crate::sweep::table::{Row, Stat, SweepTable};
    use crate::sweep::value::ParamValue;
    let metrics = [
        keys::GPU_TRUE_BUSY_FRAC,
        keys::GPU_BRACKETED_BUSY_FRAC,
        keys::GPU_SAMPLED_BUSY_FRAC,
    ];
    let row = |x: i64, pinned: bool| Row {
        values: vec![ParamValue::Int(x), ParamValue::Bool(pinned)],
        seeds: 2,
        stalled: 0,
        stats: [0.3, 0.9, 0.4]
            .map(|m| {
                Some(Stat {
                    mean: m,
                    ci95: Some(0.3),
                })
            })
            .to_vec(),
        bottleneck: String::new(),
    };
    let table = SweepTable {
        scenario: "grid".into(),
        job_name: Default::default(),
        params: vec!["params.c".into(), "params.pinned".into()],
        metrics: metrics.map(str::to_string).to_vec(),
        rows: vec![row(1, true), row(1, false), row(2, true), row(2, false)],
    };
    let chart = super::gpu::GpuChart(&table);
    let dir = tempfile::tempdir().unwrap();
    let files = super::render(&chart, dir.path(), "gpu").unwrap();
    let svg = std::fs::read_to_string(&files[1]).unwrap();
    for text in [
        "params.pinned=true: gap up to 60 pts",
        "params.pinned=false: gap up to 60 pts",
        "nvidia-smi view (sampled)",
        "warning: 2 seeds per point",
    ] {
        assert!(svg.contains(text), "no {text:?} in the chart");
    }
}
