//! The 8×8 exit heatmap by side buckets: for each (own material bucket, opponent's bucket)
//! cell, the share of eval calls that exit in a cheap tier (super-lazy or lazy), for A, for B,
//! and B minus A in percentage points.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::plot::{plot_error, svg, Footer, FONT};

/// `[own][opponent]` cells, `None` where nothing was evaluated.
type Grid = Vec<Vec<Option<f64>>>;

pub const EMPTY: RGBColor = RGBColor(0xEE, 0xEE, 0xEE);

/// Cheap-tier exit share of each cell in percent, `None` for a cell never evaluated;
/// `[own][opponent]`.
pub fn cheap_shares(side_buckets: &[Vec<[u64; 3]>]) -> Grid {
    side_buckets
        .iter()
        .map(|row| {
            row.iter()
                .map(|exits| {
                    let total: u64 = exits.iter().sum();
                    (total > 0).then(|| (exits[0] + exits[1]) as f64 / total as f64 * 100.0)
                })
                .collect()
        })
        .collect()
}

pub fn share_colour(share: f64) -> RGBColor {
    // White (no cheap exits) to deep blue (all).
    let t = (share / 100.0).clamp(0.0, 1.0);
    let mix = |from: f64, to: f64| (from + (to - from) * t).round() as u8;
    RGBColor(
        mix(255.0, 0x08 as f64),
        mix(255.0, 0x30 as f64),
        mix(255.0, 0x6B as f64),
    )
}

fn delta_colour(delta: f64, scale: f64) -> RGBColor {
    // Blue where B exits more in the cheap tiers, red where it exits less.
    let t = (delta.abs() / scale).clamp(0.0, 1.0);
    let fade = |to: f64| (255.0 + (to - 255.0) * t).round() as u8;
    if delta >= 0.0 {
        RGBColor(fade(0x21 as f64), fade(0x66 as f64), fade(0xAC as f64))
    } else {
        RGBColor(fade(0xB2 as f64), fade(0x18 as f64), fade(0x2B as f64))
    }
}

pub fn draw(
    a: &[Vec<[u64; 3]>],
    b: &[Vec<[u64; 3]>],
    labels: (&str, &str),
    footer: &Footer,
) -> Result<String> {
    let (a, b) = (cheap_shares(a), cheap_shares(b));
    let delta: Grid = a
        .iter()
        .zip(&b)
        .map(|(a, b)| {
            a.iter()
                .zip(b)
                .map(|(a, b)| Some(b.as_ref()? - a.as_ref()?))
                .collect()
        })
        .collect();
    let scale = delta
        .iter()
        .flatten()
        .flatten()
        .fold(1.0f64, |max, d| max.max(d.abs()));
    let size = a.len().max(b.len()).max(1) as i32;
    svg((1200, 470), footer, |area| {
        let (title, panels) = area.split_vertically(36);
        title
            .titled(
                "Cheap-tier exits (super-lazy + lazy) by side material buckets, % of the cell's evals",
                (FONT, 18),
            )
            .map_err(plot_error)?;
        let maps: [(String, &Grid, bool); 3] = [
            (labels.0.to_string(), &a, false),
            (labels.1.to_string(), &b, false),
            ("B − A (percentage points)".to_string(), &delta, true),
        ];
        for ((caption, cells, is_delta), panel) in maps.iter().zip(panels.split_evenly((1, 3))) {
            let mut chart = ChartBuilder::on(&panel)
                .caption(caption, (FONT, 16))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(45)
                .build_cartesian_2d(0..size, 0..size)
                .map_err(plot_error)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .x_desc("opponent's material bucket")
                .y_desc("own material bucket")
                .x_labels(size as usize + 1)
                .y_labels(size as usize + 1)
                .draw()
                .map_err(plot_error)?;
            // Cell values are centred in their cells: an offset in pixels from the cell's corner.
            let (xs, ys) = chart.plotting_area().get_pixel_range();
            let centre = (
                (xs.end - xs.start) / size / 2,
                (ys.end - ys.start) / size / 2,
            );
            let mut rects = Vec::new();
            let mut texts = Vec::new();
            for (own, row) in cells.iter().enumerate() {
                for (opponent, value) in row.iter().enumerate() {
                    let (x, y) = (opponent as i32, own as i32);
                    let colour = match value {
                        None => EMPTY,
                        Some(v) if *is_delta => delta_colour(*v, scale),
                        Some(v) => share_colour(*v),
                    };
                    rects.push(Rectangle::new([(x, y), (x + 1, y + 1)], colour.filled()));
                    if let Some(v) = value {
                        let dark = !is_delta && *v > 55.0;
                        let text = if *is_delta {
                            format!("{v:+.0}")
                        } else {
                            format!("{v:.0}")
                        };
                        let style = TextStyle::from((FONT, 13).into_font())
                            .color(if dark { &WHITE } else { &BLACK })
                            .pos(Pos::new(HPos::Center, VPos::Center));
                        texts.push(EmptyElement::at((x, y + 1)) + Text::new(text, centre, style));
                    }
                }
            }
            chart.draw_series(rects).map_err(plot_error)?;
            chart.draw_series(texts).map_err(plot_error)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::super::plot::{count, test_footer};
    use super::*;

    fn grid(empty_cell: bool) -> Vec<Vec<[u64; 3]>> {
        (0..8)
            .map(|own| {
                (0..8)
                    .map(|opp| {
                        if empty_cell && own == 0 && opp == 0 {
                            [0, 0, 0]
                        } else {
                            [own * 10, opp * 10, 100]
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_cell_of_each_map_is_drawn() {
        let svg = draw(
            &grid(false),
            &grid(true),
            ("A = x", "B = y"),
            &test_footer(),
        )
        .unwrap();
        // The background, then 64 cells in each of the three maps.
        assert_eq!(count(&svg, "<rect"), 1 + 3 * 64, "{svg}");
        // The empty cell is grey in B and in the difference, and has no value.
        assert_eq!(count(&svg, "fill=\"#EEEEEE\""), 2);
        // Cell (7, 7): 140 cheap exits of 240 calls.
        assert!(svg.contains(">\n58\n</text>"), "{svg}");
        assert!(svg.contains("own material bucket"));
    }

    #[test]
    fn shares_count_the_cheap_tiers() {
        let shares = cheap_shares(&[vec![[1, 1, 2], [0, 0, 0]]]);
        assert_eq!(shares, vec![vec![Some(50.0), None]]);
    }
}
