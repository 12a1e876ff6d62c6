//! The speed ratio's bootstrap distribution: the per-round B/A time-per-node ratios resampled
//! (`analysis::bootstrap`), as a histogram, with the estimate, the t interval the verdict
//! reads, no change (1) and the regression and improvement thresholds as vertical lines.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::plot::{
    count_ticks, padded, plot_error, svg, ticked, with_legend_room, Footer, FONT, TEXT,
};

/// Bars of the histogram: a colour of their own, so a test can count them.
pub(crate) const BAR_COLOUR: RGBColor = RGBColor(0x4C, 0x72, 0xB0);
const CI_COLOUR: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
const THRESHOLD_COLOUR: RGBColor = RGBColor(0xD6, 0x27, 0x28);
const BINS: usize = 30;

pub(crate) struct Lines {
    pub(crate) estimate: f64,
    /// The t interval, when there is one (two rounds or more).
    pub(crate) ci: Option<(f64, f64)>,
    pub(crate) confidence: f64,
    pub(crate) threshold_pct: f64,
}

/// `(bin start, bin end, count)` of the non-empty bins of `BINS` equal bins over the data.
pub(crate) fn bins(sorted: &[f64]) -> Vec<(f64, f64, usize)> {
    let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let width = ((hi - lo) / BINS as f64).max(hi.abs() * 1e-6).max(1e-12);
    let mut counts = vec![0usize; BINS];
    for value in sorted {
        counts[(((value - lo) / width) as usize).min(BINS - 1)] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .filter(|(_, count)| *count > 0)
        .map(|(i, count)| {
            let start = lo + i as f64 * width;
            (start, start + width, count)
        })
        .collect()
}

/// `resamples` sorted ascending (see `analysis::bootstrap`).
pub(crate) fn draw(resamples: &[f64], lines: &Lines, footer: &Footer) -> Result<String> {
    let bars = bins(resamples);
    let mut lo = resamples.first().copied().unwrap_or(lines.estimate);
    let mut hi = resamples.last().copied().unwrap_or(lines.estimate);
    for x in [lines.estimate]
        .into_iter()
        .chain(lines.ci.map(|c| c.0))
        .chain(lines.ci.map(|c| c.1))
        .filter(|x| x.is_finite())
    {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    // No change (1) and the thresholds far outside the data would squeeze the histogram into
    // a sliver: each is drawn only when it lies within three spans of the data.
    let span = (hi - lo).max(0.005);
    let near = |x: &f64| *x > lo - 3.0 * span && *x < hi + 3.0 * span;
    let threshold = lines.threshold_pct / 100.0;
    let thresholds: Vec<f64> = [1.0 - threshold, 1.0 + threshold]
        .into_iter()
        .filter(near)
        .collect();
    let no_change: Vec<f64> = [1.0].into_iter().filter(near).collect();
    for x in thresholds.iter().chain(&no_change) {
        lo = lo.min(*x);
        hi = hi.max(*x);
    }
    let (lo, hi) = padded(lo, hi, 0.05);
    let top = bars.iter().map(|b| b.2).max().unwrap_or(1) as f64 * 1.15;
    let bars_label = "resampled geometric mean of the round ratios";
    let no_change_label = if no_change.is_empty() {
        "1: no change (beyond the axis)"
    } else {
        "1: no change"
    };
    let estimate_label = format!("estimate {:.4}", lines.estimate);
    let ci_label = lines.ci.map(|(low, high)| {
        format!(
            "{:.0}% t interval {low:.4} – {high:.4}",
            lines.confidence * 100.0
        )
    });
    let threshold_label = if thresholds.len() == 2 {
        format!("threshold ±{}%", lines.threshold_pct)
    } else {
        format!(
            "threshold ±{}% (beyond the axis where not drawn)",
            lines.threshold_pct
        )
    };
    let legend_labels = [
        bars_label,
        no_change_label,
        &estimate_label,
        ci_label.as_deref().unwrap_or(""),
        &threshold_label,
    ];
    svg((1200, 420), footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "Bootstrap distribution of the B/A time-per-node ratio ({} resamples of the rounds)",
                    resamples.len()
                ),
                (FONT, 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                with_legend_room(lo..hi, &legend_labels, area.dim_in_pixel().0 - 24 - 70),
                ticked(0.0..top, count_ticks(top, 10)),
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .x_desc("B/A time per node (ratio; above 1: B slower)")
            .y_desc("resamples (count)")
            .x_label_formatter(&|x| format!("{x:.3}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series(bars.iter().map(|(start, end, count)| {
                Rectangle::new([(*start, 0.0), (*end, *count as f64)], BAR_COLOUR.filled())
            }))
            .map_err(plot_error)?
            .label(bars_label)
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], BAR_COLOUR.filled()));
        let vertical = |x: f64, colour: RGBColor, width: u32| {
            PathElement::new(vec![(x, 0.0), (x, top)], colour.stroke_width(width))
        };
        chart
            .draw_series(
                no_change
                    .iter()
                    .map(|x| vertical(*x, RGBColor(0x99, 0x99, 0x99), 1)),
            )
            .map_err(plot_error)?
            .label(no_change_label)
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], RGBColor(0x99, 0x99, 0x99))
            });
        chart
            .draw_series([vertical(lines.estimate, BLACK, 2)])
            .map_err(plot_error)?
            .label(estimate_label.as_str())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2)));
        if let (Some((low, high)), Some(ci_label)) = (lines.ci, ci_label.as_deref()) {
            chart
                .draw_series([vertical(low, CI_COLOUR, 2), vertical(high, CI_COLOUR, 2)])
                .map_err(plot_error)?
                .label(ci_label)
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], CI_COLOUR.stroke_width(2))
                });
        }
        chart
            .draw_series(thresholds.iter().map(|t| vertical(*t, THRESHOLD_COLOUR, 2)))
            .map_err(plot_error)?
            .label(threshold_label.as_str())
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], THRESHOLD_COLOUR.stroke_width(2))
            });
        crate::report::html::plot::legend(&mut chart)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::bootstrap::bootstrap_geometric_means;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn every_bin_is_a_bar_and_every_line_is_drawn() {
        let resamples = bootstrap_geometric_means(&[1.01, 0.99, 1.03, 1.02, 0.98, 1.0], 2000, 1);
        let bars = bins(&resamples);
        assert_eq!(bars.iter().map(|b| b.2).sum::<usize>(), 2000);
        let lines = Lines {
            estimate: 1.005,
            ci: Some((0.99, 1.02)),
            confidence: 0.95,
            threshold_pct: 1.0,
        };
        let svg = draw(&resamples, &lines, &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // One rectangle per non-empty bin, and one in the legend.
        assert_eq!(count(&svg, "fill=\"#4C72B0\""), bars.len() + 1, "{svg}");
        // Two CI lines and two thresholds, each with one legend line.
        assert_eq!(count(&svg, "stroke=\"#2CA02C\""), 2 + 1);
        assert_eq!(count(&svg, "stroke=\"#D62728\""), 2 + 1);
        assert!(svg.contains("estimate 1.0050"));
        assert!(svg.contains("95% t interval 0.9900 – 1.0200"));
        assert!(svg.contains("B/A time per node (ratio; above 1: B slower)"));
    }

    #[test]
    fn a_far_threshold_is_left_off_the_axis() {
        let resamples = bootstrap_geometric_means(&[1.01, 0.99, 1.0], 500, 1);
        let lines = Lines {
            estimate: 1.0,
            ci: None,
            confidence: 0.95,
            threshold_pct: 50.0,
        };
        let svg = draw(&resamples, &lines, &test_footer()).unwrap();
        assert_eq!(count(&svg, "stroke=\"#D62728\""), 1, "legend only");
        assert!(svg.contains("threshold ±50% (beyond the axis"));
        // No change lies within the data: drawn.
        assert!(svg.contains("1: no change</text>") || svg.contains("1: no change\n</text>"));
    }
}
