//! NPS over commits, one line per machine: this machine's series and every other machine of
//! the store measured with the same toolchain and settings (`history::machines`). Lines of
//! different machines are not comparable in level, only in shape: a change every machine sees
//! is the code's, one machine alone moving is that machine's.

use anyhow::Result;
use plotters::prelude::*;

use crate::report::html::history::commit_axis::{
    decimals, draw_line, legend, value_range, CommitAxis,
};
use crate::report::html::plot::{svg, Footer, A_COLOUR, B_COLOUR};

/// One colour per machine, this machine's first; none is the signature markers' purple.
pub(crate) const PALETTE: [RGBColor; 6] = [
    A_COLOUR,
    B_COLOUR,
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0xD6, 0x27, 0x28),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0x17, 0xBE, 0xCF),
];

pub(crate) struct Line {
    pub(crate) label: String,
    /// `(commit index, NPS)`, oldest first; commits the machine did not measure are absent.
    pub(crate) points: Vec<(usize, f64)>,
    /// `(commit index, lowest run, highest run)`: the error bars of the points whose runs the
    /// JSON has (this machine's).
    pub(crate) spreads: Vec<(usize, f64, f64)>,
}

/// Half the width of an error bar's caps, in commits.
const CAP: f64 = 0.12;

/// Thousands or millions, whichever reads better at `top`.
fn scale(top: f64) -> (f64, &'static str) {
    if top >= 1e6 {
        (1e6, "NPS (million nodes/s, median of the rounds)")
    } else {
        (1e3, "NPS (thousand nodes/s, median of the rounds)")
    }
}

pub(crate) fn draw(lines: &[Line], axis: &CommitAxis, footer: &Footer) -> Result<String> {
    let all = || {
        lines.iter().flat_map(|line| {
            line.points
                .iter()
                .map(|p| p.1)
                .chain(line.spreads.iter().flat_map(|&(_, low, high)| [low, high]))
        })
    };
    let (unit, y_desc) = scale(all().fold(0.0, f64::max));
    let y = value_range(all().map(|nps| nps / unit));
    svg((1200, 440), footer, |area| {
        let caption = if lines.len() > 1 {
            format!("NPS per commit on {} machines", lines.len())
        } else {
            "NPS per commit".to_string()
        };
        let places = decimals(&y);
        let labels: Vec<&str> = lines.iter().map(|line| line.label.as_str()).collect();
        let mut chart = axis.chart(
            area,
            &caption,
            y_desc,
            y,
            &|v| format!("{v:.places$}"),
            &labels,
        )?;
        for (line, colour) in lines.iter().zip(PALETTE.iter().cycle()) {
            let points: Vec<(f64, f64)> = line
                .points
                .iter()
                .map(|(index, nps)| (*index as f64, nps / unit))
                .collect();
            draw_line(&mut chart, points, *colour, &line.label)?;
            let bars = line.spreads.iter().flat_map(|&(index, low, high)| {
                let (x, low, high) = (index as f64, low / unit, high / unit);
                [
                    vec![(x, low), (x, high)],
                    vec![(x - CAP, low), (x + CAP, low)],
                    vec![(x - CAP, high), (x + CAP, high)],
                ]
            });
            chart
                .draw_series(bars.map(|path| PathElement::new(path, colour.stroke_width(1))))
                .map_err(crate::report::html::plot::plot_error)?;
        }
        axis.draw_changes(&mut chart)?;
        legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::history::commit_axis::CHANGE_COLOUR;
    use crate::report::html::plot::{count, test_footer};

    fn axis(n: usize, changes: Vec<usize>) -> CommitAxis {
        CommitAxis {
            commits: (0..n).map(|i| format!("{i:07x}abc")).collect(),
            changes,
        }
    }

    #[test]
    fn each_machine_is_a_line_with_a_point_per_measured_commit() {
        let lines = [
            Line {
                label: "this box".to_string(),
                points: (0..5).map(|i| (i, 2.0e6 + i as f64 * 1e4)).collect(),
                spreads: Vec::new(),
            },
            Line {
                label: "ci runner".to_string(),
                points: vec![(1, 1.5e6), (3, 1.52e6)],
                spreads: Vec::new(),
            },
        ];
        let svg = draw(&lines, &axis(5, vec![2]), &test_footer()).unwrap();
        crate::report::html::plot::assert_readable(&svg);
        assert_eq!(count(&svg, "<circle"), 5 + 2, "{svg}");
        assert_eq!(count(&svg, "fill=\"#1F77B4\""), 5);
        assert_eq!(count(&svg, "fill=\"#FF7F0E\""), 2);
        // The change marker and its legend entry.
        let marker = format!(
            "stroke=\"#{:02X}{:02X}{:02X}\"",
            CHANGE_COLOUR.0, CHANGE_COLOUR.1, CHANGE_COLOUR.2
        );
        assert_eq!(count(&svg, &marker), 2, "{svg}");
        assert!(svg.contains("NPS per commit on 2 machines"));
        assert!(svg.contains("million nodes/s"));
        assert!(svg.contains("ci runner"));
        assert!(
            svg.contains(">\n0000002\n</text>"),
            "a tick names the commit: {svg}"
        );
    }

    #[test]
    fn each_spread_is_an_error_bar_with_caps() {
        let lines = [Line {
            label: "this box".to_string(),
            points: vec![(0, 2.0e6), (1, 2.1e6)],
            spreads: vec![(0, 1.9e6, 2.05e6), (1, 2.08e6, 2.2e6)],
        }];
        let svg = draw(&lines, &axis(2, Vec::new()), &test_footer()).unwrap();
        // Three thin strokes per bar in the line's colour (the line itself is 2 px wide).
        let strokes = count(&svg, "stroke=\"#1F77B4\" stroke-width=\"1\"");
        assert_eq!(strokes, 2 * 3, "{svg}");
    }

    #[test]
    fn without_changes_there_is_no_marker() {
        let lines = [Line {
            label: "x".to_string(),
            points: vec![(0, 900.0e3)],
            spreads: Vec::new(),
        }];
        let svg = draw(&lines, &axis(1, Vec::new()), &test_footer()).unwrap();
        assert!(!svg.contains("#9467BD"), "{svg}");
        assert!(!svg.contains("signature changed"));
        assert!(svg.contains("thousand nodes/s"));
    }
}
