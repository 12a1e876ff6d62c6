//! What a set of finished games says: W/D/L, pentanomial counts, Elo, LOS and the SPRT state,
//! plus the match's health (terminations, faults, time forfeits, the lab's own cost per move).
//! Analysis only: the report layer formats it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::game::{GameRecord, Termination};
use super::results::complete_pairs;
use super::sprt::{self, Estimate, Pentanomial, Sprt, SprtDecision, Wdl};
use crate::side::Side;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SprtState {
    #[serde(flatten)]
    pub(crate) test: Sprt,
    pub(crate) llr: f64,
    pub(crate) lower: f64,
    pub(crate) upper: f64,
    pub(crate) result: SprtDecision,
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
}

pub(crate) fn summarize(games: &[GameRecord], sprt: Option<&Sprt>) -> Summary {
    let mut wdl = Wdl::default();
    let mut terminations = BTreeMap::new();
    let mut faults = [0; 2];
    let mut time_forfeits = [0; 2];
    let (mut overhead_ns, mut overhead_moves, mut plies) = (0u64, 0u64, 0u64);
    for game in games {
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
        overhead_moves += game.lab_overhead_moves;
        plies += game.plies as u64;
    }
    let mut pentanomial = Pentanomial::default();
    for pair in complete_pairs(games).values() {
        let points: u8 = pair
            .iter()
            .flatten()
            .map(|game| game.result.points_x2(Side::B, game.id.white()))
            .sum();
        pentanomial.add_pair(points);
    }
    let sprt = sprt.map(|test| {
        let llr = test.llr(&pentanomial);
        SprtState {
            test: *test,
            llr,
            lower: test.lower(),
            upper: test.upper(),
            result: test.decide(llr),
        }
    });
    Summary {
        games: games.len() as u64,
        pairs: pentanomial.pairs(),
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
    }
}
