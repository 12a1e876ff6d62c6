//! What the match page's plots over the games played share: the chart with its axes, the
//! horizontal reference lines and the legend.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::html::plot::{
    count_ticks, plot_error, ticked, value_axis, with_legend_room, TickedAxis, ValueAxis, FONT,
    TEXT,
};

pub(crate) type GamesChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<TickedAxis, ValueAxis>>;

/// The x axis ends a little past the last game, so the final point is not on the frame.
pub(crate) fn x_end(games: f64) -> f64 {
    games.max(1.0) * 1.02
}

/// A chart of `caption` over games 0 to `games` (whole numbers on the axis), y over `y`, with
/// its mesh and axis labels, and room at its right for a legend of `legend_labels`.
pub(crate) fn chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    games: f64,
    y: (f64, f64),
    y_desc: &str,
    y_format: &dyn Fn(&f64) -> String,
    legend_labels: &[&str],
) -> Result<GamesChart<'a, 'b>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(
            ticked(
                with_legend_room(
                    0.0..x_end(games),
                    legend_labels,
                    area.dim_in_pixel().0 - 24 - 70,
                ),
                count_ticks(games, 10),
            ),
            value_axis(y.0..y.1),
        )
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .label_style((FONT, TEXT))
        .axis_desc_style((FONT, TEXT))
        .x_desc("games played (in the order recorded)")
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(y_format)
        .draw()
        .map_err(plot_error)?;
    Ok(chart)
}

/// A line at `y` across the chart.
pub(crate) fn horizontal(
    y: f64,
    games: f64,
    colour: RGBColor,
    width: u32,
) -> PathElement<(f64, f64)> {
    PathElement::new(
        vec![(0.0, y), (x_end(games), y)],
        colour.stroke_width(width),
    )
}

/// A legend swatch of a line.
pub(crate) fn swatch(x: i32, y: i32, colour: RGBColor, width: u32) -> PathElement<(i32, i32)> {
    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(width))
}

/// The legend, at the right of the chart.
pub(crate) fn legend<'a, 'b: 'a>(chart: &mut GamesChart<'a, 'b>) -> Result<()> {
    crate::report::html::plot::legend(chart)
}

/// The number of points of the SVG polyline or polygon whose text follows its tag; for tests.
#[cfg(test)]
pub(crate) fn points_of(element: &str) -> usize {
    element
        .split("points=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map_or(0, |points| points.split_whitespace().count())
}
