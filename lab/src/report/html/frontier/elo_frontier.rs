//! The frontier's plot: each level's total Elo against the reference, with its 95% interval,
//! over its worst exceeded bound (x, in percent), and the search's and the speed's Elo as the
//! second and third series, so a reader sees where the speed a looser table buys stops paying
//! for the search it loses.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::plot::{
    legend, padded, plot_error, svg, with_legend_room, Footer, A_COLOUR, B_COLOUR, FONT, TEXT,
};

const SEARCH_COLOUR: RGBColor = RGBColor(0x7F, 0x7F, 0x7F);
const ZERO_COLOUR: RGBColor = RGBColor(0x99, 0x99, 0x99);
/// Width of the plot in pixels, and of its plotting area as the legend's room is measured.
const SIZE: (u32, u32) = (1000, 460);
const PLOT_WIDTH: u32 = 880;

/// One level placed on the plot.
pub(crate) struct Point<'a> {
    pub(crate) label: &'a str,
    /// The worst exceeded bound, in percent.
    pub(crate) x: f64,
    /// The total Elo and its 95% interval; `None` where the verdict could not bound them.
    pub(crate) total: Option<f64>,
    pub(crate) total_ci: Option<(f64, f64)>,
    pub(crate) search: Option<f64>,
    pub(crate) speed: Option<f64>,
}

pub(crate) const TOTAL_LABEL: &str = "total Elo, 95% interval";
pub(crate) const SEARCH_LABEL: &str = "search Elo (fixed nodes)";
pub(crate) const SPEED_LABEL: &str = "speed Elo";

/// Draws `points` (in any order; the lines join them by x).
pub(crate) fn draw(points: &[Point], footer: &Footer) -> Result<String> {
    let mut points: Vec<&Point> = points.iter().filter(|p| p.x.is_finite()).collect();
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    let (x_lo, x_hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.x), hi.max(p.x))
        });
    let (x_lo, x_hi) = padded(x_lo.min(0.0), x_hi.max(0.0), 0.08);
    let x_range = with_legend_room(
        x_lo.max(0.0)..x_hi,
        &[TOTAL_LABEL, SEARCH_LABEL, SPEED_LABEL],
        PLOT_WIDTH,
    );
    let (y_lo, y_hi) = points
        .iter()
        .flat_map(|p| {
            [
                p.total,
                p.total_ci.map(|ci| ci.0),
                p.total_ci.map(|ci| ci.1),
                p.search,
                p.speed,
            ]
        })
        .flatten()
        .chain([0.0])
        .filter(|y| y.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let (y_lo, y_hi) = padded(y_lo, y_hi, 0.12);
    let cap = (x_range.end - x_range.start) * 0.006;
    svg(SIZE, footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(
                "Elo against the reference over the worst exceeded bound",
                (FONT, 18),
            )
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(70)
            .build_cartesian_2d(x_range.clone(), y_lo..y_hi)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .x_desc("worst exceeded bound (Wilson 95% upper, %)")
            .y_desc("Elo against the reference (logistic)")
            .x_label_formatter(&|x| format!("{x:.2}%"))
            .y_label_formatter(&|y| format!("{y:+.0}"))
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series([PathElement::new(
                vec![(x_range.start, 0.0), (x_range.end, 0.0)],
                ZERO_COLOUR.stroke_width(1),
            )])
            .map_err(plot_error)?;
        for (label, colour, value) in [
            (
                SEARCH_LABEL,
                SEARCH_COLOUR,
                (|p: &Point| p.search) as fn(&Point) -> Option<f64>,
            ),
            (SPEED_LABEL, A_COLOUR, |p: &Point| p.speed),
            (TOTAL_LABEL, B_COLOUR, |p: &Point| p.total),
        ] {
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| Some((p.x, value(p).filter(|v| v.is_finite())?)))
                .collect();
            let width = if label == TOTAL_LABEL { 3 } else { 2 };
            chart
                .draw_series(LineSeries::new(line.clone(), colour.stroke_width(width)))
                .map_err(plot_error)?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(width))
                });
            chart
                .draw_series(line.iter().map(|p| Circle::new(*p, 4, colour.filled())))
                .map_err(plot_error)?;
        }
        for point in &points {
            if let Some((low, high)) = point
                .total_ci
                .filter(|(l, h)| l.is_finite() && h.is_finite())
            {
                let x = point.x;
                chart
                    .draw_series([
                        PathElement::new(vec![(x, low), (x, high)], BLACK.stroke_width(1)),
                        PathElement::new(
                            vec![(x - cap, low), (x + cap, low)],
                            BLACK.stroke_width(1),
                        ),
                        PathElement::new(
                            vec![(x - cap, high), (x + cap, high)],
                            BLACK.stroke_width(1),
                        ),
                    ])
                    .map_err(plot_error)?;
            }
            let y = point
                .total
                .filter(|v| v.is_finite())
                .or(point.total_ci.map(|ci| ci.1))
                .unwrap_or(0.0);
            chart
                .draw_series([EmptyElement::at((point.x, y))
                    + Text::new(point.label.to_string(), (8, -20), (FONT, TEXT))])
                .map_err(plot_error)?;
        }
        legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn each_level_is_a_point_of_three_series_with_a_whisker_and_its_label() {
        let points = [
            Point {
                label: "2%",
                x: 1.9,
                total: Some(8.0),
                total_ci: Some((-2.0, 18.0)),
                search: Some(-14.0),
                speed: Some(22.0),
            },
            Point {
                label: "<b>",
                x: 0.9,
                total: Some(0.0),
                total_ci: Some((0.0, 0.0)),
                search: Some(0.0),
                speed: Some(0.0),
            },
        ];
        let svg = draw(&points, &test_footer()).unwrap();
        for text in ["2%", "&lt;b&gt;", TOTAL_LABEL, SEARCH_LABEL, SPEED_LABEL] {
            assert!(svg.contains(text), "{text}: {svg}");
        }
        assert!(!svg.contains("<b>"), "labels are escaped");
        // Two points on each of the three lines (the legend draws lines, not circles).
        assert_eq!(count(&svg, "<circle"), 6, "{svg}");
        crate::report::html::plot::assert_readable(&svg);
    }
}
