//! The speed-Elo model: each time odds' Elo with its 95% interval against log2(odds), and the
//! fitted line Elo = k · log2(odds) through the origin with the band of k's interval.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::plot::{
    padded, plot_error, svg, with_legend_room, Footer, A_COLOUR, B_COLOUR, FONT, TEXT,
};

/// One played odds: log2 of B's time over A's, the Elo and its 95% interval.
pub(crate) struct OddsElo {
    pub(crate) log2_odds: f64,
    pub(crate) elo: f64,
    pub(crate) ci: (f64, f64),
}

/// The fitted slope in Elo per doubling with its 95% interval.
pub(crate) struct Slope {
    pub(crate) value: f64,
    pub(crate) ci: (f64, f64),
}

/// The plot's width: room for the data and the legend beside it.
const WIDTH: u32 = 1100;

pub(crate) fn draw(
    title: &str,
    points: &[OddsElo],
    slope: &Slope,
    footer: &Footer,
) -> Result<String> {
    let x_max = points
        .iter()
        .map(|point| point.log2_odds.abs())
        .fold(1.0_f64, f64::max)
        * 1.15;
    let x_min = points
        .iter()
        .map(|point| point.log2_odds)
        .fold(0.0_f64, f64::min)
        * 1.15;
    let x_min = x_min.min(0.0) - x_max * 0.05;
    let line_ends = [x_min, x_max];
    let (lo, hi) = points
        .iter()
        .flat_map(|point| [point.ci.0, point.ci.1])
        .chain(
            line_ends
                .iter()
                .flat_map(|x| [slope.ci.0 * x, slope.ci.1 * x, slope.value * x]),
        )
        .chain([0.0])
        .filter(|y| y.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
    let (lo, hi) = padded(lo, hi, 0.08);
    let band_label = format!("95% interval of k: {:.1} to {:.1}", slope.ci.0, slope.ci.1);
    let fit_label = format!("fit: Elo = {:.1} · log2(odds)", slope.value);
    let points_label = "played odds: Elo and its 95% interval";
    let x_range = with_legend_room(
        x_min..x_max,
        &[&band_label, &fit_label, points_label],
        WIDTH - 100,
    );
    svg((WIDTH, 440), footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(x_range, lo..hi)
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .x_desc("log2(B's time / A's time): doublings of time")
            .y_desc("Elo of B over A (logistic)")
            .x_label_formatter(&|x| format!("{x:.2}"))
            .y_label_formatter(&|y| format!("{y:+.0}"))
            .draw()
            .map_err(plot_error)?;
        let band: Vec<(f64, f64)> = vec![
            (x_min, slope.ci.0 * x_min),
            (x_max, slope.ci.0 * x_max),
            (x_max, slope.ci.1 * x_max),
            (x_min, slope.ci.1 * x_min),
        ];
        chart
            .draw_series([Polygon::new(band, B_COLOUR.mix(0.18).filled())])
            .map_err(plot_error)?
            .label(band_label.as_str())
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 16, y + 5)], B_COLOUR.mix(0.18).filled())
            });
        chart
            .draw_series(LineSeries::new(
                line_ends.map(|x| (x, slope.value * x)),
                B_COLOUR.stroke_width(2),
            ))
            .map_err(plot_error)?
            .label(fit_label.as_str())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], B_COLOUR.stroke_width(2)));
        for point in points {
            chart
                .draw_series([PathElement::new(
                    vec![(point.log2_odds, point.ci.0), (point.log2_odds, point.ci.1)],
                    A_COLOUR.stroke_width(2),
                )])
                .map_err(plot_error)?;
        }
        chart
            .draw_series(
                points
                    .iter()
                    .map(|point| Circle::new((point.log2_odds, point.elo), 5, A_COLOUR.filled())),
            )
            .map_err(plot_error)?
            .label(points_label)
            .legend(|(x, y)| Circle::new((x + 8, y), 5, A_COLOUR.filled()));
        crate::report::html::plot::legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn each_odds_is_a_point_with_its_interval_under_the_fitted_line() {
        let points = [
            OddsElo {
                log2_odds: 1.5_f64.log2(),
                elo: 50.0,
                ci: (30.0, 70.0),
            },
            OddsElo {
                log2_odds: 1.0,
                elo: 90.0,
                ci: (70.0, 110.0),
            },
        ];
        let slope = Slope {
            value: 88.0,
            ci: (75.0, 101.0),
        };
        let svg = draw("model", &points, &slope, &test_footer()).unwrap();
        // Two points and the legend's marker.
        assert_eq!(count(&svg, "<circle"), 3, "{svg}");
        assert!(svg.contains("fit: Elo = 88.0 · log2(odds)"), "{svg}");
        assert!(svg.contains("95% interval of k: 75.0 to 101.0"), "{svg}");
        assert!(svg.contains("<polygon"), "{svg}");
        crate::report::html::plot::assert_readable(&svg);
    }
}
