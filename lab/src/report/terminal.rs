//! The human report: terminal tables, warnings first.

use super::sanitize::visible_lines;
use super::table::{Style, Table};
use super::{
    bucket_rows, comparison_rows, describe_machine, describe_settings, exit_rate_rows,
    instructions_line, no_search_split, search_split_missing_line, search_split_rows,
    side_exit_rows, side_rows, side_search_rows, speed_elo_line, speed_line, verdict_line,
    BaselineOutput, BenchOutput, Report, FIGURES_HEADER, NO_EVAL_EXITS, SEARCH_SPLIT_HEADER,
    SIDE_SEARCH_HEADER,
};
use crate::analysis::compare::{Comparison, SideSummary};

/// The report as the terminal shows it: any control character that came from outside (an
/// engine's name, a commit subject, a fault's line) is written out, never sent.
pub fn render(report: &Report) -> String {
    visible_lines(&layout(report)).into_owned()
}

fn layout(report: &Report) -> String {
    match report {
        Report::Comparison(comparison) => render_comparison(comparison),
        Report::Bench(bench) => render_bench(bench),
        Report::Baseline(baseline) => render_baseline(baseline),
        Report::Profile(output) => super::profile::render(output, Style::Terminal),
        Report::Match(report) => format!(
            "{}\n\n{}\n{}",
            super::matches::title(report, Style::Terminal),
            table(["figure (B vs A)", "value"], super::matches::rows(report)),
            super::matches::footer(report)
        ),
        Report::Calibration(report) => super::calibration::full_report(report, Style::Terminal),
        Report::History(report) => super::history::render(report, Style::Terminal),
        Report::Bisect(report) => super::bisect::render(report, Style::Terminal),
        Report::Tune(report) => super::tune::render(report, Style::Terminal),
        Report::SpeedElo(report) => super::verdict::render_speed_elo(report, Style::Terminal),
        Report::Verdict(report) => super::verdict::render_verdict(report, Style::Terminal),
        Report::SameBinary(output) => {
            format!("{}\n", super::same_binary_line(output, Style::Terminal))
        }
        Report::Text(text) => text.clone(),
    }
}

fn table<const N: usize>(header: [&str; N], rows: impl IntoIterator<Item = [String; N]>) -> String {
    Table::new(header).with_rows(rows).terminal()
}

fn render_comparison(comparison: &Comparison) -> String {
    let mut out = format!(
        "lab {}: A = {}  B = {}\n{}\n\n",
        comparison.kind,
        side_title(&comparison.a),
        side_title(&comparison.b),
        describe_settings(&comparison.settings, comparison.b.depth)
    );
    for warning in &comparison.warnings {
        out.push_str(&format!("!! WARNING: {warning}\n"));
    }
    for note in &comparison.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    if !comparison.warnings.is_empty() || !comparison.notes.is_empty() {
        out.push('\n');
    }
    out.push_str(&table(FIGURES_HEADER, comparison_rows(comparison)));
    out.push_str(&format!("\n{}\n", speed_line(comparison)));
    if let Some(line) = speed_elo_line(comparison) {
        out.push_str(&format!("{line}\n"));
    }
    out.push_str(&format!("{}\n\n", instructions_line(comparison)));
    match (exit_rate_rows(comparison), bucket_rows(comparison)) {
        (Some(rates), Some(buckets)) => {
            out.push_str("Eval exits (share of eval calls)\n");
            out.push_str(&table(["tier", "A", "B", "delta"], rates));
            out.push_str("\nEval exits by material bucket (A → B)\n");
            out.push_str(&table(
                ["bucket", "evals A", "evals B", "super-lazy", "lazy", "full"],
                buckets,
            ));
        }
        _ => out.push_str(&format!("{NO_EVAL_EXITS}\n")),
    }
    if let Some(rows) = search_split_rows(comparison) {
        out.push_str("\nEval exits by search (share of each tier's exits)\n");
        out.push_str(&table(SEARCH_SPLIT_HEADER, rows));
    }
    if let Some(line) = search_split_missing_line(comparison) {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&line);
    }
    if let Some(functions) = &comparison.functions {
        out.push_str(&format!("\n{}\n", super::functions::title(functions)));
        out.push_str(&table(
            super::functions::MOVER_HEADER,
            super::functions::mover_rows(functions),
        ));
        out.push('\n');
    }
    out.push_str(&format!("\n{}\n", verdict_line(comparison)));
    if let Some(calibration) = &comparison.calibration {
        out.push_str(&super::calibration::compare_section(
            calibration,
            Style::Terminal,
        ));
    }
    out
}

/// Sides of a plain comparison are simply A and B; others (a baseline) say what they are.
fn side_title(side: &SideSummary) -> String {
    match side.label.as_str() {
        "A" | "B" => describe_side(side),
        label => format!("{label} {}", describe_side(side)),
    }
}

fn describe_side(side: &SideSummary) -> String {
    let id = side
        .revision
        .commit
        .as_deref()
        .unwrap_or(&side.revision.tree);
    let short = crate::input::prefix_chars(id, 10);
    format!("{} ({short})", side.revision.spec)
}

fn render_side(side: &SideSummary) -> String {
    let mut out = table(["figure", "value"], side_rows(side));
    if let Some(reason) = &side.instructions.skipped_reason {
        out.push_str(&format!("\ninstructions: skipped ({reason})"));
    }
    match side_exit_rows(side) {
        Some(rows) => {
            out.push_str("\nEval exits (share of eval calls)\n");
            out.push_str(&table(
                ["scope", "evals", "super-lazy", "lazy", "full"],
                rows,
            ));
        }
        None => out.push_str(&format!("\n{NO_EVAL_EXITS}")),
    }
    match side_search_rows(side) {
        Some(rows) => {
            out.push_str("\nEval exits by search\n");
            out.push_str(&table(SIDE_SEARCH_HEADER, rows));
        }
        None => out.push_str(&format!("\n{}", no_search_split("this bench"))),
    }
    out.push('\n');
    out
}

fn render_bench(bench: &BenchOutput) -> String {
    let mut text = format!(
        "lab bench: {}\n{}\n\n{}",
        describe_side(&bench.revision),
        describe_settings(&bench.settings, bench.revision.depth),
        render_side(&bench.revision)
    );
    if let Some(check) = &bench.commit_bench {
        text.push_str(&format!("\n\n{}", check.describe()));
    }
    text
}

fn render_baseline(baseline: &BaselineOutput) -> String {
    format!(
        "baseline {}: {}\nmachine: {}\ntoolchain: {}\n{}\n\n{}",
        baseline.name,
        describe_side(&baseline.revision),
        describe_machine(&baseline.machine),
        baseline.toolchain.rustc.lines().next().unwrap_or_default(),
        describe_settings(&baseline.settings, baseline.revision.depth),
        render_side(&baseline.revision)
    )
}
