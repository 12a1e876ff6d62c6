//! The exit-rate heatmap of a calibration: tier × material bucket, each cell the share of the
//! bucket's eval calls that exit in the tier (`calibration::figures::exit_shares`), labelled
//! with its value. The calibration file counts exits by material bucket only, not by side
//! buckets.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use squall::tier::Tier;

use crate::report::html::compare::side_buckets::{share_colour, EMPTY};
use crate::report::html::plot::{plot_error, svg, Footer, FONT, TEXT};

/// `shares[tier][bucket]` as fractions, `None` for a bucket never evaluated.
pub(crate) fn draw(shares: &[Vec<Option<f64>>; 3], footer: &Footer) -> Result<String> {
    let buckets = shares.iter().map(Vec::len).max().unwrap_or(0).max(1) as i32;
    svg((1000, 330), footer, |area| {
        // Segmented axes put each label at the centre of its cell, not on the cell's edge.
        let mut chart = ChartBuilder::on(area)
            .caption(
                "Exit rate: share of each material bucket's eval calls that exit in each tier, %",
                (FONT, 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(90)
            // A segmented range holds its end too: 0..=7 is eight cells.
            .build_cartesian_2d((0..buckets - 1).into_segmented(), (0..2).into_segmented())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .disable_mesh()
            .x_desc("material bucket")
            .y_desc("tier exited in")
            .x_labels(buckets as usize)
            .y_labels(3)
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(b) => b.to_string(),
                _ => String::new(),
            })
            // Row 2 - t holds tier t, so the cheapest tier reads first, at the top.
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(row) => usize::try_from(2 - *row)
                    .ok()
                    .and_then(|t| Tier::ALL.get(t))
                    .map_or(String::new(), |tier| tier.name().to_string()),
                _ => String::new(),
            })
            .draw()
            .map_err(plot_error)?;
        let mut rects = Vec::new();
        let mut texts = Vec::new();
        for (tier, row) in shares.iter().enumerate() {
            let y = 2 - tier as i32;
            for (bucket, share) in row.iter().enumerate() {
                let x = bucket as i32;
                let colour = share.map_or(EMPTY, |s| share_colour(s * 100.0));
                rects.push(Rectangle::new(
                    [
                        (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                        (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
                    ],
                    colour.filled(),
                ));
                if let Some(s) = share {
                    let style = TextStyle::from((FONT, TEXT).into_font())
                        .color(if *s > 0.55 { &WHITE } else { &BLACK })
                        .pos(Pos::new(HPos::Center, VPos::Center));
                    texts.push(Text::new(
                        format!("{:.1}", s * 100.0),
                        (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)),
                        style,
                    ));
                }
            }
        }
        chart.draw_series(rects).map_err(plot_error)?;
        chart.draw_series(texts).map_err(plot_error)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn every_cell_is_drawn_and_labelled() {
        let mut shares: [Vec<Option<f64>>; 3] = [
            vec![Some(0.625); 8],
            vec![Some(0.25); 8],
            vec![Some(0.125); 8],
        ];
        for row in &mut shares {
            row[3] = None;
        }
        let svg = draw(&shares, &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        // The background, then 24 cells.
        assert_eq!(count(&svg, "<rect"), 1 + 24, "{svg}");
        assert_eq!(
            count(&svg, "fill=\"#EEEEEE\""),
            3,
            "bucket 3 was never evaluated"
        );
        assert_eq!(count(&svg, ">\n62.5\n</text>"), 7, "{svg}");
        assert_eq!(count(&svg, ">\n12.5\n</text>"), 7);
        assert!(svg.contains("super-lazy") && svg.contains("material bucket"));
    }
}
