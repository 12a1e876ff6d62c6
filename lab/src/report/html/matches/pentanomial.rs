//! The pentanomial counts of a match: how many game pairs B lost both games of (LL), scored
//! ½, 1, 1½ or won both (WW), as bars with their counts.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::games::sprt::PENTANOMIAL_CELLS;
use crate::report::html::plot::{
    cell_ticks, count_ticks, plot_error, svg, ticked, Footer, FONT, TEXT,
};

/// From B's worst pair to its best: red, light red, grey, light green, green.
pub(crate) const CELL_COLOURS: [RGBColor; 5] = [
    RGBColor(0xD6, 0x27, 0x28),
    RGBColor(0xF0, 0x9A, 0x8F),
    RGBColor(0xA0, 0xA0, 0xA0),
    RGBColor(0x98, 0xDF, 0x8A),
    RGBColor(0x2C, 0xA0, 0x2C),
];
/// B's points in a pair of each cell.
const CELL_POINTS: [&str; 5] = ["0", "½", "1", "1½", "2"];

pub(crate) fn draw(counts: &[u64; 5], footer: &Footer) -> Result<String> {
    let pairs: u64 = counts.iter().sum();
    let top = counts.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.15;
    svg((900, 400), footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("Pentanomial counts: B's score in each of {pairs} game pairs"),
                (FONT, 18),
            )
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(
                ticked(-0.5f64..4.5, cell_ticks(5)),
                ticked(0.0..top, count_ticks(top, 8)),
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .disable_x_mesh()
            .x_desc("B's results in the pair (B's points in the pair)")
            .y_desc("pairs (count)")
            .x_label_formatter(&|x| {
                let cell = x.round();
                if (x - cell).abs() < 1e-6 && (0.0..5.0).contains(&cell) {
                    let cell = cell as usize;
                    format!("{} ({})", PENTANOMIAL_CELLS[cell], CELL_POINTS[cell])
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()
            .map_err(plot_error)?;
        chart
            .draw_series(counts.iter().enumerate().map(|(cell, count)| {
                let x = cell as f64;
                Rectangle::new(
                    [(x - 0.35, 0.0), (x + 0.35, *count as f64)],
                    CELL_COLOURS[cell].filled(),
                )
            }))
            .map_err(plot_error)?;
        chart
            .draw_series(counts.iter().enumerate().map(|(cell, count)| {
                Text::new(
                    count.to_string(),
                    (cell as f64, *count as f64 + top * 0.01),
                    (FONT, TEXT)
                        .into_font()
                        .into_text_style(area)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))
            .map_err(plot_error)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    /// Two pairs put the top at 2.3: plotters' own ticks, 0.5 apart, read "0, 0, 1, 2, 2".
    #[test]
    fn the_count_axis_reads_whole_numbers_once_each() {
        let svg = draw(&[0, 2, 0, 0, 0], &test_footer()).unwrap();
        // The y ticks are the right-aligned texts; the bars' counts are centred.
        let ticks = crate::report::html::plot::texts_with(&svg, "text-anchor=\"end\"");
        assert_eq!(ticks, ["0", "1", "2"], "{svg}");
        crate::report::html::plot::assert_readable(&svg);
    }

    #[test]
    fn one_bar_per_cell_with_its_count() {
        let svg = draw(&[3, 17, 40, 12, 1], &test_footer()).unwrap();
        for colour in CELL_COLOURS {
            let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", colour.0, colour.1, colour.2);
            assert_eq!(count(&svg, &fill), 1, "{fill}: {svg}");
        }
        for label in [
            "LL (0)",
            "LD (½)",
            "DD+WL (1)",
            "WD (1½)",
            "WW (2)",
            ">\n17\n<",
            ">\n40\n<",
        ] {
            assert!(svg.contains(label), "{label}: {svg}");
        }
        assert!(svg.contains("each of 73 game pairs"));
        assert!(svg.contains("pairs (count)"));
    }
}
