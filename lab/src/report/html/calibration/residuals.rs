//! The residual histograms of a calibration as small multiples: one row per histogram set the
//! margin tables come from (super-lazy residual, lazy residual, king term), one panel per
//! bucket, 1-cp bins over the central range `calibration::figures` chose, with the table's
//! LO and HI entries in force and this calibration's values at the percentiles those entries
//! were chosen at drawn as vertical lines.

use anyhow::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::calibration::figures::{ResidualPanel, SHOWN_PERCENT};
use crate::report::html::compare::bootstrap::BAR_COLOUR;
use crate::report::html::plot::{count_ticks, plot_error, svg, ticked, Footer, FONT, TEXT};

/// The margin entries in force (red) and the chosen percentiles in this calibration (green):
/// tests count strokes of these colours.
pub(crate) const MARGIN_COLOUR: RGBColor = RGBColor(0xD6, 0x27, 0x28);
pub(crate) const PERCENTILE_COLOUR: RGBColor = RGBColor(0x2C, 0xA0, 0x2C);
const COLUMNS: usize = 8;
const HEADER: u32 = 64;
const ROW_TITLE: u32 = 24;
const ROW_HEIGHT: u32 = 190;

/// What each row is titled: its set, and for the king term the defending king's danger class
/// when the calibration has more than one.
fn row_title(set: &str, class: usize, king_classes: usize) -> String {
    match set {
        "super_lazy_residual" => {
            "Super-lazy residual (full − material, without king), by the side's own bucket"
                .to_string()
        }
        "lazy_residual" => {
            "Lazy residual (full − lazy baseline, without king), by the side's own bucket"
                .to_string()
        }
        _ if king_classes > 1 => {
            format!(
                "King term, danger class {class} of the defending king, by the attacker's bucket"
            )
        }
        _ => "King term, by the attacker's bucket".to_string(),
    }
}

/// `1234` as `1234`, `123456` as `123k`, `1234567` as `1.2M`: counts that fit a small axis.
fn compact(n: f64) -> String {
    match n {
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e4 => format!("{:.0}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

pub(crate) fn draw(panels: &[ResidualPanel], footer: &Footer) -> Result<String> {
    // One row per set, the king term's one per danger class.
    let mut sets: Vec<(&str, usize)> = panels.iter().map(|p| (p.set, p.class)).collect();
    sets.dedup();
    let king_classes = sets.iter().filter(|(set, _)| *set == "king").count();
    let height = HEADER
        + sets.len() as u32 * (ROW_TITLE + ROW_HEIGHT)
        + crate::report::html::plot::FOOTER_HEIGHT;
    svg((1240, height), footer, |area| {
        let (header, grid) = area.split_vertically(HEADER);
        legend(&header)?;
        let rows = grid.split_evenly((sets.len().max(1), 1));
        for (&(set, class), row) in sets.iter().zip(rows) {
            let (title, cells) = row.split_vertically(ROW_TITLE);
            title
                .draw_text(
                    &row_title(set, class, king_classes),
                    &(FONT, TEXT).into_font().color(&BLACK),
                    (8, 6),
                )
                .map_err(plot_error)?;
            let in_row = panels.iter().filter(|p| p.set == set && p.class == class);
            for (panel, cell) in in_row.zip(cells.split_evenly((1, COLUMNS))) {
                draw_panel(panel, &cell)?;
            }
        }
        Ok(())
    })
}

fn legend(area: &DrawingArea<SVGBackend, Shift>) -> Result<()> {
    area.draw_text(
        &format!(
            "Residual histograms, 1-cp bins: the central {SHOWN_PERCENT}% of each bucket's samples \
             (\"clipped L | R\": samples beyond it on the left and right)"
        ),
        &(FONT, 17).into_font().color(&BLACK),
        (8, 6),
    )
    .map_err(plot_error)?;
    let entries = [
        (BAR_COLOUR, 8, "samples per 1-cp bin (count)"),
        (
            MARGIN_COLOUR,
            2,
            "margin table entries in force (LO, HI) in the revision's margins.rs",
        ),
        (
            PERCENTILE_COLOUR,
            2,
            "this calibration at the percentiles those entries were chosen at",
        ),
    ];
    let mut x = 10;
    for (colour, width, text) in entries {
        area.draw(&PathElement::new(
            vec![(x, 40), (x + 22, 40)],
            colour.stroke_width(width),
        ))
        .map_err(plot_error)?;
        area.draw_text(text, &(FONT, TEXT).into_font().color(&BLACK), (x + 28, 33))
            .map_err(plot_error)?;
        x += 40 + 7 * text.len() as i32;
    }
    Ok(())
}

fn draw_panel(panel: &ResidualPanel, area: &DrawingArea<SVGBackend, Shift>) -> Result<()> {
    let (from, to) = (f64::from(panel.range.0), f64::from(panel.range.1));
    let top = panel.counts.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.12;
    let chosen = panel
        .chosen
        .map_or(String::new(), |([lo, hi], _)| format!(" · p{lo}/p{hi}"));
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "bucket {} · {}{chosen}",
                panel.bucket,
                compact(panel.samples as f64)
            ),
            (FONT, TEXT),
        )
        .margin(4)
        .x_label_area_size(30)
        .y_label_area_size(36)
        .build_cartesian_2d(from - 0.5..to + 0.5, ticked(0.0..top, count_ticks(top, 4)))
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .label_style((FONT, TEXT))
        .axis_desc_style((FONT, TEXT))
        .disable_mesh()
        .x_labels(4)
        .x_desc("cp")
        .y_desc("samples")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| compact(*y))
        .draw()
        .map_err(plot_error)?;
    if panel.samples == 0 {
        return Ok(());
    }
    // One polygon of steps rather than a rectangle per bin: the page stays small.
    let mut outline = vec![(from - 0.5, 0.0)];
    for (value, &count) in (panel.range.0..=panel.range.1).zip(&panel.counts) {
        let value = f64::from(value);
        outline.push((value - 0.5, count as f64));
        outline.push((value + 0.5, count as f64));
    }
    outline.push((to + 0.5, 0.0));
    chart
        .draw_series([Polygon::new(outline, BAR_COLOUR.filled())])
        .map_err(plot_error)?;
    let vertical = |x: i32, colour: RGBColor, width: u32| {
        let x = f64::from(x);
        PathElement::new(vec![(x, 0.0), (x, top)], colour.stroke_width(width))
    };
    if let Some([lo, hi]) = panel.in_force {
        chart
            .draw_series([
                vertical(lo, MARGIN_COLOUR, 2),
                vertical(hi, MARGIN_COLOUR, 2),
            ])
            .map_err(plot_error)?;
    }
    if let Some((_, Some([lo, hi]))) = panel.chosen {
        chart
            .draw_series([
                vertical(lo, PERCENTILE_COLOUR, 1),
                vertical(hi, PERCENTILE_COLOUR, 1),
            ])
            .map_err(plot_error)?;
    }
    if panel.clipped != (0, 0) {
        let style = TextStyle::from((FONT, TEXT).into_font()).color(&RGBColor(0x55, 0x55, 0x55));
        chart
            .draw_series([EmptyElement::at((from - 0.5, top))
                + Text::new(
                    format!("clipped {} | {}", panel.clipped.0, panel.clipped.1),
                    (3, 2),
                    style,
                )])
            .map_err(plot_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    fn panel(set: &'static str, bucket: usize, lines: bool) -> ResidualPanel {
        ResidualPanel {
            set,
            class: 0,
            bucket,
            samples: 110,
            range: (-5, 5),
            counts: vec![1, 2, 5, 10, 20, 30, 20, 10, 5, 2, 1],
            clipped: (3, 1),
            chosen: lines.then_some(([5.0, 95.0], Some([-3, 3]))),
            in_force: lines.then_some([-4, 4]),
        }
    }

    #[test]
    fn every_panel_is_drawn_with_its_lines() {
        let panels: Vec<ResidualPanel> = ["lazy_residual", "king"]
            .into_iter()
            .flat_map(|set| (0..8).map(move |b| panel(set, b, b != 7)))
            .collect();
        let svg = draw(&panels, &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        assert_eq!(count(&svg, "<polygon"), 16, "one histogram per panel");
        // Two lines per panel with lines (7 of 8 in each row), plus the legend's sample.
        let stroke = |c: RGBColor| format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        assert_eq!(count(&svg, &stroke(MARGIN_COLOUR)), 2 * 14 + 1, "{svg}");
        assert_eq!(count(&svg, &stroke(PERCENTILE_COLOUR)), 2 * 14 + 1);
        assert_eq!(count(&svg, "clipped 3 | 1"), 16);
        assert!(svg.contains("bucket 6 · 110 · p5/p95"), "{svg}");
        assert!(svg.contains("King term"));
        // A king set of two danger classes: a row each.
        let by_class: Vec<ResidualPanel> = (0..2)
            .flat_map(|class| {
                (0..8).map(move |b| ResidualPanel {
                    class,
                    ..panel("king", b, true)
                })
            })
            .collect();
        let svg = draw(&by_class, &test_footer()).unwrap();
        assert_eq!(count(&svg, "<polygon"), 16);
        assert!(
            svg.contains("danger class 1 of the defending king"),
            "{svg}"
        );
    }

    #[test]
    fn counts_are_compact() {
        assert_eq!(compact(999.0), "999");
        assert_eq!(compact(123_456.0), "123k");
        assert_eq!(compact(1_234_567.0), "1.2M");
    }
}
