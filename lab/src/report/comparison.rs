//! The comparison section (`lab compare`, `lab tiers`, `lab baseline check`, and the commit a
//! bisection found against its parent): its rows and lines, and the one layout of them for
//! either style.

use super::eval_exits::{
    bucket_rows, exit_rate_rows, search_split_missing_line, search_split_rows, SEARCH_SPLIT_HEADER,
    TIER_NAMES,
};
use super::style::Style;
use super::table::render_rows;
use super::{
    change_word, describe_revision, describe_settings, functions, seconds, signed_pct,
    NO_EVAL_EXITS,
};
use crate::analysis::compare::{
    Comparison, Figure, FigureBasis, FigureKind, SideSummary, SpeedEloEstimate,
};
use crate::analysis::functions::FunctionsWhy;
use crate::analysis::stats::{Change, RatioInterval};
use crate::digits::{signed, thousands};
use crate::schema::Kind;

/// The comparison: its title, what the reader must know first, the figures, the eval exits,
/// the function movers, the verdict and, with `--calibrate`, both calibrations.
pub(crate) fn render(comparison: &Comparison, style: Style) -> String {
    render_as(comparison, style, Standing::Alone)
}

/// Whether a comparison is the report or one step inside another (a bisection): its closing
/// line gives the lab's exit code only when it is the report, since a bisection's own exit
/// stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    Alone,
    BisectionStep,
}

pub(crate) fn render_as(comparison: &Comparison, style: Style, standing: Standing) -> String {
    let mut out = title(comparison, style);
    for warning in &comparison.warnings {
        out.push_str(&style.warning(&warning.to_string()));
    }
    for note in &comparison.notes {
        out.push_str(&style.note(&note.to_string()));
    }
    // Terminal call-outs are single lines: a blank line ends their block.
    if style == Style::Terminal && !(comparison.warnings.is_empty() && comparison.notes.is_empty())
    {
        out.push('\n');
    }
    out.push_str(&render_rows(
        style,
        FIGURES_HEADER,
        comparison_rows(comparison),
    ));
    out.push('\n');
    out.push_str(&style.paragraph(&speed_line(comparison)));
    if let Some(line) = speed_elo_line(comparison) {
        out.push_str(&style.paragraph(&line));
    }
    out.push_str(&format!("{}\n\n", instructions_line(comparison)));
    match (exit_rate_rows(comparison), bucket_rows(comparison)) {
        (Some(rates), Some(buckets)) => {
            out.push_str(&style.heading(match style {
                Style::Terminal => "Eval exits (share of eval calls)",
                Style::Markdown => "Eval exits",
            }));
            out.push_str(&render_rows(style, ["tier", "A", "B", "delta"], rates));
            out.push_str(&style.folded(
                "Eval exits by material bucket (A → B)",
                &render_rows(
                    style,
                    [
                        "bucket",
                        "evals A",
                        "evals B",
                        TIER_NAMES[0],
                        TIER_NAMES[1],
                        TIER_NAMES[2],
                    ],
                    buckets,
                ),
            ));
        }
        _ => out.push_str(&style.paragraph(NO_EVAL_EXITS)),
    }
    if let Some(rows) = search_split_rows(comparison) {
        let heading = "Eval exits by search (share of each tier's exits)";
        let table = render_rows(style, SEARCH_SPLIT_HEADER, rows);
        match style {
            Style::Terminal => out.push_str(&format!("\n{}{table}", style.heading(heading))),
            Style::Markdown => out.push_str(&format!("{}{table}\n", style.heading(heading))),
        }
    }
    if let Some(line) = search_split_missing_line(comparison) {
        match style {
            // The line follows a table or a line, and the verdict's blank line follows it.
            Style::Terminal => {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&line);
            }
            Style::Markdown => out.push_str(&style.paragraph(&line)),
        }
    }
    if let Some(functions) = &comparison.functions {
        let heading = style.heading(&functions::title(functions));
        if style == Style::Terminal {
            out.push('\n');
        }
        out.push_str(&heading);
        out.push_str(&render_rows(
            style,
            functions::MOVER_HEADER,
            functions::mover_rows(functions),
        ));
        out.push('\n');
    }
    if style == Style::Terminal {
        out.push('\n');
    }
    let line = match standing {
        Standing::Alone => verdict_line(comparison),
        Standing::BisectionStep => {
            format!("Verdict of this step: {}", change_word(comparison.change))
        }
    };
    out.push_str(&format!("{}\n", style.emphasis(&line)));
    if let Some(calibration) = &comparison.calibration {
        out.push_str(&super::calibration::compare_section(calibration, style));
    }
    out
}

/// Who was compared with whom under which settings; in markdown the verdict too.
fn title(comparison: &Comparison, style: Style) -> String {
    let instructions = comparison.a.instructions.measured || comparison.b.instructions.measured;
    let settings = describe_settings(&comparison.settings, comparison.b.depth, instructions);
    match style {
        Style::Terminal => format!(
            "lab {}: A = {}  B = {}\n{settings}\n\n",
            comparison.kind,
            side_title(comparison.kind, &comparison.a),
            side_title(comparison.kind, &comparison.b),
        ),
        Style::Markdown => format!(
            "## lab {}: {} {} → {} {} — {}\n\n{settings}\n\n",
            comparison.kind,
            style.prose(&comparison.a.label),
            style.code(&comparison.a.revision.spec),
            style.prose(&comparison.b.label),
            style.code(&comparison.b.revision.spec),
            change_word(comparison.change),
        ),
    }
}

/// The sides of a baseline check say what they are (the baseline, the revision); every other
/// comparison's sides are simply A and B.
fn side_title(kind: Kind, side: &SideSummary) -> String {
    match kind {
        Kind::BaselineCheck => format!("{} {}", side.label, describe_revision(side)),
        _ => describe_revision(side),
    }
}

/// The header of the figures table: the change column is the paired estimate the verdict
/// reads (or a count's exact change), the unpaired change of the medians stands apart.
pub(crate) const FIGURES_HEADER: [&str; 5] = [
    "figure",
    "A",
    "B",
    "B vs A (paired, 95% CI, n rounds)",
    "medians B vs A (unpaired)",
];

/// The figures table of a comparison, as `FIGURES_HEADER` names its columns.
pub(crate) fn comparison_rows(comparison: &Comparison) -> Vec<[String; 5]> {
    figure_rows(
        &comparison.figures,
        (comparison.a.runs, comparison.b.runs),
        comparison
            .a
            .instructions
            .depth
            .or(comparison.b.instructions.depth),
    )
}

/// The rows of `figures`, with the runs behind each side's medians and the instruction depth
/// for the labels. The HTML page calls it on the figures of the JSON, so every format prints
/// the same cells.
pub(crate) fn figure_rows(
    figures: &[Figure],
    runs: (usize, usize),
    instruction_depth: Option<u32>,
) -> Vec<[String; 5]> {
    figures
        .iter()
        .map(|figure| {
            let value = |value: Option<f64>| {
                value.map_or_else(|| "—".to_string(), |v| figure_value(figure.figure, v))
            };
            [
                figure_label(figure.figure, runs, instruction_depth),
                value(figure.a),
                value(figure.b),
                figure_change(figure),
                figure
                    .unpaired_change_pct
                    .map_or_else(|| "—".to_string(), signed_pct),
            ]
        })
        .collect()
}

fn figure_label(kind: FigureKind, runs: (usize, usize), instruction_depth: Option<u32>) -> String {
    match kind {
        FigureKind::Signature => "signature (nodes)".to_string(),
        FigureKind::Nps => format!("NPS (median of {} / {})", runs.0, runs.1),
        FigureKind::TimePerNode => "time per node (median)".to_string(),
        FigureKind::BenchTime => "bench time (to depth, median)".to_string(),
        FigureKind::Instructions => match instruction_depth {
            Some(depth) => format!("instructions (depth {depth})"),
            None => "instructions".to_string(),
        },
        FigureKind::InstructionsPerNode => "instructions per node".to_string(),
    }
}

fn figure_value(kind: FigureKind, value: f64) -> String {
    if !value.is_finite() {
        return "—".to_string();
    }
    match kind {
        FigureKind::Signature | FigureKind::Nps | FigureKind::Instructions => {
            thousands(value.round().max(0.0) as u64)
        }
        FigureKind::TimePerNode => format!("{value:.1} ns"),
        FigureKind::BenchTime => seconds(value),
        FigureKind::InstructionsPerNode => format!("{value:.1}"),
    }
}

/// `-2.84% (95% CI -4.10 to -1.52, n=6)` for a paired change; a count's change as it is.
fn figure_change(figure: &Figure) -> String {
    match (figure.basis, figure.change_pct) {
        (FigureBasis::NotComparable, _) => NOT_COMPARABLE.to_string(),
        (FigureBasis::Exact, Some(change)) => {
            if figure.figure == FigureKind::Signature && change == 0.0 {
                "same".to_string()
            } else {
                signed_pct(change)
            }
        }
        (FigureBasis::Paired, Some(change)) => {
            let rounds = figure.rounds.unwrap_or(0);
            match (figure.ci_low_pct, figure.ci_high_pct) {
                (Some(low), Some(high)) => format!(
                    "{} (95% CI {} to {}, n={rounds})",
                    signed_pct(change),
                    signed(low, 2),
                    signed(high, 2)
                ),
                _ => format!("{} (no CI, n={rounds})", signed_pct(change)),
            }
        }
        _ => "—".to_string(),
    }
}

/// The change column of a timing figure measured on another machine.
pub(crate) const NOT_COMPARABLE: &str = "not comparable";

/// `speed: +2.1% NPS ≈ +1.9 Elo at 10+0.1 (95% CI +1.2 to +2.7; model of <rev>, N games)`,
/// when a speed-Elo model was found.
pub(crate) fn speed_elo_line(comparison: &Comparison) -> Option<String> {
    let elo = comparison.speed_elo.as_ref()?;
    Some(format!("Speed in Elo: {}", speed_elo_words(elo)))
}

/// `+2.10% NPS ≈ +2.1 Elo at 2+0.02 (95% CI …)`: the terminal's line and the page's fact
/// alike.
pub(crate) fn speed_elo_words(elo: &SpeedEloEstimate) -> String {
    let other_tree = if elo.same_binary {
        ""
    } else {
        "; a model of another engine tree"
    };
    format!(
        "{} NPS ≈ {} Elo at {} (95% CI {} to {}; model of {}, {} games, \
         {:.1} Elo per doubling{other_tree})",
        signed_pct((elo.speed_ratio - 1.0) * 100.0),
        signed(elo.value, 1),
        elo.tc,
        signed(elo.ci_low, 1),
        signed(elo.ci_high, 1),
        elo.model_of,
        thousands(elo.games),
        elo.elo_per_doubling
    )
}

/// The interval's sample size is the rounds: every pair of a round shares its machine state.
pub(crate) fn speed_line(comparison: &Comparison) -> String {
    let speed = &comparison.speed;
    let Some(ratio) = speed.cost_ratio else {
        return "Speed: no paired timings".to_string();
    };
    if !speed.comparable {
        return format!(
            "Speed: not comparable, not judged (the baseline was measured in another setting; \
             see the warning). B/A time per node {:.4} over {} rounds, for reference only",
            ratio.estimate, ratio.rounds
        );
    }
    format!(
        "Speed: {} → {} (threshold {}%)",
        paired_figures(comparison, &ratio),
        change_word(speed.change),
        comparison.settings.thresholds.threshold_pct
    )
}

/// `B/A time per node 1.0232 (95% CI 1.0013 – 1.0456, t over 6 rounds; 222 per-position
/// pairs), paired NPS change -2.27%`
fn paired_figures(comparison: &Comparison, ratio: &RatioInterval) -> String {
    let confidence = (ratio.confidence * 100.0).round();
    let interval = if ratio.ci_low.is_finite() && ratio.ci_high.is_finite() {
        format!(
            "{confidence}% CI {:.4} – {:.4}, t over {} rounds",
            ratio.ci_low, ratio.ci_high, ratio.rounds
        )
    } else {
        format!("no CI from {} round", ratio.rounds)
    };
    format!(
        "B/A time per node {:.4} ({interval}; {} {} pairs), paired NPS change {}",
        ratio.estimate,
        ratio.pairs,
        comparison.speed.pairing.name(),
        comparison
            .speed
            .nps_change_pct
            .map_or_else(String::new, signed_pct),
    )
}

/// The paired rounds as a verdict shows them: figures without the threshold's word, which a
/// verdict does not decide by (it charges a speed in Elo), saying whether they were charged.
pub(crate) fn paired_rounds_line(comparison: &Comparison, charged: bool) -> String {
    let Some(ratio) = &comparison.speed.cost_ratio else {
        return "Paired rounds: no paired timings".to_string();
    };
    let role = if charged {
        "the speed charged"
    } else {
        "for reference, not charged"
    };
    format!(
        "Paired rounds ({role}): {}",
        paired_figures(comparison, ratio)
    )
}

pub(crate) fn instructions_line(comparison: &Comparison) -> String {
    let (a, b) = (&comparison.a.instructions, &comparison.b.instructions);
    let instructions = &comparison.instructions;
    let top_mover = match &comparison.functions {
        Some(functions) if functions.why == FunctionsWhy::InstructionsMoved => {
            functions.movers.first().map(|mover| {
                format!(
                    "{} ({})",
                    mover.function,
                    functions::describe_delta(mover.self_delta, mover.self_delta_pct_of_total)
                )
            })
        }
        _ => None,
    };
    instructions_sentence(&InstructionsFacts {
        skipped: a.skipped_reason.as_deref().or(b.skipped_reason.as_deref()),
        change_pct: instructions.per_node_change_pct,
        flagged: instructions.flagged,
        threshold_pct: comparison.settings.thresholds.instr_threshold_pct,
        signature_changed: comparison.signature.changed,
        comparable: instructions.comparable,
        change: instructions.change,
        top_mover,
    })
}

/// What the instructions line says, from a comparison or from its JSON (the HTML page).
pub(crate) struct InstructionsFacts<'a> {
    pub(crate) skipped: Option<&'a str>,
    pub(crate) change_pct: Option<f64>,
    pub(crate) flagged: bool,
    pub(crate) threshold_pct: f64,
    pub(crate) signature_changed: bool,
    pub(crate) comparable: bool,
    pub(crate) change: Change,
    /// The default attribution's first function with its change.
    pub(crate) top_mover: Option<String>,
}

pub(crate) fn instructions_sentence(facts: &InstructionsFacts) -> String {
    if let Some(reason) = facts.skipped {
        return format!("Instructions: skipped ({reason})");
    }
    let Some(change) = facts.change_pct else {
        return "Instructions: not comparable".to_string();
    };
    let flag = if facts.flagged {
        format!("changed by {}% or more", facts.threshold_pct)
    } else {
        format!("within {}%", facts.threshold_pct)
    };
    // The comparison judges instructions only for the same search on the same toolchain.
    let judgement = if facts.signature_changed {
        "not judged (the search changed)"
    } else if !facts.comparable {
        "not judged (different toolchain)"
    } else {
        change_word(facts.change)
    };
    let attribution = facts
        .top_mover
        .as_ref()
        .map_or_else(String::new, |mover| format!("; top mover {mover}"));
    format!(
        "Instructions: per node {} ({flag}) → {judgement}{attribution}",
        signed_pct(change)
    )
}

pub(crate) fn verdict_line(comparison: &Comparison) -> String {
    let code = if comparison.regression { 1 } else { 0 };
    format!("Verdict: {} (exit {code})", change_word(comparison.change))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::analysis::compare::{
        baseline_against_a_copy, compare, Criteria, Settings, Thresholds,
    };
    use crate::analysis::measure::{Instructions, Measured, Measurement};
    use crate::report::{json, Report};

    /// Compares a stored measurement with a copy whose instructions per node are 5% higher.
    fn five_percent_more_instructions(signature_changed: bool) -> Comparison {
        let thresholds = Thresholds {
            threshold_pct: 1.0,
            instr_threshold_pct: 0.5,
        };
        baseline_against_a_copy(Kind::Compare, thresholds, Criteria::local(false), |b| {
            if let Instructions::Measured { total, .. } = &mut b.instructions {
                *total += *total / 20;
            }
            if signature_changed {
                b.signature += 1;
            }
        })
    }

    #[test]
    fn instructions_are_judged_only_for_the_same_search() {
        let same = instructions_line(&five_percent_more_instructions(false));
        assert!(same.ends_with("→ REGRESSION"), "{same}");
        let changed = instructions_line(&five_percent_more_instructions(true));
        assert!(
            changed.ends_with("→ not judged (the search changed)"),
            "{changed}"
        );
    }

    #[test]
    fn bench_time_is_a_row_only_when_the_trees_differ() {
        let label = |rows: &[[String; 5]]| rows.iter().any(|r| r[0].starts_with("bench time"));
        assert!(!label(&comparison_rows(&five_percent_more_instructions(
            false
        ))));
        let changed = five_percent_more_instructions(true);
        let rows = comparison_rows(&changed);
        let row = rows
            .iter()
            .find(|r| r[0].starts_with("bench time"))
            .unwrap();
        // B differs from A only by one node counted in the same run times: the same time to
        // depth, at a slightly higher NPS.
        let a = &changed.a;
        assert_eq!(row[1], seconds(a.signature as f64 / a.nps.median * 1e3));
        assert!(a.bench_time_ms > 100.0, "{}", a.bench_time_ms);
        assert_eq!(row[1], row[2]);
        assert!(row[3].starts_with("+0.00% (95% CI "), "{row:?}");
    }

    #[test]
    fn timings_from_another_setting_are_not_printed_as_results() {
        let thresholds = Thresholds {
            threshold_pct: 1.0,
            instr_threshold_pct: 0.5,
        };
        let faster = |b: &mut Measurement| {
            for run in &mut b.runs_time_ns {
                for time in run.iter_mut() {
                    *time = *time * 9 / 10;
                }
            }
        };
        let criteria = Criteria {
            nps_comparable: false,
            machine_differences: vec!["CPU governor: powersave (baseline) vs performance".into()],
            ..Criteria::local(false)
        };
        let comparison = baseline_against_a_copy(Kind::BaselineCheck, thresholds, criteria, faster);
        let rows = comparison_rows(&comparison);
        for figure in ["NPS", "time per node"] {
            let row = rows.iter().find(|r| r[0].starts_with(figure)).unwrap();
            assert_eq!(row[3], NOT_COMPARABLE, "{row:?}");
        }
        let line = speed_line(&comparison);
        assert!(
            line.starts_with("Speed: not comparable, not judged"),
            "{line}"
        );
        assert!(!line.contains('%') && !line.contains("CI"), "{line}");
        assert!(comparison.warnings[0]
            .to_string()
            .contains("CPU governor: powersave"));

        let local =
            baseline_against_a_copy(Kind::Compare, thresholds, Criteria::local(false), faster);
        let line = speed_line(&local);
        assert!(
            line.contains("t over 6 rounds; 222 per-position pairs"),
            "{line}"
        );
        assert!(line.contains("→ improvement"), "{line}");
        let nps = comparison_rows(&local);
        assert!(
            nps.iter()
                .any(|r| r[0].starts_with("NPS") && r[3].starts_with("+11.11% (95% CI")),
            "{nps:?}"
        );
    }

    #[test]
    fn the_change_column_is_the_paired_estimate_the_verdict_reads() {
        let stored: crate::baseline::Baseline =
            serde_json::from_str(include_str!("../../../baselines/main.json")).unwrap();
        let mut a = stored.measurement;
        let steady = a.runs_time_ns[0].clone();
        for run in &mut a.runs_time_ns {
            run.clone_from(&steady);
        }
        // Load that hits B's runs unevenly: the median of B's runs and the paired rounds tell
        // different stories (unpaired +45.45% NPS, paired +34.84%).
        let mut b = a.clone();
        let rounds = b.runs_time_ns.len();
        for (round, run) in b.runs_time_ns.iter_mut().enumerate() {
            let factor = if round < rounds / 2 { 1.1 } else { 0.5 };
            for time in run.iter_mut() {
                *time = (*time as f64 * factor) as u64;
            }
        }
        let settings = Settings {
            rounds: rounds as u32,
            depth: None,
            instr_depth: 6,
            thresholds: Thresholds {
                threshold_pct: 1.0,
                instr_threshold_pct: 0.5,
            },
            positions: None,
        };
        let comparison = compare(
            Kind::Compare,
            settings,
            &Measured::new("A", a),
            &Measured::new("B", b),
            Criteria::local(false),
        );
        let rows = comparison_rows(&comparison);
        let row = |name: &str| {
            rows.iter()
                .find(|r| r[0].starts_with(name))
                .unwrap()
                .clone()
        };
        let paired_nps = comparison.speed.nps_change_pct.unwrap();
        let nps = row("NPS");
        assert!(
            nps[3].starts_with(&format!("{} (95% CI ", signed_pct(paired_nps))),
            "{nps:?}"
        );
        assert!(nps[3].ends_with(&format!("n={rounds})")), "{nps:?}");
        assert_eq!(nps[4], "+45.45%", "{nps:?}");
        assert!((paired_nps - 34.84).abs() < 0.01, "{paired_nps}");
        // A verdict shows the same paired figures, without the threshold's word.
        let compared = speed_line(&comparison);
        let figures = compared.strip_prefix("Speed: ").unwrap();
        let figures = &figures[..figures.find(" → ").unwrap()];
        assert!(figures.ends_with(&signed_pct(paired_nps)), "{compared}");
        for (charged, role) in [
            (true, "the speed charged"),
            (false, "for reference, not charged"),
        ] {
            let line = paired_rounds_line(&comparison, charged);
            assert_eq!(line, format!("Paired rounds ({role}): {figures}"));
        }
        let cost = comparison.speed.cost_ratio.unwrap();
        let time = row("time per node");
        assert!(
            time[3].starts_with(&signed_pct((cost.estimate - 1.0) * 100.0)),
            "{time:?}"
        );
        // The JSON carries the same figures.
        let json: serde_json::Value =
            serde_json::from_str(&json::render(&Report::Comparison(Box::new(comparison)))).unwrap();
        let figure = json["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["figure"] == "nps")
            .unwrap();
        assert_eq!(figure["basis"], "paired");
        assert!((figure["change_pct"].as_f64().unwrap() - paired_nps).abs() < 1e-9);
        assert!((figure["unpaired_change_pct"].as_f64().unwrap() - 45.4545).abs() < 0.01);
    }
}
