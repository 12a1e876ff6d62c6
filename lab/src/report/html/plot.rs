//! What every plot shares: its size, the colours of A and B, and the footer line that names
//! the revisions, the machine and the date, drawn inside the SVG so a plot copied out of the
//! page still says what it shows.

use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// A's colour (blue) and B's (orange): tests count elements of these fills.
pub(crate) const A_COLOUR: RGBColor = RGBColor(0x1F, 0x77, 0xB4);
pub(crate) const B_COLOUR: RGBColor = RGBColor(0xFF, 0x7F, 0x0E);
pub(crate) const FONT: &str = "sans-serif";
pub(crate) const FOOTER_HEIGHT: u32 = 24;

/// The smallest text any plot draws, in the SVG's own units: the page never shows a plot
/// smaller than it is drawn, so this is at least 12 px on screen at 100% zoom.
#[cfg(test)]
pub(crate) const MIN_TEXT_PX: f64 = 12.0;
/// The font size every tick label, axis description, legend and small label asks plotters for.
/// plotters writes a font of size `s` as `font-size` `s / 1.24` in the SVG (its default tick
/// labels of 12 became 9.7 px), so 15 is the least that writes `MIN_TEXT_PX` or more.
pub(crate) const TEXT: u32 = 15;
/// The legend's text size.
pub(crate) const LEGEND_FONT: u32 = TEXT;
/// Between the plotting area and its legend.
const LEGEND_GAP: u32 = 12;
/// plotters' legend box: the swatch's column and the box's inner margin on each side.
const LEGEND_SWATCH: u32 = 30;
const LEGEND_PADDING: u32 = 10;
/// A sans-serif character's width as a share of the text's height in pixels, rounded up for
/// wide letters.
const CHAR_WIDTH: f64 = 0.58;
/// plotters writes a font of size `s` as `s / 1.24` pixels.
const PLOTTERS_FONT_SCALE: f64 = 1.24;

/// The width of a legend of `labels`, with a gap on its left.
pub(crate) fn legend_margin(labels: &[&str]) -> u32 {
    let widest = labels
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    let text_px = f64::from(LEGEND_FONT) / PLOTTERS_FONT_SCALE;
    let text = (widest as f64 * text_px * CHAR_WIDTH).ceil() as u32;
    LEGEND_GAP + LEGEND_SWATCH + 2 * LEGEND_PADDING + text + 4
}

/// The x range `data` widened on the right by a strip where the legend of `labels` goes, in a
/// plotting area about `plot_width` px wide: the legend stands beside the data, never over it.
/// (plotters clips a legend to the plotting area, so the strip is part of it.)
pub(crate) fn with_legend_room(
    data: std::ops::Range<f64>,
    labels: &[&str],
    plot_width: u32,
) -> std::ops::Range<f64> {
    let share = (f64::from(legend_margin(labels)) / f64::from(plot_width.max(1))).min(0.6);
    let span = data.end - data.start;
    data.start..data.end + span * share / (1.0 - share)
}

/// Draws the chart's series labels at the top right of its plotting area, in the strip
/// [`with_legend_room`] left beside the data: a white box with a black border, the one legend
/// style of every plot.
pub(crate) fn legend<'a, 'b: 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .legend_area_size(LEGEND_SWATCH)
        .margin(LEGEND_PADDING)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font((FONT, LEGEND_FONT))
        .draw()
        .map_err(plot_error)
}

/// A legend drawn as one row at height `y` of `area` (a band above the plots it explains):
/// a filled swatch and the label of each entry, left to right.
pub(crate) fn legend_row(
    area: &DrawingArea<SVGBackend, Shift>,
    entries: &[(RGBColor, &str)],
    y: i32,
) -> Result<()> {
    let text_px = f64::from(LEGEND_FONT) / PLOTTERS_FONT_SCALE;
    let style = (FONT, LEGEND_FONT).into_font().color(&BLACK);
    let mut x = LEGEND_PADDING as i32;
    let middle = y + text_px as i32 / 2;
    for (colour, label) in entries {
        area.draw(&Rectangle::new(
            [(x, middle - 6), (x + 16, middle + 6)],
            colour.filled(),
        ))
        .map_err(plot_error)?;
        area.draw_text(label, &style, (x + 22, y))
            .map_err(plot_error)?;
        x += 22 + (label.chars().count() as f64 * text_px * CHAR_WIDTH).ceil() as i32 + 24;
    }
    Ok(())
}

/// A float axis ticked where it is told (whole numbers for counts, cell centres), not at
/// plotters' own decimal steps (0, 0.5, 1, ...), which a count's labels would repeat. No light
/// grid lines between the ticks.
#[derive(Clone)]
pub(crate) struct TickedAxis {
    range: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for TickedAxis {
    // Every ticked axis is given its label formatter; Debug is plotters' fallback.
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(&within_reach(*value, &self.range), limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.range()
    }
}

/// `value`, or where it leaves the axis by more than the axis's own span, that far out: the
/// plot clips it there all the same, and plotters' pixel arithmetic (i32) overflows for the
/// absurd figures a JSON may hold (1e308).
fn within_reach(value: f64, range: &RangedCoordf64) -> f64 {
    let std::ops::Range { start, end } = range.range();
    let span = (end - start).abs();
    let (low, high) = (start.min(end) - span, start.max(end) + span);
    if value.is_nan() {
        low
    } else {
        value.clamp(low, high)
    }
}

/// A float value axis with plotters' own ticks whose far-off values are drawn within reach
/// ([`within_reach`]).
#[derive(Clone)]
pub(crate) struct ValueAxis(RangedCoordf64);

impl Ranged for ValueAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.0.map(&within_reach(*value, &self.0), limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        self.0.key_points(hint)
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.range()
    }
}

/// `range` as a [`ValueAxis`].
pub(crate) fn value_axis(range: std::ops::Range<f64>) -> ValueAxis {
    ValueAxis(range.into())
}

/// `range` ticked at `ticks` (those inside it).
pub(crate) fn ticked(range: std::ops::Range<f64>, ticks: Vec<f64>) -> TickedAxis {
    let ticks = ticks
        .into_iter()
        .filter(|tick| (range.start..=range.end).contains(tick))
        .collect();
    TickedAxis {
        range: range.into(),
        ticks,
    }
}

/// The ticks of a count's axis from 0 to `top`: whole numbers only, a step of 1, 2 or 5 times a
/// power of ten, at most `at_most` of them (at least two). A count of pairs or games read as
/// "0, 0, 1, 2, 2" is what this prevents.
pub(crate) fn count_ticks(top: f64, at_most: usize) -> Vec<f64> {
    let top = if top.is_finite() && top > 0.0 {
        top.min(1e15)
    } else {
        0.0
    };
    let at_most = at_most.max(2) as f64;
    let mut step = 1.0f64;
    // 1, 2, 5, 10, 20, 50, ...: the next step multiplies by 2, 2.5, 2 in turn.
    let mut growth = [2.0, 2.5, 2.0].into_iter().cycle();
    while (top / step).floor() + 1.0 > at_most {
        step *= growth.next().unwrap_or(2.0);
    }
    let ticks = (top / step).floor() as usize;
    (0..=ticks).map(|tick| tick as f64 * step).collect()
}

/// The ticks at the centres of `cells` cells 0, 1, ... of an axis from -0.5 to `cells` - 0.5
/// (bars per bucket): one per cell, each labelled with its whole number.
pub(crate) fn cell_ticks(cells: usize) -> Vec<f64> {
    (0..cells).map(|cell| cell as f64).collect()
}

/// The revisions, machine and date line under every plot.
#[derive(Debug, Clone)]
pub(crate) struct Footer(pub(crate) String);

/// Draws a plot of `size` into an SVG string: `draw` gets the area above the footer.
pub(crate) fn svg(
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
                &(FONT, TEXT).into_font().color(&RGBColor(0x55, 0x55, 0x55)),
                (10, 6),
            )
            .map_err(plot_error)?;
        root.present().map_err(plot_error)?;
    }
    Ok(out)
}

/// Plotters' errors borrow nothing but are generic over the backend: one message for all.
pub(crate) fn plot_error<E: std::fmt::Debug>(error: E) -> anyhow::Error {
    anyhow!("cannot draw the plot: {error:?}")
}

/// The widest axis a plot draws. A figure read from a JSON may be absurd (1e308): cut at this
/// edge the axis stays finite, where an infinite one made plotters tick it forever.
pub(crate) const AXIS_LIMIT: f64 = 1e12;

/// `lo..hi` widened by `share` of its span on each side (and made non-empty), within
/// ±[`AXIS_LIMIT`] (a NaN end at 0).
pub(crate) fn padded(lo: f64, hi: f64, share: f64) -> (f64, f64) {
    let within = |end: f64| {
        if end.is_nan() {
            0.0
        } else {
            end.clamp(-AXIS_LIMIT, AXIS_LIMIT)
        }
    };
    let (lo, hi) = (within(lo), within(hi));
    let span = (hi - lo).abs().max(hi.abs() * 1e-3).max(1e-9);
    (lo - span * share, hi + span * share)
}

/// Counts `needle` in an SVG; for the tests of each plot.
#[cfg(test)]
pub(crate) fn count(svg: &str, needle: &str) -> usize {
    svg.matches(needle).count()
}

#[cfg(test)]
pub(crate) fn test_footer() -> Footer {
    Footer("A = a · B = b · test machine · 1970-01-01".to_string())
}

/// The text of every `<text>` element of an SVG whose attributes contain `attribute`, in
/// document order; for the tests of each plot's ticks.
#[cfg(test)]
pub(crate) fn texts_with(svg: &str, attribute: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|element| {
            let (attributes, rest) = element.split_once('>')?;
            let text = rest.split("</text>").next()?;
            attributes
                .contains(attribute)
                .then(|| text.trim().to_string())
        })
        .collect()
}

/// Checks that every text of an SVG is at least [`MIN_TEXT_PX`] in its own units.
#[cfg(test)]
pub(crate) fn assert_readable(svg: &str) {
    let sizes: Vec<f64> = svg
        .split("font-size=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().parse().unwrap())
        .collect();
    assert!(!sizes.is_empty(), "no text: {svg}");
    for size in sizes {
        assert!(size >= MIN_TEXT_PX, "a text of {size} px: {svg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_padded_axis_is_finite_whatever_it_is_given() {
        for (lo, hi) in [
            (-1e308, 1e308),
            (f64::NEG_INFINITY, f64::INFINITY),
            (f64::NAN, 5.0),
            (3.0, 3.0),
        ] {
            let (low, high) = padded(lo, hi, 0.1);
            assert!(
                low.is_finite() && high.is_finite() && low < high,
                "{lo} {hi}"
            );
            assert!(
                low >= -AXIS_LIMIT * 1.5 && high <= AXIS_LIMIT * 1.5,
                "{lo} {hi}"
            );
        }
        assert_eq!(padded(0.0, 10.0, 0.1), (-1.0, 11.0));
    }

    #[test]
    fn count_ticks_are_distinct_whole_numbers_from_zero() {
        assert_eq!(count_ticks(2.3, 8), [0.0, 1.0, 2.0]);
        assert_eq!(count_ticks(0.0, 8), [0.0]);
        assert_eq!(count_ticks(f64::NAN, 8), [0.0]);
        assert_eq!(count_ticks(46.0, 8), [0.0, 10.0, 20.0, 30.0, 40.0]);
        assert_eq!(count_ticks(9.9, 6), [0.0, 2.0, 4.0, 6.0, 8.0]);
        for top in (0..3000).map(|t| f64::from(t) * 0.37) {
            for at_most in [2, 5, 8, 11] {
                let ticks = count_ticks(top, at_most);
                assert!(ticks.len() <= at_most, "{top} {at_most}: {ticks:?}");
                assert_eq!(ticks[0], 0.0);
                assert!(ticks.iter().all(|t| t.fract() == 0.0 && *t <= top.max(0.0)));
                assert!(ticks.windows(2).all(|w| w[1] > w[0]), "{top}: {ticks:?}");
                if let [.., before, last] = ticks[..] {
                    assert!(last + (last - before) > top, "{top}: {ticks:?} stops early");
                }
            }
        }
    }

    #[test]
    fn the_legend_sits_right_of_the_data() {
        let labels = ["A = a long revision name", "B = b"];
        let svg = svg((900, 400), &test_footer(), |area| {
            let x = with_legend_room(0.0..1.0, &labels, area.dim_in_pixel().0 - 24 - 60);
            let mut chart = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(x, 0.0..1.0)
                .map_err(plot_error)?;
            chart.configure_mesh().draw().map_err(plot_error)?;
            for (label, colour) in labels.iter().zip([A_COLOUR, B_COLOUR]) {
                chart
                    .draw_series([Circle::new((1.0, 1.0), 4, colour.filled())])
                    .map_err(plot_error)?
                    .label(*label)
                    .legend(move |(x, y)| Circle::new((x + 8, y), 4, colour.filled()));
            }
            legend(&mut chart)
        })
        .unwrap();
        // The data point at the plotting area's top right corner, and the legend's box.
        let cx: f64 = svg
            .split("<circle cx=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let box_x: f64 = svg
            .split("<rect")
            .find(|rect| rect.contains("opacity=\"0.9\""))
            .and_then(|rect| rect.split("x=\"").nth(1))
            .and_then(|x| x.split('"').next())
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("no legend box: {svg}"));
        assert!(
            box_x > cx + 4.0,
            "legend at {box_x}, data up to {cx}: {svg}"
        );
    }
}
