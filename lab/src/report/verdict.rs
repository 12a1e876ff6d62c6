//! The `lab verdict` and `lab speed-elo` sections: the Elo split (search, speed, total) with
//! the decision, and the fitted Elo per doubling with its points. Terminal and markdown lay out
//! the same rows.

use super::comparison::paired_rounds_line;
use super::style::Style;
use super::table::Table;
use crate::digits::{signed, thousands};
use crate::games::sprt::Estimate;
use crate::verdict::speed_elo::EloPerDoubling;
use crate::verdict::{
    node_odds_factor, BudgetFrom, Decision, GamesAt, SearchGames, SpeedEloReport, SpeedSource,
    VerdictReport,
};

/// An Elo with its 95% interval: `-3.7 ± 6.4 (95% CI -10.1 to +2.7)`; `unbounded` when the
/// verdict could not bound it (the JSON's null).
pub(crate) fn estimate(e: Estimate) -> String {
    if ![e.value, e.ci_low, e.ci_high].iter().all(|x| x.is_finite()) {
        return "unbounded".to_string();
    }
    format!(
        "{} ± {:.1} (95% CI {} to {})",
        signed(e.value, 1),
        (e.ci_high - e.ci_low) / 2.0,
        signed(e.ci_low, 1),
        signed(e.ci_high, 1)
    )
}

/// The decision in words, with its exit code.
pub(crate) fn decision(decision: Decision) -> &'static str {
    match decision {
        Decision::H1 => "H1 accepted: B is at least as good as the bounds ask (exit 0)",
        Decision::H0 => "H0 accepted: B is worse than the bounds allow (exit 1)",
        Decision::Undecided => "undecided within the rounds or games allowed (exit 3)",
        Decision::Interrupted => {
            "interrupted before a decision: the verdict of the games so far; `--resume` \
             continues them (exit 130)"
        }
    }
}

/// `1m 12s`, `48s`.
fn wall_time(seconds: f64) -> String {
    let whole = seconds.round() as u64;
    if whole >= 60 {
        format!("{}m {:02}s", whole / 60, whole % 60)
    } else {
        format!("{whole}s")
    }
}

fn per_doubling(k: &Estimate) -> String {
    format!(
        "{:.1} Elo per doubling (95% CI {:.1} to {:.1})",
        k.value, k.ci_low, k.ci_high
    )
}

/// The speed term as it was measured: paired NPS with its interval, or an exact instruction
/// ratio; this run's for reference when B kept the resumed games' node odds.
fn speed_row(report: &VerdictReport) -> [String; 2] {
    let [name, value] = measured_speed_row(report);
    if report.node_odds_resumed() {
        return [
            name,
            format!("{value} (this run's, for reference: B kept the resumed games' odds)"),
        ];
    }
    [name, value]
}

fn measured_speed_row(report: &VerdictReport) -> [String; 2] {
    match report.speed_from {
        SpeedSource::Nps => [
            "speed (B vs A, paired NPS)".to_string(),
            format!(
                "{} over {} rounds",
                super::ratio_change_with_ci(&report.speed_ratio),
                report.rounds
            ),
        ],
        SpeedSource::Instructions => {
            let depth = report
                .comparison
                .a
                .instructions
                .depth
                .map_or_else(|| "the bench's depth".to_string(), |d| format!("depth {d}"));
            [
                "speed (B vs A, instructions)".to_string(),
                format!(
                    "{}: A's instructions per node over B's (callgrind, {depth}; exact)",
                    super::ratio_change(report.speed_ratio.value)
                ),
            ]
        }
        SpeedSource::Games => [
            "speed (B vs A, NPS in the games)".to_string(),
            format!(
                "{} over {} games, {}",
                super::ratio_change_with_ci(&report.speed_ratio),
                report
                    .speed_games
                    .map_or_else(|| "the".to_string(), thousands),
                super::nps_interval_words(report.speed_wider_interval())
            ),
        ],
    }
}

pub(crate) fn render_verdict(report: &VerdictReport, style: Style) -> String {
    let c = &report.comparison;
    let side = |s: &crate::analysis::compare::SideSummary| {
        let commit = s.revision.commit.as_deref().unwrap_or("worktree");
        format!(
            "{} ({})",
            s.revision.spec,
            crate::input::short_commit(commit)
        )
    };
    let mut out = style.heading(&format!(
        "lab verdict: A = {}  B = {}  at {}, SPRT elo0 {:+} elo1 {:+} (alpha {}, beta {})",
        side(&c.a),
        side(&c.b),
        report.tc,
        report.sprt.elo0,
        report.sprt.elo1,
        report.sprt.alpha,
        report.sprt.beta
    ));
    out.push('\n');
    let signature = if c.signature.changed {
        format!(
            "changed: {} → {} nodes",
            thousands(c.a.signature),
            thousands(c.b.signature)
        )
    } else {
        format!("same ({} nodes): the same search", thousands(c.a.signature))
    };
    let model = match &report.model {
        Some(model) => format!(
            "{} at {}, fitted on {}{} ({} games, {})",
            per_doubling(&model.elo_per_doubling),
            report.tc,
            model.fitted_on,
            if model.same_binary {
                ""
            } else {
                ", another engine tree"
            },
            thousands(model.games),
            model.date
        ),
        None => format!(
            "none for this machine at {}: node odds need none (`lab speed-elo` fits one)",
            report.tc
        ),
    };
    let speed_elo = match report.speed_elo {
        Some(elo) if report.games_at == GamesAt::NodeOdds && report.search.is_some() => {
            format!(
                "{} (for reference: the games carry the speed)",
                estimate(elo)
            )
        }
        Some(elo) => estimate(elo),
        None => "— (no model)".to_string(),
    };
    let mut rows = vec![
        ["signature".to_string(), signature],
        speed_row(report),
        ["model".to_string(), model],
        ["speed Elo".to_string(), speed_elo],
    ];
    match &report.search {
        None => rows.push([
            "search Elo".to_string(),
            "+0.0 (same signature: no games needed)".to_string(),
        ]),
        Some(search) => rows.extend(games_rows(report, search)),
    }
    rows.push([
        match report.games_at {
            GamesAt::NodeOdds if report.search.is_some() => "total Elo (games at node odds)",
            _ => "total Elo",
        }
        .to_string(),
        estimate(report.total_elo),
    ]);
    rows.push([
        // With no games the decision is the speed's fixed-sample test, not this LLR.
        if report.search.is_none() {
            "LLR (for reference: no games, decided by the speed's interval)"
        } else {
            "LLR"
        }
        .to_string(),
        format!(
            "{:.2} (bounds {:.2}, {:.2}){}",
            report.llr,
            report.llr_lower,
            report.llr_upper,
            super::matches::pace(
                report.games_to_decision,
                report
                    .search
                    .as_ref()
                    .and_then(|search| search.games.games_per_minute)
            )
        ),
    ]);
    rows.push(["games".to_string(), thousands(report.games)]);
    rows.push(["wall time".to_string(), wall_time(report.wall_time_s)]);
    out.push_str(
        &Table::new(["figure", "value"])
            .with_rows(rows)
            .render(style),
    );
    out.push('\n');
    if style == Style::Terminal {
        out.push('\n');
    }
    // Resumed games at node odds were charged their own odds, not this run's rounds.
    let charged = report.speed_from == SpeedSource::Nps && !report.node_odds_resumed();
    out.push_str(&format!("{}\n", paired_rounds_line(c, charged)));
    for note in &report.notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    out.push_str(&format!("Decision: {}\n", decision(report.decision)));
    out
}

/// The rows of a verdict's fixed-node games: the search's Elo, the budgets, the games' search
/// and the bounds they played.
fn games_rows(report: &VerdictReport, search: &SearchGames) -> Vec<[String; 2]> {
    let mut rows = Vec::new();
    if let Some(search_elo) = report.search_elo {
        rows.push(["search Elo (fixed nodes)".to_string(), estimate(search_elo)]);
    }
    let budget = budget_text(search, &report.tc);
    rows.push(match report.games_at {
        GamesAt::EqualNodes => [
            "node budget".to_string(),
            format!(
                "{} nodes per move ({budget})",
                thousands(search.nodes_per_move)
            ),
        ],
        GamesAt::NodeOdds => [
            "node budgets (node odds)".to_string(),
            format!(
                "A {} nodes per move ({budget}); B {} (× {:.4}, {})",
                thousands(search.nodes_per_move),
                thousands(search.b_nodes_per_move),
                node_odds_factor(search.nodes_per_move, search.b_nodes_per_move).value,
                if report.node_odds_resumed() {
                    format!(
                        "the resumed games' odds: the speed ratio's 95% lower end of the run \
                         that started them; this run's is {:.4}",
                        report.speed_ratio.ci_low
                    )
                } else {
                    "its speed ratio's 95% lower end".to_string()
                }
            ),
        ],
    });
    rows.push([
        "adjudication".to_string(),
        search.games.adjudication.words(),
    ]);
    rows.extend(super::matches::search_rows(
        &search.games.summary.search_in_games,
        search.games.summary.nps_ratio_in_games.as_ref(),
    ));
    rows.extend(super::matches::sittings_row(
        &search.games.summary.nps_ratio_by_sitting,
    ));
    let bounds = format!(
        "elo0 {}, elo1 {}",
        signed(search.shifted_sprt.elo0, 2),
        signed(search.shifted_sprt.elo1, 2)
    );
    rows.push([
        "games' SPRT bounds".to_string(),
        match (report.games_at, report.speed_elo) {
            (GamesAt::EqualNodes, Some(speed)) => format!(
                "{bounds} (shifted by the speed's 95% lower bound {})",
                signed(speed.ci_low, 2)
            ),
            _ => format!("{bounds} (as given: the games' Elo is the total)"),
        },
    ]);
    rows
}

/// How A's node budget was reached, in words.
fn budget_text(search: &SearchGames, tc: &str) -> String {
    match search.budget_from {
        BudgetFrom::Speed => format!(
            "A's {} NPS × {} ms, the clock's typical move",
            thousands(search.nps.round() as u64),
            search.typical_move_ms
        ),
        BudgetFrom::ClockGames | BudgetFrom::Stored => format!(
            "A's {} NPS × {:.1} ms, its mean move in {} clock games at {}{}",
            thousands(search.nps.round() as u64),
            search.clock_probe.map_or(0.0, |probe| probe.mean_time_ms),
            search.clock_probe.map_or(0, |probe| probe.games),
            tc,
            match (search.budget_from, &search.budget_store) {
                (BudgetFrom::Stored, Some(store)) => format!(
                    ", played {} and stored",
                    crate::calendar::utc_minute(store.measured_unix)
                ),
                (BudgetFrom::Stored, None) => ", played earlier and stored".to_string(),
                _ => String::new(),
            }
        ),
        BudgetFrom::Given => "--nodes".to_string(),
        BudgetFrom::Resumed => "the resumed games' budget".to_string(),
    }
}

fn points_rows(k: &EloPerDoubling) -> Vec<[String; 4]> {
    k.points
        .iter()
        .map(|point| {
            [
                format!("{}", point.odds),
                format!("{:+.2}", point.odds.log2()),
                thousands(point.games),
                estimate(point.elo),
            ]
        })
        .collect()
}

pub(crate) fn render_speed_elo(report: &SpeedEloReport, style: Style) -> String {
    let mut out = String::new();
    for model in &report.models {
        out.push_str(&style.heading(&format!(
                "lab speed-elo: {} [{}] at {}, machine {} ({})",
                style.code(&model.engine.spec),
                model
                    .engine
                    .commit
                    .as_deref()
                    .map_or("exe", crate::input::short_commit),
                model.limit.pgn_time_control(),
                style.prose(&model.machine_id),
                style.prose(&model.date)
            )));
        out.push('\n');
        out.push_str(
            &Table::new(["odds (B's clock)", "log2", "games", "Elo of B"])
                .with_rows(points_rows(&model.elo_per_doubling))
                .render(style),
        );
        out.push('\n');
        let k = &model.elo_per_doubling;
        out.push_str(&format!(
            "{}Fit: Elo = k·log2(odds), k = {}\n\n",
            if style == Style::Terminal { "\n" } else { "" },
            per_doubling(&Estimate {
                value: k.value,
                ci_low: k.ci_low,
                ci_high: k.ci_high
            })
        ));
    }
    if report.models.is_empty() {
        out.push_str("No speed-Elo model is stored: fit one with `lab speed-elo REV --tc T`.\n");
    }
    for (path, problem) in &report.unusable {
        out.push_str(&format!("Skipped {path}: {problem}\n"));
    }
    if let Some(path) = &report.stored {
        out.push_str(&format!("Stored as {path}\n"));
    }
    out
}
