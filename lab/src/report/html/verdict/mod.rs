//! The page of `lab verdict` (`--export-html`, `lab report` of its JSON): the decision and the
//! Elo split with their intervals, the speed and the model behind its Elo, and, when games
//! were played, the fixed-node SPRT's LLR between its bounds (shifted by the speed, or as given
//! when the games were played at node odds).

pub(crate) mod elo_split;

use std::fmt::Write as _;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::calendar::utc_minute;
use crate::digits::{elo_bound, signed, thousands};
use crate::games::rules::AdjudicationRules;
use crate::games::summary::{NpsRatioInGames, NpsRatioOfRun, NpsRatioOfSitting, SearchInGames};
use crate::report::html::matches::{llr, speed_runs};
use crate::report::html::plot::Footer;
use crate::report::html::{fact, head, section, section_with};
use crate::report::nps_interval_words;
use crate::verdict::{node_odds_factor, wider_interval, Decision};
use elo_split::Bar;

#[derive(Deserialize)]
struct Estimate {
    value: Option<f64>,
    ci_low: Option<f64>,
    ci_high: Option<f64>,
}

impl Estimate {
    fn interval(&self) -> Option<(f64, f64)> {
        self.ci_low.zip(self.ci_high)
    }

    fn text(&self) -> String {
        let number = |v: Option<f64>| v.map_or_else(|| "unbounded".to_string(), |v| signed(v, 1));
        format!(
            "{} (95% CI {} to {})",
            number(self.value),
            number(self.ci_low),
            number(self.ci_high)
        )
    }
}

#[derive(Deserialize)]
struct Bounds {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
}

#[derive(Deserialize)]
struct ModelUse {
    elo_per_doubling: Estimate,
    fitted_on: String,
    same_binary: bool,
    games: u64,
    date: String,
}

#[derive(Deserialize)]
struct Revision {
    spec: String,
    commit: Option<String>,
}

#[derive(Deserialize)]
struct SideSummary {
    revision: Revision,
}

#[derive(Deserialize)]
struct Comparison {
    a: SideSummary,
    b: SideSummary,
}

#[derive(Deserialize)]
struct TrajectoryPoint {
    games: u64,
    llr: Option<f64>,
}

#[derive(Deserialize)]
struct Games {
    #[serde(default)]
    trajectory: Vec<TrajectoryPoint>,
    /// Zero moves in reports from before it was recorded: no rows.
    #[serde(default)]
    search_in_games: [SearchInGames; 2],
    #[serde(default)]
    nps_ratio_in_games: Option<NpsRatioInGames>,
    #[serde(default)]
    nps_ratio_by_run: Vec<NpsRatioOfRun>,
    #[serde(default)]
    nps_ratio_by_sitting: Vec<NpsRatioOfSitting>,
    /// Absent in reports from before it was recorded: not shown.
    #[serde(default)]
    adjudication: Option<AdjudicationRules>,
    #[serde(default)]
    games_per_minute: Option<f64>,
}

#[derive(Deserialize)]
struct BudgetStore {
    measured_unix: u64,
}

#[derive(Deserialize)]
struct ClockProbe {
    games: u64,
    mean_time_ms: f64,
}

#[derive(Deserialize)]
struct Search {
    nodes_per_move: u64,
    /// Absent in reports from before `--nodes`: A's NPS × the typical move.
    #[serde(default)]
    budget_from: Option<String>,
    #[serde(default)]
    clock_probe: Option<ClockProbe>,
    /// Absent in reports from before stored budgets.
    #[serde(default)]
    budget_store: Option<BudgetStore>,
    /// Absent in reports from before node odds: B played at A's budget.
    #[serde(default)]
    b_nodes_per_move: Option<u64>,
    nps: f64,
    typical_move_ms: f64,
    shifted_sprt: Bounds,
    #[serde(rename = "match")]
    games: Games,
}

#[derive(Deserialize)]
struct VerdictDoc {
    tc: String,
    sprt: Bounds,
    comparison: Comparison,
    /// Absent in reports from before node odds, which played at equal nodes.
    #[serde(default)]
    games_at: Option<String>,
    /// Null with node odds and no model.
    model: Option<ModelUse>,
    /// Absent in reports from before `--speed-from`, which measured NPS.
    #[serde(default)]
    speed_from: Option<String>,
    #[serde(default)]
    speed_games: Option<u64>,
    #[serde(default)]
    speed_runs: Option<u64>,
    #[serde(default)]
    speed_sittings: Option<u64>,
    speed_ratio: Estimate,
    speed_elo: Option<Estimate>,
    /// Null with node odds: the games weigh search and speed together.
    search_elo: Option<Estimate>,
    total_elo: Estimate,
    llr: Option<f64>,
    llr_lower: f64,
    llr_upper: f64,
    games: u64,
    #[serde(default)]
    games_to_decision: Option<u64>,
    rounds: u32,
    search: Option<Search>,
    decision: String,
    wall_time_s: f64,
    #[serde(default)]
    notes: Vec<String>,
}

fn revision_name(revision: &Revision) -> String {
    match &revision.commit {
        Some(commit) => format!("{} ({})", revision.spec, crate::input::short_commit(commit)),
        None => revision.spec.clone(),
    }
}

/// The decision in the terminal report's words; a value this version does not know reads as
/// undecided.
fn decision_text(decision: &str) -> &'static str {
    let known = serde_json::from_value(serde_json::Value::String(decision.to_string()));
    crate::report::verdict::decision(known.unwrap_or(Decision::Undecided))
}

pub(crate) fn page(value: &serde_json::Value) -> Result<String> {
    let doc: VerdictDoc =
        serde_json::from_value(value.clone()).context("a verdict JSON without its fields")?;
    let (a_name, b_name) = (
        revision_name(&doc.comparison.a.revision),
        revision_name(&doc.comparison.b.revision),
    );
    let footer = Footer(format!(
        "A = {a_name} · B = {b_name} · verdict at {}",
        doc.tc
    ));
    let mut html = head(&format!("lab verdict: A = {a_name}, B = {b_name}"));
    let node_odds = doc.games_at.as_deref() == Some("node-odds") && doc.search.is_some();
    let _ = write!(
        html,
        "<table class=\"facts\">\n{}</table>\n",
        facts(&doc, node_odds).concat()
    );
    for note in &doc.notes {
        let _ = writeln!(
            html,
            "<p class=\"note\">{}</p>",
            crate::report::html::escape(note)
        );
    }
    elo_split_section(&mut html, &doc, node_odds, &footer)?;
    if let Some(search) = &doc.search {
        sprt_section(&mut html, &doc, search, node_odds, &footer)?;
        speed_in_games_section(&mut html, &doc, &search.games, &footer)?;
    }
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

/// B's NPS over A's in runs of the games, as the match page draws it: where a verdict that
/// charges the games' speed took its interval from, and a check of any other source.
fn speed_in_games_section(
    html: &mut String,
    doc: &VerdictDoc,
    games: &Games,
    footer: &Footer,
) -> Result<()> {
    let Some(all) = games
        .nps_ratio_in_games
        .as_ref()
        .filter(|_| !games.nps_ratio_by_run.is_empty())
    else {
        return Ok(());
    };
    if !speed_runs::drawable(&games.nps_ratio_by_run, all) {
        section(
            html,
            "The speed in the games",
            speed_runs::NOT_DRAWABLE,
            None,
        );
        return Ok(());
    }
    let charged = if doc.speed_from.as_deref() == Some("games") {
        "the speed the verdict charged"
    } else {
        "a check of the speed the verdict charged, which came from elsewhere"
    };
    let text = format!(
        "B's NPS over A's in each of {} runs of consecutive games of the fixed-node games, with \
         its 95% interval from the run's games, and over all of them ({charged}), its interval \
         {}. Runs that leave the band by more than their bars show the machine treating the two \
         binaries differently over the games (docs/verdict.md).",
        games.nps_ratio_by_run.len(),
        speed_runs::interval_words(all)
    );
    let plot = speed_runs::draw(&games.nps_ratio_by_run, all, footer)?;
    section_with(
        html,
        "The speed in the games",
        &text,
        Some(plot),
        &speed_runs::sittings_table(&games.nps_ratio_by_sitting),
    );
    Ok(())
}

/// How A's node budget was reached, in words.
fn budget_text(search: &Search, tc: &str) -> String {
    match search.budget_from.as_deref() {
        Some("given") => "set by --nodes".to_string(),
        Some("resumed") => "the budget of the resumed games".to_string(),
        Some(from @ ("clock-games" | "stored")) => format!(
            "A's {} NPS × {:.1} ms, its mean time per move in {} games against itself at {tc}{}",
            thousands(search.nps.round() as u64),
            search
                .clock_probe
                .as_ref()
                .map_or(0.0, |probe| probe.mean_time_ms),
            search.clock_probe.as_ref().map_or(0, |probe| probe.games),
            match (from, &search.budget_store) {
                ("stored", Some(store)) =>
                    format!(", played {} and stored", utc_minute(store.measured_unix)),
                ("stored", None) => ", played earlier and stored".to_string(),
                _ => String::new(),
            }
        ),
        _ => format!(
            "A's {} NPS × {:.0} ms, the typical time per move at {tc}",
            thousands(search.nps.round() as u64),
            search.typical_move_ms
        ),
    }
}

/// The facts table's rows: the decision, the Elo terms, the speed, the model, the games and
/// the SPRT.
fn facts(doc: &VerdictDoc, node_odds: bool) -> Vec<String> {
    let ratio = |v: Option<f64>| v.map_or_else(|| "—".to_string(), crate::report::ratio_change);
    let odds_resumed = node_odds
        && doc
            .search
            .as_ref()
            .is_some_and(|search| search.budget_from.as_deref() == Some("resumed"));
    let search_facts = match &doc.search {
        Some(search) if node_odds => {
            let b_nodes = search.b_nodes_per_move.unwrap_or(search.nodes_per_move);
            format!(
                "{} fixed-node games at node odds: A {} nodes per move ({}), B {} ({}); their \
                 Elo is the total",
                thousands(doc.games),
                thousands(search.nodes_per_move),
                budget_text(search, &doc.tc),
                thousands(b_nodes),
                if odds_resumed {
                    format!(
                        "× {:.4}, the resumed games' odds: the speed ratio's 95% lower end of \
                         the run that started them; this run's is {}",
                        node_odds_factor(search.nodes_per_move, b_nodes).value,
                        doc.speed_ratio
                            .ci_low
                            .map_or_else(|| "—".to_string(), |low| format!("{low:.4}"))
                    )
                } else {
                    "A's budget times its speed ratio's 95% lower end".to_string()
                }
            )
        }
        Some(search) => format!(
            "{} fixed-node games at {} nodes per move ({})",
            thousands(doc.games),
            thousands(search.nodes_per_move),
            budget_text(search, &doc.tc)
        ),
        None => "same signature: the same search tree, no game played".to_string(),
    };
    let adjudication = doc
        .search
        .as_ref()
        .and_then(|search| search.games.adjudication)
        .map(|rules| format!("; adjudication {}", rules.words()))
        .unwrap_or_default();
    let search_facts = search_facts + &adjudication;
    let optional = |estimate: &Option<Estimate>, absent: &str| {
        estimate
            .as_ref()
            .map_or_else(|| absent.to_string(), Estimate::text)
    };
    let for_reference = if odds_resumed {
        " (this run's, for reference: B kept the resumed games' odds)"
    } else {
        ""
    };
    vec![
        fact("decision", decision_text(&doc.decision)),
        fact("total Elo", &doc.total_elo.text()),
        fact("speed Elo", &optional(&doc.speed_elo, "— (no model)")),
        fact(
            "search Elo",
            &optional(&doc.search_elo, "— (node odds: in the total)"),
        ),
        fact(
            "speed",
            &(match doc.speed_from.as_deref() {
                Some("instructions") => format!(
                    "A's instructions per node over B's {} (callgrind: exact)",
                    ratio(doc.speed_ratio.value)
                ),
                Some("games") => format!(
                    "B's NPS over A's {} (95% CI {} to {}) in the games themselves, {}{}",
                    ratio(doc.speed_ratio.value),
                    ratio(doc.speed_ratio.ci_low),
                    ratio(doc.speed_ratio.ci_high),
                    nps_interval_words(wider_interval(doc.speed_runs, doc.speed_sittings)),
                    doc.speed_games.map_or_else(String::new, |games| format!(
                        ", over {} games",
                        thousands(games)
                    ))
                ),
                _ => format!(
                    "B's NPS over A's {} (95% CI {} to {}), {} paired rounds",
                    ratio(doc.speed_ratio.value),
                    ratio(doc.speed_ratio.ci_low),
                    ratio(doc.speed_ratio.ci_high),
                    doc.rounds
                ),
            } + for_reference),
        ),
        fact(
            "model",
            &doc.model.as_ref().map_or_else(
                || "none for this machine at this clock: node odds need none".to_string(),
                |model| {
                    format!(
                        "{} Elo per doubling of time, fitted on {}{} ({} games, {})",
                        model.elo_per_doubling.text(),
                        model.fitted_on,
                        if model.same_binary {
                            ""
                        } else {
                            ": another engine tree than A's"
                        },
                        model.games,
                        model.date
                    )
                },
            ),
        ),
        fact("search", &search_facts),
        doc.search.as_ref().map_or_else(String::new, |search| {
            crate::report::matches::search_rows(
                &search.games.search_in_games,
                search.games.nps_ratio_in_games.as_ref(),
            )
            .iter()
            .map(|[name, value]| fact(name, value))
            .collect()
        }),
        fact(
            "bounds",
            &format!(
                "elo0 {}, elo1 {}, alpha {}, beta {}",
                elo_bound(doc.sprt.elo0),
                elo_bound(doc.sprt.elo1),
                doc.sprt.alpha,
                doc.sprt.beta
            ),
        ),
        fact(
            // With no games the decision is the speed's fixed-sample test, not this LLR.
            if doc.search.is_none() {
                "LLR (for reference: no games, decided by the speed's interval)"
            } else {
                "LLR"
            },
            &format!(
                "{} (bounds {:.2}, {:.2}){}",
                doc.llr
                    .map_or_else(|| "—".to_string(), |llr| format!("{llr:.2}")),
                doc.llr_lower,
                doc.llr_upper,
                crate::report::matches::pace(
                    doc.games_to_decision,
                    doc.search
                        .as_ref()
                        .and_then(|search| search.games.games_per_minute)
                )
            ),
        ),
        fact("wall time", &format!("{:.0} s", doc.wall_time_s)),
    ]
}

/// The Elo split's section: speed, search and total as bars between the bounds.
fn elo_split_section(
    html: &mut String,
    doc: &VerdictDoc,
    node_odds: bool,
    footer: &Footer,
) -> Result<()> {
    let bar = |name: &'static str, estimate: &Estimate| Bar {
        name,
        value: estimate.value,
        ci: estimate.interval(),
    };
    let mut bars = Vec::with_capacity(3);
    if let Some(speed) = &doc.speed_elo {
        bars.push(bar(
            if node_odds {
                "speed (model, for reference)"
            } else {
                "speed"
            },
            speed,
        ));
    }
    if let Some(search) = &doc.search_elo {
        bars.push(bar("search (fixed nodes)", search));
    }
    bars.push(bar(
        if node_odds {
            "total (games at node odds)"
        } else {
            "total"
        },
        &doc.total_elo,
    ));
    let split_text = if node_odds {
        "The total is the Elo of the fixed-node games in which B searched its speed's worth of \
         more (or fewer) nodes than A: it weighs search and speed together, and no model is \
         added. The speed's Elo at the model's rate, when there is a model, is shown for \
         reference only. The lines are the bounds as given."
    } else {
        "The speed's Elo is B's measured speed ratio times the stored model's Elo per doubling \
         of time; the search's Elo is from fixed-node games, where only the search tree differs; \
         the total adds them, their interval half-widths in quadrature. The lines are the \
         bounds as given."
    };
    section(
        html,
        "The Elo split",
        split_text,
        Some(elo_split::draw(
            &bars,
            (doc.sprt.elo0, doc.sprt.elo1),
            footer,
        )?),
    );
    Ok(())
}

/// The games' SPRT section: the LLR over the games between its bounds.
fn sprt_section(
    html: &mut String,
    doc: &VerdictDoc,
    search: &Search,
    node_odds: bool,
    footer: &Footer,
) -> Result<()> {
    let line: Vec<(f64, f64)> = search
        .games
        .trajectory
        .iter()
        .filter_map(|point| Some((point.games as f64, point.llr?)))
        .collect();
    let shifted = &search.shifted_sprt;
    let text = if node_odds {
        format!(
            "The fixed-node games' LLR at node odds, for search and speed together, between \
             the bounds as given: elo0 {}, elo1 {}.",
            signed(shifted.elo0, 2),
            signed(shifted.elo1, 2)
        )
    } else {
        format!(
            "The fixed-node games' LLR for the search alone, between bounds shifted by what \
             the speed surely gives (the low end of its interval): elo0 {}, elo1 {} \
             instead of {}, {}.",
            signed(shifted.elo0, 2),
            signed(shifted.elo1, 2),
            elo_bound(doc.sprt.elo0),
            elo_bound(doc.sprt.elo1)
        )
    };
    let plot = if line.is_empty() {
        None
    } else {
        let test = llr::Test {
            lower: doc.llr_lower,
            upper: doc.llr_upper,
            hypotheses: format!(
                "{} [{}, {}] logistic",
                if node_odds { "node odds" } else { "shifted" },
                signed(shifted.elo0, 2),
                signed(shifted.elo1, 2)
            ),
            decision: match doc.decision.as_str() {
                "h1" => "H1 accepted",
                "h0" => "H0 accepted",
                _ => "no decision",
            },
        };
        Some(llr::draw(&line, &test, footer)?)
    };
    section(html, "The games' SPRT", &text, plot);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(value: f64, low: f64, high: f64) -> serde_json::Value {
        serde_json::json!({"value": value, "ci_low": low, "ci_high": high})
    }

    fn verdict(search: serde_json::Value) -> serde_json::Value {
        let bounds = serde_json::json!({"elo0": -5.0, "elo1": 0.0, "alpha": 0.05, "beta": 0.05, "model": "logistic"});
        let side = |spec: &str| serde_json::json!({"revision": {"spec": spec, "commit": "0123456789abcdef"}});
        serde_json::json!({
            "kind": "verdict", "schema_version": 2, "tc": "2+0.02", "sprt": bounds,
            "comparison": {"a": side("main"), "b": side("<b>"), "verdict": "no significant change"},
            "model": {"elo_per_doubling": estimate(90.0, 80.0, 100.0), "fitted_on": "main",
                      "same_binary": true, "games": 400, "date": "2026-12-02", "path": "x"},
            "speed_ratio": estimate(1.02, 1.01, 1.03),
            "speed_elo": estimate(2.6, 1.1, 4.3),
            "search_elo": estimate(-3.0, -9.0, 3.0),
            "total_elo": estimate(-0.4, -6.6, 5.9),
            "llr": 1.2, "llr_lower": -2.94, "llr_upper": 2.94, "games": 120, "rounds": 6,
            "search": search, "decision": "undecided", "wall_time_s": 300.0, "notes": []
        })
    }

    #[test]
    fn a_verdict_with_games_has_the_split_and_the_llr() {
        let search = serde_json::json!({
            "nodes_per_move": 300000, "nps": 4.3e6, "typical_move_ms": 70.0,
            "shifted_sprt": {"elo0": -6.1, "elo1": -1.1, "alpha": 0.05, "beta": 0.05, "model": "logistic"},
            "match": {"trajectory": [{"games": 2, "llr": 0.1}, {"games": 120, "llr": 1.2}]}
        });
        let html = page(&verdict(search)).unwrap();
        assert!(html.contains("The Elo split"), "{html}");
        assert!(html.contains("The games' SPRT"));
        assert!(html.contains("300,000 nodes per move"));
        assert!(!html.contains("adjudication"), "not in the JSON, not shown");
        assert!(html.contains("&lt;b&gt;"), "the revision is escaped");
        assert!(!html.contains("<b>"));
        assert!(html.contains("undecided within the rounds or games allowed (exit 3)"));
        assert!(
            !html.contains("more games expected to a decision"),
            "no pace in the JSON"
        );
        let mut paced = verdict(serde_json::json!({
            "nodes_per_move": 300000, "nps": 4.3e6, "typical_move_ms": 70.0,
            "shifted_sprt": {"elo0": -6.1, "elo1": -1.1, "alpha": 0.05, "beta": 0.05, "model": "logistic"},
            "match": {"trajectory": []}
        }));
        paced["games_to_decision"] = 2350.into();
        paced["search"]["match"]["adjudication"] =
            serde_json::json!({"draw": null, "resign": {"move_count": 3, "score": 400}});
        let html = page(&paced).unwrap();
        assert!(
            html.contains("; adjudication resign movecount=3,score=400</td>"),
            "{html}"
        );
        assert!(
            html.contains("1.20 (bounds -2.94, 2.94); ~2,350 more games expected to a decision"),
            "{html}"
        );
        assert!(!html.contains("in the games"), "no searches in the JSON");
        // The games' own speed, as the terminal report words it.
        let side = |nps: f64| {
            serde_json::json!({"moves": 4000, "mean_depth": 13.0, "mean_time_ms": 70.0,
                               "nodes_per_move": 300000.0, "nps": nps})
        };
        paced["search"]["match"]["search_in_games"] = serde_json::json!([side(4.0e6), side(5.0e6)]);
        paced["search"]["match"]["nps_ratio_in_games"] =
            serde_json::json!({"value": 1.25, "ci_low": 1.2, "ci_high": 1.3, "games": 120});
        let html = page(&paced).unwrap();
        assert!(
            html.contains(
                "<th>B in the games, per move (4,000 moves)</th><td>depth 13.00, 70.0 ms, \
                 300,000 nodes, 5,000,000 NPS</td>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<th>B's NPS over A's in the games (geometric mean of 120 games)</th>\
                 <td>+25.00% (95% CI +20.00% to +30.00%)</td>"
            ),
            "{html}"
        );
    }

    #[test]
    fn the_games_speed_in_runs_is_drawn_when_there_are_runs() {
        let run = |through_game: u64, value: f64| {
            let mut run = estimate(value, value - 0.004, value + 0.004);
            run["through_game"] = through_game.into();
            run
        };
        let mut all = estimate(0.994, 0.992, 0.996);
        all["games"] = 400.into();
        all["runs"] = 10.into();
        all["interval_from"] = "runs".into();
        let runs: Vec<serde_json::Value> = (1..=10)
            .map(|i| run(40 * i, if i <= 5 { 0.99 } else { 0.998 }))
            .collect();
        let search = |runs: &[serde_json::Value]| {
            serde_json::json!({
                "nodes_per_move": 300000, "nps": 4.3e6, "typical_move_ms": 70.0,
                "shifted_sprt": {"elo0": -6.1, "elo1": -1.1, "alpha": 0.05, "beta": 0.05, "model": "logistic"},
                "match": {"trajectory": [], "nps_ratio_in_games": all, "nps_ratio_by_run": runs}
            })
        };
        let mut value = verdict(search(&runs));
        value["speed_from"] = "games".into();
        let html = page(&value).unwrap();
        assert!(html.contains("The speed in the games"), "{html}");
        assert!(html.contains("the speed the verdict charged"), "{html}");
        assert!(html.contains("from the runs' spread, wider than game by game"));
        assert!(
            html.contains("all 400 games: -0.60% (95% CI -0.80% to -0.40%)"),
            "{html}"
        );
        value["speed_from"] = "nps".into();
        assert!(page(&value).unwrap().contains("which came from elsewhere"));
        let html = page(&verdict(search(&[]))).unwrap();
        assert!(
            !html.contains("The speed in the games"),
            "no runs, no plot: {html}"
        );
        let html = page(&verdict(search(&[run(40, 1e308)]))).unwrap();
        assert!(
            html.contains("not ratios in order within the games: not drawn"),
            "{html}"
        );
    }

    #[test]
    fn a_same_signature_verdict_draws_no_llr() {
        let html = page(&verdict(serde_json::Value::Null)).unwrap();
        assert!(html.contains("no game played"));
        assert!(!html.contains("The games' SPRT"));
    }

    #[test]
    fn an_interrupted_verdict_and_an_instruction_speed_are_said_as_they_were() {
        let mut value = verdict(serde_json::Value::Null);
        value["decision"] = "interrupted".into();
        value["speed_from"] = "instructions".into();
        value["speed_ratio"] = estimate(1.025, 1.025, 1.025);
        let html = page(&value).unwrap();
        assert!(html.contains("interrupted before a decision"), "{html}");
        assert!(html.contains("(exit 130)"), "{html}");
        assert!(!html.contains("(exit 3)"), "{html}");
        assert!(
            html.contains("A's instructions per node over B's +2.50% (callgrind: exact)"),
            "{html}"
        );
        assert!(!html.contains("paired rounds"), "{html}");
    }

    #[test]
    fn a_speed_read_from_the_games_is_said_so() {
        let mut value = verdict(serde_json::Value::Null);
        value["speed_from"] = "games".into();
        value["speed_ratio"] = estimate(0.9943, 0.9905, 0.998);
        value["speed_games"] = 1200.into();
        let html = page(&value).unwrap();
        assert!(
            html.contains(
                "B's NPS over A's -0.57% (95% CI -0.95% to -0.20%) in the games themselves"
            ),
            "{html}"
        );
        assert!(!html.contains("paired rounds"), "{html}");
    }

    #[test]
    fn a_verdict_at_node_odds_without_a_model_shows_the_games_as_the_total() {
        let mut value = verdict(serde_json::json!({
            "nodes_per_move": 400000, "b_nodes_per_move": 498760, "nps": 2.3e6,
            "typical_move_ms": 175.0,
            "shifted_sprt": {"elo0": -5.0, "elo1": 0.0, "alpha": 0.05, "beta": 0.05, "model": "logistic"},
            "match": {"trajectory": [{"games": 2, "llr": 0.1}, {"games": 120, "llr": 1.2}]}
        }));
        value["games_at"] = "node-odds".into();
        value["model"] = serde_json::Value::Null;
        value["speed_elo"] = serde_json::Value::Null;
        value["search_elo"] = serde_json::Value::Null;
        value["total_elo"] = estimate(34.3, 15.2, 53.6);
        let html = page(&value).unwrap();
        assert!(
            html.contains("A 400,000 nodes per move") && html.contains("B 498,760"),
            "{html}"
        );
        assert!(
            html.contains("<td>+34.3 (95% CI +15.2 to +53.6)</td>"),
            "{html}"
        );
        assert!(html.contains("— (no model)"), "{html}");
        assert!(html.contains("— (node odds: in the total)"), "{html}");
        assert!(html.contains("node odds need none"), "{html}");
        assert!(html.contains("between the bounds as given"), "{html}");
        assert!(
            !html.contains("search (fixed nodes)"),
            "no search bar: {html}"
        );
        assert!(html.contains("A's 2,300,000 NPS × 175 ms"), "{html}");
        assert!(
            html.contains("B 498,760 (A's budget times its speed ratio's 95% lower end)"),
            "{html}"
        );
        // Resumed: B keeps the odds of the run that started the games, not this run's.
        value["search"]["budget_from"] = "resumed".into();
        value["speed_ratio"] = estimate(1.30, 1.28, 1.32);
        let resumed = page(&value).unwrap();
        assert!(
            resumed.contains(
                "B 498,760 (× 1.2469, the resumed games' odds: the speed ratio's 95% lower end of \
                 the run that started them; this run's is 1.2800)"
            ),
            "{resumed}"
        );
        assert!(
            resumed.contains(
                "paired rounds (this run's, for reference: B kept the resumed games' odds)"
            ),
            "{resumed}"
        );
        assert!(!resumed.contains("A's budget times"), "{resumed}");
        value["search"]["budget_from"] = "given".into();
        let given = page(&value).unwrap();
        assert!(!given.contains("for reference: B kept"), "{given}");
        assert!(
            given.contains("A 400,000 nodes per move (set by --nodes)"),
            "{given}"
        );
        assert!(!given.contains("NPS × 175 ms"), "{given}");
        value["search"]["budget_from"] = "clock-games".into();
        value["search"]["clock_probe"] = serde_json::json!({"games": 4, "moves": 480, "mean_time_ms": 131.94, "nodes_per_move": null});
        let probed = page(&value).unwrap();
        assert!(
            probed.contains(
                "A 400,000 nodes per move (A's 2,300,000 NPS × 131.9 ms, its mean time per move in 4 \
                 games against itself at 2+0.02)"
            ),
            "{probed}"
        );
        value["search"]["budget_from"] = "stored".into();
        value["search"]["budget_store"] = serde_json::json!({"path": "target/lab/budgets/x.json", "measured_unix": 1_796_400_000u64});
        let stored = page(&value).unwrap();
        assert!(
            stored.contains(
                "its mean time per move in 4 games against itself at 2+0.02, played 2026-12-04 \
                 16:00 UTC and stored)"
            ),
            "{stored}"
        );
    }

    #[test]
    fn an_unbounded_search_elo_is_said_so() {
        let mut value = verdict(serde_json::Value::Null);
        value["search_elo"] = serde_json::json!({"value": null, "ci_low": null, "ci_high": null});
        let html = page(&value).unwrap();
        assert!(
            html.contains("unbounded (95% CI unbounded to unbounded)"),
            "{html}"
        );
    }
}
