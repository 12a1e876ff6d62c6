//! The `lab tune` section: the predicted exits of candidate tables per tier and material
//! bucket, and with `--search` its steps, the chosen percentiles and the `lab tables`
//! command that writes them.

use super::eval_exits::TIER_NAMES;
use super::style::Style;
use super::table::Table;
use crate::digits::thousands;
use crate::tune::predict::{BucketPrediction, Rate, TierPrediction};
use crate::tune::search::SearchResult;
use crate::tune::{TuneReport, TuneSearch};
use squall::tier::Tier;

/// `rate% [low, high]`, or `-` without trials.
fn rate(rate: Option<Rate>, decimals: usize) -> String {
    rate.map_or_else(
        || "-".to_string(),
        |r| {
            format!(
                "{:.d$}% [{:.d$}, {:.d$}]",
                100.0 * r.rate,
                100.0 * r.low,
                100.0 * r.high,
                d = decimals
            )
        },
    )
}

fn pct(fraction: f64) -> String {
    format!("{:.2}%", 100.0 * fraction)
}

const TIER_HEADER: [&str; 9] = [
    "material bucket",
    "weight",
    "calls",
    "exits",
    "share [95% CI]",
    "positions",
    "exceeded / exits",
    "exceeded [95% CI]",
    "positions",
];

fn tier_row(scope: String, weight: String, calls: String, t: &TierPrediction) -> [String; 9] {
    let (exceeded, exceeded_rate, exceeded_positions) = if t.tier == "full" {
        ("-".to_string(), "-".to_string(), "-".to_string())
    } else {
        (
            format!("{} / {}", thousands(t.exceeded), thousands(t.exits)),
            rate(t.exceeded_rate, 2),
            thousands(t.exceeded_positions),
        )
    };
    [
        scope,
        weight,
        calls,
        thousands(t.exits),
        rate(t.share, 1),
        thousands(t.exit_positions),
        exceeded,
        exceeded_rate,
        exceeded_positions,
    ]
}

/// One table per tier: each material bucket, then the run bench-weighted.
fn tier_tables(report: &TuneReport, style: Style) -> String {
    let prediction = &report.prediction;
    let mut out = String::new();
    for (index, overall) in prediction.overall.iter().enumerate() {
        let rows = prediction
            .by_material_bucket
            .iter()
            .map(|b: &BucketPrediction| {
                tier_row(
                    b.bucket.to_string(),
                    format!("{:.1}%", 100.0 * b.weight),
                    thousands(b.calls),
                    &b.tiers[index],
                )
            })
            .chain([tier_row(
                "all (weighted)".to_string(),
                "100%".to_string(),
                thousands(prediction.by_material_bucket.iter().map(|b| b.calls).sum()),
                overall,
            )]);
        out.push_str(&style.table_heading(&format!("Predicted {} exits", overall.tier)));
        out.push_str(&Table::new(TIER_HEADER).with_rows(rows).render(style));
        if style == Style::Terminal {
            out.push('\n');
        }
    }
    out
}

/// Main search and quiescence apart, as `lab compare` shows the measured split.
fn search_table(report: &TuneReport, style: Style) -> String {
    let rows = report.prediction.by_search.iter().map(|s| {
        let [super_lazy, lazy, full] = s.tier_shares.map(pct);
        [
            s.search.to_string(),
            pct(s.calls_share),
            super_lazy,
            lazy,
            full,
        ]
    });
    let mut out = style
        .table_heading("Predicted exits by search (bench-weighted; share of the search's calls)");
    out.push_str(
        &Table::new([
            "search",
            "calls",
            TIER_NAMES[0],
            TIER_NAMES[1],
            TIER_NAMES[2],
        ])
        .with_rows(rows)
        .render(style),
    );
    out
}

fn summary_line(report: &TuneReport) -> String {
    let p = &report.prediction;
    format!(
        "Cheap exits (super-lazy + lazy), bench-weighted: {}; worst exceeded upper bound of a \
         cheap tier in a bucket, or a danger class within one: {}",
        pct(p.cheap_share),
        pct(p.worst_exceeded_upper)
    )
}

fn samples_line(report: &TuneReport) -> String {
    let s = &report.samples;
    format!(
        "{} sampled calls of {} seen (reservoirs of {} per material bucket, seed {}), {} \
         distinct positions; the run: {} positions at depth {}",
        thousands(s.sampled.iter().sum()),
        thousands(s.seen.iter().sum()),
        thousands(s.capacity),
        s.seed,
        thousands(s.positions),
        thousands(s.run_positions),
        s.depth
    )
}

fn steps_table(result: &SearchResult, style: Style) -> String {
    Table::new(["step", "change", "cheap exits", "worst exceeded upper"])
        .with_rows(result.steps.iter().map(|p| {
            [
                p.step.to_string(),
                p.change
                    .clone()
                    .unwrap_or_else(|| "start: widest pairs".to_string()),
                pct(p.cheap_share),
                pct(p.worst_exceeded_upper),
            ]
        }))
        .render(style)
}

fn choice_table(result: &SearchResult, style: Style) -> String {
    let mut header = vec!["table".to_string()];
    header.extend((0..result.lazy.len()).map(|b| format!("bucket {b}")));
    let row = |name: &str, pairs: &[[f64; 2]]| {
        std::iter::once(name.to_string())
            .chain(pairs.iter().map(|[lo, hi]| format!("p{lo}/p{hi}")))
            .collect::<Vec<_>>()
    };
    // The king table of each danger class, one row when they all agree.
    let mut rows: Vec<Vec<String>> = match result.king.as_slice() {
        [first, rest @ ..] if rest.iter().all(|r| r == first) => vec![row("king", first)],
        classes => classes
            .iter()
            .enumerate()
            .map(|(class, pairs)| row(&format!("king{class}"), pairs))
            .collect(),
    };
    rows.push(row(Tier::Lazy.name(), &result.lazy));
    rows.push(row(Tier::SuperLazy.name(), &result.super_lazy));
    Table::new(header).with_rows(rows).render(style)
}

fn search_section(search: &TuneSearch, style: Style) -> String {
    let result = &search.result;
    let grid = &result.low_percentile_grid;
    let mut out = style.table_heading(&format!(
        "Search: greedy over symmetric pairs p{}/p{} .. p{}/p{}, every exceeded upper bound \
             <= {}%; kept: the run under {}%; steps: {} (each: the cheap-exit share against the \
             worst bound)",
        grid[0],
        100.0 - grid[0],
        grid[grid.len() - 1],
        100.0 - grid[grid.len() - 1],
        100.0 * result.max_exceeded,
        fmt_percent_limit(result.greedy_limit),
        result.step_count
    ));
    out.push_str(&steps_table(result, style));
    if style == Style::Terminal {
        out.push('\n');
    }
    out.push_str(&style.table_heading("Chosen percentiles"));
    out.push_str(&choice_table(result, style));
    let (code_open, code_close) = match style {
        Style::Terminal => ("", ""),
        Style::Markdown => ("```\n", "```\n"),
    };
    out.push_str(&format!(
        "\n\nWrite them into engine/src/eval/margins.rs with (add --apply):\n\n{code_open}{}\n\
         {code_close}\nThe tables (what that command prints; saved to a file, `lab tune FILE \
         --tables IT` predicts them again) are the ones predicted above.\n",
        search.lab_tables_command
    ));
    out
}

/// The cheap exits by the danger class of the king they bet on (sample counts).
fn danger_class_table(report: &TuneReport, style: Style) -> String {
    let rows = report.prediction.by_danger_class.iter().map(|c| {
        [
            c.class.to_string(),
            format!("{} / {}", thousands(c.exceeded[0]), thousands(c.exits[0])),
            rate(c.exceeded_rate[0], 2),
            format!("{} / {}", thousands(c.exceeded[1]), thousands(c.exits[1])),
            rate(c.exceeded_rate[1], 2),
        ]
    });
    // The search table above ends without a blank line.
    let mut out = if style == Style::Terminal {
        "\n".to_string()
    } else {
        String::new()
    };
    out += &style.table_heading(
        "Predicted exits by the danger class of the king they bet on (the side to move's for a \
         fail high, the opponent's for a fail low; sampled calls, not weighted)",
    );
    out.push_str(
        &Table::new([
            "danger class",
            "super-lazy exceeded / exits",
            "super-lazy exceeded [95% CI]",
            "lazy exceeded / exits",
            "lazy exceeded [95% CI]",
        ])
        .with_rows(rows)
        .render(style),
    );
    out
}

pub(crate) fn render(report: &TuneReport, style: Style) -> String {
    let title = format!("lab tune {}: tables {}", report.file, report.candidate);
    let mut out = match style {
        Style::Terminal => format!("{title}\n{}\n", samples_line(report)),
        Style::Markdown => format!("## {title}\n\n{}\n", samples_line(report)),
    };
    out.push_str(&tier_tables(report, style));
    out.push_str(&search_table(report, style));
    out.push_str(&danger_class_table(report, style));
    out.push_str(&format!("\n{}\n", summary_line(report)));
    if let Some(search) = &report.search {
        out.push_str(&search_section(search, style));
    }
    out
}

/// A limit in percent with at most three decimals and no trailing zeros (0.85, 1, 0.95).
fn fmt_percent_limit(fraction: f64) -> String {
    let text = format!("{:.3}", 100.0 * fraction);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}
