//! Text reports of calibration files: percentile tables, margin safety with Wilson intervals,
//! exit rates, QSearch futility recommendations, and the A/B view of `compare --calibrate`.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, Table};
use squall::calibrate::stats::{wilson_interval, Z95};

use super::data::{CalibrationFile, Tally};

/// The default percentile spread of `lab hist` and the calibration report.
pub const SPREAD: [f64; 7] = [2.0, 5.0, 10.0, 50.0, 90.0, 95.0, 98.0];
/// Percentile of `qfutility_excess` recommended as the futility margin.
pub const DEFAULT_PERCENTILE: f64 = 98.0;
/// A recommendation further than this from the current margin (or from A's) is stale.
pub const STALE_FRACTION: f64 = 0.25;
/// The target: every bucket's exceeded-rate upper bound at or below 1%.
pub const TARGET_UPPER: f64 = 0.01;
/// Below this many distinct positions, or above this share from one position, a rate is
/// flagged as resting on too little evidence.
pub const MIN_POSITIONS: u64 = 30;
pub const MAX_SHARE: f64 = 0.10;

/// Histogram sets: name in the file, title, what the row index is.
pub const SETS: [(&str, &str, &str); 4] = [
    (
        "lazy_residual",
        "Lazy residual (full - lazy baseline, without king), cp",
        "side bucket",
    ),
    (
        "super_lazy_residual",
        "Super-lazy residual (full - material, without king), cp",
        "side bucket",
    ),
    ("king", "King term, cp", "attacker bucket"),
    (
        "qfutility_excess",
        "QSearch futility excess (real score - estimate), cp",
        "source tier",
    ),
];

pub const TIER_NAMES: [&str; 3] = ["super-lazy", "lazy", "full"];

fn table(header: Vec<String>) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(header);
    for index in 1..table.column_count() {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

fn pct_label(p: f64) -> String {
    format!("p{p}")
}

pub fn header(file: &CalibrationFile, origin: &str) -> String {
    format!(
        "calibration {origin}: {} positions, depth {}, {} nodes, modes {}, engine features [{}]\n",
        file.positions,
        file.depth,
        file.nodes,
        file.modes.join(","),
        file.engine.features.join(",")
    )
}

/// The percentile table of one histogram set, or `None` when the file lacks it.
pub fn percentile_section(
    file: &CalibrationFile,
    set: &str,
    percentiles: &[f64],
) -> Option<String> {
    let hists = file.histogram_set(set)?;
    let (_, title, row) = SETS.iter().find(|(name, _, _)| *name == set)?;
    let mut head = vec![row.to_string(), "samples".to_string()];
    head.extend(percentiles.iter().map(|&p| pct_label(p)));
    let mut t = table(head);
    for (index, h) in hists.iter().enumerate() {
        let label = if set == "qfutility_excess" {
            TIER_NAMES
                .get(index)
                .map_or(index.to_string(), |n| n.to_string())
        } else {
            index.to_string()
        };
        let mut cells = vec![label, h.count().to_string()];
        cells.extend(
            percentiles
                .iter()
                .map(|&p| h.percentile(p).map_or("-".to_string(), |v| v.to_string())),
        );
        t.add_row(cells);
    }
    Some(format!("\n{title} [{set}]\n{t}\n"))
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
    if t.exits == 0 {
        return String::new();
    }
    let mut flags = Vec::new();
    let (_, hi) = wilson_interval(t.exceeded, t.exits, Z95);
    if hi > TARGET_UPPER {
        flags.push("upper > 1%");
    }
    if t.positions < MIN_POSITIONS {
        flags.push("few positions");
    }
    if t.max_from_one_position as f64 > MAX_SHARE * t.exits as f64 {
        flags.push("one position dominates");
    }
    flags.join(", ")
}

fn sum_tallies(tallies: &[Tally]) -> Tally {
    let mut all = Tally::default();
    for t in tallies {
        all.exits += t.exits;
        all.exceeded += t.exceeded;
        all.positions = all.positions.max(t.positions);
        all.max_from_one_position = all.max_from_one_position.max(t.max_from_one_position);
    }
    all
}

fn safety_tiers(file: &CalibrationFile) -> Option<[(&'static str, &[Tally]); 2]> {
    let safety = file.margin_safety.as_ref()?;
    Some([
        ("super-lazy", &safety.super_lazy.by_material_bucket),
        ("lazy", &safety.lazy.by_material_bucket),
    ])
}

pub fn margin_safety_section(file: &CalibrationFile) -> Option<String> {
    let tiers = safety_tiers(file)?;
    let mut text = String::from(
        "\nMargin safety: exits the full evaluation contradicts (exceeded / exits), Wilson 95% \
         interval, distinct positions, largest single position's share of the exits\n",
    );
    for (name, tallies) in tiers {
        let mut t = table(
            [
                "material bucket",
                "exceeded / exits",
                "rate [95% CI]",
                "positions",
                "largest share",
                "flags",
            ]
            .map(String::from)
            .to_vec(),
        );
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
            t.add_row(vec![
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
        text.push_str(&format!("{name} tier\n{t}\n"));
    }
    Some(text)
}

pub fn exit_rate_section(file: &CalibrationFile) -> String {
    let mut t = table(
        [
            "material bucket",
            "eval calls",
            "super-lazy exits [95% CI]",
            "lazy exits [95% CI]",
            "full",
        ]
        .map(String::from)
        .to_vec(),
    );
    let rows = file
        .exit_rate
        .by_material_bucket
        .iter()
        .enumerate()
        .map(|(b, e)| (b.to_string(), *e))
        .chain([("all".to_string(), file.exit_rate.exits)]);
    for (bucket, exits) in rows {
        let calls: u64 = exits.iter().sum();
        t.add_row(vec![
            bucket,
            calls.to_string(),
            rate_with_interval(exits[0], calls, 2),
            rate_with_interval(exits[1], calls, 2),
            format!("{:.2}%", percent(exits[2], calls)),
        ]);
    }
    format!("\nExit rate per tier and material bucket (share of eval calls)\n{t}\n")
}

/// Recommended futility margins: the chosen percentile of `qfutility_excess` per source tier.
pub fn futility_recommendation(
    file: &CalibrationFile,
    percentile: f64,
) -> Option<[Option<i32>; 3]> {
    let hists = file.histogram_set("qfutility_excess")?;
    let mut out = [None; 3];
    for (slot, h) in out.iter_mut().zip(&hists) {
        *slot = h.percentile(percentile);
    }
    Some(out)
}

fn relative_change(new: i32, old: i32) -> f64 {
    if old == 0 {
        if new == 0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (new - old) as f64 / old.abs() as f64
    }
}

pub fn futility_section(
    file: &CalibrationFile,
    current: Option<[i32; 3]>,
    percentile: f64,
) -> Option<String> {
    let recommended = futility_recommendation(file, percentile)?;
    let hists = file.histogram_set("qfutility_excess")?;
    let mut t = table(
        [
            "source tier".to_string(),
            "samples".to_string(),
            format!("recommended ({})", pct_label(percentile)),
            "current FUTILITY_BASE_MARGIN_BY_SOURCE".to_string(),
            "change".to_string(),
        ]
        .to_vec(),
    );
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
        t.add_row(vec![
            TIER_NAMES[tier].to_string(),
            hists.get(tier).map_or(0, |h| h.count()).to_string(),
            rec.map_or("-".to_string(), |v| v.to_string()),
            cur.map_or("unknown".to_string(), |v| v.to_string()),
            change,
        ]);
    }
    Some(format!(
        "\nQSearch futility: recommended FUTILITY_BASE_MARGIN_BY_SOURCE \
         (engine/src/search/mod.rs) per source tier\n{t}\n"
    ))
}

/// Everything `lab calibrate` and `lab calibrate merge` print.
pub fn full_report(
    file: &CalibrationFile,
    origin: &str,
    futility: Option<[i32; 3]>,
    percentile: f64,
) -> String {
    let mut text = header(file, origin);
    for (set, _, _) in SETS.iter().take(3) {
        if let Some(section) = percentile_section(file, set, &SPREAD) {
            text.push_str(&section);
        }
    }
    if let Some(section) = margin_safety_section(file) {
        text.push_str(&section);
    }
    text.push_str(&exit_rate_section(file));
    if let Some(section) = futility_section(file, futility, percentile) {
        text.push_str(&section);
    }
    text
}

/// One revision's calibration in the A/B view.
pub struct Side<'a> {
    pub label: &'a str,
    pub file: &'a CalibrationFile,
    pub futility: Option<[i32; 3]>,
}

/// The `compare --calibrate` section: exceeded and exit rates side by side, and stale
/// futility margins.
pub fn compare_section(a: &Side, b: &Side, percentile: f64) -> String {
    let mut text = format!(
        "\nCalibration (depth {}, {} positions): A = {}, B = {}\n",
        b.file.depth, b.file.positions, a.label, b.label
    );
    if let (Some(ta), Some(tb)) = (safety_tiers(a.file), safety_tiers(b.file)) {
        text.push_str("\nExceeded rate per tier and material bucket, Wilson 95% interval\n");
        let mut t = table(
            [
                "tier",
                "bucket",
                "A exceeded / exits",
                "A rate [95% CI]",
                "B exceeded / exits",
                "B rate [95% CI]",
                "B flags",
            ]
            .map(String::from)
            .to_vec(),
        );
        for ((name, xa), (_, xb)) in ta.iter().zip(tb.iter()) {
            for (bucket, (x, y)) in xa.iter().zip(xb.iter()).enumerate() {
                t.add_row(vec![
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
        text.push_str(&format!("{t}\n"));
    }
    text.push_str("\nExit rate per tier and material bucket (share of eval calls)\n");
    let mut t = table(
        [
            "bucket",
            "A super-lazy",
            "B super-lazy",
            "A lazy",
            "B lazy",
            "A full",
            "B full",
        ]
        .map(String::from)
        .to_vec(),
    );
    let rows = |f: &CalibrationFile| -> Vec<[u64; 3]> {
        let mut rows = f.exit_rate.by_material_bucket.clone();
        rows.push(f.exit_rate.exits);
        rows
    };
    for (bucket, (x, y)) in rows(a.file).iter().zip(rows(b.file).iter()).enumerate() {
        let (cx, cy): (u64, u64) = (x.iter().sum(), y.iter().sum());
        let label = if bucket == a.file.exit_rate.by_material_bucket.len() {
            "all".to_string()
        } else {
            bucket.to_string()
        };
        t.add_row(vec![
            label,
            rate_with_interval(x[0], cx, 2),
            rate_with_interval(y[0], cy, 2),
            rate_with_interval(x[1], cx, 2),
            rate_with_interval(y[1], cy, 2),
            format!("{:.2}%", percent(x[2], cx)),
            format!("{:.2}%", percent(y[2], cy)),
        ]);
    }
    text.push_str(&format!("{t}\n"));
    let warnings = stale_futility(a, b, percentile);
    if let (Some(ra), Some(rb)) = (
        futility_recommendation(a.file, percentile),
        futility_recommendation(b.file, percentile),
    ) {
        let mut t = table(
            [
                "source tier".to_string(),
                format!("A recommended ({})", pct_label(percentile)),
                format!("B recommended ({})", pct_label(percentile)),
                "B current".to_string(),
            ]
            .to_vec(),
        );
        for tier in 0..3 {
            let show = |v: Option<i32>| v.map_or("-".to_string(), |v| v.to_string());
            t.add_row(vec![
                TIER_NAMES[tier].to_string(),
                show(ra[tier]),
                show(rb[tier]),
                b.futility
                    .map_or("unknown".to_string(), |c| c[tier].to_string()),
            ]);
        }
        text.push_str(&format!(
            "\nQSearch futility margins (FUTILITY_BASE_MARGIN_BY_SOURCE)\n{t}\n"
        ));
    }
    for warning in warnings {
        text.push_str(&format!("{warning}\n"));
    }
    text
}

/// STALE warnings: B's recommended margin differs from B's current margin, or from A's
/// recommendation, by more than [`STALE_FRACTION`].
pub fn stale_futility(a: &Side, b: &Side, percentile: f64) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(rb) = futility_recommendation(b.file, percentile) else {
        return warnings;
    };
    let ra = futility_recommendation(a.file, percentile);
    for tier in 0..3 {
        let Some(new) = rb[tier] else { continue };
        if let Some(current) = b.futility.map(|c| c[tier]) {
            let rel = relative_change(new, current);
            if rel.abs() > STALE_FRACTION {
                warnings.push(format!(
                    "STALE: {} futility margin {current} of B differs by {:+.0}% from B's \
                     recommendation {new} ({})",
                    TIER_NAMES[tier],
                    100.0 * rel,
                    pct_label(percentile)
                ));
            }
        }
        if let Some(old) = ra.and_then(|r| r[tier]) {
            let rel = relative_change(new, old);
            if rel.abs() > STALE_FRACTION {
                warnings.push(format!(
                    "STALE: {} futility recommendation moved {:+.0}% from A ({old}) to B ({new}): \
                     the new tables changed QSearch's estimate errors",
                    TIER_NAMES[tier],
                    100.0 * rel
                ));
            }
        }
    }
    warnings
}
