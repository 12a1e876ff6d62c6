//! The `lab history` section: one row per commit, oldest first, with a marker where the
//! signature changed from the row before.

use super::sanitize::code_span;
use super::table::{Style, Table};
use super::thousands;
use crate::history::store::SeriesSettings;
use crate::history::{HistoryReport, HistoryRow};

/// Marks a signature that differs from the previous row's.
pub const CHANGED: &str = "◆";

/// Longest subject shown in full; longer ones are cut with an ellipsis.
const SUBJECT_WIDTH: usize = 48;

fn header(report: &HistoryReport) -> [String; 7] {
    [
        "commit".to_string(),
        "date".to_string(),
        "subject".to_string(),
        "signature (nodes)".to_string(),
        format!("NPS (median of {})", report.settings.rounds),
        "instructions per node".to_string(),
        "exits super-lazy / lazy / full".to_string(),
    ]
}

/// The subject cut to [`SUBJECT_WIDTH`]; the table shows it literally in either style.
fn subject(text: &str) -> String {
    let mut shown: String = text.chars().take(SUBJECT_WIDTH).collect();
    if text.chars().count() > SUBJECT_WIDTH {
        shown.push('…');
    }
    shown
}

fn row(row: &HistoryRow) -> [String; 7] {
    let signature = if row.signature_changed {
        format!("{CHANGED} {}", thousands(row.signature))
    } else {
        thousands(row.signature)
    };
    let exits = row.eval_rates.map_or_else(
        || "—".to_string(),
        |rates| {
            let [super_lazy, lazy, full] = rates.as_array().map(|rate| rate * 100.0);
            format!("{super_lazy:.1}% / {lazy:.1}% / {full:.1}%")
        },
    );
    [
        row.commit.short.clone(),
        row.commit.date.clone(),
        subject(&row.commit.subject),
        signature,
        thousands(row.nps.median.round() as u64),
        row.instructions_per_node
            .map_or_else(|| "—".to_string(), |per_node| format!("{per_node:.1}")),
        exits,
    ]
}

pub fn table(report: &HistoryReport, style: Style) -> String {
    Table::new(header(report))
        .with_rows(report.rows.iter().map(row))
        .render(style)
}

/// The settings of a series in one line (the table's header and the HTML page's facts).
pub fn settings_line(settings: &SeriesSettings) -> String {
    let depth = settings
        .depth
        .map_or_else(|| "the engine's default".to_string(), |d| d.to_string());
    let instructions = if settings.instructions {
        format!("instructions at depth {}", settings.instr_depth)
    } else {
        "no instructions".to_string()
    };
    let features = if settings.features.is_empty() {
        String::new()
    } else {
        format!(", features {}", settings.features.join(","))
    };
    format!(
        "engine {}, depth {depth}, {} rounds, {instructions}{features}",
        settings.engine, settings.rounds
    )
}

fn summary_line(report: &HistoryReport) -> String {
    format!(
        "{} of {} commits in the range: {} measured now, {} from the store {} (series {})",
        report.rows.len(),
        report.commits_in_range,
        report.measured,
        report.from_store,
        report.store,
        report.series
    )
}

/// Why the instruction column is empty, once, when it is.
fn skipped_line(report: &HistoryReport) -> Option<String> {
    let reason = report
        .rows
        .iter()
        .find_map(|row| row.instructions_skipped.as_ref())?;
    Some(format!("instructions: skipped ({reason})"))
}

pub fn render(report: &HistoryReport, style: Style) -> String {
    let legend = format!("{CHANGED}: the signature changed from the row above");
    let skipped = skipped_line(report)
        .map(|line| format!("{line}\n"))
        .unwrap_or_default();
    match style {
        Style::Terminal => format!(
            "lab history {}\n{}\n\n{}\n{legend}\n{skipped}{}\n",
            report.range,
            settings_line(&report.settings),
            table(report, style),
            summary_line(report)
        ),
        Style::Markdown => format!(
            "## lab history {}\n\n{}\n\n{}\n{legend}\n\n{}{}\n",
            code_span(&report.range),
            settings_line(&report.settings),
            table(report, style),
            if skipped.is_empty() {
                String::new()
            } else {
                format!("{skipped}\n")
            },
            summary_line(report)
        ),
    }
}
