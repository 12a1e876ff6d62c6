//! The rows of a match report, built once; terminal and markdown lay them out.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::sanitize::code_span;
use super::style::Style;
use super::table::render_rows;
use crate::digits::{signed, thousands};
use crate::games::conclusion::{Conclusion, Ending};
use crate::games::results::{Contestant, Shard};
use crate::games::sprt::{
    too_few_pairs, too_few_pairs_text, EloModel, Estimate, Pentanomial, SprtDecision,
};
use crate::games::summary::{NpsRatioInGames, NpsRatioOfSitting, SearchInGames};
use crate::games::MatchReport;

/// The match section: who played whom, the figures, and how the match ended.
pub(crate) fn render(report: &MatchReport, style: Style) -> String {
    let figures = render_rows(style, ["figure (B vs A)", "value"], rows(report));
    match style {
        Style::Terminal => format!("{}\n\n{figures}\n{}", title(report, style), footer(report)),
        // Each line of the title and footer is a paragraph of its own.
        Style::Markdown => format!(
            "## {}\n\n{figures}\n{}",
            title(report, style).replace('\n', "\n\n"),
            footer(report).replace('\n', "\n\n")
        ),
    }
}

/// The opening line: who played whom under what. The engines' names are the engines' own
/// words: in markdown they are code spans, shown literally.
pub(crate) fn title(report: &MatchReport, style: Style) -> String {
    let side = |label: &str, engine: &Contestant| match style {
        Style::Terminal => format!("{label} = {} [{}]", engine.name, engine.spec),
        Style::Markdown => format!(
            "{label} = {} [{}]",
            code_span(&engine.name),
            code_span(&engine.spec)
        ),
    };
    let shards = shards(&report.shards);
    format!(
        "lab match: {}  vs  {}\n{}, book {} ({} openings), seed {}, budget {} games{shards}; \
         adjudication {}",
        side("A", &report.engines[0]),
        side("B", &report.engines[1]),
        report.tc,
        style.code(&report.book.source),
        report.book.openings,
        report.seed,
        thousands(report.max_games),
        report.adjudication.words(),
    )
}

/// `, shards 1/4 2/4` for a sharded match or a merge, nothing for a whole match.
pub(crate) fn shards(shards: &[Shard]) -> String {
    match shards {
        [only] if only.count == 1 => String::new(),
        shards => format!(
            ", shards {}",
            shards
                .iter()
                .map(|shard| format!("{}/{}", shard.index, shard.count))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// The SPRT's decision in words.
pub(crate) fn decision(result: SprtDecision) -> &'static str {
    match result {
        SprtDecision::AcceptH0 => "H0 accepted",
        SprtDecision::AcceptH1 => "H1 accepted",
        SprtDecision::Continue => "no decision",
    }
}

/// `; ~2,350 more games expected to a decision` for an undecided SPRT
/// (`SprtState::games_to_decision`), with `(about 3h07m at 12.6 games/min)` when the run's
/// rate is known; empty otherwise.
pub(crate) fn pace(games_to_decision: Option<u64>, games_per_minute: Option<f64>) -> String {
    games_to_decision.map_or_else(String::new, |games| {
        // The rate may come from a JSON file: only a positive, finite one gives a time.
        let time = games_per_minute
            .filter(|rate| rate.is_finite() && *rate > 0.0)
            .and_then(|rate| {
                let seconds = games as f64 / rate * 60.0;
                std::time::Duration::try_from_secs_f64(seconds)
                    .ok()
                    .map(|time| {
                        format!(
                            " (about {} at {rate:.1} games/min)",
                            crate::digits::format_duration(time)
                        )
                    })
            })
            .unwrap_or_default();
        format!(
            "; ~{} more games expected to a decision{time}",
            thousands(games)
        )
    })
}

/// `+4.3 ± 11.2 (95% CI -6.9 to +15.5, n=40 pairs)`; with too few pairs (fewer than ten, or
/// no variance) the interval is "too few pairs (n)", the value shown only where it exists.
pub(crate) fn estimate(value: Option<Estimate>, pentanomial: &Pentanomial) -> String {
    let pairs = pentanomial.pairs();
    if too_few_pairs(pentanomial) {
        let interval = too_few_pairs_text(pairs);
        return match value {
            Some(estimate) => format!(
                "{}, interval: {interval}",
                signed(estimate.in_tenths().value, 1)
            ),
            None => interval,
        };
    }
    match value {
        Some(estimate) => {
            let rounded = estimate.in_tenths();
            format!(
                "{} ± {:.1} (95% CI {} to {}, {})",
                signed(rounded.value, 1),
                estimate.half_width(),
                signed(rounded.ci_low, 1),
                signed(rounded.ci_high, 1),
                n_pairs(pairs)
            )
        }
        None => "—".to_string(),
    }
}

/// `62.1% (n=40 pairs)`, or "too few pairs (n)".
pub(crate) fn los(value: Option<f64>, pentanomial: &Pentanomial) -> String {
    let pairs = pentanomial.pairs();
    match value {
        _ if too_few_pairs(pentanomial) => too_few_pairs_text(pairs),
        Some(los) => format!("{:.1}% ({})", los * 100.0, n_pairs(pairs)),
        None => "—".to_string(),
    }
}

/// `52.00% (n=40 pairs)`: the mean score of the complete pairs.
pub(crate) fn score(value: Option<f64>, pairs: u64) -> String {
    value.map_or_else(
        || "—".to_string(),
        |score| format!("{:.2}% ({})", score * 100.0, n_pairs(pairs)),
    )
}

/// `n=40 pairs`, `n=1 pair`: the sample size printed beside an estimate.
fn n_pairs(pairs: u64) -> String {
    let plural = if pairs == 1 { "" } else { "s" };
    format!("n={pairs} pair{plural}")
}

/// `[figure, value]` rows, B's point of view.
pub(crate) fn rows(report: &MatchReport) -> Vec<[String; 2]> {
    let s = &report.summary;
    let mut rows = vec![
        [
            "games (pairs)".to_string(),
            format!(
                "{} ({} complete pairs)",
                thousands(s.games),
                thousands(s.pairs)
            ),
        ],
        [
            "B: wins / draws / losses".to_string(),
            format!("{} / {} / {}", s.wdl.wins, s.wdl.draws, s.wdl.losses),
        ],
        [
            "pentanomial [LL, LD, DD+WL, WD, WW]".to_string(),
            format!(
                "[{}]",
                s.pentanomial
                    .0
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ],
        ["score".to_string(), score(s.score, s.pairs)],
        [
            "Elo (logistic)".to_string(),
            estimate(s.elo, &s.pentanomial),
        ],
        [
            "nElo (normalized)".to_string(),
            estimate(s.nelo, &s.pentanomial),
        ],
        ["LOS".to_string(), los(s.los, &s.pentanomial)],
    ];
    if let Some(sprt) = &s.sprt {
        let model = match sprt.test.model {
            EloModel::Logistic => "logistic",
            EloModel::Normalized => "normalized",
        };
        rows.push([
            format!(
                "SPRT [{}, {}] ({model}, α={}, β={})",
                crate::digits::elo_bound(sprt.test.elo0),
                crate::digits::elo_bound(sprt.test.elo1),
                sprt.test.alpha,
                sprt.test.beta
            ),
            format!(
                "LLR {:.2} ({:.2}, {:.2}) → {}{}",
                sprt.llr,
                sprt.lower,
                sprt.upper,
                decision(sprt.result),
                pace(sprt.games_to_decision, report.games_per_minute)
            ),
        ]);
    }
    rows.push([
        "terminations".to_string(),
        s.terminations
            .iter()
            .map(|(name, count)| format!("{name} {count}"))
            .collect::<Vec<_>>()
            .join(", "),
    ]);
    rows.push([
        "faults A / B (time forfeits)".to_string(),
        format!(
            "{} / {} ({} / {})",
            s.faults[0], s.faults[1], s.time_forfeits[0], s.time_forfeits[1]
        ),
    ]);
    if let Some(overhead) = s.lab_overhead_us_per_move {
        rows.push([
            "lab's own time per move (referee + I/O)".to_string(),
            format!("{overhead:.1} µs"),
        ]);
    }
    rows.extend(search_rows(
        &s.search_in_games,
        s.nps_ratio_in_games.as_ref(),
    ));
    rows.extend(sittings_row(&s.nps_ratio_by_sitting));
    if let (Some(elapsed), Some(rate)) = (report.elapsed_s, report.games_per_minute) {
        rows.push([
            "time (this run)".to_string(),
            format!(
                "{} at {rate:.1} games/min, concurrency {}",
                crate::digits::format_duration(std::time::Duration::from_secs_f64(elapsed)),
                report.concurrency.unwrap_or(1)
            ),
        ]);
    }
    rows
}

/// The spread of B's NPS over A's between the sittings that played the games: the slowest
/// and the fastest sitting for B (the HTML page lists each). None below two sittings.
pub(crate) fn sittings_row(by_sitting: &[NpsRatioOfSitting]) -> Option<[String; 2]> {
    if by_sitting.len() < 2 {
        return None;
    }
    let by_ratio = |a: &(usize, &NpsRatioOfSitting), b: &(usize, &NpsRatioOfSitting)| {
        a.1.ratio.value.total_cmp(&b.1.ratio.value)
    };
    let slowest = by_sitting.iter().enumerate().min_by(by_ratio)?;
    let fastest = by_sitting.iter().enumerate().max_by(by_ratio)?;
    let words = |(index, sitting): (usize, &NpsRatioOfSitting)| {
        format!(
            "{} (sitting {}, {} games)",
            super::ratio_change(sitting.ratio.value),
            index + 1,
            thousands(sitting.games)
        )
    };
    Some([
        format!(
            "B's NPS over A's by sitting ({} sittings, in the order played)",
            by_sitting.len()
        ),
        format!("from {} to {}", words(slowest), words(fastest)),
    ])
}

/// How each side searched in the games, and B's NPS over A's there: the rows of the match
/// report, the verdict's and their pages. None for a side that searched no move.
pub(crate) fn search_rows(
    sides: &[SearchInGames; 2],
    ratio: Option<&NpsRatioInGames>,
) -> Vec<[String; 2]> {
    let mut rows = Vec::new();
    for (label, side) in ["A", "B"].iter().zip(sides) {
        if side.moves == 0 {
            continue;
        }
        let mut figures = Vec::new();
        if let Some(depth) = side.mean_depth {
            figures.push(format!("depth {depth:.2}"));
        }
        if let Some(ms) = side.mean_time_ms {
            figures.push(format!("{ms:.1} ms"));
        }
        if let Some(nodes) = side.nodes_per_move {
            figures.push(format!("{} nodes", thousands(nodes.round() as u64)));
        }
        if let Some(nps) = side.nps {
            figures.push(format!("{} NPS", thousands(nps.round() as u64)));
        }
        rows.push([
            format!(
                "{label} in the games, per move ({} moves)",
                thousands(side.moves)
            ),
            figures.join(", "),
        ]);
    }
    if let Some(ratio) = ratio {
        rows.push([
            format!(
                "B's NPS over A's in the games (geometric mean of {} games)",
                thousands(ratio.games)
            ),
            match ratio.wider_interval() {
                Some(wider) => format!(
                    "{}, {}",
                    super::ratio_change_with_ci(&ratio.ratio),
                    super::nps_interval_words(Some(wider))
                ),
                None => super::ratio_change_with_ci(&ratio.ratio),
            },
        ]);
    }
    rows
}

/// The closing lines: where the games are, and the verdict with its exit code.
pub(crate) fn footer(report: &MatchReport) -> String {
    let mut out = String::new();
    if let Some(file) = &report.results_file {
        out.push_str(&format!("results: {file}\n"));
    }
    if let Some(file) = &report.pgn_file {
        out.push_str(&format!("PGN: {file}\n"));
    }
    if let Some(warning) = super::findings::played_alike(report.summary.alike) {
        out.push_str(&format!("Warning: {warning}\n"));
    }
    out.push_str(&format!(
        "Verdict: {} (exit {})\n",
        sentence(&report.conclusion),
        report.conclusion.exit().code()
    ));
    out
}

/// How the match ended, in a sentence: the footer's verdict and the JSON's `verdict`.
pub(crate) fn sentence(conclusion: &Conclusion) -> String {
    let mut sentence = match conclusion.ending {
        Ending::AcceptedH1 => "SPRT accepted H1: B is stronger".to_string(),
        Ending::AcceptedH0 => "SPRT accepted H0: B is not stronger by elo1".to_string(),
        Ending::BudgetSpent => "no SPRT decision: the game budget is spent".to_string(),
        Ending::Undecided { played, max_games } => format!(
            "no SPRT decision after {} of {} games",
            thousands(played),
            thousands(max_games)
        ),
        Ending::Finished => "match finished".to_string(),
        Ending::Played { played, max_games } => format!(
            "{} of {} games played",
            thousands(played),
            thousands(max_games)
        ),
        Ending::Interrupted { played, max_games } => format!(
            "interrupted after {} of {} games: --resume plays the rest",
            thousands(played),
            thousands(max_games)
        ),
        Ending::ShardFinished { shard } => format!(
            "shard {}/{} finished: pool the shards with `lab match merge` for the verdict",
            shard.index, shard.count
        ),
    };
    if let Some(merged) = conclusion.merged.filter(|merged| !merged.all()) {
        sentence.push_str(&format!(
            " (only {} of {} shards merged)",
            merged.merged, merged.count
        ));
    }
    sentence
}

/// The JSON's `verdict` (the sentence) and `exit_code`, flattened into the match report.
impl Serialize for Conclusion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("verdict", &sentence(self))?;
        map.serialize_entry("exit_code", &self.exit().code())?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::conclusion::MergedShards;

    #[test]
    fn a_conclusion_is_its_sentence_and_exit_code_in_the_json() {
        let conclusion = Conclusion {
            ending: Ending::Played {
                played: 3,
                max_games: 4,
            },
            merged: Some(MergedShards {
                merged: 2,
                count: 4,
            }),
        };
        assert_eq!(
            serde_json::to_value(conclusion).unwrap(),
            serde_json::json!({
                "verdict": "3 of 4 games played (only 2 of 4 shards merged)",
                "exit_code": 3
            })
        );
        let interrupted = Conclusion::of_match(Ending::Interrupted {
            played: 12_000,
            max_games: 40_000,
        });
        assert_eq!(
            sentence(&interrupted),
            "interrupted after 12,000 of 40,000 games: --resume plays the rest"
        );
    }

    #[test]
    fn the_sittings_row_names_the_slowest_and_the_fastest_sitting_for_b() {
        use crate::games::Sitting;
        let sitting = |start, games, value| NpsRatioOfSitting {
            sitting: Sitting(start),
            games,
            ratio: Estimate {
                value,
                ci_low: value - 0.002,
                ci_high: value + 0.002,
            },
        };
        let one = [sitting(1, 928, 0.9914)];
        assert_eq!(sittings_row(&one), None);
        let three = [one[0], sitting(2, 1_426, 0.9983), sitting(3, 1_472, 0.9881)];
        let [label, value] = sittings_row(&three).unwrap();
        assert_eq!(
            label,
            "B's NPS over A's by sitting (3 sittings, in the order played)"
        );
        assert_eq!(
            value,
            "from -1.19% (sitting 3, 1,472 games) to -0.17% (sitting 2, 1,426 games)"
        );
    }

    #[test]
    fn the_games_to_a_decision_come_with_their_time_at_a_rate_that_is_one() {
        assert_eq!(pace(None, Some(12.5)), "");
        assert_eq!(
            pace(Some(2350), None),
            "; ~2,350 more games expected to a decision"
        );
        assert_eq!(
            pace(Some(2350), Some(12.5)),
            "; ~2,350 more games expected to a decision (about 3h08m at 12.5 games/min)"
        );
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-300] {
            assert_eq!(
                pace(Some(2350), Some(rate)),
                "; ~2,350 more games expected to a decision",
                "{rate}"
            );
        }
    }

    #[test]
    fn too_few_pairs_are_said_with_their_count_and_never_as_zero_width() {
        // One pair: no interval exists.
        let one = Pentanomial([0, 0, 0, 0, 1]);
        assert_eq!(estimate(None, &one), "too few pairs (1)");
        assert_eq!(los(Some(1.0), &one), "too few pairs (1)");
        let zero_width = Estimate {
            value: 190.8,
            ci_low: 190.8,
            ci_high: 190.8,
        };
        assert_eq!(
            estimate(Some(zero_width), &one),
            "+190.8, interval: too few pairs (1)"
        );
        assert_eq!(estimate(None, &Pentanomial::default()), "too few pairs (0)");
        // Four pairs of an A/A match: an interval exists but is not yet an estimate.
        let four = Pentanomial([1, 1, 1, 0, 1]);
        let wide = Estimate {
            value: -95.1,
            ci_low: -188.5,
            ci_high: -1.7,
        };
        assert_eq!(
            estimate(Some(wide), &four),
            "-95.1, interval: too few pairs (4)"
        );
        assert_eq!(los(Some(0.02), &four), "too few pairs (4)");
        // Twenty pairs, all drawn: no variance, whatever the count.
        let drawn = Pentanomial([0, 0, 20, 0, 0]);
        assert_eq!(los(Some(0.5), &drawn), "too few pairs (20)");
        // Forty pairs: the estimate with its n.
        let forty = Pentanomial([5, 8, 14, 8, 5]);
        let near_zero = Estimate {
            value: -0.04,
            ci_low: -10.0,
            ci_high: 9.92,
        };
        assert_eq!(
            estimate(Some(near_zero), &forty),
            "+0.0 ± 10.0 (95% CI -10.0 to +9.9, n=40 pairs)"
        );
        assert_eq!(los(Some(0.621), &forty), "62.1% (n=40 pairs)");
        assert_eq!(estimate(None, &forty), "—");
        assert_eq!(score(Some(0.5), 1), "50.00% (n=1 pair)");
    }
}
