//! The embedded font. CI machines have no system fonts, and plotters' `ab_glyph`
//! backend draws only fonts registered at run time, so DejaVu Sans (Bitstream Vera
//! license, assets/fonts/LICENSE-DejaVu.txt) is compiled into the binary.

use std::sync::Once;

use plotters::style::{FontStyle, register_font};

/// DejaVu Sans, from Debian's fonts-dejavu-core 2.37.
pub static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// DejaVu Sans Bold (titles, legend headings).
pub static DEJAVU_SANS_BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

/// The family name charts ask for.
pub const FAMILY: &str = "sans-serif";

static REGISTER: Once = Once::new();

/// Registers the embedded font as `sans-serif` (all styles fall back to it). Idempotent.
pub fn ensure_fonts() {
    REGISTER.call_once(|| {
        for (style, bytes) in [
            (FontStyle::Normal, DEJAVU_SANS),
            (FontStyle::Bold, DEJAVU_SANS_BOLD),
        ] {
            if register_font(FAMILY, style, bytes).is_err() {
                panic!("the embedded DejaVu Sans font does not parse");
            }
        }
    });
}
