//! What every plot shares: its size, the colours of A and B, and the footer line that names
//! the revisions, the machine and the date, drawn inside the SVG so a plot copied out of the
//! page still says what it shows.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

/// A's colour (blue) and B's (orange): tests count elements of these fills.
pub const A_COLOUR: RGBColor = RGBColor(0x1F, 0x77, 0xB4);
pub const B_COLOUR: RGBColor = RGBColor(0xFF, 0x7F, 0x0E);
pub const FONT: &str = "sans-serif";
pub const FOOTER_HEIGHT: u32 = 24;

/// Draws the chart's series labels at `position`: a white box with a black border, the one
/// legend style of every plot.
pub fn legend<'a, 'b: 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
    font_size: u32,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, font_size))
        .draw()
        .map_err(plot_error)
}

/// The revisions, machine and date line under every plot.
#[derive(Debug, Clone)]
pub struct Footer(pub String);

/// Draws a plot of `size` into an SVG string: `draw` gets the area above the footer.
pub fn svg(
    size: (u32, u32),
    footer: &Footer,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<()>,
) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(plot_error)?;
        let (body, bottom) = root.split_vertically(size.1 - FOOTER_HEIGHT);
        draw(&body)?;
        bottom
            .draw_text(
                &footer.0,
                &(FONT, 12).into_font().color(&RGBColor(0x55, 0x55, 0x55)),
                (10, 6),
            )
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

/// Plotters' errors borrow nothing but are generic over the backend: one message for all.
pub fn plot_error<E: std::fmt::Debug>(error: E) -> anyhow::Error {
    anyhow!("cannot draw the plot: {error:?}")
}

/// `lo..hi` widened by `share` of its span on each side (and made non-empty).
pub fn padded(lo: f64, hi: f64, share: f64) -> (f64, f64) {
    let span = (hi - lo).abs().max(hi.abs() * 1e-3).max(1e-9);
    (lo - span * share, hi + span * share)
}

/// Counts `needle` in an SVG; for the tests of each plot.
#[cfg(test)]
pub fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[cfg(test)]
pub fn test_footer() -> Footer {
    Footer("A = a · B = b · test machine · 1970-01-01".to_string())
}
