//! Instructions per node over commits (callgrind `Ir`, start-up subtracted): one line, since
//! instruction counts depend on the binary and not on the machine that counted them.

use anyhow::Result;

use crate::report::html::history::commit_axis::{
    decimals, draw_line, legend, value_range, CommitAxis,
};
use crate::report::html::plot::{svg, Footer, A_COLOUR};

/// `(commit index, instructions per node)`, oldest first; commits without a count are absent.
pub(crate) fn draw(
    points: &[(usize, f64)],
    depth: u32,
    axis: &CommitAxis,
    footer: &Footer,
) -> Result<String> {
    let y = value_range(points.iter().map(|p| p.1));
    let places = decimals(&y);
    let label = format!("instructions per node at depth {depth}");
    svg((1200, 400), footer, |area| {
        let mut chart = axis.chart(
            area,
            "Instructions per node per commit",
            "instructions per node (callgrind Ir)",
            y,
            &|v| format!("{v:.places$}"),
            &[&label],
        )?;
        let points: Vec<(f64, f64)> = points.iter().map(|(i, v)| (*i as f64, *v)).collect();
        draw_line(&mut chart, points, A_COLOUR, &label)?;
        axis.draw_changes(&mut chart)?;
        legend(&mut chart)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::html::plot::{count, test_footer};

    #[test]
    fn a_point_per_counted_commit_and_a_marker_per_change() {
        let axis = CommitAxis {
            commits: (0..4).map(|i| format!("c{i}")).collect(),
            changes: vec![1, 3],
        };
        let svg = draw(
            &[(0, 1800.0), (1, 1850.0), (3, 1790.0)],
            6,
            &axis,
            &test_footer(),
        )
        .unwrap();
        assert_eq!(count(&svg, "<circle"), 3, "{svg}");
        // Two markers and the legend's.
        assert_eq!(count(&svg, "stroke=\"#9467BD\""), 3, "{svg}");
        assert!(svg.contains("at depth 6"));
        assert!(svg.contains("callgrind Ir"));
    }
}
