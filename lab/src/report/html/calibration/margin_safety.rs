//! Margin safety: per cheap tier and material bucket, the share of exits the full evaluation
//! contradicts (exceeded / exits), with its Wilson 95% interval as an error bar
//! (`calibration::figures`) against the 1% target line.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::calibration::figures::SafetyRate;
use crate::calibration::summary::TARGET_UPPER;
use crate::report::html::plot::{cell_ticks, plot_error, svg, ticked, Footer, FONT, TEXT};

/// Buckets whose upper bound is within the target (blue) and beyond it (red); the target line.
pub(crate) const SAFE_COLOUR: RGBColor = RGBColor(0x1F, 0x77, 0xB4);
pub(crate) const UNSAFE_COLOUR: RGBColor = RGBColor(0xD6, 0x27, 0x28);
pub(crate) const TARGET_COLOUR: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// The axis ends at most at this multiple of the target.
const CAP: f64 = 8.0;

pub(crate) fn draw(tiers: &[(&str, Vec<SafetyRate>)], footer: &Footer) -> Result<String> {
    // One axis for both tiers, so their rates compare at a glance: from 0 to at least 1.5 times
    // the target and at most CAP times it, where a bucket of few exits would flatten the
    // others; a bar beyond is cut at the top and its label gives its upper bound.
    let highest = tiers
        .iter()
        .flat_map(|(_, rates)| rates.iter().filter_map(|r| r.rate.map(|(_, _, high)| high)))
        .fold(TARGET_UPPER * 1.5, f64::max)
        .min(TARGET_UPPER * CAP);
    let top = highest * 100.0 * 1.2;
    svg((1200, 440), footer, |area| {
        let (title, panels) = area.split_vertically(36);
        title
            .titled(
                "Margin safety: exits the full evaluation contradicts, % of the tier's exits (Wilson 95% interval)",
                (FONT, 18),
            )
            .map_err(plot_error)?;
        for ((tier, rates), panel) in tiers
            .iter()
            .zip(panels.split_evenly((1, tiers.len().max(1))))
        {
            let buckets = rates.len().max(1) as f64;
            let mut chart = ChartBuilder::on(&panel)
                .caption(format!("{tier} tier"), (FONT, 16))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(
                    ticked(-0.5..buckets - 0.5, cell_ticks(rates.len())),
                    0.0..top,
                )
                .map_err(plot_error)?;
            chart
                .configure_mesh()
                .label_style((FONT, TEXT))
                .axis_desc_style((FONT, TEXT))
                .x_desc("material bucket")
                .y_desc("exceeded rate (% of exits)")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.1}%"))
                .draw()
                .map_err(plot_error)?;
            // The target line is labelled at its right end rather than in a legend box, which
            // would hide the bars of the last buckets.
            let target = TARGET_UPPER * 100.0;
            let target_style = TextStyle::from((FONT, TEXT).into_font())
                .color(&TARGET_COLOUR)
                .pos(Pos::new(HPos::Right, VPos::Bottom));
            chart
                .draw_series([PathElement::new(
                    vec![(-0.5, target), (buckets - 0.5, target)],
                    TARGET_COLOUR.stroke_width(1),
                )])
                .map_err(plot_error)?;
            chart
                .draw_series([EmptyElement::at((buckets - 0.5, target))
                    + Text::new(
                        format!("target: upper bound ≤ {target}%"),
                        (-4, -3),
                        target_style,
                    )])
                .map_err(plot_error)?;
            let colour = |high: f64| {
                if high > TARGET_UPPER {
                    UNSAFE_COLOUR
                } else {
                    SAFE_COLOUR
                }
            };
            let label_style = TextStyle::from((FONT, TEXT).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            let mut bars = Vec::new();
            let mut points = Vec::new();
            let mut labels = Vec::new();
            for r in rates {
                let x = r.bucket as f64;
                let Some((rate, low, high)) = r.rate else {
                    labels.push(
                        EmptyElement::at((x, 0.0))
                            + Text::new("no exits".to_string(), (0, -4), label_style.clone()),
                    );
                    continue;
                };
                let c = colour(high);
                let cut = (high * 100.0 > top).then_some(high * 100.0);
                let (rate, low, high) = (rate * 100.0, low * 100.0, (high * 100.0).min(top));
                bars.push(PathElement::new(
                    vec![(x, low), (x, high)],
                    c.stroke_width(2),
                ));
                for y in [low, high] {
                    bars.push(PathElement::new(
                        vec![(x - 0.12, y), (x + 0.12, y)],
                        c.stroke_width(2),
                    ));
                }
                points.push(Circle::new((x, rate), 4, c.filled()));
                // A cut bar's label goes beside its top, under the panel's caption.
                let (text, offset, style) = match cut {
                    Some(upper) => (
                        format!("{}/{} (upper {upper:.1}%)", r.exceeded, r.exits),
                        (8, 2),
                        label_style.pos(Pos::new(HPos::Left, VPos::Top)),
                    ),
                    None => (
                        format!("{}/{}", r.exceeded, r.exits),
                        (0, -4),
                        label_style.clone(),
                    ),
                };
                labels.push(EmptyElement::at((x, high)) + Text::new(text, offset, style));
            }
            chart.draw_series(bars).map_err(plot_error)?;
            chart.draw_series(points).map_err(plot_error)?;
            chart.draw_series(labels).map_err(plot_error)?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};
    use squall::calibrate::stats::{wilson_interval, Z95};

    fn rate(bucket: usize, exceeded: u64, exits: u64) -> SafetyRate {
        let (low, high) = wilson_interval(exceeded, exits, Z95);
        SafetyRate {
            bucket,
            exceeded,
            exits,
            rate: (exits > 0).then(|| (exceeded as f64 / exits as f64, low, high)),
        }
    }

    #[test]
    fn every_bucket_gets_a_bar_coloured_by_its_upper_bound() {
        let safe: Vec<SafetyRate> = (0..8).map(|b| rate(b, 1, 10_000)).collect();
        let mut mixed: Vec<SafetyRate> = (0..7).map(|b| rate(b, 30, 1000)).collect();
        mixed.push(rate(7, 0, 0));
        let svg = draw(&[("super-lazy", safe), ("lazy", mixed)], &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        let fill = |c: RGBColor| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        assert_eq!(count(&svg, "<circle"), 15, "{svg}");
        assert_eq!(count(&svg, &fill(SAFE_COLOUR)), 8);
        assert_eq!(count(&svg, &fill(UNSAFE_COLOUR)), 7);
        assert!(svg.contains("no exits"));
        assert!(svg.contains("30/1000"));
        assert!(svg.contains("target: upper bound ≤ 1%"));
        // 0 of 18 exits: an upper bound of 17.6%, beyond the axis, is cut and stated.
        let few = draw(
            &[("lazy", vec![rate(0, 0, 18), rate(1, 1, 1000)])],
            &test_footer(),
        )
        .unwrap();
        assert!(few.contains("0/18 (upper 17.6%)"), "{few}");
        assert!(few.contains(">\n1/1000\n<"), "{few}");
    }
}
