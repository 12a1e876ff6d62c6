//! How a match's statistics moved as its games accrued: after each completed pair, the games so
//! far, the logistic Elo with its 95% interval and the SPRT's LLR, each computed by [`sprt`]
//! from the pentanomial counts at that moment (the HTML report draws them; it computes none).
//!
//! Pairs are taken in the order their games were recorded: for `lab match` the results file's
//! order (the order games finished, a resumed match's earlier games first), which is the order
//! the runner judged the SPRT in; for `lab match merge` the pooled order, by pair index.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::game::GameRecord;
use super::sprt::{self, Pentanomial, Sprt};
use crate::side::Side;

/// At most this many points are kept, so the JSON and the page stay small for a long match.
pub(crate) const MAX_POINTS: usize = 500;

/// The pentanomial counts kept up to date game by game.
#[derive(Default)]
pub(crate) struct PairTally {
    pub(crate) pentanomial: Pentanomial,
    /// B's points (times two) in the first finished game of each incomplete pair.
    half: HashMap<u64, u8>,
}

impl PairTally {
    /// Counts `game`; true when it completed its pair.
    pub(crate) fn add(&mut self, game: &GameRecord) -> bool {
        let points = game.result.points_x2(Side::B, game.id.white());
        match self.half.remove(&game.id.pair) {
            Some(first) => {
                self.pentanomial.add_pair(first + points);
                true
            }
            None => {
                self.half.insert(game.id.pair, points);
                false
            }
        }
    }
}

/// The match after one more completed pair, from B's point of view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TrajectoryPoint {
    /// Complete pairs so far.
    pub(crate) pairs: u64,
    /// Games recorded so far (with those of pairs not yet complete).
    pub(crate) games: u64,
    /// Logistic Elo and its 95% interval; `None` while undefined (every pair won, or lost).
    pub(crate) elo: Option<f64>,
    pub(crate) elo_low: Option<f64>,
    pub(crate) elo_high: Option<f64>,
    /// The SPRT's log-likelihood ratio; `None` without `--sprt`.
    pub(crate) llr: Option<f64>,
}

/// The trajectory of `games` in their recorded order, thinned to at most [`MAX_POINTS`] points
/// evenly spaced in pairs (the first and the last kept). Empty without a complete pair.
pub(crate) fn trajectory(games: &[GameRecord], sprt: Option<&Sprt>) -> Vec<TrajectoryPoint> {
    let mut tally = PairTally::default();
    let mut snapshots: Vec<(u64, Pentanomial)> = Vec::new();
    for (index, game) in games.iter().enumerate() {
        if tally.add(game) {
            snapshots.push((index as u64 + 1, tally.pentanomial));
        }
    }
    // The estimates are computed only for the points kept.
    thinned(snapshots.len(), MAX_POINTS)
        .into_iter()
        .map(|index| {
            let (games, pentanomial) = &snapshots[index];
            let elo = sprt::logistic_elo(pentanomial);
            TrajectoryPoint {
                pairs: pentanomial.pairs(),
                games: *games,
                elo: elo.map(|e| e.value),
                elo_low: elo.map(|e| e.ci_low),
                elo_high: elo.map(|e| e.ci_high),
                llr: sprt.map(|test| test.llr(pentanomial)),
            }
        })
        .collect()
}

/// Indices of at most `max` of `len` items, evenly spread, with the first and the last.
fn thinned(len: usize, max: usize) -> Vec<usize> {
    if len <= max || max < 2 {
        return (0..len).collect();
    }
    // (len - 1) / (max - 1) > 1, so the indices strictly increase.
    (0..max).map(|i| i * (len - 1) / (max - 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::super::game::{GameId, GameResult, Termination};
    use super::super::sprt::EloModel;
    use super::super::summary::summarize;
    use super::*;

    fn game(pair: u64, game: u8, result: GameResult) -> GameRecord {
        GameRecord {
            id: GameId { pair, game },
            opening: pair as usize,
            result,
            termination: Termination::Normal,
            reason: String::new(),
            plies: 40,
            fault: None,
            duration_ms: 10,
            lab_overhead_ns: 0,
            lab_overhead_moves: 0,
            search: Default::default(),
            pgn: String::new(),
            sitting: None,
        }
    }

    /// `pairs` pairs whose games finish out of order (game 1 of a pair can come first, and a
    /// pair's second game can come after later pairs' games), with a trailing half pair.
    fn games(pairs: u64) -> Vec<GameRecord> {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match state % 5 {
                0 | 1 => GameResult::WhiteWins,
                2 => GameResult::BlackWins,
                _ => GameResult::Draw,
            }
        };
        let mut out = Vec::new();
        for pair in 0..pairs {
            let first = pair as u8 % 2;
            out.push(game(pair, first, next()));
            if pair >= 1 {
                let earlier = pair - 1;
                out.push(game(earlier, 1 - earlier as u8 % 2, next()));
            }
        }
        out.push(game(pairs - 1, 1 - (pairs - 1) as u8 % 2, next()));
        out.push(game(pairs, 0, next()));
        out
    }

    #[test]
    fn the_last_point_is_the_summary() {
        let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05, EloModel::Logistic).unwrap();
        let games = games(300);
        let points = trajectory(&games, Some(&sprt));
        let summary = summarize(&games, Some(&sprt));
        let last = points.last().unwrap();
        assert_eq!(last.pairs, summary.pairs);
        assert_eq!(last.pairs, 300);
        // The trailing half pair is counted in the games, not in the pairs.
        assert_eq!(last.games, summary.games - 1);
        let elo = summary.elo.unwrap();
        assert_eq!(
            (last.elo, last.elo_low, last.elo_high),
            (Some(elo.value), Some(elo.ci_low), Some(elo.ci_high))
        );
        assert_eq!(last.llr, Some(summary.sprt.unwrap().llr));
        assert_eq!(points.len(), 300);
        assert_eq!(points[0].pairs, 1);
        assert!(points.windows(2).all(|w| w[1].pairs == w[0].pairs + 1));
        assert!(points.windows(2).all(|w| w[1].games > w[0].games));
        // Without an SPRT there is no LLR.
        assert!(trajectory(&games, None).iter().all(|p| p.llr.is_none()));
    }

    #[test]
    fn a_long_match_is_thinned_keeping_the_first_and_last_pair() {
        let games = games(2_000);
        let points = trajectory(&games, None);
        assert_eq!(points.len(), MAX_POINTS);
        assert_eq!(points[0].pairs, 1);
        assert_eq!(points[MAX_POINTS - 1].pairs, 2_000);
        assert!(points.windows(2).all(|w| w[1].pairs > w[0].pairs));
        let summary = summarize(&games, None);
        assert_eq!(points[MAX_POINTS - 1].elo, summary.elo.map(|e| e.value));
        assert_eq!(thinned(3, 500), [0, 1, 2]);
        assert_eq!(thinned(10, 4), [0, 3, 6, 9]);
        assert!(trajectory(&[game(0, 0, GameResult::Draw)], None).is_empty());
    }

    #[test]
    fn an_undefined_elo_is_none_not_infinite() {
        // B wins both games of every pair: the score is 1 and the Elo unbounded.
        let games: Vec<_> = (0..3)
            .flat_map(|pair| {
                [
                    game(pair, 0, GameResult::BlackWins),
                    game(pair, 1, GameResult::WhiteWins),
                ]
            })
            .collect();
        let points = trajectory(&games, None);
        assert_eq!(points.len(), 3);
        assert!(points
            .iter()
            .all(|p| p.elo.is_none() && p.elo_low.is_none()));
    }
}
