//! The `lab frontier` section: one row per margin-table level (and the reference), its worst
//! exceeded bound, speed and Elo against the reference, then the sentence naming the
//! Elo-optimal level. The HTML page (`html/frontier/`) shows the same cells.

use super::style::Style;
use super::table::Table;
use crate::digits::thousands;
use crate::verdict::frontier::{EngineId, FrontierReport, FrontierRow, Interval};
use crate::verdict::{Decision, SpeedSource};

/// The table's header, shared with the HTML page.
pub(crate) const COLUMNS: [&str; 11] = [
    "level",
    "revision",
    "worst exceeded bound",
    "overall exceeded",
    "exits super-lazy / lazy / full",
    "speed vs reference",
    "speed Elo",
    "search Elo",
    "total Elo [95% CI]",
    "games",
    "decision",
];

/// A number of the table; `unbounded` where the verdict could not bound it.
fn signed(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(
        || "unbounded".to_string(),
        |v| crate::digits::signed(v, decimals),
    )
}

/// `+24.8 [+10.1, +39.5]`.
fn with_interval(figure: &Interval, decimals: usize) -> String {
    format!(
        "{} [{}, {}]",
        signed(figure.value, decimals),
        signed(figure.ci_low, decimals),
        signed(figure.ci_high, decimals)
    )
}

/// A ratio as a change in percent: `+21.70% [+18.20, +25.20]`.
fn ratio_pct(ratio: &Interval) -> String {
    let pct = |r: Option<f64>| r.map(|r| (r - 1.0) * 100.0);
    format!(
        "{}% [{}, {}]",
        signed(pct(ratio.value), 2),
        signed(pct(ratio.ci_low), 2),
        signed(pct(ratio.ci_high), 2)
    )
}

/// `spec (commit's first ten)`.
pub(crate) fn revision(engine: &EngineId) -> String {
    match &engine.commit {
        Some(commit) => format!("{} ({})", engine.spec, crate::input::short_commit(commit)),
        None => engine.spec.clone(),
    }
}

/// The cells of one row, in [`COLUMNS`]' order: plain text, laid out by each format.
pub(crate) fn cells(row: &FrontierRow, reference: bool) -> [String; 11] {
    let none = || "—".to_string();
    let safety = row.safety.as_ref();
    let worst = safety
        .and_then(|s| s.worst_exceeded.as_ref())
        .map_or_else(none, |cell| {
            let class = cell
                .class
                .map_or_else(String::new, |class| format!(", class {class}"));
            format!(
                "{:.2}% ({}, bucket {}{class})",
                cell.upper * 100.0,
                cell.tier,
                cell.bucket
            )
        });
    let overall = safety
        .and_then(|s| s.overall_exceeded.as_ref())
        .map_or_else(none, |rate| {
            let pct = |v: Option<f64>| v.map_or_else(none, |v| format!("{:.3}", v * 100.0));
            format!(
                "{}% [{}, {}]",
                pct(rate.value),
                pct(rate.ci_low),
                pct(rate.ci_high)
            )
        });
    let exits = safety.and_then(|s| s.exit_shares).map_or_else(none, |s| {
        format!(
            "{:.1} / {:.1} / {:.1}%",
            s[0] * 100.0,
            s[1] * 100.0,
            s[2] * 100.0
        )
    });
    let decision = match row.decision {
        _ if reference => "reference (A)",
        Some(Decision::H1) => "H1",
        Some(Decision::H0) => "H0",
        Some(Decision::Undecided) | None => "undecided",
        Some(Decision::Interrupted) => "interrupted",
    };
    [
        row.label.clone(),
        revision(&row.engine),
        worst,
        overall,
        exits,
        match row.speed_from {
            SpeedSource::Nps => ratio_pct(&row.speed_ratio),
            SpeedSource::Instructions => format!("{} instr.", ratio_pct(&row.speed_ratio)),
            SpeedSource::Games => format!("{} in games", ratio_pct(&row.speed_ratio)),
        },
        signed(row.speed_elo.value, 1),
        signed(row.search_elo.value, 1),
        with_interval(&row.total_elo, 1),
        thousands(row.games),
        decision.to_string(),
    ]
}

/// The title line; outside text (labels, revisions) as `style` shows it.
pub(crate) fn title(report: &FrontierReport, style: Style) -> String {
    format!(
        "lab frontier at {}: {} margin-table level{} judged by `lab verdict` against A = {} \
         (the reference, {}, 0 Elo by definition)",
        report.tc,
        report.points.len(),
        if report.points.len() == 1 { "" } else { "s" },
        style.code(&revision(&report.reference.engine)),
        style.code(&report.reference.label)
    )
}

/// The sentence naming the Elo-optimal row and whether the data separate it from the next.
pub(crate) fn optimal_sentence(report: &FrontierReport, style: Style) -> String {
    let rows = report.rows();
    let find = |label: &str| rows.iter().find(|row| row.label == label);
    let Some(best) = find(&report.optimal.label) else {
        return "Elo-optimal: none, no row has a bounded total Elo.".to_string();
    };
    let total = |row: &FrontierRow| {
        format!(
            "{} (95% CI {} to {})",
            signed(row.total_elo.value, 1),
            signed(row.total_elo.ci_low, 1),
            signed(row.total_elo.ci_high, 1)
        )
    };
    let head = format!(
        "Elo-optimal: {}, total Elo {}",
        style.code(&best.label),
        total(best)
    );
    match report.optimal.runner_up.as_deref().and_then(find) {
        None => format!("{head}; no other row has a bounded total."),
        Some(next) if report.optimal.separated => format!(
            "{head}, its interval wholly above the runner-up {}'s {}.",
            style.code(&next.label),
            total(next)
        ),
        Some(next) => format!(
            "{head}; its interval overlaps the runner-up {}'s {}: the data do not separate \
             them.",
            style.code(&next.label),
            total(next)
        ),
    }
}

/// What the columns mean, once under the table.
pub(crate) const LEGEND: &str = "Worst exceeded bound: the largest Wilson 95% upper bound of \
    the exceeded rate over every tier × material bucket (× danger class) cell of the level's \
    margin-safety calibration; overall: both cheap tiers' exceeded exits over their exits. \
    Speed: paired NPS over the reference's, or, marked instr., the reference's callgrind \
    instructions per node over the level's (`lab verdict --speed-from instructions`); Elo: from each level's verdict against the \
    reference (total = speed + search). — : no calibration given.";

pub(crate) fn render(report: &FrontierReport, style: Style) -> String {
    let mut out = match style {
        Style::Terminal => format!("{}\n\n", title(report, style)),
        Style::Markdown => format!("## {}\n\n", title(report, style)),
    };
    let rows = report.rows();
    let table = Table::new(COLUMNS).with_rows(rows.iter().map(|row| {
        let reference = std::ptr::eq(*row, &report.reference);
        cells(row, reference)
    }));
    out.push_str(&table.render(style));
    out.push('\n');
    if style == Style::Terminal {
        out.push('\n');
    }
    out.push_str(&style.paragraph(LEGEND));
    out.push_str(&style.paragraph(&optimal_sentence(report, style)));
    out
}
