//! Exit shares by tier and material bucket, A against B: one panel per tier, a pair of bars
//! per bucket (the share of that bucket's eval calls that exit in the tier).

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::model::Bucket;
use crate::report::html::plot::{
    cell_ticks, legend_row, plot_error, svg, ticked, Footer, A_COLOUR, B_COLOUR, FONT, TEXT,
};
use squall::tier::Tier;

/// Share of a bucket's calls exiting in `tier`, in percent (0 for a bucket never evaluated).
pub(crate) fn share(bucket: &Bucket, tier: usize) -> f64 {
    if bucket.total == 0 {
        0.0
    } else {
        bucket.exits[tier] as f64 / bucket.total as f64 * 100.0
    }
}

pub(crate) fn draw(
    a: &[Bucket],
    b: &[Bucket],
    labels: (&str, &str),
    footer: &Footer,
) -> Result<String> {
    let buckets = a.len().max(b.len()).max(1);
    svg((1200, 440), footer, |area| {
        // The legend has a row of its own under the title, outside every panel's bars.
        let (title, panels) = area.split_vertically(64);
        title
            .titled(
                "Eval exit share by tier and material bucket, A and B",
                (FONT, 20),
            )
            .map_err(plot_error)?;
        legend_row(&title, &[(A_COLOUR, labels.0), (B_COLOUR, labels.1)], 36)?;
        for (tier, panel) in panels.split_evenly((1, 3)).iter().enumerate() {
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("{} tier", Tier::ALL[tier].name()), (FONT, 16))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(55)
                .build_cartesian_2d(
                    ticked(-0.5f64..buckets as f64 - 0.5, cell_ticks(buckets)),
                    0.0f64..100.0,
                )
                .map_err(plot_error)?;
            chart
                .configure_mesh()
                .label_style((FONT, TEXT))
                .axis_desc_style((FONT, TEXT))
                .disable_x_mesh()
                .x_desc("material bucket")
                .y_desc("exits in the tier (% of the bucket's evals)")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.0}%"))
                .draw()
                .map_err(plot_error)?;
            for (side, colour, left) in [(a, A_COLOUR, -0.4), (b, B_COLOUR, 0.0)] {
                chart
                    .draw_series(side.iter().map(|bucket| {
                        let x = bucket.bucket as f64 + left;
                        Rectangle::new([(x, 0.0), (x + 0.4, share(bucket, tier))], colour.filled())
                    }))
                    .map_err(plot_error)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    fn buckets(scale: u64) -> Vec<Bucket> {
        (0..8)
            .map(|bucket| Bucket {
                bucket,
                exits: [bucket as u64 * scale, 10, 100],
                total: bucket as u64 * scale + 110,
            })
            .collect()
    }

    #[test]
    fn each_tier_has_a_bar_per_bucket_and_side() {
        let svg = draw(
            &buckets(10),
            &buckets(20),
            ("A = x", "B = y"),
            &test_footer(),
        )
        .unwrap();
        // 3 tiers × 8 buckets per side, and one legend box per side.
        assert_eq!(count(&svg, "fill=\"#1F77B4\""), 24 + 1, "{svg}");
        assert_eq!(count(&svg, "fill=\"#FF7F0E\""), 24 + 1);
        for tier in Tier::ALL {
            assert!(svg.contains(&format!("{} tier", tier.name())));
        }
        assert!(svg.contains("material bucket"));
    }

    #[test]
    fn an_empty_bucket_has_no_share() {
        let empty = Bucket {
            bucket: 0,
            exits: [0; 3],
            total: 0,
        };
        assert_eq!(share(&empty, 0), 0.0);
        assert_eq!(share(&buckets(10)[1], 0), 10.0 / 120.0 * 100.0);
    }
}
