//! Calibration reports: percentile tables, margin safety with Wilson intervals, exit rates,
//! QSearch futility recommendations, what the replay samples hold, and the A/B section of
//! `compare --calibrate`.

use std::path::Path;

use squall::calibrate::stats::{wilson_interval, Z95};
use squall::calibrate::Histogram;
use squall::tier::{Tier, SIDE_BUCKETS};

use super::style::Style;
use super::table::Table;
use crate::calibration::data::{CalibrationFile, ExitRate, MarginSafety, Tally};
use crate::calibration::figures::sum_tallies;
use crate::calibration::margins_source::{BEGIN_MARKER, END_MARKER};
use crate::calibration::summary::{
    futility_recommendation, relative_change, tally_doubts, CalibrationComparison, SETS, SPREAD,
    STALE_FRACTION, TARGET_UPPER,
};

/// `lab calibrate` and `lab calibrate merge`: one calibration file, reported in full.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CalibrationReport {
    pub(crate) schema_version: u32,
    pub(crate) kind: crate::schema::Kind,
    /// Where the calibration came from: the revision and file, or the merged files.
    pub(crate) origin: String,
    /// The percentile of `qfutility_excess` recommended as the futility margin.
    pub(crate) percentile: f64,
    pub(crate) futility_recommended: Option<[Option<i32>; 3]>,
    /// `FUTILITY_BASE_MARGIN_BY_SOURCE` in force in the revision (its bench reports it), when
    /// known.
    pub(crate) futility_current: Option<[i32; 3]>,
    pub(crate) calibration: CalibrationFile,
}

impl CalibrationReport {
    pub fn new(
        calibration: CalibrationFile,
        origin: String,
        futility_current: Option<[i32; 3]>,
        percentile: f64,
    ) -> Self {
        Self {
            schema_version: crate::schema::LAB_JSON_SCHEMA_VERSION,
            kind: crate::schema::Kind::Calibration,
            origin,
            percentile,
            futility_recommended: futility_recommendation(&calibration, percentile),
            futility_current,
            calibration,
        }
    }
}

fn pct_label(p: f64) -> String {
    format!("p{p}")
}

pub(crate) fn header(file: &CalibrationFile, origin: &str) -> String {
    format!(
        "calibration {origin}: {} positions, depth {}, {} nodes, modes {}, engine features [{}]\n",
        file.positions,
        file.depth,
        file.nodes,
        file.modes.join(","),
        file.engine.features.join(",")
    )
}

/// `lab hist`: the file's header, then the percentile table of each of `sets` it holds.
pub(crate) fn histogram_percentiles(
    file: &CalibrationFile,
    origin: &str,
    sets: &[&str],
    percentiles: &[f64],
) -> String {
    let mut text = header(file, origin);
    for set in sets {
        if let Some(section) = percentile_section(file, set, percentiles, Style::Terminal) {
            text.push_str(&section);
        }
    }
    text
}

/// The percentile table of one histogram set, or `None` when the file lacks it.
pub fn percentile_section(
    file: &CalibrationFile,
    set: &str,
    percentiles: &[f64],
    style: Style,
) -> Option<String> {
    let hists = file.histogram_set(set)?;
    let (_, title, row) = SETS.iter().find(|(name, _, _)| *name == set)?;
    // The king set holds SIDE_BUCKETS histograms per danger class: a table per class.
    let groups: Vec<(String, &[Histogram])> = if set == "king" && hists.len() > SIDE_BUCKETS {
        hists
            .chunks(SIDE_BUCKETS)
            .enumerate()
            .map(|(class, chunk)| {
                (
                    format!("{title}, defending king's danger class {class} [{set}]"),
                    chunk,
                )
            })
            .collect()
    } else {
        vec![(format!("{title} [{set}]"), &hists[..])]
    };
    let mut text = String::new();
    for (heading_text, hists) in groups {
        let mut head = vec![row.to_string(), "samples".to_string()];
        head.extend(percentiles.iter().map(|&p| pct_label(p)));
        let mut t = Table::new(head);
        for (index, h) in hists.iter().enumerate() {
            let label = if set == "qfutility_excess" {
                Tier::ALL
                    .get(index)
                    .map_or(index.to_string(), |tier| tier.name().to_string())
            } else {
                index.to_string()
            };
            let mut cells = vec![label, h.count().to_string()];
            cells.extend(
                percentiles
                    .iter()
                    .map(|&p| h.percentile(p).map_or("-".to_string(), |v| v.to_string())),
            );
            t.row(cells);
        }
        text.push_str(&format!(
            "{}{}\n",
            style.table_heading(&heading_text),
            t.render(style)
        ));
    }
    Some(text)
}

fn percent(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

/// `rate% [lo%, hi%]` with a Wilson 95% interval.
pub fn rate_with_interval(successes: u64, n: u64, decimals: usize) -> String {
    if n == 0 {
        return "-".to_string();
    }
    let (lo, hi) = wilson_interval(successes, n, Z95);
    format!(
        "{:.d$}% [{:.d$}, {:.d$}]",
        percent(successes, n),
        100.0 * lo,
        100.0 * hi,
        d = decimals
    )
}

fn flags(t: &Tally) -> String {
    let doubts = tally_doubts(t);
    let mut flags = Vec::new();
    if doubts.upper_above_target {
        flags.push(format!("upper > {}%", 100.0 * TARGET_UPPER));
    }
    if doubts.few_positions {
        flags.push("few positions".to_string());
    }
    if doubts.one_position_dominates {
        flags.push("one position dominates".to_string());
    }
    flags.join(", ")
}

fn safety_tiers(safety: Option<&MarginSafety>) -> Option<[(&'static str, &[Tally]); 2]> {
    let safety = safety?;
    Some([
        (
            Tier::SuperLazy.name(),
            &safety.super_lazy.by_material_bucket,
        ),
        (Tier::Lazy.name(), &safety.lazy.by_material_bucket),
    ])
}

pub(crate) fn margin_safety_section(file: &CalibrationFile, style: Style) -> Option<String> {
    let tiers = safety_tiers(file.margin_safety.as_ref())?;
    let mut text = style.table_heading(
        "Margin safety: exits the full evaluation contradicts (exceeded / exits), Wilson 95% \
         interval, distinct positions, largest single position's share of the exits",
    );
    for (name, tallies) in tiers {
        let mut t = Table::new([
            "material bucket",
            "exceeded / exits",
            "rate [95% CI]",
            "positions",
            "largest share",
            "flags",
        ]);
        let all = sum_tallies(tallies);
        for (bucket, x) in tallies
            .iter()
            .enumerate()
            .map(|(b, x)| (b.to_string(), *x))
            .chain([("all".to_string(), all)])
        {
            let share = if bucket == "all" {
                "-".to_string()
            } else {
                format!("{:.1}%", percent(x.max_from_one_position, x.exits))
            };
            t.row([
                bucket.clone(),
                format!("{} / {}", x.exceeded, x.exits),
                rate_with_interval(x.exceeded, x.exits, 3),
                if bucket == "all" {
                    "-".to_string()
                } else {
                    x.positions.to_string()
                },
                share,
                if bucket == "all" {
                    String::new()
                } else {
                    flags(&x)
                },
            ]);
        }
        let caption = match style {
            Style::Terminal => format!("{name} tier\n"),
            Style::Markdown => format!("{name} tier:\n\n"),
        };
        text.push_str(&format!("{caption}{}\n", t.render(style)));
    }
    Some(text)
}

/// Margin safety by the danger class of the king each exit bet on (the side to move's for a
/// fail high, the opponent's for a fail low), per tier and material bucket; `None` for files
/// without it.
pub(crate) fn danger_class_section(file: &CalibrationFile, style: Style) -> Option<String> {
    let safety = file.margin_safety.as_ref()?;
    let tiers = [
        (
            Tier::SuperLazy.name(),
            safety.super_lazy.by_danger_class.as_ref()?,
        ),
        (Tier::Lazy.name(), safety.lazy.by_danger_class.as_ref()?),
    ];
    let mut text = style.table_heading(
        "Margin safety by the danger class of the king each exit bet on (the side to move's \
         for a fail high, the opponent's for a fail low): exceeded / exits, Wilson 95% interval",
    );
    for (name, rows) in tiers {
        let classes = rows.first().map_or(0, Vec::len);
        let mut head = vec!["material bucket".to_string()];
        for class in 0..classes {
            head.push(format!("class {class} exceeded / exits"));
            head.push(format!("class {class} rate [95% CI]"));
        }
        let mut t = Table::new(head);
        let all: Vec<Tally> = (0..classes)
            .map(|class| {
                let column: Vec<Tally> =
                    rows.iter().filter_map(|r| r.get(class)).copied().collect();
                sum_tallies(&column)
            })
            .collect();
        for (bucket, row) in rows
            .iter()
            .enumerate()
            .map(|(b, row)| (b.to_string(), row.as_slice()))
            .chain([("all".to_string(), all.as_slice())])
        {
            let mut cells = vec![bucket];
            for x in row {
                cells.push(format!("{} / {}", x.exceeded, x.exits));
                cells.push(rate_with_interval(x.exceeded, x.exits, 3));
            }
            t.row(cells);
        }
        let caption = match style {
            Style::Terminal => format!("{name} tier\n"),
            Style::Markdown => format!("{name} tier:\n\n"),
        };
        text.push_str(&format!("{caption}{}\n", t.render(style)));
    }
    Some(text)
}

pub(crate) fn exit_rate_section(file: &CalibrationFile, style: Style) -> String {
    let mut t = Table::new([
        "material bucket",
        "eval calls",
        "super-lazy exits [95% CI]",
        "lazy exits [95% CI]",
        "full",
    ]);
    let rows = file
        .exit_rate
        .by_material_bucket
        .iter()
        .enumerate()
        .map(|(b, e)| (b.to_string(), *e))
        .chain([("all".to_string(), file.exit_rate.exits)]);
    for (bucket, exits) in rows {
        let calls: u64 = exits.iter().sum();
        t.row([
            bucket,
            calls.to_string(),
            rate_with_interval(exits[0], calls, 2),
            rate_with_interval(exits[1], calls, 2),
            format!("{:.2}%", percent(exits[2], calls)),
        ]);
    }
    format!(
        "{}{}\n",
        style.table_heading("Exit rate per tier and material bucket (share of eval calls)"),
        t.render(style)
    )
}

pub(crate) fn futility_section(
    file: &CalibrationFile,
    current: Option<[i32; 3]>,
    percentile: f64,
    style: Style,
) -> Option<String> {
    let recommended = futility_recommendation(file, percentile)?;
    let hists = file.histogram_set("qfutility_excess")?;
    let mut t = Table::new([
        "source tier".to_string(),
        "samples".to_string(),
        format!("recommended ({})", pct_label(percentile)),
        "current FUTILITY_BASE_MARGIN_BY_SOURCE".to_string(),
        "change".to_string(),
    ]);
    for tier in 0..3 {
        let rec = recommended[tier];
        let cur = current.map(|c| c[tier]);
        let change = match (rec, cur) {
            (Some(r), Some(c)) => {
                let rel = relative_change(r, c);
                let stale = if rel.abs() > STALE_FRACTION {
                    "  STALE"
                } else {
                    ""
                };
                format!("{:+.0}%{stale}", 100.0 * rel)
            }
            _ => "-".to_string(),
        };
        t.row([
            Tier::ALL[tier].name().to_string(),
            hists.get(tier).map_or(0, |h| h.count()).to_string(),
            rec.map_or("-".to_string(), |v| v.to_string()),
            cur.map_or("unknown".to_string(), |v| v.to_string()),
            change,
        ]);
    }
    Some(format!(
        "{}{}\n",
        style.table_heading(
            "QSearch futility: recommended FUTILITY_BASE_MARGIN_BY_SOURCE \
             (engine/src/eval/margins.rs) per source tier"
        ),
        t.render(style)
    ))
}

/// What the replay samples hold per material bucket: calls, samples kept, the positions they
/// come from, and the share from quiescence and with a pawn race possible.
pub(crate) fn samples_section(file: &CalibrationFile, style: Style) -> Option<String> {
    let samples = file.samples.as_ref()?;
    let mut t = Table::new([
        "material bucket",
        "eval calls",
        "samples",
        "positions",
        "quiescence",
        "pawn race",
    ]);
    for (bucket, (kept, seen)) in samples
        .by_material_bucket
        .iter()
        .zip(&samples.seen)
        .enumerate()
    {
        let positions: std::collections::BTreeSet<u32> = kept.iter().map(|s| s.position).collect();
        let count = |f: fn(&crate::calibration::data::SampleRow) -> bool| {
            kept.iter().filter(|s| f(s)).count() as u64
        };
        let n = kept.len() as u64;
        t.row([
            bucket.to_string(),
            seen.to_string(),
            n.to_string(),
            positions.len().to_string(),
            format!("{:.1}%", percent(count(|s| s.search == 1), n)),
            format!("{:.1}%", percent(count(|s| s.race == 1), n)),
        ]);
    }
    Some(format!(
        "{}{}
",
        style.table_heading(&format!(
            "Replay samples per material bucket (at most {} each, seed {})",
            samples.capacity, samples.seed
        )),
        t.render(style)
    ))
}

/// The calibration section; in markdown under a heading that names the command.
pub(crate) fn render(report: &CalibrationReport, style: Style) -> String {
    match style {
        Style::Terminal => full_report(report, style),
        Style::Markdown => format!("## lab {}\n\n{}", report.kind, full_report(report, style)),
    }
}

/// Everything `lab calibrate` and `lab calibrate merge` print.
pub fn full_report(report: &CalibrationReport, style: Style) -> String {
    let file = &report.calibration;
    let mut text = header(file, &report.origin);
    for (set, _, _) in SETS.iter().take(3) {
        if let Some(section) = percentile_section(file, set, &SPREAD, style) {
            text.push_str(&section);
        }
    }
    if let Some(section) = margin_safety_section(file, style) {
        text.push_str(&section);
    }
    if let Some(section) = danger_class_section(file, style) {
        text.push_str(&section);
    }
    text.push_str(&exit_rate_section(file, style));
    if let Some(section) = samples_section(file, style) {
        text.push_str(&section);
    }
    if let Some(section) = futility_section(file, report.futility_current, report.percentile, style)
    {
        text.push_str(&section);
    }
    text
}

/// The `compare --calibrate` section: exceeded and exit rates side by side, and stale
/// futility margins.
pub fn compare_section(calibration: &CalibrationComparison, style: Style) -> String {
    let (a, b) = (&calibration.a, &calibration.b);
    let percentile = calibration.percentile;
    let mut text = style.table_heading(&format!(
        "Calibration (depth {}, {} positions): A = {}, B = {}",
        calibration.depth, calibration.positions, a.revision, b.revision
    ));
    if let (Some(ta), Some(tb)) = (
        safety_tiers(a.margin_safety.as_ref()),
        safety_tiers(b.margin_safety.as_ref()),
    ) {
        text.push_str(
            &style.table_heading("Exceeded rate per tier and material bucket, Wilson 95% interval"),
        );
        let mut t = Table::new([
            "tier",
            "bucket",
            "A exceeded / exits",
            "A rate [95% CI]",
            "B exceeded / exits",
            "B rate [95% CI]",
            "B flags",
        ]);
        for ((name, xa), (_, xb)) in ta.iter().zip(tb.iter()) {
            for (bucket, (x, y)) in xa.iter().zip(xb.iter()).enumerate() {
                t.row([
                    name.to_string(),
                    bucket.to_string(),
                    format!("{} / {}", x.exceeded, x.exits),
                    rate_with_interval(x.exceeded, x.exits, 3),
                    format!("{} / {}", y.exceeded, y.exits),
                    rate_with_interval(y.exceeded, y.exits, 3),
                    flags(y),
                ]);
            }
        }
        text.push_str(&format!("{}\n", t.render(style)));
    }
    text.push_str(
        &style.table_heading("Exit rate per tier and material bucket (share of eval calls)"),
    );
    let mut t = Table::new([
        "bucket",
        "A super-lazy",
        "B super-lazy",
        "A lazy",
        "B lazy",
        "A full",
        "B full",
    ]);
    let rows = |rate: &ExitRate| -> Vec<[u64; 3]> {
        let mut rows = rate.by_material_bucket.clone();
        rows.push(rate.exits);
        rows
    };
    let buckets = a.exit_rate.by_material_bucket.len();
    for (bucket, (x, y)) in rows(&a.exit_rate)
        .iter()
        .zip(rows(&b.exit_rate).iter())
        .enumerate()
    {
        let (cx, cy): (u64, u64) = (x.iter().sum(), y.iter().sum());
        let label = if bucket == buckets {
            "all".to_string()
        } else {
            bucket.to_string()
        };
        t.row([
            label,
            rate_with_interval(x[0], cx, 2),
            rate_with_interval(y[0], cy, 2),
            rate_with_interval(x[1], cx, 2),
            rate_with_interval(y[1], cy, 2),
            format!("{:.2}%", percent(x[2], cx)),
            format!("{:.2}%", percent(y[2], cy)),
        ]);
    }
    text.push_str(&format!("{}\n", t.render(style)));
    if let (Some(ra), Some(rb)) = (a.futility_recommended, b.futility_recommended) {
        let mut t = Table::new([
            "source tier".to_string(),
            format!("A recommended ({})", pct_label(percentile)),
            format!("B recommended ({})", pct_label(percentile)),
            "B current".to_string(),
        ]);
        for tier in 0..3 {
            let show = |v: Option<i32>| v.map_or("-".to_string(), |v| v.to_string());
            t.row([
                Tier::ALL[tier].name().to_string(),
                show(ra[tier]),
                show(rb[tier]),
                b.futility_current
                    .map_or("unknown".to_string(), |c| c[tier].to_string()),
            ]);
        }
        text.push_str(
            &style.table_heading("QSearch futility margins (FUTILITY_BASE_MARGIN_BY_SOURCE)"),
        );
        text.push_str(&format!("{}\n", t.render(style)));
    }
    // Markdown joins consecutive lines into one paragraph: a blank line keeps them apart.
    let end = if style == Style::Markdown {
        "\n\n"
    } else {
        "\n"
    };
    for warning in &calibration.stale {
        text.push_str(&format!("{warning}{end}"));
    }
    text.push_str(&format!("calibration files: {}\n", calibration.directory));
    text
}

/// `lab tables`: the generated block between its markers, and where it was applied.
pub(crate) fn margin_tables(block: &str, applied: Option<&Path>) -> String {
    let mut text = format!("{BEGIN_MARKER}{block}{END_MARKER}\n");
    if let Some(path) = applied {
        text.push_str(&format!(
            "\nrewrote the margin tables in {}\n\
             next: rebuild and re-run the whole pool (`lab calibrate WORKTREE`), or \
             `lab compare HEAD WORKTREE --calibrate`: exits reshape the search tree, so \
             buckets whose entries did not change can move too\n",
            path.display()
        ));
    }
    text
}
