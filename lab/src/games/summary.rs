//! What a set of finished games says: W/D/L, pentanomial counts, Elo, LOS and the SPRT state,
//! plus the match's health (terminations, faults, time forfeits, the lab's own cost per move).
//! Analysis only: the report layer formats it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::game::{GameRecord, SearchTotals, Sitting, Termination};
use super::results::complete_pairs;
use super::sprt::{self, Estimate, Pentanomial, Sprt, SprtDecision, Wdl};
use crate::analysis::stats;
use crate::side::Side;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SprtState {
    #[serde(flatten)]
    pub(crate) test: Sprt,
    pub(crate) llr: f64,
    pub(crate) lower: f64,
    pub(crate) upper: f64,
    pub(crate) result: SprtDecision,
    /// The games a decision is expected to take from here if the games to come score like
    /// those so far (`Sprt::expected_pairs_to_decision`, two games a pair); `None` once
    /// decided or below 10 complete pairs (too few for a pace).
    #[serde(default)]
    pub(crate) games_to_decision: Option<u64>,
}

impl SprtState {
    /// The test's state after the pairs of `pentanomial`.
    pub(crate) fn of(test: &Sprt, pentanomial: &Pentanomial) -> SprtState {
        let llr = test.llr(pentanomial);
        let mut state = SprtState {
            test: *test,
            llr,
            lower: test.lower(),
            upper: test.upper(),
            result: test.decide(llr),
            games_to_decision: None,
        };
        if !sprt::too_few_pairs(pentanomial) {
            state.games_to_decision = test
                .expected_pairs_to_decision(pentanomial)
                .map(|pairs| (2.0 * pairs).ceil() as u64);
        }
        state
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Summary {
    pub(crate) games: u64,
    /// Complete pairs (both games played); the statistics below are over these.
    pub(crate) pairs: u64,
    /// From B's point of view, over every finished game.
    pub(crate) wdl: Wdl,
    /// [LL, LD, DD+WL, WD, WW] from B's point of view.
    pub(crate) pentanomial: Pentanomial,
    /// The pairs of the DD+WL cell that B won one game of and lost the other (WL); the rest
    /// of the cell drew both (fastchess's `WL/DD Ratio`).
    pub(crate) won_and_lost_pairs: u64,
    pub(crate) score: Option<f64>,
    pub(crate) elo: Option<Estimate>,
    pub(crate) nelo: Option<Estimate>,
    /// `null` while `too_few_pairs`.
    pub(crate) los: Option<f64>,
    /// Fewer than 10 complete pairs, or pair scores without variance: the Elo and nElo
    /// intervals are not estimates yet, and every report says "too few pairs (n)" instead.
    pub(crate) too_few_pairs: bool,
    pub(crate) sprt: Option<SprtState>,
    /// Games by PGN termination.
    pub(crate) terminations: BTreeMap<&'static str, u64>,
    /// Games lost to a fault (crash, hang, illegal move, garbage, time), for A and B.
    pub(crate) faults: [u64; 2],
    pub(crate) time_forfeits: [u64; 2],
    /// The referee's and the lab's I/O time between an engine's move and the next `go`.
    pub(crate) lab_overhead_us_per_move: Option<f64>,
    pub(crate) plies: u64,
    /// Whether the two games of each pair were the same moves: see [`Alike`].
    pub(crate) alike: Alike,
    /// How A, then B, searched in these games.
    pub(crate) search_in_games: [SearchInGames; 2],
    /// B's NPS over A's, game by game; `None` below [`MIN_GAMES_FOR_NPS_RATIO`] games in which
    /// both sides reported nodes.
    pub(crate) nps_ratio_in_games: Option<NpsRatioInGames>,
    /// The runs of consecutive games its interval was also taken over, each with its ratio;
    /// empty below 100 such games.
    pub(crate) nps_ratio_by_run: Vec<NpsRatioOfRun>,
    /// Each sitting that played the games, in the order of its first game, with its ratio;
    /// empty unless every game records its sitting and there are two or more.
    pub(crate) nps_ratio_by_sitting: Vec<NpsRatioOfSitting>,
}

/// Games with both sides' speed below this give no ratio: too few for an interval.
pub(crate) const MIN_GAMES_FOR_NPS_RATIO: u64 = 20;

/// Runs of consecutive games the ratio's second interval is taken over (batch means): 20, as
/// simulation output is commonly batched, so the t quantile (19 degrees of freedom, 2.09) costs
/// little width while each run still spans a stretch of the match's time.
pub(crate) const NPS_RATIO_RUNS: usize = 20;

/// Fewest games in a run; fewer games than [`NPS_RATIO_RUNS`] runs of them make fewer runs.
const MIN_GAMES_PER_NPS_RUN: usize = 10;

/// Fewer runs than this give no second interval: its t quantile would swamp it.
const MIN_NPS_RUNS: usize = 10;

/// Fewest sittings whose spread gives the third interval: below, its t quantile (3 degrees of
/// freedom: 3.18) would be more of the interval than the games are.
pub(crate) const MIN_NPS_SITTINGS: usize = 5;

/// The t quantile's probability for a two-sided 95% interval.
const T_95_PROBABILITY: f64 = 0.975;

/// B's NPS over A's in the games: the geometric mean over the games of B's NPS over A's in
/// each. The two engines search in turn in one game, so what loads the machine meanwhile loads
/// both alike and cancels in the game's ratio. What does not cancel is a drift in how the
/// machine treats the two binaries over hours (docs/strength.md measures one): neighbouring
/// games then share their error, which the game-by-game interval takes for independent. So the
/// interval is the widest of the game-by-game one (normal, over the mean log ratio), the one
/// from the spread of the mean log ratios of [`NPS_RATIO_RUNS`] runs of consecutive games
/// (Student's t), and, when every game records its sitting and there are
/// [`MIN_NPS_SITTINGS`] of them, the one with each sitting's games as a cluster: without a
/// drift they agree; the runs hold a drift shorter than a run, the sittings one that lasts as
/// long as a sitting.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct NpsRatioInGames {
    #[serde(flatten)]
    pub(crate) ratio: Estimate,
    /// The games in which both sides reported nodes.
    pub(crate) games: u64,
    /// The runs of consecutive games (in the order recorded; by pair for a merge) of the
    /// second interval; 0 below [`MIN_NPS_RUNS`] runs of [`MIN_GAMES_PER_NPS_RUN`] games.
    #[serde(default)]
    pub(crate) runs: u64,
    /// The sittings of the third interval; 0 when a game does not record its sitting or there
    /// are fewer than [`MIN_NPS_SITTINGS`].
    #[serde(default)]
    pub(crate) sittings: u64,
    /// Which interval `ratio` holds, the widest.
    #[serde(default)]
    pub(crate) interval_from: NpsIntervalFrom,
}

/// The interval that bounds the games' NPS ratio.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum NpsIntervalFrom {
    /// The games' ratios taken as independent.
    #[default]
    Games,
    /// The spread of runs of consecutive games: wider, so the speed moved over the match more
    /// than the games' own spread allows, or by chance a little.
    Runs,
    /// The spread between the sittings that played the games: the widest, so the speed moved
    /// between the lab's runs more than within them.
    Sittings,
}

/// An interval wider than game by game that bounds the games' ratio, with how many parts its
/// spread is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WiderNpsInterval {
    Runs(u64),
    Sittings(u64),
}

impl NpsRatioInGames {
    /// The games' ratio alone (the reports take it from [`summarize`], with its parts).
    #[cfg(test)]
    pub(crate) fn of(games: &[GameRecord]) -> Option<NpsRatioInGames> {
        nps_ratios(games).0
    }

    /// The runs whose spread gave the interval, when theirs was the widest.
    pub(crate) fn runs_if_wider(&self) -> Option<u64> {
        (self.interval_from == NpsIntervalFrom::Runs).then_some(self.runs)
    }

    /// The sittings whose spread gave the interval, when theirs was the widest.
    pub(crate) fn sittings_if_wider(&self) -> Option<u64> {
        (self.interval_from == NpsIntervalFrom::Sittings).then_some(self.sittings)
    }

    /// The interval given, when it is not the game-by-game one.
    pub(crate) fn wider_interval(&self) -> Option<WiderNpsInterval> {
        match self.interval_from {
            NpsIntervalFrom::Games => None,
            NpsIntervalFrom::Runs => Some(WiderNpsInterval::Runs(self.runs)),
            NpsIntervalFrom::Sittings => Some(WiderNpsInterval::Sittings(self.sittings)),
        }
    }
}

/// B's NPS over A's in one of the runs of consecutive games [`NpsRatioInGames`] bounds its
/// interval by: the match page draws them, so a drift over the match shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct NpsRatioOfRun {
    /// The games with both sides' speed up to the run's last, counted from the first.
    pub(crate) through_game: u64,
    /// The run's geometric mean, its 95% interval (Student's t) from its own games' spread.
    #[serde(flatten)]
    pub(crate) ratio: Estimate,
}

/// B's NPS over A's in the games of one sitting: the match page lists them, so the spread
/// between sittings [`NpsRatioInGames`] may be bounded by shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct NpsRatioOfSitting {
    pub(crate) sitting: Sitting,
    /// The sitting's games with both sides' speed.
    pub(crate) games: u64,
    /// The sitting's geometric mean, its 95% interval (Student's t) from its own games' spread
    /// (none for one game).
    #[serde(flatten)]
    pub(crate) ratio: Estimate,
}

/// B's NPS over A's in the games, and its parts.
type NpsRatios = (
    Option<NpsRatioInGames>,
    Vec<NpsRatioOfRun>,
    Vec<NpsRatioOfSitting>,
);

/// B's NPS over A's in the games ([`NpsRatioInGames`]), in each of its runs of consecutive
/// games (none below [`MIN_NPS_RUNS`]) and in each sitting, from one pass over the games'
/// ratios.
fn nps_ratios(games: &[GameRecord]) -> NpsRatios {
    let (logs, sittings): (Vec<f64>, Vec<Option<Sitting>>) =
        nps_log_ratios(games).into_iter().unzip();
    if (logs.len() as u64) < MIN_GAMES_FOR_NPS_RATIO {
        return (None, Vec::new(), Vec::new());
    }
    let mut through_game = 0;
    let mut run_means = Vec::new();
    let runs: Vec<NpsRatioOfRun> = consecutive_runs(&logs)
        .iter()
        .map(|run| {
            through_game += run.len() as u64;
            let (mean, variance) = mean_and_variance(run);
            run_means.push(mean);
            NpsRatioOfRun {
                through_game,
                ratio: ratio_of_log(mean, t_half_width(variance, run.len())),
            }
        })
        .collect();
    let (mean, variance) = mean_and_variance(&logs);
    let by_games = sprt::Z_95 * (variance / logs.len() as f64).sqrt();
    let by_runs = (!run_means.is_empty())
        .then(|| t_half_width(mean_and_variance(&run_means).1, run_means.len()));
    let groups = sitting_groups(&logs, &sittings).unwrap_or_default();
    let by_sittings = sittings_half_width(&groups, mean, logs.len());
    let mut widest = (by_games, NpsIntervalFrom::Games);
    for (half_width, from) in [
        (by_runs, NpsIntervalFrom::Runs),
        (
            by_sittings.map(|(half_width, _)| half_width),
            NpsIntervalFrom::Sittings,
        ),
    ] {
        if let Some(half_width) = half_width.filter(|&half_width| half_width > widest.0) {
            widest = (half_width, from);
        }
    }
    let all = NpsRatioInGames {
        ratio: ratio_of_log(mean, widest.0),
        games: logs.len() as u64,
        runs: runs.len() as u64,
        sittings: by_sittings.map_or(0, |(_, sittings)| sittings as u64),
        interval_from: widest.1,
    };
    (Some(all), runs, ratio_by_sitting(&groups))
}

/// Student's t half-width of the 95% interval of the mean of `n` values of `variance`; 0 for
/// one value.
fn t_half_width(variance: f64, n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    stats::student_t_quantile(T_95_PROBABILITY, (n - 1) as f64) * (variance / n as f64).sqrt()
}

/// Each sitting's games' log ratios, in the order of the sitting's first game; `None` when a
/// game does not record its sitting.
fn sitting_groups(logs: &[f64], sittings: &[Option<Sitting>]) -> Option<Vec<(Sitting, Vec<f64>)>> {
    let mut index: BTreeMap<Sitting, usize> = BTreeMap::new();
    let mut groups: Vec<(Sitting, Vec<f64>)> = Vec::new();
    for (log, sitting) in logs.iter().zip(sittings) {
        let sitting = (*sitting)?;
        let at = *index.entry(sitting).or_insert_with(|| {
            groups.push((sitting, Vec::new()));
            groups.len() - 1
        });
        groups[at].1.push(*log);
    }
    Some(groups)
}

/// Each sitting's ratio, from two sittings on.
fn ratio_by_sitting(groups: &[(Sitting, Vec<f64>)]) -> Vec<NpsRatioOfSitting> {
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
        .iter()
        .map(|(sitting, games)| {
            let (mean, variance) = if games.len() > 1 {
                mean_and_variance(games)
            } else {
                (games[0], 0.0)
            };
            NpsRatioOfSitting {
                sitting: *sitting,
                games: games.len() as u64,
                ratio: ratio_of_log(mean, t_half_width(variance, games.len())),
            }
        })
        .collect()
}

/// Each game's log of B's NPS over A's with the game's sitting, in the order given, over the
/// games in which both sides reported nodes and time.
fn nps_log_ratios(games: &[GameRecord]) -> Vec<(f64, Option<Sitting>)> {
    let nps = |totals: &SearchTotals| {
        (totals.nodes > 0 && totals.nodes_time_us > 0)
            .then(|| totals.nodes as f64 / totals.nodes_time_us as f64)
    };
    games
        .iter()
        .filter_map(|game| {
            let log = (nps(&game.search[1])? / nps(&game.search[0])?).ln();
            log.is_finite().then_some((log, game.sitting))
        })
        .collect()
}

/// The half-width of the 95% interval of the mean log ratio `mean` of `n` games with each
/// sitting's games as one cluster, and the sittings: the cluster-robust standard error
/// `sqrt(G / (G - 1) · Σ_g (Σ_{i in g} (x_i - mean))²) / n` over G sittings, with Student's t
/// at G - 1 degrees of freedom. `None` below [`MIN_NPS_SITTINGS`].
fn sittings_half_width(
    groups: &[(Sitting, Vec<f64>)],
    mean: f64,
    n: usize,
) -> Option<(f64, usize)> {
    let clusters = groups.len();
    if clusters < MIN_NPS_SITTINGS {
        return None;
    }
    let g = clusters as f64;
    let sum_of_squares: f64 = groups
        .iter()
        .map(|(_, games)| games.iter().map(|log| log - mean).sum::<f64>().powi(2))
        .sum();
    let standard_error = (g / (g - 1.0) * sum_of_squares).sqrt() / n as f64;
    Some((
        stats::student_t_quantile(T_95_PROBABILITY, g - 1.0) * standard_error,
        clusters,
    ))
}

/// [`NPS_RATIO_RUNS`] runs of near-equal length (so their means weigh alike), or fewer of
/// [`MIN_GAMES_PER_NPS_RUN`]; none below [`MIN_NPS_RUNS`] of them.
fn consecutive_runs(logs: &[f64]) -> Vec<&[f64]> {
    let runs = (logs.len() / MIN_GAMES_PER_NPS_RUN).min(NPS_RATIO_RUNS);
    if runs < MIN_NPS_RUNS {
        return Vec::new();
    }
    (0..runs)
        .map(|run| &logs[run * logs.len() / runs..(run + 1) * logs.len() / runs])
        .collect()
}

/// A ratio from the mean of its logs and the half-width of their interval.
fn ratio_of_log(mean: f64, half_width: f64) -> Estimate {
    Estimate {
        value: mean.exp(),
        ci_low: (mean - half_width).exp(),
        ci_high: (mean + half_width).exp(),
    }
}

/// The mean and the sample variance of at least two values.
fn mean_and_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance)
}

/// One side's searches over a match's games, as means per move: what its speed and depth were
/// in the games themselves (where a bench measures other positions). Each figure is `None` when
/// no move reported it (an engine that sends no `depth` or `nodes`, or a results file from
/// before they were kept).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SearchInGames {
    /// Moves searched.
    pub(crate) moves: u64,
    pub(crate) mean_depth: Option<f64>,
    /// From `go` to `bestmove`, as the lab's clock saw it.
    pub(crate) mean_time_ms: Option<f64>,
    pub(crate) nodes_per_move: Option<f64>,
    /// Nodes over time, over the moves that reported nodes.
    pub(crate) nps: Option<f64>,
}

impl SearchInGames {
    pub(crate) fn of(totals: &SearchTotals) -> SearchInGames {
        let per = |sum: u64, count: u64| (count > 0).then(|| sum as f64 / count as f64);
        SearchInGames {
            moves: totals.moves,
            mean_depth: per(totals.depth_sum, totals.depth_moves),
            mean_time_ms: per(totals.time_us, totals.moves).map(|us| us / 1000.0),
            nodes_per_move: per(totals.nodes, totals.nodes_moves),
            nps: (totals.nodes_time_us > 0)
                .then(|| totals.nodes as f64 * 1e6 / totals.nodes_time_us as f64),
        }
    }
}

/// The complete pairs, at most, that [`Alike`] reads: enough to tell, and bounded so that every
/// status line of a long match stays cheap.
pub(crate) const ALIKE_CHECKED_PAIRS: usize = 32;

/// Fewer checked pairs than this say nothing about playing alike.
pub(crate) const ALIKE_MIN_PAIRS: u64 = 10;

/// Of the first complete pairs (by pair number, up to [`ALIKE_CHECKED_PAIRS`]), those whose two
/// games are the same moves. Colours swap within a pair, so that happens in every pair only
/// when A and B choose alike at every move: two builds of one search, or an option that does
/// not reach the games. Such games cannot tell the engines apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Alike {
    pub(crate) checked: u64,
    pub(crate) identical: u64,
}

impl Alike {
    fn of(games: &[GameRecord]) -> Alike {
        let mut alike = Alike::default();
        for pair in complete_pairs(games).values().take(ALIKE_CHECKED_PAIRS) {
            if let [Some(first), Some(second)] = pair {
                alike.checked += 1;
                if moves(&first.pgn).eq(moves(&second.pgn)) {
                    alike.identical += 1;
                }
            }
        }
        alike
    }

    /// Every checked pair was the same moves, over enough pairs to say so.
    pub(crate) fn in_every_pair(&self) -> bool {
        self.checked >= ALIKE_MIN_PAIRS && self.identical == self.checked
    }
}

/// The moves of a PGN game in order: its movetext without tag pairs, `{}` comments, move
/// numbers or the result.
fn moves(pgn: &str) -> impl Iterator<Item = &str> {
    let movetext = pgn
        .split('\n')
        .filter(|line| !line.starts_with('['))
        .flat_map(str::split_whitespace);
    let mut depth = 0usize;
    movetext.filter(move |token| {
        let outside = depth == 0 && !token.starts_with('{');
        depth += token.matches('{').count();
        depth = depth.saturating_sub(token.matches('}').count());
        outside && !token.ends_with('.') && !matches!(*token, "1-0" | "0-1" | "1/2-1/2" | "*")
    })
}

pub(crate) fn summarize(games: &[GameRecord], sprt: Option<&Sprt>) -> Summary {
    let mut wdl = Wdl::default();
    let mut terminations = BTreeMap::new();
    let mut faults = [0; 2];
    let mut time_forfeits = [0; 2];
    let (mut overhead_ns, mut overhead_moves, mut plies) = (0u64, 0u64, 0u64);
    let mut search = [SearchTotals::default(); 2];
    for game in games {
        search[0].add(&game.search[0]);
        search[1].add(&game.search[1]);
        match game.result.points_x2(Side::B, game.id.white()) {
            2 => wdl.wins += 1,
            1 => wdl.draws += 1,
            _ => wdl.losses += 1,
        }
        *terminations.entry(game.termination.pgn()).or_insert(0) += 1;
        if let Some(fault) = &game.fault {
            faults[fault.side.index()] += 1;
            if game.termination == Termination::TimeForfeit {
                time_forfeits[fault.side.index()] += 1;
            }
        }
        overhead_ns = overhead_ns.saturating_add(game.lab_overhead_ns);
        // Read from a results file: a record's numbers may be anything.
        overhead_moves = overhead_moves.saturating_add(game.lab_overhead_moves);
        plies = plies.saturating_add(game.plies as u64);
    }
    let mut pentanomial = Pentanomial::default();
    let mut won_and_lost_pairs = 0;
    for pair in complete_pairs(games).values() {
        let games_points = pair
            .iter()
            .flatten()
            .map(|game| game.result.points_x2(Side::B, game.id.white()));
        let points: u8 = games_points.clone().sum();
        if points == 2 && games_points.clone().any(|won| won == 2) {
            won_and_lost_pairs += 1;
        }
        pentanomial.add_pair(points);
    }
    let sprt = sprt.map(|test| SprtState::of(test, &pentanomial));
    let (nps_ratio_in_games, nps_ratio_by_run, nps_ratio_by_sitting) = nps_ratios(games);
    Summary {
        games: games.len() as u64,
        pairs: pentanomial.pairs(),
        won_and_lost_pairs,
        wdl,
        pentanomial,
        score: sprt::score(&pentanomial),
        elo: sprt::logistic_elo(&pentanomial),
        nelo: sprt::normalized_elo(&pentanomial),
        los: (!sprt::too_few_pairs(&pentanomial))
            .then(|| sprt::los(&pentanomial))
            .flatten(),
        too_few_pairs: sprt::too_few_pairs(&pentanomial),
        sprt,
        terminations,
        faults,
        time_forfeits,
        lab_overhead_us_per_move: (overhead_moves > 0)
            .then(|| overhead_ns as f64 / overhead_moves as f64 / 1000.0),
        plies,
        alike: Alike::of(games),
        search_in_games: search.map(|totals| SearchInGames::of(&totals)),
        nps_ratio_in_games,
        nps_ratio_by_run,
        nps_ratio_by_sitting,
    }
}

/// A match's summary for the report formats' tests: 100 games (B +30 =50 -20), 50 pairs
/// [2, 8, 20, 12, 8], Elo +34.86 (-6.04 to +75.76), LOS 95.12%, and the SPRT [0, 5] accepting
/// H1 at LLR 2.9512.
#[cfg(test)]
pub(crate) fn decided_sample() -> Summary {
    let test = Sprt::parse("elo0=0,elo1=5", sprt::EloModel::Logistic).unwrap();
    let mut summary = summarize(&[], Some(&test));
    summary.wdl = Wdl {
        wins: 30,
        losses: 20,
        draws: 50,
    };
    summary.games = 100;
    summary.pentanomial = Pentanomial([2, 8, 20, 12, 8]);
    summary.pairs = 50;
    summary.too_few_pairs = false;
    summary.elo = Some(Estimate {
        value: 34.86,
        ci_low: -6.04,
        ci_high: 75.76,
    });
    summary.los = Some(0.9512);
    let state = summary.sprt.as_mut().expect("an SPRT was given");
    state.llr = 2.9512;
    state.result = SprtDecision::AcceptH1;
    summary
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The two games of a pair as the lab writes them: colours and comments differ, moves not.
    const WHITE_A: &str = "[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n7. fxg5 {+0.09/10 \
        0.105s} Qxg5 {-0.08/10 0.132s} 8. Nf3 {book} 1-0\n";
    const WHITE_B: &str = "[White \"B\"]\n[Black \"A\"]\n[Result \"1-0\"]\n\n7. fxg5 {+0.11/10 \
        0.098s} Qxg5 {-0.07/11 0.140s}\n8. Nf3 {book} 1-0\n";

    #[test]
    fn moves_are_the_movetext_without_tags_comments_numbers_or_result() {
        assert_eq!(moves(WHITE_A).collect::<Vec<_>>(), ["fxg5", "Qxg5", "Nf3"]);
        assert!(moves(WHITE_A).eq(moves(WHITE_B)));
        let other = WHITE_B.replace("8. Nf3", "8. Nc3");
        assert!(!moves(WHITE_A).eq(moves(&other)));
        let black_first = "[FEN \"x\"]\n\n7... Qxg5 {-0.08/10 0.132s} 8. Nf3 *\n";
        assert_eq!(moves(black_first).collect::<Vec<_>>(), ["Qxg5", "Nf3"]);
    }

    fn times(p: [u64; 5], k: u64) -> Pentanomial {
        Pentanomial(p.map(|n| n * k))
    }

    #[test]
    fn the_state_counts_two_games_for_each_pair_a_decision_is_expected_to_take() {
        let test = Sprt::new(-5.0, 0.0, 0.05, 0.05, sprt::EloModel::Logistic).unwrap();
        for cells in [
            [10, 40, 60, 50, 20],
            [20, 50, 60, 40, 10],
            [15, 45, 60, 45, 15],
        ] {
            let now = SprtState::of(&test, &Pentanomial(cells));
            assert_eq!(now.result, SprtDecision::Continue);
            let pairs = test
                .expected_pairs_to_decision(&Pentanomial(cells))
                .unwrap();
            assert_eq!(now.games_to_decision, Some((2.0 * pairs).ceil() as u64));
        }
        // Decided, or too few pairs for a pace: none.
        let decided = SprtState::of(&test, &times([10, 40, 60, 50, 20], 40));
        assert_eq!(decided.result, SprtDecision::AcceptH1);
        assert_eq!(decided.games_to_decision, None);
        let early = SprtState::of(&test, &Pentanomial([1, 2, 2, 2, 1]));
        assert_eq!(early.games_to_decision, None);
    }

    /// Means per move; speed only over the moves that reported nodes; an engine's absurd
    /// figures saturate instead of wrapping or panicking.
    #[test]
    fn searches_in_games_are_means_per_move_over_what_was_reported() {
        use std::time::Duration;
        let mut totals = SearchTotals::default();
        totals.add_move(Duration::from_millis(100), Some(12), Some(400_000));
        totals.add_move(Duration::from_millis(300), Some(14), Some(800_000));
        // A move with no `info` at all: its time counts, not its depth or speed.
        totals.add_move(Duration::from_millis(200), None, None);
        let mut pooled = SearchTotals::default();
        pooled.add(&totals);
        let side = SearchInGames::of(&pooled);
        assert_eq!(side.moves, 3);
        assert_eq!(side.mean_depth, Some(13.0));
        assert_eq!(side.mean_time_ms, Some(200.0));
        assert_eq!(side.nodes_per_move, Some(600_000.0));
        assert_eq!(side.nps, Some(3_000_000.0));
        assert_eq!(
            SearchInGames::of(&SearchTotals::default()),
            SearchInGames::default()
        );
        let mut absurd = SearchTotals::default();
        absurd.add_move(Duration::MAX, Some(u32::MAX), Some(u64::MAX));
        absurd.add_move(Duration::MAX, Some(u32::MAX), Some(u64::MAX));
        assert_eq!((absurd.nodes, absurd.time_us), (u64::MAX, u64::MAX));
        assert!(SearchInGames::of(&absurd).nps.is_some_and(f64::is_finite));
    }

    /// The games' ratio is the geometric mean of each game's, bounded by their spread, and
    /// needs enough games in which both sides reported nodes.
    #[test]
    fn the_nps_ratio_in_games_is_the_geometric_mean_of_each_games_ratio() {
        use std::time::Duration;
        let game = |a_nps: u64, b_nps: u64| {
            let mut record = blank_game();
            record.search[0].add_move(Duration::from_secs(1), Some(10), Some(a_nps));
            record.search[1].add_move(Duration::from_secs(1), Some(10), Some(b_nps));
            record
        };
        // Half the games B is 1.5 times as fast, half 1.0 times: geometric mean sqrt(1.5).
        let mut games: Vec<GameRecord> = (0..MIN_GAMES_FOR_NPS_RATIO)
            .map(|i| {
                if i % 2 == 0 {
                    game(1000, 1500)
                } else {
                    game(1000, 1000)
                }
            })
            .collect();
        let ratio = NpsRatioInGames::of(&games).unwrap();
        assert_eq!(ratio.games, MIN_GAMES_FOR_NPS_RATIO);
        assert!(
            (ratio.ratio.value - 1.5f64.sqrt()).abs() < 1e-12,
            "{ratio:?}"
        );
        assert!(ratio.ratio.ci_low < ratio.ratio.value && ratio.ratio.value < ratio.ratio.ci_high);
        assert!(
            ratio.ratio.ci_low > 1.0 && ratio.ratio.ci_high < 1.5,
            "{ratio:?}"
        );
        // A game in which one side reported no nodes does not count; one game fewer is too few.
        games.pop();
        games.push(blank_game());
        assert_eq!(NpsRatioInGames::of(&games), None);
        assert_eq!(ratio.interval_from, NpsIntervalFrom::Games);
        assert_eq!(
            ratio.runs, 0,
            "2 runs of 10 games are too few for their interval"
        );
    }

    /// A match whose speed moved halfway (the machine's, not the games' spread) is bounded by
    /// its runs of consecutive games; the same games shuffled, without the drift, game by game.
    #[test]
    fn a_drift_over_the_games_widens_the_nps_ratio_s_interval() {
        use std::time::Duration;
        let game = |b_nps: u64| {
            let mut record = blank_game();
            record.search[0].add_move(Duration::from_secs(1), Some(10), Some(1_000_000));
            record.search[1].add_move(Duration::from_secs(1), Some(10), Some(b_nps));
            record
        };
        // B 1% slower for 200 games, then 0.2%, each game +-0.5% around it.
        let drifted: Vec<GameRecord> = (0..400)
            .map(|i| {
                let cost = if i < 200 { 10_000 } else { 2_000 };
                let noise = if i % 2 == 0 { 5_000 } else { 0 };
                game(1_000_000 - cost + noise - 2_500)
            })
            .collect();
        let ratio = NpsRatioInGames::of(&drifted).unwrap();
        assert_eq!(ratio.runs, NPS_RATIO_RUNS as u64);
        assert_eq!(ratio.interval_from, NpsIntervalFrom::Runs);
        assert_eq!(ratio.runs_if_wider(), Some(20));
        // Interleaved, each run holds both costs alike and its mean the overall one.
        let interleaved: Vec<GameRecord> = (0..400)
            .map(|i| drifted[(i % 2) * 200 + i / 2].clone())
            .collect();
        let alike = NpsRatioInGames::of(&interleaved).unwrap();
        assert_eq!(alike.interval_from, NpsIntervalFrom::Games);
        assert_eq!(alike.runs_if_wider(), None);
        assert!((alike.ratio.value - ratio.ratio.value).abs() < 1e-12);
        let width = |r: &NpsRatioInGames| r.ratio.ci_high.ln() - r.ratio.ci_low.ln();
        assert!(
            width(&ratio) > 2.0 * width(&alike),
            "{ratio:?} against {alike:?}"
        );
        // The mean cost, about 0.6%, inside it.
        assert!(
            ratio.ratio.ci_low < 0.994 && ratio.ratio.ci_high > 0.994,
            "{ratio:?}"
        );
        // Each run's own ratio shows the step: 1% for the first ten, 0.2% for the last ten.
        let runs = nps_ratios(&drifted).1;
        assert_eq!(runs.len(), NPS_RATIO_RUNS);
        assert_eq!(runs.last().map(|run| run.through_game), Some(400));
        for (index, run) in runs.iter().enumerate() {
            let cost = if index < 10 { 0.99 } else { 0.998 };
            assert!(
                (run.ratio.value.ln() - f64::ln(cost)).abs() < 1e-4,
                "{run:?}"
            );
            assert!(run.ratio.ci_low < run.ratio.value && run.ratio.value < run.ratio.ci_high);
        }
        assert!(
            nps_ratios(&drifted[..99]).1.is_empty(),
            "9 runs of 11 games"
        );
    }

    /// A speed that differs between the lab's runs (sittings) more than within them is bounded
    /// by the sittings' spread, wider than the runs' (each run lies within one sitting, so
    /// their 20 means look like many draws of what is only 6); with too few sittings, or a
    /// game that does not record its sitting, the sittings give no interval.
    #[test]
    fn a_speed_that_differs_between_sittings_is_bounded_by_them() {
        use std::time::Duration;
        let game = |b_nps: u64, sitting: Option<u64>| {
            let mut record = blank_game();
            record.search[0].add_move(Duration::from_secs(1), Some(10), Some(1_000_000));
            record.search[1].add_move(Duration::from_secs(1), Some(10), Some(b_nps));
            record.sitting = sitting.map(Sitting);
            record
        };
        // 6 sittings of 100 games, B 1% slower in the even ones and 0.2% in the odd ones, each
        // game +-0.5% around it.
        let sittings = |sitting_of: &dyn Fn(u64) -> u64| -> Vec<GameRecord> {
            (0..600)
                .map(|i| {
                    let cost = if (i / 100) % 2 == 0 { 10_000 } else { 2_000 };
                    let noise = if i % 2 == 0 { 5_000 } else { 0 };
                    game(1_000_000 - cost + noise - 2_500, Some(sitting_of(i)))
                })
                .collect()
        };
        let by_sitting = sittings(&|i| 1_000 + i / 100);
        let ratio = NpsRatioInGames::of(&by_sitting).unwrap();
        assert_eq!(ratio.sittings, 6);
        assert_eq!(ratio.interval_from, NpsIntervalFrom::Sittings, "{ratio:?}");
        assert_eq!(ratio.wider_interval(), Some(WiderNpsInterval::Sittings(6)));
        assert_eq!(ratio.runs_if_wider(), None);
        // Each sitting's own ratio, in the order played, shows the costs it played at.
        let listed = nps_ratios(&by_sitting).2;
        assert_eq!(listed.len(), 6);
        for (index, sitting) in listed.iter().enumerate() {
            let cost = if index % 2 == 0 { 0.99 } else { 0.998 };
            assert_eq!(
                (sitting.sitting, sitting.games),
                (Sitting(1_000 + index as u64), 100)
            );
            assert!(
                (sitting.ratio.value.ln() - f64::ln(cost)).abs() < 1e-4,
                "{sitting:?}"
            );
            assert!(sitting.ratio.ci_low < sitting.ratio.value);
        }
        let width = |r: &NpsRatioInGames| r.ratio.ci_high.ln() - r.ratio.ci_low.ln();
        let unrecorded: Vec<GameRecord> = by_sitting
            .iter()
            .map(|game| GameRecord {
                sitting: None,
                ..game.clone()
            })
            .collect();
        let by_runs = NpsRatioInGames::of(&unrecorded).unwrap();
        assert_eq!(
            (by_runs.interval_from, by_runs.sittings),
            (NpsIntervalFrom::Runs, 0)
        );
        assert!(
            width(&ratio) > 1.5 * width(&by_runs),
            "{ratio:?} {by_runs:?}"
        );
        assert!((ratio.ratio.value - by_runs.ratio.value).abs() < 1e-12);
        assert!(
            ratio.ratio.ci_low < 0.994 && ratio.ratio.ci_high > 0.994,
            "{ratio:?}"
        );
        // One game without its sitting: no sittings' interval.
        let mut one_unrecorded = by_sitting.clone();
        one_unrecorded[300].sitting = None;
        assert_eq!(NpsRatioInGames::of(&one_unrecorded).unwrap().sittings, 0);
        assert!(nps_ratios(&one_unrecorded).2.is_empty());
        // 4 sittings are too few.
        let four = NpsRatioInGames::of(&sittings(&|i| i / 150)).unwrap();
        assert_eq!(
            (four.sittings, four.interval_from),
            (0, NpsIntervalFrom::Runs)
        );
        // Sittings that each hold both costs alike add nothing.
        let mixed = NpsRatioInGames::of(&sittings(&|i| (i / 2) % 6)).unwrap();
        assert_eq!(mixed.sittings, 6);
        assert_ne!(mixed.interval_from, NpsIntervalFrom::Sittings, "{mixed:?}");
    }

    proptest::proptest! {
        /// Whatever sums a results file claims (it is read from outside), the searches in the
        /// games are finite means or absent, the ratio's interval (over runs and sittings too)
        /// holds its value, and each run's too.
        #[test]
        fn any_recorded_searches_give_finite_figures(
            sides in proptest::collection::vec(
                proptest::array::uniform2(proptest::array::uniform7(proptest::num::u64::ANY)),
                0..260,
            ),
            sittings in proptest::collection::vec(proptest::option::weighted(0.95, 0u64..8), 260),
        ) {
            let games: Vec<GameRecord> = sides
                .iter()
                .zip(&sittings)
                .map(|(sums, sitting)| {
                    let mut record = blank_game();
                    record.sitting = sitting.map(Sitting);
                    for (side, s) in record.search.iter_mut().zip(sums) {
                        *side = SearchTotals {
                            moves: s[0],
                            time_us: s[1],
                            depth_moves: s[2],
                            depth_sum: s[3],
                            nodes_moves: s[4],
                            nodes: s[5],
                            nodes_time_us: s[6],
                        };
                    }
                    record
                })
                .collect();
            let summary = summarize(&games, None);
            for side in &summary.search_in_games {
                for figure in [side.mean_depth, side.mean_time_ms, side.nodes_per_move, side.nps]
                    .into_iter()
                    .flatten()
                {
                    proptest::prop_assert!(figure.is_finite(), "{side:?}");
                }
            }
            if let Some(ratio) = summary.nps_ratio_in_games {
                let e = ratio.ratio;
                proptest::prop_assert!(e.ci_low.is_finite() && e.ci_high.is_finite());
                proptest::prop_assert!(e.ci_low <= e.value && e.value <= e.ci_high, "{e:?}");
                proptest::prop_assert!(ratio.games >= MIN_GAMES_FOR_NPS_RATIO);
                proptest::prop_assert_eq!(ratio.runs, summary.nps_ratio_by_run.len() as u64);
                proptest::prop_assert!(ratio.runs <= NPS_RATIO_RUNS as u64);
                proptest::prop_assert!(
                    ratio.sittings == 0
                        || (MIN_NPS_SITTINGS as u64..=8).contains(&ratio.sittings),
                    "{ratio:?}"
                );
                let listed: u64 = summary.nps_ratio_by_sitting.iter().map(|s| s.games).sum();
                proptest::prop_assert!(listed == 0 || listed == ratio.games);
            }
            for sitting in &summary.nps_ratio_by_sitting {
                let e = sitting.ratio;
                proptest::prop_assert!(e.ci_low.is_finite() && e.ci_high.is_finite(), "{e:?}");
                proptest::prop_assert!(e.ci_low <= e.value && e.value <= e.ci_high, "{e:?}");
            }
            let mut through = 0;
            for run in &summary.nps_ratio_by_run {
                let e = run.ratio;
                proptest::prop_assert!(e.ci_low.is_finite() && e.ci_high.is_finite(), "{e:?}");
                proptest::prop_assert!(e.ci_low <= e.value && e.value <= e.ci_high, "{e:?}");
                proptest::prop_assert!(run.through_game > through);
                through = run.through_game;
            }
            if let (Some(ratio), false) = (summary.nps_ratio_in_games, through == 0) {
                proptest::prop_assert_eq!(through, ratio.games, "the runs cover every game");
            }
        }
    }

    /// A drawn game with nothing recorded: tests set what they read.
    pub(crate) fn blank_game() -> GameRecord {
        GameRecord {
            id: super::super::game::GameId { pair: 0, game: 0 },
            opening: 0,
            result: super::super::game::GameResult::Draw,
            termination: Termination::Normal,
            reason: String::new(),
            plies: 0,
            fault: None,
            duration_ms: 0,
            lab_overhead_ns: 0,
            lab_overhead_moves: 0,
            search: Default::default(),
            pgn: String::new(),
            sitting: None,
        }
    }

    /// A pair scoring one point is a win and a loss, or two draws: told apart.
    #[test]
    fn the_pairs_that_won_one_and_lost_one_are_counted_apart_from_two_draws() {
        use super::super::game::{GameId, GameResult};
        let game = |pair, game, result| GameRecord {
            id: GameId { pair, game },
            result,
            ..blank_game()
        };
        // Game 0 of a pair has A white, game 1 B white.
        let games = [
            // B loses with black, wins with white: won and lost.
            game(0, 0, GameResult::WhiteWins),
            game(0, 1, GameResult::WhiteWins),
            // Two draws.
            game(1, 0, GameResult::Draw),
            game(1, 1, GameResult::Draw),
            // B wins with black, loses with white: won and lost.
            game(2, 0, GameResult::BlackWins),
            game(2, 1, GameResult::BlackWins),
            // B wins both: not in the cell.
            game(3, 0, GameResult::BlackWins),
            game(3, 1, GameResult::WhiteWins),
            // An unfinished pair counts for nothing.
            game(4, 0, GameResult::WhiteWins),
        ];
        let summary = summarize(&games, None);
        assert_eq!(summary.pentanomial, Pentanomial([0, 0, 3, 0, 1]));
        assert_eq!(summary.won_and_lost_pairs, 2);
    }

    #[test]
    fn playing_alike_needs_every_checked_pair_and_enough_of_them() {
        let alike = |checked, identical| Alike { checked, identical };
        assert!(alike(ALIKE_MIN_PAIRS, ALIKE_MIN_PAIRS).in_every_pair());
        assert!(!alike(ALIKE_MIN_PAIRS - 1, ALIKE_MIN_PAIRS - 1).in_every_pair());
        assert!(!alike(32, 31).in_every_pair());
        assert!(!Alike::default().in_every_pair());
    }
}
