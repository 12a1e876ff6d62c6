//! The commit axis the history plots share: commits oldest to newest at x = 0, 1, 2, ...
//! (evenly spaced, whatever their dates), ticks labelled with short ids, and a vertical marker
//! at every commit whose bench signature differs from the previous commit's, so a jump in any
//! plot can be read against the search changing.

use std::ops::Range;

use anyhow::Result;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::html::plot::{
    count_ticks, padded, plot_error, ticked, with_legend_room, TickedAxis, FONT, TEXT,
};

/// The signature-change markers' colour: tests find the markers by it.
pub(crate) const CHANGE_COLOUR: RGBColor = RGBColor(0x94, 0x67, 0xBD);

/// Hex digits of a commit id on a tick.
const TICK_ID: usize = 7;

/// More ticks than this and only every few commits is labelled (plotters picks a round step).
const MAX_TICKS: usize = 16;

pub(crate) struct CommitAxis {
    /// Each commit's id, oldest first.
    pub(crate) commits: Vec<String>,
    /// Indices of the commits whose signature changed from the commit before.
    pub(crate) changes: Vec<usize>,
}

pub(crate) type Chart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<TickedAxis, RangedCoordf64>>;

/// The signature-change markers' legend entry.
const CHANGE_LABEL: &str = "signature changed (◆ in the table)";

impl CommitAxis {
    /// The tick label of x: the short id of the commit there, nothing between commits.
    fn tick(&self, x: f64) -> String {
        let index = x.round();
        if (x - index).abs() > 1e-6 || index < 0.0 {
            return String::new();
        }
        self.commits
            .get(index as usize)
            .map(|id| crate::input::prefix_chars(id, TICK_ID).to_string())
            .unwrap_or_default()
    }

    /// A chart over the commits with its caption, mesh and axis descriptions drawn, and room
    /// at its right for a legend of `legend_labels` and the signature-change marker's.
    pub(crate) fn chart<'a, 'b>(
        &self,
        area: &'a DrawingArea<SVGBackend<'b>, Shift>,
        caption: &str,
        y_desc: &str,
        y: Range<f64>,
        y_format: &dyn Fn(&f64) -> String,
        legend_labels: &[&str],
    ) -> Result<Chart<'a, 'b>> {
        let n = self.commits.len().max(1);
        let mut labels = legend_labels.to_vec();
        if !self.changes.is_empty() {
            labels.push(CHANGE_LABEL);
        }
        // Commits at whole x only; with many, every few commits (a step of 1, 2, 5, 10...).
        let ticks = count_ticks(n as f64 - 1.0, MAX_TICKS);
        let mut chart = ChartBuilder::on(area)
            .caption(caption, (FONT, 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(
                ticked(
                    with_legend_room(
                        -0.5f64..n as f64 - 0.5,
                        &labels,
                        area.dim_in_pixel().0 - 24 - 80,
                    ),
                    ticks,
                ),
                y,
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .x_desc("commit, oldest → newest (short id; dates in the commit table)")
            .y_desc(y_desc)
            .x_label_formatter(&|x| self.tick(*x))
            .y_label_formatter(y_format)
            .draw()
            .map_err(plot_error)?;
        Ok(chart)
    }

    /// The signature-change markers, over whatever the plot drew, with their legend entry.
    pub(crate) fn draw_changes<'a, 'b>(&self, chart: &mut Chart<'a, 'b>) -> Result<()> {
        if self.changes.is_empty() {
            return Ok(());
        }
        let y = chart.y_range();
        chart
            .draw_series(self.changes.iter().map(|index| {
                let x = *index as f64;
                PathElement::new(
                    vec![(x, y.start), (x, y.end)],
                    CHANGE_COLOUR.stroke_width(2),
                )
            }))
            .map_err(plot_error)?
            .label(CHANGE_LABEL)
            .legend(|(x, y)| {
                PathElement::new(
                    vec![(x + 8, y - 6), (x + 8, y + 6)],
                    CHANGE_COLOUR.stroke_width(2),
                )
            });
        Ok(())
    }
}

/// A line through `points` with a dot on each, and its legend entry.
pub(crate) fn draw_line<'a, 'b>(
    chart: &mut Chart<'a, 'b>,
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    label: &str,
) -> Result<()> {
    chart
        .draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))
        .map_err(plot_error)?
        .label(label)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2)));
    // The dots over the line, so each commit measured stands out.
    chart
        .draw_series(points.iter().map(|p| Circle::new(*p, 4, colour.filled())))
        .map_err(plot_error)?;
    Ok(())
}

/// A y range over `values`, padded, down to zero at most for figures that cannot be negative.
pub(crate) fn value_range(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let (padded_lo, hi) = padded(lo, hi, 0.1);
    // Never below zero for positive figures: a negative rate would read as data.
    if lo >= 0.0 {
        padded_lo.max(0.0)..hi
    } else {
        padded_lo..hi
    }
}

/// Decimals for y labels of `y` (about ten ticks): enough that neighbouring labels differ.
pub(crate) fn decimals(y: &Range<f64>) -> usize {
    let step = (y.end - y.start).abs() / 10.0;
    if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).max(0.0) as usize
    } else {
        0
    }
}

/// The legend of a history plot, at the right of the chart.
pub(crate) fn legend<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>) -> Result<()> {
    crate::report::html::plot::legend(chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_name_the_commit_at_integer_positions_only() {
        let axis = CommitAxis {
            commits: vec!["0123456789ab".to_string(), "fedcba987654".to_string()],
            changes: vec![1],
        };
        assert_eq!(axis.tick(0.0), "0123456");
        assert_eq!(axis.tick(1.0), "fedcba9");
        assert_eq!(axis.tick(0.5), "");
        assert_eq!(axis.tick(2.0), "");
        assert_eq!(axis.tick(-1.0), "");
    }

    #[test]
    fn narrow_ranges_get_decimals() {
        assert_eq!(decimals(&(1500.0..2000.0)), 0);
        assert_eq!(decimals(&(1814.0..1816.0)), 1);
        assert_eq!(decimals(&(0.0..0.05)), 3);
        assert_eq!(decimals(&(1.0..1.0)), 0);
    }
}
