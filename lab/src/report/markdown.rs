//! `--format markdown`: for a CI job summary or a pull-request comment.

use super::sanitize::{code_span, visible_lines};
use super::table::{Style, Table};
use super::{
    bucket_rows, comparison_rows, describe_machine, describe_settings, exit_rate_rows,
    instructions_line, no_search_split, search_split_missing_line, search_split_rows,
    side_exit_rows, side_rows, side_search_rows, speed_elo_line, speed_line, verdict_line,
    verdict_word, BaselineOutput, Report, FIGURES_HEADER, NO_EVAL_EXITS, SEARCH_SPLIT_HEADER,
    SIDE_SEARCH_HEADER,
};
use crate::analysis::compare::{Comparison, SideSummary};

/// The report in markdown: control characters from outside are written out, and outside text
/// is a code span or an escaped table cell, so no raw HTML or stray `|` reaches the page.
pub fn render(report: &Report) -> String {
    visible_lines(&layout(report)).into_owned()
}

fn layout(report: &Report) -> String {
    match report {
        Report::Comparison(comparison) => render_comparison(comparison),
        Report::Bench(bench) => format!(
            "## lab bench: {}\n\n{}\n\n{}{}",
            code_span(&bench.revision.revision.spec),
            describe_settings(&bench.settings, bench.revision.depth),
            render_side(&bench.revision),
            bench
                .commit_bench
                .as_ref()
                .map_or_else(String::new, |check| format!("\n\n{}", check.describe()))
        ),
        Report::Baseline(baseline) => render_baseline(baseline),
        Report::Profile(output) => super::profile::render(output, Style::Markdown),
        Report::Match(report) => format!(
            "## {}\n\n{}\n{}",
            super::matches::title(report, Style::Markdown).replace('\n', "\n\n"),
            table(["figure (B vs A)", "value"], super::matches::rows(report)),
            super::matches::footer(report).replace('\n', "\n\n")
        ),
        Report::Calibration(report) => format!(
            "## lab {}\n\n{}",
            report.kind,
            super::calibration::full_report(report, Style::Markdown)
        ),
        Report::History(report) => super::history::render(report, Style::Markdown),
        Report::Bisect(report) => super::bisect::render(report, Style::Markdown),
        Report::Tune(report) => super::tune::render(report, Style::Markdown),
        Report::SpeedElo(report) => super::verdict::render_speed_elo(report, Style::Markdown),
        Report::Verdict(report) => super::verdict::render_verdict(report, Style::Markdown),
        Report::SameBinary(output) => {
            format!("{}\n", super::same_binary_line(output, Style::Markdown))
        }
        Report::Text(text) => text.clone(),
    }
}

fn table<const N: usize>(header: [&str; N], rows: impl IntoIterator<Item = [String; N]>) -> String {
    Table::new(header).with_rows(rows).markdown()
}

fn render_comparison(comparison: &Comparison) -> String {
    let mut out = format!(
        "## lab {}: {} {} → {} {} — {}\n\n{}\n\n",
        comparison.kind,
        comparison.a.label,
        code_span(&comparison.a.revision.spec),
        comparison.b.label,
        code_span(&comparison.b.revision.spec),
        verdict_word(comparison.verdict),
        describe_settings(&comparison.settings, comparison.b.depth)
    );
    for warning in &comparison.warnings {
        out.push_str(&format!("> **Warning:** {warning}\n\n"));
    }
    for note in &comparison.notes {
        out.push_str(&format!("> **Note:** {note}\n\n"));
    }
    out.push_str(&table(FIGURES_HEADER, comparison_rows(comparison)));
    out.push_str(&format!("\n{}\n\n", speed_line(comparison)));
    if let Some(line) = speed_elo_line(comparison) {
        out.push_str(&format!("{line}\n\n"));
    }
    out.push_str(&format!("{}\n\n", instructions_line(comparison)));
    match (exit_rate_rows(comparison), bucket_rows(comparison)) {
        (Some(rates), Some(buckets)) => {
            out.push_str("### Eval exits\n\n");
            out.push_str(&table(["tier", "A", "B", "delta"], rates));
            out.push_str("\n<details><summary>Eval exits by material bucket (A → B)</summary>\n\n");
            out.push_str(&table(
                ["bucket", "evals A", "evals B", "super-lazy", "lazy", "full"],
                buckets,
            ));
            out.push_str("\n</details>\n\n");
        }
        _ => out.push_str(&format!("{NO_EVAL_EXITS}\n\n")),
    }
    if let Some(rows) = search_split_rows(comparison) {
        out.push_str("### Eval exits by search (share of each tier's exits)\n\n");
        out.push_str(&table(SEARCH_SPLIT_HEADER, rows));
        out.push('\n');
    }
    if let Some(line) = search_split_missing_line(comparison) {
        out.push_str(&format!("{line}\n\n"));
    }
    if let Some(functions) = &comparison.functions {
        out.push_str(&format!("### {}\n\n", super::functions::title(functions)));
        out.push_str(&table(
            super::functions::MOVER_HEADER,
            super::functions::mover_rows(functions),
        ));
        out.push('\n');
    }
    out.push_str(&format!("**{}**\n", verdict_line(comparison)));
    if let Some(calibration) = &comparison.calibration {
        out.push_str(&super::calibration::compare_section(
            calibration,
            Style::Markdown,
        ));
    }
    out
}

fn render_side(side: &SideSummary) -> String {
    let mut out = table(["figure", "value"], side_rows(side));
    if let Some(reason) = &side.instructions.skipped_reason {
        out.push_str(&format!("\ninstructions: skipped ({reason})\n"));
    }
    match side_exit_rows(side) {
        Some(rows) => {
            out.push_str("\n### Eval exits\n\n");
            out.push_str(&table(
                ["scope", "evals", "super-lazy", "lazy", "full"],
                rows,
            ));
        }
        None => out.push_str(&format!("\n{NO_EVAL_EXITS}\n")),
    }
    match side_search_rows(side) {
        Some(rows) => {
            out.push_str("\n### Eval exits by search\n\n");
            out.push_str(&table(SIDE_SEARCH_HEADER, rows));
        }
        None => out.push_str(&format!("\n{}\n", no_search_split("this bench"))),
    }
    out
}

fn render_baseline(baseline: &BaselineOutput) -> String {
    format!(
        "## baseline {}: {}\n\nmachine: {}; toolchain: {}; {}\n\n{}",
        code_span(&baseline.name),
        code_span(&baseline.revision.revision.spec),
        describe_machine(&baseline.machine),
        baseline.toolchain.rustc.lines().next().unwrap_or_default(),
        describe_settings(&baseline.settings, baseline.revision.depth),
        render_side(&baseline.revision)
    )
}
