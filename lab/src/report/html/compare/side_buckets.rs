//! The 8×8 exit heatmap by side buckets: for each (own material bucket, opponent's bucket)
//! cell, the share of eval calls that exit in a cheap tier (super-lazy or lazy), for A, for B,
//! and B minus A in percentage points.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::report::html::plot::{plot_error, svg, Footer, FONT, TEXT};

/// `[own][opponent]` cells, `None` where nothing was evaluated.
type Grid = Vec<Vec<Option<f64>>>;

pub(crate) const EMPTY: RGBColor = RGBColor(0xEE, 0xEE, 0xEE);

/// Cheap-tier exit share of each cell in percent, `None` for a cell never evaluated;
/// `[own][opponent]`.
pub(crate) fn cheap_shares(side_buckets: &[Vec<[u64; 3]>]) -> Grid {
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

pub(crate) fn share_colour(share: f64) -> RGBColor {
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

pub(crate) fn draw(
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
                // Segmented axes put each bucket's tick at the centre of its cells; a
                // segmented range holds its end too: 0..=size-1 is `size` cells.
                .build_cartesian_2d(
                    (0..size - 1).into_segmented(),
                    (0..size - 1).into_segmented(),
                )
                .map_err(plot_error)?;
            chart
                .configure_mesh()
                .label_style((FONT, TEXT))
                .axis_desc_style((FONT, TEXT))
                .disable_mesh()
                .x_desc("opponent's material bucket")
                .y_desc("own material bucket")
                .x_labels(size as usize)
                .y_labels(size as usize)
                .x_label_formatter(&bucket_label)
                .y_label_formatter(&bucket_label)
                .draw()
                .map_err(plot_error)?;
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
                    rects.push(Rectangle::new(
                        [
                            (SegmentValue::Exact(x), SegmentValue::Exact(y)),
                            (SegmentValue::Exact(x + 1), SegmentValue::Exact(y + 1)),
                        ],
                        colour.filled(),
                    ));
                    if let Some(v) = value {
                        let dark = !is_delta && *v > 55.0;
                        let text = if *is_delta {
                            format!("{v:+.0}")
                        } else {
                            format!("{v:.0}")
                        };
                        let style = TextStyle::from((FONT, TEXT).into_font())
                            .color(if dark { &WHITE } else { &BLACK })
                            .pos(Pos::new(HPos::Center, VPos::Center));
                        texts.push(Text::new(
                            text,
                            (SegmentValue::CenterOf(x), SegmentValue::CenterOf(y)),
                            style,
                        ));
                    }
                }
            }
            chart.draw_series(rects).map_err(plot_error)?;
            chart.draw_series(texts).map_err(plot_error)?;
        }
        Ok(())
    })
}

/// A bucket's tick: its number at the centre of its cells, nothing at the cells' edges.
fn bucket_label(value: &SegmentValue<i32>) -> String {
    match value {
        SegmentValue::CenterOf(bucket) => bucket.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

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

    /// The value of attribute `name` in an SVG element's text.
    fn attribute(element: &str, name: &str) -> Option<f64> {
        element
            .split(&format!(" {name}=\""))
            .nth(1)?
            .split('"')
            .next()?
            .parse()
            .ok()
    }

    #[test]
    fn bucket_ticks_sit_at_cell_centres() {
        let svg = draw(
            &grid(false),
            &grid(false),
            ("A = x", "B = y"),
            &test_footer(),
        )
        .unwrap();
        let centres: Vec<f64> = svg
            .split("<rect")
            .skip(2)
            .filter_map(|rect| Some(attribute(rect, "x")? + attribute(rect, "width")? / 2.0))
            .collect();
        let ticks: Vec<f64> = svg
            .split("<text")
            .skip(1)
            .filter(|text| text.contains("text-anchor=\"middle\""))
            .filter(|text| {
                let content = text.split('>').nth(1).unwrap_or("").trim_start();
                content.starts_with(|c: char| c.is_ascii_digit())
                    && content.split('<').next().unwrap().trim().len() == 1
            })
            .filter_map(|text| attribute(text, "x"))
            .collect();
        assert!(ticks.len() >= 3 * 8, "{ticks:?}: {svg}");
        for tick in ticks {
            assert!(
                centres.iter().any(|centre| (centre - tick).abs() <= 1.0),
                "a tick at x = {tick} is at no cell's centre: {svg}"
            );
        }
        crate::report::html::plot::assert_readable(&svg);
    }

    #[test]
    fn shares_count_the_cheap_tiers() {
        let shares = cheap_shares(&[vec![[1, 1, 2], [0, 0, 0]]]);
        assert_eq!(shares, vec![vec![Some(50.0), None]]);
    }
}
