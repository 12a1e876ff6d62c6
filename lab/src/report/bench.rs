//! The sections of one revision's measurement: `lab bench` and `lab baseline show`, each one
//! layout for either style.

use super::eval_exits::{side_exit_rows, side_search_rows, SIDE_SEARCH_HEADER, TIER_NAMES};
use super::style::Style;
use super::table::render_rows;
use super::{
    describe_machine, describe_revision, describe_settings, no_search_split, optional_count,
    optional_float, seconds, BaselineOutput, BenchOutput, NO_EVAL_EXITS,
};
use crate::analysis::compare::SideSummary;
use crate::digits::thousands;

/// `lab bench REV`: the revision, its settings, its figures and, with `--check-commit`, the
/// signature against the commit message's.
pub(crate) fn render_bench(bench: &BenchOutput, style: Style) -> String {
    let title = match style {
        Style::Terminal => format!("lab bench: {}\n", describe_revision(&bench.revision)),
        Style::Markdown => format!(
            "## lab bench: {}\n\n",
            style.code(&bench.revision.revision.spec)
        ),
    };
    let mut out = format!(
        "{title}{}\n\n{}",
        describe_settings(
            &bench.settings,
            bench.revision.depth,
            bench.revision.instructions.measured
        ),
        render_side(&bench.revision, style)
    );
    if let Some(check) = &bench.commit_bench {
        out.push_str(&format!("\n\n{}", check.describe()));
    }
    out
}

/// `lab baseline show NAME`: the stored revision, where and how it was measured, its figures.
pub(crate) fn render_baseline(baseline: &BaselineOutput, style: Style) -> String {
    let rustc = baseline.toolchain.rustc.lines().next().unwrap_or_default();
    let settings = describe_settings(
        &baseline.settings,
        baseline.revision.depth,
        baseline.revision.instructions.measured,
    );
    let machine = describe_machine(&baseline.machine);
    let head = match style {
        Style::Terminal => format!(
            "baseline {}: {}\nmachine: {machine}\ntoolchain: {rustc}\n{settings}",
            baseline.name,
            describe_revision(&baseline.revision),
        ),
        Style::Markdown => format!(
            "## baseline {}: {}\n\nmachine: {}; toolchain: {}; {settings}",
            style.code(&baseline.name),
            style.code(&baseline.revision.revision.spec),
            style.prose(&machine),
            style.prose(rustc),
        ),
    };
    format!("{head}\n\n{}", render_side(&baseline.revision, style))
}

/// One revision's figures and eval exits.
fn render_side(side: &SideSummary, style: Style) -> String {
    // A line between tables: its own paragraph in markdown.
    let line = |text: &str| match style {
        Style::Terminal => format!("\n{text}"),
        Style::Markdown => format!("\n{text}\n"),
    };
    let heading = |text: &str| format!("\n{}", style.heading(text));
    let mut out = render_rows(style, ["figure", "value"], side_rows(side));
    if let Some(reason) = &side.instructions.skipped_reason {
        out.push_str(&line(&format!("instructions: skipped ({reason})")));
    }
    match side_exit_rows(side) {
        Some(rows) => {
            out.push_str(&heading(match style {
                Style::Terminal => "Eval exits (share of eval calls)",
                Style::Markdown => "Eval exits",
            }));
            out.push_str(&render_rows(
                style,
                [
                    "scope",
                    "evals",
                    TIER_NAMES[0],
                    TIER_NAMES[1],
                    TIER_NAMES[2],
                ],
                rows,
            ));
        }
        None => out.push_str(&line(NO_EVAL_EXITS)),
    }
    match side_search_rows(side) {
        Some(rows) => {
            out.push_str(&heading("Eval exits by search"));
            out.push_str(&render_rows(style, SIDE_SEARCH_HEADER, rows));
        }
        None => out.push_str(&line(&no_search_split("this bench"))),
    }
    // The terminal's last table or line ends here; markdown's already ended.
    if style == Style::Terminal {
        out.push('\n');
    }
    out
}

/// `[figure, value]` rows of one revision.
pub(crate) fn side_rows(side: &SideSummary) -> Vec<[String; 2]> {
    vec![
        ["signature (nodes)".to_string(), thousands(side.signature)],
        [
            format!("NPS (median of {})", side.runs),
            thousands(side.nps.median.round() as u64),
        ],
        [
            "NPS range".to_string(),
            format!(
                "{} – {}",
                thousands(side.nps.min.round() as u64),
                thousands(side.nps.max.round() as u64)
            ),
        ],
        [
            "time per node".to_string(),
            format!("{:.1} ns", side.time_per_node_ns),
        ],
        [
            "bench time (median)".to_string(),
            seconds(side.bench_time_ms),
        ],
        [
            instructions_label(side, side),
            optional_count(side.instructions.total),
        ],
        [
            "instructions per node".to_string(),
            optional_float(side.instructions.per_node),
        ],
    ]
}

fn instructions_label(a: &SideSummary, b: &SideSummary) -> String {
    match a.instructions.depth.or(b.instructions.depth) {
        Some(depth) => format!("instructions (depth {depth})"),
        None => "instructions".to_string(),
    }
}
