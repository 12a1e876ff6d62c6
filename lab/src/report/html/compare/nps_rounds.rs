//! The per-round NPS strip plot: one point per round per side, A and B over the round number,
//! so a round disturbed by the machine (both sides slow together) stands out from a change.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::plot::{
    count_ticks, padded, plot_error, svg, ticked, with_legend_room, Footer, A_COLOUR, B_COLOUR,
    FONT, TEXT,
};

/// `a` and `b` are `(round, NPS)` points.
pub(crate) fn draw(
    a: &[(usize, f64)],
    b: &[(usize, f64)],
    labels: (&str, &str),
    footer: &Footer,
) -> Result<String> {
    let rounds = a.iter().chain(b).map(|(r, _)| *r).max().unwrap_or(1);
    let values = a.iter().chain(b).map(|(_, nps)| *nps / 1e3);
    let lo = values.clone().fold(f64::INFINITY, f64::min);
    let hi = values.fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() {
        padded(lo, hi, 0.1)
    } else {
        (0.0, 1.0)
    };
    // Rounds are numbered from 1: whole numbers only, at most 20 of them.
    let ticks: Vec<f64> = count_ticks(rounds as f64, 21)
        .into_iter()
        .filter(|round| *round >= 1.0)
        .collect();
    svg((1100, 420), footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption("NPS per round, A and B", (FONT, 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(
                ticked(
                    with_legend_room(
                        0.5f64..rounds as f64 + 0.5,
                        &[labels.0, labels.1],
                        area.dim_in_pixel().0 - 24 - 80,
                    ),
                    ticks,
                ),
                lo..hi,
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .x_desc("round (ABBA pairs, in order)")
            .y_desc("NPS (thousand nodes/s)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(plot_error)?;
        // A a little left of the round, B a little right: pairs sit side by side.
        for (points, colour, label, shift) in [
            (a, A_COLOUR, labels.0, -0.08),
            (b, B_COLOUR, labels.1, 0.08),
        ] {
            chart
                .draw_series(points.iter().map(|(round, nps)| {
                    Circle::new((*round as f64 + shift, nps / 1e3), 5, colour.filled())
                }))
                .map_err(plot_error)?
                .label(label)
                .legend(move |(x, y)| Circle::new((x + 8, y), 5, colour.filled()));
        }
        crate::report::html::plot::legend(&mut chart)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn every_round_of_each_side_is_a_point() {
        let a: Vec<(usize, f64)> = (1..=6).map(|r| (r, 1.0e6 + r as f64 * 1e3)).collect();
        let b: Vec<(usize, f64)> = (1..=5).map(|r| (r, 0.97e6)).collect();
        let svg = draw(&a, &b, ("A = x", "B = y"), &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // One circle per point, and one per side in the legend.
        assert_eq!(count(&svg, "<circle"), 6 + 5 + 2, "{svg}");
        assert_eq!(count(&svg, "fill=\"#1F77B4\""), 6 + 1);
        assert_eq!(count(&svg, "fill=\"#FF7F0E\""), 5 + 1);
        assert!(svg.contains("NPS per round"));
        assert!(svg.contains("NPS (thousand nodes/s)"));
        assert!(svg.contains("test machine"));
    }
}
