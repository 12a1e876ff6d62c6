//! The page of `lab frontier` (`--export-html`, `lab report` of its JSON): the Elo of each
//! margin-table level over its worst exceeded bound, and the frontier's table with the
//! sentence naming the Elo-optimal level. The cells are those of the terminal table.

pub(crate) mod elo_frontier;

use std::fmt::Write as _;

use anyhow::{Context, Result};

use crate::report::frontier::{cells, optimal_sentence, revision, title, COLUMNS, LEGEND};
use crate::report::html::plot::Footer;
use crate::report::html::{escape, fact, head, section};
use crate::report::style::Style;
use crate::verdict::frontier::FrontierReport;
use elo_frontier::Point;

pub(crate) fn page(value: &serde_json::Value) -> Result<String> {
    let report: FrontierReport =
        serde_json::from_value(value.clone()).context("a frontier JSON without its fields")?;
    let reference = revision(&report.reference.engine);
    let footer = Footer(format!(
        "reference A = {reference} · lab frontier at {}",
        report.tc
    ));
    let mut html = head(&title(&report, Style::Terminal));
    let rows = report.rows();
    let _ = write!(
        html,
        "<table class=\"facts\">\n{}{}{}</table>\n",
        fact(
            "reference",
            &format!("{} = A = {reference}", report.reference.label)
        ),
        fact("time control", &report.tc),
        fact("optimum", &optimal_sentence(&report, Style::Terminal)),
    );

    let points: Vec<Point> = rows
        .iter()
        .filter_map(|row| {
            let upper = row.safety.as_ref()?.worst_exceeded.as_ref()?.upper;
            Some(Point {
                label: &row.label,
                x: upper * 100.0,
                total: row.total_elo.value,
                total_ci: row.total_elo.ci_low.zip(row.total_elo.ci_high),
                search: row.search_elo.value,
                speed: row.speed_elo.value,
            })
        })
        .collect();
    let unplaced: Vec<&str> = rows
        .iter()
        .filter(|row| {
            row.safety
                .as_ref()
                .and_then(|s| s.worst_exceeded.as_ref())
                .is_none()
        })
        .map(|row| row.label.as_str())
        .collect();
    let mut text = "Each level's total Elo against the reference (its 95% interval as a \
                    whisker), the search's Elo from fixed-node games and the speed's Elo from \
                    the verdict's speed (paired NPS, or callgrind instructions per node), over \
                    the level's worst exceeded bound."
        .to_string();
    if !unplaced.is_empty() {
        let _ = write!(
            text,
            " Not drawn, without a calibration: {}.",
            unplaced.join(", ")
        );
    }
    let plot = if points.is_empty() {
        None
    } else {
        Some(elo_frontier::draw(&points, &footer)?)
    };
    section(&mut html, "The frontier", &text, plot);

    html.push_str("<table class=\"figures\">\n<tr>");
    for column in COLUMNS {
        let _ = write!(html, "<th>{}</th>", escape(column));
    }
    html.push_str("</tr>\n");
    for row in &rows {
        html.push_str("<tr>");
        for cell in cells(row, std::ptr::eq(*row, &report.reference)) {
            let _ = write!(html, "<td>{}</td>", escape(&cell));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</table>\n");
    let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(LEGEND));
    html.push_str("</body>\n</html>\n");
    Ok(html)
}
