//! Eval exit shares over commits: a stacked bar per commit, the share of its eval calls that
//! exit in the super-lazy, lazy and full tier (summing to 100%), so a change that moves calls
//! between tiers shows as the boundaries moving.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::history::commit_axis::{legend, CommitAxis};
use crate::report::html::plot::{plot_error, svg, Footer};
use squall::tier::Tier;

/// One colour per tier, cheapest first: tests count bars by them.
pub(crate) const TIER_COLOURS: [RGBColor; 3] = [
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0xBC, 0xBD, 0x22),
    RGBColor(0xD6, 0x27, 0x28),
];

/// Half a bar's width, in commits.
const HALF_BAR: f64 = 0.3;

/// `(commit index, [super-lazy, lazy, full] shares in 0..=1)`, oldest first.
pub(crate) fn draw(
    shares: &[(usize, [f64; 3])],
    axis: &CommitAxis,
    footer: &Footer,
) -> Result<String> {
    svg((1200, 420), footer, |area| {
        let mut chart = axis.chart(
            area,
            "Eval exit shares per commit",
            "eval calls exiting in the tier (%)",
            0.0..100.0,
            &|v| format!("{v:.0}%"),
            &Tier::ALL.map(Tier::name),
        )?;
        for (tier, colour) in TIER_COLOURS.iter().enumerate() {
            let colour = *colour;
            chart
                .draw_series(shares.iter().map(|(index, rates)| {
                    let below: f64 = rates[..tier].iter().sum::<f64>() * 100.0;
                    let x = *index as f64;
                    Rectangle::new(
                        [
                            (x - HALF_BAR, below),
                            (x + HALF_BAR, below + rates[tier] * 100.0),
                        ],
                        colour.filled(),
                    )
                }))
                .map_err(plot_error)?
                .label(Tier::ALL[tier].name())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled())
                });
        }
        axis.draw_changes(&mut chart)?;
        legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn each_commit_stacks_its_three_tiers() {
        let axis = CommitAxis {
            commits: (0..3).map(|i| format!("c{i}")).collect(),
            changes: vec![2],
        };
        let shares = [(0, [0.4, 0.2, 0.4]), (2, [0.5, 0.2, 0.3])];
        let svg = draw(&shares, &axis, &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // A bar per tier per commit, and a legend box per tier.
        for colour in ["#2CA02C", "#BCBD22", "#D62728"] {
            assert_eq!(
                count(&svg, &format!("fill=\"{colour}\"")),
                2 + 1,
                "{colour}: {svg}"
            );
        }
        for tier in Tier::ALL {
            assert!(svg.contains(tier.name()));
        }
        assert_eq!(count(&svg, "stroke=\"#9467BD\""), 2, "{svg}");
    }
}
