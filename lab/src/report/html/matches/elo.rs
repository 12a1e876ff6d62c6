//! B's logistic Elo over the games of a match, with its 95% interval as a shaded band and the
//! line of equal strength (0); with a logistic SPRT, its hypotheses elo0 and elo1 as well.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::matches::over_games::{chart, horizontal, legend, swatch};
use crate::report::html::plot::{padded, plot_error, svg, Footer, B_COLOUR};

/// The band's colour: B's, faded (tests count it).
pub(crate) const BAND_OPACITY: f64 = 0.25;
const ZERO_COLOUR: RGBColor = RGBColor(0x55, 0x55, 0x55);
const HYPOTHESIS_COLOUR: RGBColor = RGBColor(0x94, 0x67, 0xBD);

/// One point of the plot: games so far, the estimate and its interval.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EloPoint {
    pub(crate) games: f64,
    pub(crate) elo: f64,
    pub(crate) low: f64,
    pub(crate) high: f64,
}

/// The plot, and whether some early interval was wider than the axis and cut at its edge.
pub(crate) fn draw(
    points: &[EloPoint],
    hypotheses: Option<(f64, f64)>,
    footer: &Footer,
) -> Result<(String, bool)> {
    let games = points.last().map_or(1.0, |p| p.games);
    // The first pairs' intervals span hundreds of Elo: the axis is fitted to the later 90% of
    // the points (and 0, and the hypotheses), and wider early bands are cut at its edge.
    let settled = &points[points.len() / 10..];
    let (lo, hi) = settled
        .iter()
        .flat_map(|p| [p.low, p.high])
        .chain([0.0])
        .chain(hypotheses.into_iter().flat_map(|(a, b)| [a, b]))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let (lo, hi) = padded(lo, hi, 0.05);
    let clipped = points.iter().any(|p| p.low < lo || p.high > hi);
    let clamp = |y: f64| y.clamp(lo, hi);
    let band: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.games, clamp(p.high)))
        .chain(points.iter().rev().map(|p| (p.games, clamp(p.low))))
        .collect();
    let band_label = "95% interval (from the pentanomial counts)";
    let zero_label = "0: equal strength";
    let hypotheses_label = hypotheses
        .map(|(elo0, elo1)| {
            format!(
                "SPRT hypotheses elo0 = {}, elo1 = {}",
                crate::digits::elo_bound(elo0),
                crate::digits::elo_bound(elo1)
            )
        })
        .unwrap_or_default();
    let estimate_label = "Elo estimate after each complete pair";
    let plot = svg((1200, 420), footer, |area| {
        let mut chart = chart(
            area,
            "Elo of B over games, with its 95% interval",
            games,
            (lo, hi),
            "Elo of B against A (logistic)",
            &|y| format!("{y:+.0}"),
            &[band_label, zero_label, &hypotheses_label, estimate_label],
        )?;
        let band_style = B_COLOUR.mix(BAND_OPACITY).filled();
        chart
            .draw_series([Polygon::new(band, band_style)])
            .map_err(plot_error)?
            .label(band_label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], band_style));
        chart
            .draw_series([horizontal(0.0, games, ZERO_COLOUR, 1)])
            .map_err(plot_error)?
            .label(zero_label)
            .legend(|(x, y)| swatch(x, y, ZERO_COLOUR, 1));
        if let Some((elo0, elo1)) = hypotheses {
            chart
                .draw_series(
                    [elo0, elo1]
                        .into_iter()
                        .map(|y| horizontal(y, games, HYPOTHESIS_COLOUR, 1)),
                )
                .map_err(plot_error)?
                .label(hypotheses_label.as_str())
                .legend(|(x, y)| swatch(x, y, HYPOTHESIS_COLOUR, 1));
        }
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|p| (p.games, clamp(p.elo))),
                B_COLOUR.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(estimate_label)
            .legend(|(x, y)| swatch(x, y, B_COLOUR, 2));
        legend(&mut chart)
    })?;
    Ok((plot, clipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::matches::over_games::points_of;
    use crate::report::html::plot::{count, test_footer};

    fn points(n: usize) -> Vec<EloPoint> {
        (1..=n)
            .map(|i| {
                let half = 400.0 / (i as f64).sqrt();
                EloPoint {
                    games: 2.0 * i as f64,
                    elo: 20.0,
                    low: 20.0 - half,
                    high: 20.0 + half,
                }
            })
            .collect()
    }

    #[test]
    fn a_band_a_line_and_the_zero_line() {
        let (svg, clipped) = draw(&points(100), Some((0.0, 5.0)), &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // The band: one polygon with the points there and back.
        assert_eq!(count(&svg, "<polygon"), 1, "{svg}");
        let polygon = svg.split("<polygon").nth(1).unwrap();
        assert_eq!(points_of(polygon), 200);
        assert!(svg.contains("0: equal strength"));
        assert!(svg.contains("elo0 = 0, elo1 = 5"));
        assert!(svg.contains("Elo of B against A (logistic)"));
        // The first ten points' intervals (±400 Elo at one pair) are wider than the axis.
        assert!(clipped);
        let (_, clipped) = draw(&points(100)[90..], None, &test_footer()).unwrap();
        assert!(!clipped, "the later intervals fit");
    }
}
