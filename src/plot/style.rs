//! Shared look: palette, font sizes, axis label units, line patterns.

use plotters::prelude::*;
use plotters::style::RGBColor;

use super::font::FAMILY;

/// Tableau 10 (distinguishable, colour-blind friendlier than the default palette),
/// then ten darker or stronger hues for charts with many stages.
pub const PALETTE: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 63, 92),
    RGBColor(255, 205, 0),
    RGBColor(0, 128, 128),
    RGBColor(128, 0, 0),
    RGBColor(106, 61, 154),
    RGBColor(128, 128, 0),
    RGBColor(40, 40, 40),
    RGBColor(154, 205, 50),
    RGBColor(255, 160, 190),
    RGBColor(0, 90, 200),
];

/// The i-th palette colour (cycling).
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Dark grey for reference lines and text.
pub const INK: RGBColor = RGBColor(40, 40, 40);

/// The bold face. `FontDesc::style` would keep the regular glyphs (plotters resolves
/// the face only in `FontDesc::new`), so build it from scratch.
fn bold(size: f64) -> TextStyle<'static> {
    FontDesc::new(FontFamily::Name(FAMILY), size, FontStyle::Bold).color(&INK)
}

/// Mid grey for reference lines.
pub const GREY: RGBColor = RGBColor(150, 150, 150);

/// Legend heading font.
pub fn heading_font() -> TextStyle<'static> {
    bold(16.0)
}

/// Title font.
pub fn title_font() -> TextStyle<'static> {
    bold(24.0)
}

/// Axis description font.
pub fn desc_font() -> TextStyle<'static> {
    (FAMILY, 19).into_font().color(&INK)
}

/// Tick label font.
pub fn tick_font() -> TextStyle<'static> {
    (FAMILY, 16).into_font().color(&INK)
}

/// A warning under a chart's title, in dark red.
pub fn warning_font() -> TextStyle<'static> {
    (FAMILY, 17).into_font().color(&RGBColor(170, 30, 30))
}

/// Legend and annotation font.
pub fn legend_font() -> TextStyle<'static> {
    (FAMILY, 16).into_font().color(&INK)
}

/// Axis label for a scenario key: its unit from the key's suffix, as scenario files
/// spell units (`_s`, `_gbps`, `_gib`, ...).
pub fn key_label(key: &str) -> String {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let unit = [
        ("_gbps", "GB/s"),
        ("_gib", "GiB"),
        ("_gb", "GB"),
        ("_ms", "ms"),
        ("_ns", "ns"),
        ("_s", "s"),
        ("_frac", "fraction"),
        ("_per_s", "1/s"),
    ]
    .iter()
    .find(|(suffix, _)| leaf.ends_with(suffix))
    .map(|(_, u)| *u)
    .or_else(|| leaf.contains("concurrency").then_some("in flight"))
    .or_else(|| (leaf.ends_with("count") || leaf.ends_with("channels")).then_some("count"));
    match unit {
        Some(u) => format!("{key} ({u})"),
        None => key.to_string(),
    }
}

/// Dash patterns (dash, gap in px) for telling series apart in black and white;
/// index 0 is a solid line.
pub const DASHES: [(i32, i32); 5] = [(0, 0), (12, 6), (4, 4), (22, 6), (8, 10)];

/// Formats an axis value compactly (no trailing zeros).
pub fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    let s = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_carry_units() {
        assert_eq!(
            key_label("params.synthesis_concurrency"),
            "params.synthesis_concurrency (in flight)"
        );
        assert_eq!(
            key_label("hardware.dram.capacity_gbps"),
            "hardware.dram.capacity_gbps (GB/s)"
        );
        assert_eq!(key_label("params.x"), "params.x");
        assert_eq!(fmt_tick(1200.0), "1200");
        assert_eq!(fmt_tick(0.25), "0.25");
        assert_eq!(fmt_tick(12.50), "12.5");
    }
}
