//! `lab match --format fastchess`: the block fastchess prints at each rating interval and at
//! the end of a head-to-head match (`Results of`, `Elo`, `LOS`, `Games`, `Ptnml(0-2)`, `LLR`),
//! then its closing lines, for the scripts and the eyes used to reading it.
//!
//! The engine under test comes first, as fastchess reports its first engine and OpenBench
//! passes its dev engine first: every figure is B's. The Elo, nElo and LOS are the lab's
//! pentanomial figures (fastchess's pentanomial ones, computed the same way); each `+/-` is
//! half the interval's width, as fastchess prints it. A figure that does not exist yet (too few
//! pairs, a ratio over zero pairs) reads `nan` or `inf`, as fastchess's own printf does.
//! Unlike fastchess, a match that ends at its budget undecided does not say an hypothesis
//! was accepted.

use super::sanitize::visible;
use crate::digits::trim_fraction_zeros;
use crate::games::book::BookIdentity;
use crate::games::results::Contestant;
use crate::games::rules::Limit;
use crate::games::sprt::SprtDecision;
use crate::games::summary::Summary;
use crate::games::MatchReport;

const RULE: &str = "--------------------------------------------------\n";

/// The lines, each ending with a newline.
pub(crate) fn render(report: &MatchReport) -> String {
    let matchup = format!(
        "Results of {} vs {} ({}, {}, {}{}):\n",
        name(&report.engines[1].name),
        name(&report.engines[0].name),
        per_side(
            time_control(&report.limits[1]),
            time_control(&report.limits[0])
        ),
        per_side(
            option(&report.engines[1], "Threads", "t"),
            option(&report.engines[0], "Threads", "t")
        ),
        per_side(
            option(&report.engines[1], "Hash", "MB"),
            option(&report.engines[0], "Hash", "MB")
        ),
        book_name(&report.book).map_or_else(String::new, |book| format!(", {book}")),
    );
    format!("{RULE}{matchup}{}", figures(&report.summary))
}

/// Everything after the `Results of` line: the figures, the closing rule and lines.
fn figures(summary: &Summary) -> String {
    let p = summary.pentanomial.0;
    let wdl = summary.wdl;
    let games = wdl.games();
    let estimates = !summary.too_few_pairs;
    let (elo, elo_error) = match summary.elo.filter(|_| estimates) {
        Some(elo) => (elo.value, (elo.ci_high - elo.ci_low) / 2.0),
        None => (f64::NAN, f64::NAN),
    };
    let (nelo, nelo_error) = match summary.nelo.filter(|_| estimates) {
        Some(nelo) => (nelo.value, (nelo.ci_high - nelo.ci_low) / 2.0),
        None => (f64::NAN, f64::NAN),
    };
    let los = summary
        .los
        .filter(|_| estimates)
        .map_or(f64::NAN, |los| los * 100.0);
    let pairs = summary.pairs as f64;
    let draw_ratio = p[2] as f64 / pairs * 100.0;
    let pairs_ratio = (p[3] + p[4]) as f64 / (p[0] + p[1]) as f64;
    let points = wdl.points();
    let points_ratio = wdl.score().map_or(f64::NAN, |score| score * 100.0);
    let won_and_lost = summary.won_and_lost_pairs;
    let wl_dd_ratio = won_and_lost as f64 / p[2].saturating_sub(won_and_lost) as f64;
    let mut text = format!(
        "Elo: {} +/- {}, nElo: {} +/- {}\n\
         LOS: {} %, DrawRatio: {} %, PairsRatio: {}\n\
         Games: {games}, Wins: {}, Losses: {}, Draws: {}, Points: {points:.1} ({} %)\n\
         Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {}\n",
        fixed2(elo),
        fixed2(elo_error),
        fixed2(nelo),
        fixed2(nelo_error),
        fixed2(los),
        fixed2(draw_ratio),
        fixed2(pairs_ratio),
        wdl.wins,
        wdl.losses,
        wdl.draws,
        fixed2(points_ratio),
        p[0],
        p[1],
        p[2],
        p[3],
        p[4],
        fixed2(wl_dd_ratio),
    );
    let mut closing = "Tournament finished\n".to_string();
    if let Some(sprt) = &summary.sprt {
        // fastchess's progress: the LLR as a share of the bound it heads for (negative toward
        // the lower one).
        let progress = if sprt.llr >= 0.0 {
            sprt.llr / sprt.upper
        } else {
            -sprt.llr / sprt.lower
        };
        let hypotheses = format!("[{:.2}, {:.2}]", sprt.test.elo0, sprt.test.elo1);
        text.push_str(&format!(
            "LLR: {} ({:.1}%) ({:.2}, {:.2}) {hypotheses}\n",
            fixed2(sprt.llr),
            progress * 100.0,
            sprt.lower,
            sprt.upper
        ));
        let accepted = match sprt.result {
            SprtDecision::AcceptH0 => Some("H0"),
            SprtDecision::AcceptH1 => Some("H1"),
            SprtDecision::Continue => None,
        };
        if let Some(hypothesis) = accepted {
            closing = format!("SPRT ({hypotheses}) completed - {hypothesis} was accepted\n");
        }
    }
    format!("{text}{RULE}{closing}Finished match\n")
}

/// fastchess's time control: `10+0.1`, `40/60+0.6`, `0.5/move`, `5000 nodes`, `8 plies`.
fn time_control(limit: &Limit) -> String {
    match *limit {
        Limit::Clock {
            base_ms,
            increment_ms,
        } => {
            let increment = if increment_ms > 0 {
                format!("+{}", significant2(increment_ms as f64 / 1000.0))
            } else {
                String::new()
            };
            format!("{}{increment}", base_ms as f64 / 1000.0)
        }
        Limit::MoveTime { movetime_ms } => format!("{}/move", movetime_ms as f64 / 1000.0),
        Limit::Depth { depth } => format!("{depth} plies"),
        Limit::Nodes { nodes } => format!("{nodes} nodes"),
    }
}

/// One value when both sides share it, else `B - A`.
fn per_side(b: String, a: String) -> String {
    if a == b {
        b
    } else {
        format!("{b} - {a}")
    }
}

/// `1t`, `16MB`: the option's value and unit, or `NULL` when the engine was not given it.
fn option(engine: &Contestant, option: &str, unit: &str) -> String {
    engine
        .options
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(option))
        .map_or_else(
            || "NULL".to_string(),
            |(_, value)| format!("{}{unit}", name(value)),
        )
}

/// The opening file's name without its directories (`openings.epd`); `None` for a book with no
/// file name.
fn book_name(book: &BookIdentity) -> Option<String> {
    let source = book.source.trim();
    // The built-in book is `built-in (lab/books/openings.epd)`.
    let path = source
        .strip_prefix("built-in (")
        .and_then(|inner| inner.strip_suffix(')'))
        .unwrap_or(source);
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    (!file.is_empty()).then(|| name(file))
}

/// Text from outside (engine names, option values, file names) as one visible line.
fn name(text: &str) -> String {
    visible(text).into_owned()
}

/// fmt's `{:.2f}`: `nan` and `inf` as they are.
fn fixed2(value: f64) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{:.2}", value + 0.0)
    }
}

/// fmt's `{:.2g}` for an increment in seconds (0.01 to a few seconds): two significant
/// digits, trailing zeros dropped.
fn significant2(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (1 - magnitude).max(0) as usize;
    trim_fraction_zeros(format!("{value:.decimals$}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::sprt::{Estimate, Pentanomial};
    use crate::games::summary::{decided_sample, summarize};

    #[test]
    fn the_figures_are_fastchess_s() {
        let mut summary = decided_sample();
        summary.won_and_lost_pairs = 5;
        summary.nelo = Some(Estimate {
            value: 60.0,
            ci_low: 10.0,
            ci_high: 110.0,
        });
        let upper = summary.sprt.as_ref().unwrap().upper;
        assert_eq!(
            figures(&summary),
            format!(
                "Elo: 34.86 +/- 40.90, nElo: 60.00 +/- 50.00\n\
                 LOS: 95.12 %, DrawRatio: 40.00 %, PairsRatio: 2.00\n\
                 Games: 100, Wins: 30, Losses: 20, Draws: 50, Points: 55.0 (55.00 %)\n\
                 Ptnml(0-2): [2, 8, 20, 12, 8], WL/DD Ratio: 0.33\n\
                 LLR: 2.95 ({:.1}%) (-2.94, 2.94) [0.00, 5.00]\n\
                 {RULE}SPRT ([0.00, 5.00]) completed - H1 was accepted\n\
                 Finished match\n",
                2.9512 / upper * 100.0
            )
        );
        // Undecided: no hypothesis is said to be accepted, and a negative LLR's progress is
        // toward the lower bound, as a negative share (fastchess's sign).
        let state = summary.sprt.as_mut().unwrap();
        state.llr = -1.472;
        state.result = SprtDecision::Continue;
        let text = figures(&summary);
        assert!(
            text.contains("LLR: -1.47 (-50.0%) (-2.94, 2.94) [0.00, 5.00]\n"),
            "{text}"
        );
        assert!(text.ends_with(&format!("{RULE}Tournament finished\nFinished match\n")));
    }

    #[test]
    fn figures_that_do_not_exist_read_nan_or_inf() {
        let mut summary = summarize(&[], None);
        summary.wdl.wins = 2;
        summary.games = 2;
        summary.pairs = 1;
        summary.pentanomial = Pentanomial([0, 0, 0, 0, 1]);
        summary.elo = Some(Estimate {
            value: 190.8,
            ci_low: 190.8,
            ci_high: 190.8,
        });
        summary.los = Some(1.0);
        assert!(summary.too_few_pairs);
        assert_eq!(
            figures(&summary),
            format!(
                "Elo: nan +/- nan, nElo: nan +/- nan\n\
                 LOS: nan %, DrawRatio: 0.00 %, PairsRatio: inf\n\
                 Games: 2, Wins: 2, Losses: 0, Draws: 0, Points: 2.0 (100.00 %)\n\
                 Ptnml(0-2): [0, 0, 0, 0, 1], WL/DD Ratio: nan\n\
                 {RULE}Tournament finished\nFinished match\n"
            )
        );
    }

    #[test]
    fn the_time_control_book_and_options_read_as_fastchess_writes_them() {
        let clock = |base_ms, increment_ms| Limit::Clock {
            base_ms,
            increment_ms,
        };
        assert_eq!(time_control(&clock(10_000, 100)), "10+0.1");
        assert_eq!(time_control(&clock(2_000, 20)), "2+0.02");
        assert_eq!(time_control(&clock(60_000, 0)), "60");
        assert_eq!(time_control(&clock(500, 5)), "0.5+0.005");
        assert_eq!(time_control(&clock(8_000, 80)), "8+0.08");
        assert_eq!(time_control(&clock(1_000, 1_250)), "1+1.2");
        assert_eq!(time_control(&Limit::Nodes { nodes: 5000 }), "5000 nodes");
        assert_eq!(time_control(&Limit::Depth { depth: 8 }), "8 plies");
        assert_eq!(
            time_control(&Limit::MoveTime { movetime_ms: 500 }),
            "0.5/move"
        );
        assert_eq!(per_side("1t".into(), "1t".into()), "1t");
        assert_eq!(per_side("2t".into(), "1t".into()), "2t - 1t");
        let book = |source: &str| BookIdentity {
            source: source.to_string(),
            digest: String::new(),
            openings: 1,
            plies: None,
        };
        assert_eq!(
            book_name(&book("built-in (lab/books/openings.epd)")).as_deref(),
            Some("openings.epd")
        );
        assert_eq!(
            book_name(&book("/data/UHO_Lichess_4852_v1.epd")).as_deref(),
            Some("UHO_Lichess_4852_v1.epd")
        );
        assert_eq!(book_name(&book("books/")), None);
        let engine = Contestant {
            spec: "HEAD".into(),
            name: "squall".into(),
            binary: String::new(),
            commit: None,
            options: vec![("Threads".into(), "1".into()), ("Hash".into(), "16".into())],
            args: Vec::new(),
            dir: None,
        };
        assert_eq!(option(&engine, "Threads", "t"), "1t");
        assert_eq!(option(&engine, "Hash", "MB"), "16MB");
        assert_eq!(option(&engine, "Contempt", ""), "NULL");
    }
}
