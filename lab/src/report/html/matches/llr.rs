//! The SPRT's log-likelihood ratio over the games of a match, between its bounds: the test
//! accepts H1 when the line reaches the upper bound and H0 at the lower one. The final point
//! is marked with the decision.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::matches::over_games::{chart, horizontal, legend, swatch};
use crate::report::html::plot::{padded, plot_error, svg, Footer, B_COLOUR};

/// The bounds' colours: green where B is accepted as stronger, red where it is not.
pub(crate) const H1_COLOUR: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
pub(crate) const H0_COLOUR: RGBColor = RGBColor(0xD6, 0x27, 0x28);
const ZERO_COLOUR: RGBColor = RGBColor(0x99, 0x99, 0x99);

pub(crate) struct Test<'a> {
    pub(crate) lower: f64,
    pub(crate) upper: f64,
    /// `[elo0, elo1]` and the model, for the title.
    pub(crate) hypotheses: String,
    /// The decision in words (`H1 accepted`, `no decision`).
    pub(crate) decision: &'a str,
}

/// `points` are `(games, LLR)` in the order the games were recorded.
pub(crate) fn draw(points: &[(f64, f64)], test: &Test, footer: &Footer) -> Result<String> {
    let games = points.last().map_or(1.0, |p| p.0);
    let (lo, hi) = points
        .iter()
        .map(|p| p.1)
        .chain([test.lower, test.upper])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let last = points.last().copied();
    let bounds = [
        (
            test.upper,
            H1_COLOUR,
            format!("upper bound {:.2}: H1 accepted (B stronger)", test.upper),
        ),
        (
            test.lower,
            H0_COLOUR,
            format!("lower bound {:.2}: H0 accepted", test.lower),
        ),
    ];
    let llr_label = "LLR after each complete pair";
    let last_label = last
        .map(|(x, y)| format!("{} after {x:.0} games (LLR {y:.2})", test.decision))
        .unwrap_or_default();
    svg((1200, 420), footer, |area| {
        let mut chart = chart(
            area,
            &format!("SPRT log-likelihood ratio over games, {}", test.hypotheses),
            games,
            padded(lo, hi, 0.08),
            "LLR (log-likelihood ratio, H1 over H0)",
            &|y| format!("{y:.1}"),
            &[&bounds[0].2, &bounds[1].2, llr_label, &last_label],
        )?;
        for (y, colour, label) in bounds.clone() {
            chart
                .draw_series([horizontal(y, games, colour, 2)])
                .map_err(plot_error)?
                .label(label)
                .legend(move |(x, y)| swatch(x, y, colour, 2));
        }
        chart
            .draw_series([horizontal(0.0, games, ZERO_COLOUR, 1)])
            .map_err(plot_error)?;
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                B_COLOUR.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(llr_label)
            .legend(|(x, y)| swatch(x, y, B_COLOUR, 2));
        if let Some((x, y)) = last {
            chart
                .draw_series([Circle::new((x, y), 6, BLACK.filled())])
                .map_err(plot_error)?
                .label(last_label.as_str())
                .legend(|(x, y)| Circle::new((x + 8, y), 5, BLACK.filled()));
        }
        legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::matches::over_games::points_of;
    use crate::report::html::plot::{count, test_footer};

    /// Absurd figures (a JSON may hold 1e308) are drawn within reach of the frame, where the
    /// plot clips them, on their own side: unclamped, plotters' pixel arithmetic overflows (a
    /// panic with overflow checks, else a pixel wrapped to the other edge).
    #[test]
    fn absurd_figures_are_drawn_within_reach_of_the_frame() {
        let points = [(2.0, 1e308), (4.0, -1e308), (6.0, f64::MAX)];
        let test = Test {
            lower: -1e308,
            upper: 1e308,
            hypotheses: "[0, 5] logistic".to_string(),
            decision: "no decision",
        };
        let svg = draw(&points, &test, &test_footer()).unwrap();
        // Each bound's line and the LLR's, besides their legend swatches.
        for colour in ["#2CA02C", "#D62728", "#FF7F0E"] {
            assert_eq!(
                count(&svg, &format!("stroke=\"{colour}\"")),
                2,
                "{colour}: {svg}"
            );
        }
        let line = svg
            .split("<polyline")
            .find(|part| part.contains("stroke=\"#FF7F0E\""))
            .unwrap();
        assert_eq!(points_of(line), 3);
        let coordinates: Vec<f64> = line
            .split("points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .split([' ', ','])
            .filter_map(|number| number.parse().ok())
            .collect();
        assert!(
            coordinates.iter().all(|c| c.abs() < 10_000.0),
            "{coordinates:?}"
        );
        // Up, down, up: unclamped, the wrapped pixel put -1e308 at the top as well.
        let ys = [coordinates[1], coordinates[3], coordinates[5]];
        assert!(ys[1] > ys[0] && ys[2] == ys[0], "{coordinates:?}");
    }

    #[test]
    fn the_line_runs_between_both_bounds_to_the_marked_decision() {
        let points: Vec<(f64, f64)> = (1..=40)
            .map(|i| (i as f64 * 2.0, i as f64 * 0.075))
            .collect();
        let test = Test {
            lower: -2.94,
            upper: 2.94,
            hypotheses: "[0, 5] logistic".to_string(),
            decision: "H1 accepted",
        };
        let svg = draw(&points, &test, &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // The bounds: one line each and one legend swatch each.
        assert_eq!(count(&svg, "stroke=\"#2CA02C\""), 2, "{svg}");
        assert_eq!(count(&svg, "stroke=\"#D62728\""), 2, "{svg}");
        // The LLR: one polyline of 40 points, and its swatch.
        assert_eq!(count(&svg, "stroke=\"#FF7F0E\""), 2, "{svg}");
        let line = svg
            .split("<polyline")
            .find(|part| part.contains("stroke=\"#FF7F0E\""))
            .unwrap();
        assert_eq!(points_of(line), 40);
        assert!(
            svg.contains("H1 accepted after 80 games (LLR 3.00)"),
            "{svg}"
        );
        assert!(svg.contains("upper bound 2.94"));
        assert!(svg.contains("LLR (log-likelihood ratio"));
        assert!(svg.contains("test machine"));
    }
}
