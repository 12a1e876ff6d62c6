//! The `lab history` section: one row per commit, oldest first, with a marker where the
//! signature changed from the row before.

use super::sanitize::code_span;
use super::table::{cut, Style, Table, SUBJECT_WIDTH};
use super::thousands;
use crate::history::store::SeriesSettings;
use crate::history::{last_line, FailedRow, HistoryReport, HistoryRow};

/// Marks a signature that differs from the previous row's.
pub const CHANGED: &str = "◆";
/// Marks a commit that could not be built or measured.
pub const FAILED: &str = "✗";

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
    cut(text, SUBJECT_WIDTH)
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

/// A failed point's row: what failed where the figures would be.
fn failed_row(row: &FailedRow) -> [String; 7] {
    let dash = || "—".to_string();
    [
        row.commit.short.clone(),
        row.commit.date.clone(),
        subject(&row.commit.subject),
        format!("{FAILED} {} failed", row.stage.name()),
        dash(),
        dash(),
        dash(),
    ]
}

/// Measured rows and failed points in the order of the selection.
fn rows_in_order(report: &HistoryReport) -> Vec<[String; 7]> {
    let mut measured = report.rows.iter();
    let mut failed = report.failed.iter().peekable();
    let mut rows = Vec::with_capacity(report.rows.len() + report.failed.len());
    for position in 0..report.rows.len() + report.failed.len() {
        match failed.next_if(|f| f.position == position) {
            Some(failure) => rows.push(failed_row(failure)),
            None => rows.extend(measured.next().map(row)),
        }
    }
    rows
}

pub fn table(report: &HistoryReport, style: Style) -> String {
    Table::new(header(report))
        .with_rows(rows_in_order(report))
        .render(style)
}

/// Longest error line shown per failed point (the JSON has the whole stored tail).
const ERROR_WIDTH: usize = 160;

/// One line per failed point: the commit, what failed and the error's last line.
fn failed_lines(report: &HistoryReport, style: Style) -> String {
    let mut out = String::new();
    for failure in &report.failed {
        // Engine and compiler output: no control characters reach the terminal.
        let mut error: String = last_line(&failure.error)
            .chars()
            .take(ERROR_WIDTH)
            .map(|c| if c.is_control() { '\u{fffd}' } else { c })
            .collect();
        if last_line(&failure.error).chars().count() > ERROR_WIDTH {
            error.push('…');
        }
        let when = if failure.failed_now {
            "now"
        } else {
            "stored; --retry-failed tries again"
        };
        let line = format!(
            "{FAILED} {} failed to {} ({when}): {error}",
            failure.commit.short,
            failure.stage.name()
        );
        match style {
            Style::Terminal => out.push_str(&format!("{line}\n")),
            Style::Markdown => out.push_str(&format!("- `{}`\n", line.replace('`', "'"))),
        }
    }
    out
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
    let failed = if report.failed.is_empty() {
        String::new()
    } else {
        let now = report.failed.iter().filter(|f| f.failed_now).count();
        format!(", {} failed ({now} now)", report.failed.len())
    };
    format!(
        "{} of {} commits in the range: {} measured now, {} from the store{failed} {} (series {})",
        report.rows.len() + report.failed.len(),
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
    let failed = failed_lines(report, style);
    match style {
        Style::Terminal => format!(
            "lab history {}\n{}\n\n{}\n{legend}\n{failed}{skipped}{}\n",
            report.range,
            settings_line(&report.settings),
            table(report, style),
            summary_line(report)
        ),
        Style::Markdown => format!(
            "## lab history {}\n\n{}\n\n{}\n{legend}\n\n{}{}{}\n",
            code_span(&report.range),
            settings_line(&report.settings),
            table(report, style),
            if failed.is_empty() {
                String::new()
            } else {
                format!("{failed}\n")
            },
            if skipped.is_empty() {
                String::new()
            } else {
                format!("{skipped}\n")
            },
            summary_line(report)
        ),
    }
}
