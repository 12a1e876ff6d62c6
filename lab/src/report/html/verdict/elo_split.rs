//! The verdict's Elo split: the speed's Elo (from the stored model), the search's (from the
//! fixed-node games) and their total, each a bar with its 95% interval, against the bounds of
//! the test.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::matches::llr::{H0_COLOUR, H1_COLOUR};
use crate::report::html::plot::{padded, plot_error, svg, Footer, A_COLOUR, B_COLOUR, FONT, TEXT};

const SEARCH_COLOUR: RGBColor = RGBColor(0x7F, 0x7F, 0x7F);
const ZERO_COLOUR: RGBColor = RGBColor(0x99, 0x99, 0x99);

/// One bar: its name, its value and its 95% interval; `None` where the estimate is unbounded.
pub(crate) struct Bar<'a> {
    pub(crate) name: &'a str,
    pub(crate) value: Option<f64>,
    pub(crate) ci: Option<(f64, f64)>,
}

/// The bars in order (speed, search, total), with the bounds `[elo0, elo1]` drawn across.
pub(crate) fn draw(bars: &[Bar], bounds: (f64, f64), footer: &Footer) -> Result<String> {
    let (lo, hi) = bars
        .iter()
        .flat_map(|bar| [bar.value, bar.ci.map(|ci| ci.0), bar.ci.map(|ci| ci.1)])
        .flatten()
        .chain([0.0, bounds.0, bounds.1])
        .filter(|y| y.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let (lo, hi) = padded(lo, hi, 0.12);
    let count = bars.len() as i32;
    let names: Vec<String> = bars.iter().map(|bar| bar.name.to_string()).collect();
    svg((900, 420), footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "Elo of B over A against the bounds elo0 = {:+.1} (red) and elo1 = {:+.1} (green)",
                    bounds.0, bounds.1
                ),
                (FONT, 18),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d((0..count).into_segmented(), lo..hi)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .y_desc("Elo (logistic), bar: estimate, whisker: 95% interval")
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(index) => names
                    .get(usize::try_from(*index).unwrap_or(usize::MAX))
                    .cloned()
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .y_label_formatter(&|y| format!("{y:+.0}"))
            .draw()
            .map_err(plot_error)?;
        let across = |y: f64, colour: RGBColor, width: u32| {
            PathElement::new(
                vec![(SegmentValue::Exact(0), y), (SegmentValue::Last, y)],
                colour.stroke_width(width),
            )
        };
        chart
            .draw_series([across(0.0, ZERO_COLOUR, 1)])
            .map_err(plot_error)?;
        for (y, colour) in [(bounds.1, H1_COLOUR), (bounds.0, H0_COLOUR)] {
            chart
                .draw_series([across(y, colour, 2)])
                .map_err(plot_error)?;
        }
        let colours = [A_COLOUR, SEARCH_COLOUR, B_COLOUR];
        for (index, bar) in bars.iter().enumerate() {
            let colour = colours[index % colours.len()];
            let at = index as i32;
            if let Some(value) = bar.value.filter(|v| v.is_finite()) {
                let mut rectangle = Rectangle::new(
                    [
                        (SegmentValue::Exact(at), 0.0),
                        (SegmentValue::Exact(at + 1), value),
                    ],
                    colour.mix(0.75).filled(),
                );
                rectangle.set_margin(0, 0, 60, 60);
                chart.draw_series([rectangle]).map_err(plot_error)?;
            }
            if let Some((low, high)) = bar.ci.filter(|(l, h)| l.is_finite() && h.is_finite()) {
                let centre = SegmentValue::CenterOf(at);
                chart
                    .draw_series([PathElement::new(
                        vec![(centre.clone(), low), (centre, high)],
                        BLACK.stroke_width(2),
                    )])
                    .map_err(plot_error)?;
                for y in [low, high] {
                    chart
                        .draw_series([Circle::new(
                            (SegmentValue::CenterOf(at), y),
                            3,
                            BLACK.filled(),
                        )])
                        .map_err(plot_error)?;
                }
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn three_bars_with_whiskers_between_the_bounds() {
        let bars = [
            Bar {
                name: "speed",
                value: Some(-20.0),
                ci: Some((-25.0, -15.0)),
            },
            Bar {
                name: "search",
                value: Some(10.0),
                ci: Some((2.0, 18.0)),
            },
            Bar {
                name: "total",
                value: Some(-10.0),
                ci: Some((-19.4, -0.6)),
            },
        ];
        let svg = draw(&bars, (-5.0, 0.0), &test_footer()).unwrap();
        for name in ["speed", "search", "total", "elo0 = -5.0", "elo1 = +0.0"] {
            assert!(svg.contains(name), "{name}: {svg}");
        }
        // The bounds: a line each, named in the title.
        assert_eq!(count(&svg, "stroke=\"#2CA02C\""), 1, "{svg}");
        assert_eq!(count(&svg, "stroke=\"#D62728\""), 1, "{svg}");
        crate::report::html::plot::assert_readable(&svg);
        // Three whiskers, each capped twice.
        assert_eq!(count(&svg, "<circle"), 6, "{svg}");
    }

    #[test]
    fn an_unbounded_estimate_draws_no_bar_and_no_whisker() {
        let bars = [Bar {
            name: "search",
            value: None,
            ci: None,
        }];
        let svg = draw(&bars, (-5.0, 0.0), &test_footer()).unwrap();
        assert_eq!(count(&svg, "<circle"), 0, "{svg}");
    }
}
