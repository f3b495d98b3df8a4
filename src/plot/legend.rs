//! A legend drawn in its own panel beside the plot, so it can never cover data.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{DASHES, heading_font, legend_font};
use crate::plot::error::Result;

/// How an entry's swatch looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Swatch {
    /// A line in a dash pattern (index into [`DASHES`]; 0 is solid).
    Line(usize),
    /// A line with a filled circle on it.
    LineMarker(usize),
    /// A translucent filled box (a band or shaded area).
    Band,
    /// A solid filled box (a bar).
    Solid,
    /// A filled circle.
    Marker,
    /// A heading, no swatch.
    Heading,
}

/// One legend entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Text.
    pub label: String,
    /// Colour of the swatch.
    pub color: RGBColor,
    /// Swatch kind.
    pub swatch: Swatch,
}

impl Entry {
    /// Shorthand constructor.
    pub fn new(label: impl Into<String>, color: RGBColor, swatch: Swatch) -> Entry {
        Entry {
            label: label.into(),
            color,
            swatch,
        }
    }
}

/// Width in pixels a legend with these entries needs.
pub fn legend_width(entries: &[Entry]) -> u32 {
    let longest = entries
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(0);
    // ~9 px per character at 16 px DejaVu Sans, plus swatch and padding.
    (longest as u32 * 9 + 70).clamp(170, 460)
}

/// Draws entries top-down in `area`.
pub fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let font = legend_font();
    let row = 26;
    let mut y = 40;
    for e in entries {
        let cy = y;
        let (x0, x1) = (10, 44);
        let text_x = match e.swatch {
            Swatch::Heading => x0,
            _ => x1 + 10,
        };
        match e.swatch {
            Swatch::Line(d) | Swatch::LineMarker(d) => {
                let style = e.color.stroke_width(3);
                let (dash, gap) = DASHES[d % DASHES.len()];
                if dash == 0 {
                    area.draw(&PathElement::new(vec![(x0, cy), (x1, cy)], style))?;
                } else {
                    let mut x = x0;
                    while x < x1 {
                        area.draw(&PathElement::new(
                            vec![(x, cy), ((x + dash).min(x1), cy)],
                            style,
                        ))?;
                        x += dash + gap;
                    }
                }
                if matches!(e.swatch, Swatch::LineMarker(_)) {
                    area.draw(&Circle::new(((x0 + x1) / 2, cy), 4, e.color.filled()))?;
                }
            }
            Swatch::Band => {
                area.draw(&Rectangle::new(
                    [(x0, cy - 8), (x1, cy + 8)],
                    e.color.mix(0.25).filled(),
                ))?;
            }
            Swatch::Solid => {
                area.draw(&Rectangle::new(
                    [(x0, cy - 8), (x1, cy + 8)],
                    e.color.filled(),
                ))?;
            }
            Swatch::Marker => {
                area.draw(&Circle::new(((x0 + x1) / 2, cy), 6, e.color.filled()))?;
            }
            Swatch::Heading => {}
        }
        let style = if e.swatch == Swatch::Heading {
            heading_font()
        } else {
            font.clone()
        };
        area.draw(&Text::new(
            e.label.clone(),
            (text_x, cy),
            style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        y += row;
    }
    Ok(())
}
