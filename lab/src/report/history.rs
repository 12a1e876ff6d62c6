//! The `lab history` section: one row per commit, oldest first, with a marker where the
//! signature changed from the row before.

use super::eval_exits::TIER_NAMES;
use super::sanitize::code_span;
use super::style::Style;
use super::table::{cut, Table, SUBJECT_WIDTH};
use crate::digits::thousands;
use crate::history::store::SeriesSettings;
use crate::history::{last_line, FailedRow, HistoryReport, HistoryRow, Step, StepMetric};

/// Marks a signature that differs from the previous row's.
pub(crate) const CHANGED: &str = "◆";
/// Marks a commit that could not be built or measured.
pub(crate) const FAILED: &str = "✗";
/// Marks a commit whose engine binary is an earlier row's: it shows that row's measurement.
pub(crate) const SAME_BINARY: &str = "=";

fn header(report: &HistoryReport) -> [String; 8] {
    [
        "commit".to_string(),
        "date".to_string(),
        "subject".to_string(),
        "signature (nodes)".to_string(),
        format!("NPS (median of {})", report.settings.rounds),
        "NPS min–max".to_string(),
        "instructions per node".to_string(),
        format!("exits {}", TIER_NAMES.join(" / ")),
    ]
}

/// The subject cut to [`SUBJECT_WIDTH`]; the table shows it literally in either style.
fn subject(text: &str) -> String {
    cut(text, SUBJECT_WIDTH)
}

fn row(row: &HistoryRow) -> [String; 8] {
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
    let commit = match &row.same_binary_as {
        Some(_) => format!("{} {SAME_BINARY}", row.commit.short),
        None => row.commit.short.clone(),
    };
    [
        commit,
        row.commit.date.clone(),
        subject(&row.commit.subject),
        signature,
        thousands(row.nps.median.round() as u64),
        format!(
            "{}–{}",
            thousands(row.nps.min.round() as u64),
            thousands(row.nps.max.round() as u64)
        ),
        row.instructions_per_node
            .map_or_else(|| "—".to_string(), |per_node| format!("{per_node:.1}")),
        exits,
    ]
}

/// A failed point's row: what failed where the figures would be.
fn failed_row(row: &FailedRow) -> [String; 8] {
    let dash = || "—".to_string();
    [
        row.commit.short.clone(),
        row.commit.date.clone(),
        subject(&row.commit.subject),
        format!("{FAILED} {} failed", row.stage.name()),
        dash(),
        dash(),
        dash(),
        dash(),
    ]
}

/// Measured rows and failed points in the order of the selection.
fn rows_in_order(report: &HistoryReport) -> Vec<[String; 8]> {
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

pub(crate) fn table(report: &HistoryReport, style: Style) -> String {
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
pub(crate) fn settings_line(settings: &SeriesSettings) -> String {
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
    let shared = if report.shared_now == 0 {
        String::new()
    } else {
        format!(", {} sharing another commit's binary", report.shared_now)
    };
    format!(
        "{} of {} commits in the range: {} measured now, {} from the store{shared}{failed} {} \
         (series {})",
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

/// The unit a step's levels are given in.
fn level(metric: StepMetric, value: f64) -> String {
    match metric {
        StepMetric::Nps => format!("{} NPS", thousands(value.round() as u64)),
        StepMetric::InstructionsPerNode => format!("{value:.1} instructions per node"),
    }
}

/// One line per step: where, how much, and the command that would confirm it.
fn step_lines(steps: &[Step], style: Style) -> String {
    if steps.is_empty() {
        return "steps: none beyond the noise (NPS ±1%, instructions per node ±0.5%)\n".to_string();
    }
    let mut out = format!(
        "steps beyond the noise between neighbouring segments ({}):\n",
        steps.len()
    );
    for step in steps {
        let kind = if step.regression {
            "regression"
        } else {
            "improvement"
        };
        let line = format!(
            "{} → {}: {} {:+.1}% ({kind}), {} → {}",
            step.before.short,
            step.after.short,
            match step.metric {
                StepMetric::Nps => "NPS",
                StepMetric::InstructionsPerNode => "instructions per node",
            },
            step.change_pct,
            level(step.metric, step.level_before),
            level(step.metric, step.level_after),
        );
        match style {
            Style::Terminal => out.push_str(&format!("  {line}\n    confirm: {}\n", step.confirm)),
            Style::Markdown => out.push_str(&format!(
                "- {} — confirm: {}\n",
                line.replace('`', "'"),
                code_span(&step.confirm)
            )),
        }
    }
    out
}

pub(crate) fn render(report: &HistoryReport, style: Style) -> String {
    let legend = format!(
        "{CHANGED}: the signature changed from the row above; {SAME_BINARY}: the engine binary \
         of an earlier row, whose measurement it shows; NPS min–max: the spread of the runs"
    );
    let steps = step_lines(&report.steps, style);
    let skipped = skipped_line(report)
        .map(|line| format!("{line}\n"))
        .unwrap_or_default();
    let failed = failed_lines(report, style);
    match style {
        Style::Terminal => format!(
            "lab history {}\n{}\n\n{}\n{legend}\n{failed}{skipped}{steps}{}\n",
            report.range,
            settings_line(&report.settings),
            table(report, style),
            summary_line(report)
        ),
        Style::Markdown => format!(
            "## lab history {}\n\n{}\n\n{}\n{legend}\n\n{}{}{steps}\n{}\n",
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
