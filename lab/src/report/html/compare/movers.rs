//! The top function movers of `compare --functions`: one horizontal bar per function, its
//! change of self cost (callgrind `Ir`) from A to B in percent of A's total.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::model::Mover;
use crate::report::html::plot::{padded, plot_error, svg, Footer, FONT, TEXT};

/// B costs more (red) or less (green) in the function.
pub(crate) const MORE: RGBColor = RGBColor(0xC4, 0x3C, 0x39);
pub(crate) const LESS: RGBColor = RGBColor(0x3A, 0x8F, 0x3A);
/// Function names past this many characters are cut (with an ellipsis) to fit the axis.
const NAME_CHARS: usize = 60;

fn short(name: &str) -> String {
    crate::input::excerpt(name, NAME_CHARS).into_owned()
}

pub(crate) fn draw(movers: &[Mover], depth: Option<u32>, footer: &Footer) -> Result<String> {
    let n = movers.len().max(1);
    let extreme = movers
        .iter()
        .map(|m| m.self_delta_pct_of_total.abs())
        .fold(0.0f64, f64::max);
    let (lo, hi) = padded(-extreme, extreme, 0.1);
    let names: Vec<String> = movers.iter().map(|m| short(&m.function)).collect();
    let height = 120 + 30 * n as u32;
    let depth = depth.map_or_else(|| "the default bench".to_string(), |d| format!("depth {d}"));
    svg((1100, height.max(260)), footer, |area| {
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("Top function movers: change of self instructions, B − A ({depth})"),
                (FONT, 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(430)
            .build_cartesian_2d(lo..hi, (0..n).into_segmented())
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .label_style((FONT, TEXT))
            .axis_desc_style((FONT, TEXT))
            .disable_y_mesh()
            .x_desc("self Ir change (% of A's total Ir)")
            .y_desc("function")
            .y_labels(n)
            .y_label_formatter(&|y| match y {
                // The segmented axis may ask for a label past its last row.
                SegmentValue::CenterOf(i) => (n - 1)
                    .checked_sub(*i)
                    .and_then(|row| names.get(row).cloned())
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .x_label_formatter(&|x| format!("{x:+.2}%"))
            .draw()
            .map_err(plot_error)?;
        // The largest mover on top.
        chart
            .draw_series(movers.iter().enumerate().map(|(i, mover)| {
                let row = n - 1 - i;
                let colour = if mover.self_delta > 0 { MORE } else { LESS };
                Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(row)),
                        (mover.self_delta_pct_of_total, SegmentValue::Exact(row + 1)),
                    ],
                    colour.filled(),
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

    #[test]
    fn every_mover_is_a_named_bar() {
        let movers: Vec<Mover> = [("eval::full", 500, 1.2), ("search::<qs>", -200, -0.5)]
            .into_iter()
            .chain(std::iter::once(("movegen", 100, 0.25)))
            .map(|(name, delta, pct)| Mover {
                function: name.to_string(),
                self_delta: delta,
                self_delta_pct_of_total: pct,
            })
            .collect();
        let svg = draw(&movers, Some(6), &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        assert_eq!(count(&svg, "fill=\"#C43C39\""), 2, "{svg}");
        assert_eq!(count(&svg, "fill=\"#3A8F3A\""), 1);
        assert!(svg.contains("eval::full"));
        assert!(svg.contains("search::&lt;qs&gt;"), "names are escaped");
        assert!(svg.contains("depth 6"));
        assert_eq!(short(&"x".repeat(80)).chars().count(), NAME_CHARS);
    }

    #[test]
    fn any_number_of_movers_is_drawn() {
        for n in 1..=12 {
            let movers: Vec<Mover> = (0..n)
                .map(|i| Mover {
                    function: format!("f{i}"),
                    self_delta: 100 - i as i64 * 20,
                    self_delta_pct_of_total: 1.0 - i as f64 * 0.2,
                })
                .collect();
            let svg = draw(&movers, None, &test_footer()).unwrap();
            let bars = count(&svg, "fill=\"#C43C39\"") + count(&svg, "fill=\"#3A8F3A\"");
            assert_eq!(bars, n, "{svg}");
        }
    }
}
