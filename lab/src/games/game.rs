//! One game: the lab's clock, the referee's rules, adjudication, and every engine fault turned
//! into a loss with its reason written into the PGN.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::book::Opening;
use super::pgn::{self, PgnGame, TimeControlTags};
use super::referee::{MoveError, Referee, RuleEnding};
use super::rules::{
    Adjudication, Adjudicator, DrawAdjudication, Limit, ResignAdjudication, Score, SideLimits,
    UNTIMED_MOVE_DEADLINE,
};
use super::uci_process::{Fault, UciProcess};
use crate::side::Side;

/// One game of the schedule: game 0 of a pair gives A the white pieces, game 1 gives them to B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct GameId {
    pub(crate) pair: u64,
    pub(crate) game: u8,
}

impl GameId {
    pub(crate) fn white(self) -> Side {
        if self.game == 0 {
            Side::A
        } else {
            Side::B
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
}

impl GameResult {
    pub(crate) fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    fn loss_of(color: usize) -> GameResult {
        if color == 0 {
            GameResult::BlackWins
        } else {
            GameResult::WhiteWins
        }
    }

    /// Points (times two: 0, 1 or 2) that `side` scored when `white` had the white pieces.
    pub(crate) fn points_x2(self, side: Side, white: Side) -> u8 {
        let white_points = match self {
            GameResult::WhiteWins => 2,
            GameResult::BlackWins => 0,
            GameResult::Draw => 1,
        };
        if side == white {
            white_points
        } else {
            2 - white_points
        }
    }
}

/// PGN Termination values (the standard's own words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Termination {
    Normal,
    Adjudication,
    TimeForfeit,
    RulesInfraction,
    Abandoned,
}

impl Termination {
    pub(crate) fn pgn(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Adjudication => "adjudication",
            Termination::TimeForfeit => "time forfeit",
            Termination::RulesInfraction => "rules infraction",
            Termination::Abandoned => "abandoned",
        }
    }
}

/// A fault and the engine that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FaultRecord {
    pub(crate) side: Side,
    pub(crate) fault: Fault,
}

/// A finished game as the results file stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    pub(crate) id: GameId,
    /// Index of the opening in the book (file order).
    pub(crate) opening: usize,
    pub(crate) result: GameResult,
    pub(crate) termination: Termination,
    pub(crate) reason: String,
    pub(crate) plies: usize,
    pub(crate) fault: Option<FaultRecord>,
    pub(crate) duration_ms: u64,
    /// The referee's and the lab's own I/O time between an engine's move and the next `go`,
    /// summed over the game, and the number of such gaps.
    pub(crate) lab_overhead_ns: u64,
    pub(crate) lab_overhead_moves: u64,
    /// A's searches in this game, then B's (all zero in files from before they were kept).
    #[serde(default)]
    pub(crate) search: [SearchTotals; 2],
    pub(crate) pgn: String,
    /// The run of the lab that played the game (`None` in files from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sitting: Option<Sitting>,
}

/// One run of the lab that plays games: when it started, in microseconds since the Unix
/// epoch, so the runs of any machines stay apart. A verdict's steps are one sitting. The games
/// of one sitting share what a later `--resume` may not (how the machine treats the binaries
/// while it runs), so the games' speed is also bounded by the spread between sittings
/// (`summary::NpsIntervalFrom::Sittings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Sitting(pub(crate) u64);

impl Sitting {
    pub(crate) fn now() -> Sitting {
        let since_epoch = crate::calendar::since_epoch();
        Sitting(u64::try_from(since_epoch.as_micros()).unwrap_or(u64::MAX))
    }
}

/// One side's searches over some moves, as the engine reported them in its last `info` before
/// each `bestmove`, and as long as the lab's clock saw them take. Sums, so that games pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SearchTotals {
    /// Moves answered with a `bestmove`.
    pub(crate) moves: u64,
    /// Their time, from `go` to `bestmove`, in microseconds.
    pub(crate) time_us: u64,
    /// The moves whose `info` gave a depth, and the sum of those depths.
    pub(crate) depth_moves: u64,
    pub(crate) depth_sum: u64,
    /// The moves whose `info` gave a node count: their count, their nodes and their time.
    pub(crate) nodes_moves: u64,
    pub(crate) nodes: u64,
    pub(crate) nodes_time_us: u64,
}

impl SearchTotals {
    /// Adds one searched move: `elapsed` from `go` to `bestmove`, the last depth and node count
    /// reported. An engine's figures are untrusted, so the sums saturate.
    pub(crate) fn add_move(&mut self, elapsed: Duration, depth: Option<u32>, nodes: Option<u64>) {
        let time_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.moves += 1;
        self.time_us = self.time_us.saturating_add(time_us);
        if let Some(depth) = depth {
            self.depth_moves += 1;
            self.depth_sum = self.depth_sum.saturating_add(u64::from(depth));
        }
        if let Some(nodes) = nodes {
            self.nodes_moves += 1;
            self.nodes = self.nodes.saturating_add(nodes);
            self.nodes_time_us = self.nodes_time_us.saturating_add(time_us);
        }
    }

    pub(crate) fn add(&mut self, other: &SearchTotals) {
        self.moves = self.moves.saturating_add(other.moves);
        self.time_us = self.time_us.saturating_add(other.time_us);
        self.depth_moves = self.depth_moves.saturating_add(other.depth_moves);
        self.depth_sum = self.depth_sum.saturating_add(other.depth_sum);
        self.nodes_moves = self.nodes_moves.saturating_add(other.nodes_moves);
        self.nodes = self.nodes.saturating_add(other.nodes);
        self.nodes_time_us = self.nodes_time_us.saturating_add(other.nodes_time_us);
    }
}

/// What a game leaves besides its outcome: each move's SAN with its comment, the lab's own
/// time between a reply and the next `go` with the number of such gaps, and each side's
/// searches (A, B).
#[derive(Default)]
struct GameLog {
    moves: Vec<(String, String)>,
    overhead: (Duration, u64),
    search: [SearchTotals; 2],
}

/// What stays the same for every game of a match.
pub(crate) struct GameSettings {
    /// A's limit, then B's: each engine searches under its own (a clock is its own clock).
    pub(crate) limits: SideLimits,
    pub(crate) timemargin: Duration,
    pub(crate) draw: Option<DrawAdjudication>,
    pub(crate) resign: Option<ResignAdjudication>,
    /// A draw once each side has played this many moves of the game (cutechess-cli's and
    /// fastchess's `-maxmoves`), counted from the opening's position.
    pub(crate) max_moves: Option<u32>,
    /// PGN player names of A and B.
    pub(crate) names: [String; 2],
    pub(crate) site: String,
}

pub(crate) enum GameEnd {
    Finished {
        record: Box<GameRecord>,
        /// The side whose engine must be restarted before its next game.
        restart: Option<Side>,
    },
    /// The match was stopped while this game was being played; it is not recorded.
    Stopped,
}

/// Plays game `id` from `opening` (index `opening_index` in the book) with `engines[side]` for
/// A and B.
pub(crate) fn play(
    engines: [&mut UciProcess; 2],
    id: GameId,
    opening_index: usize,
    opening: &Opening,
    settings: &GameSettings,
    stop: &AtomicBool,
) -> GameEnd {
    let started = Instant::now();
    let white = id.white();
    let [a, b] = engines;
    let mut referee = Referee::new(&opening.position);
    let mut log = GameLog::default();
    let Some((result, termination, reason, fault)) =
        referee_game([a, b], white, settings, stop, &mut referee, &mut log)
    else {
        return GameEnd::Stopped;
    };
    let restart = fault
        .as_ref()
        .filter(|record| {
            matches!(
                record.fault,
                Fault::Startup { .. }
                    | Fault::Crash { .. }
                    | Fault::Timeout { .. }
                    | Fault::IgnoredLimit { .. }
            )
        })
        .map(|record| record.side);
    let outcome = (result, termination, reason, fault);
    let finished = Finished {
        id,
        opening_index,
        opening,
        started,
        overhead: log.overhead,
        search: log.search,
    };
    GameEnd::Finished {
        record: Box::new(finished.record(&referee, &log.moves, outcome, settings)),
        restart,
    }
}

/// The record of a game an engine lost before it began: it could not be (re)started.
pub(crate) fn forfeit(
    id: GameId,
    opening_index: usize,
    opening: &Opening,
    side: Side,
    fault: Fault,
    settings: &GameSettings,
) -> GameRecord {
    let referee = Referee::new(&opening.position);
    let color = if id.white() == side { 0 } else { 1 };
    let reason = format!("{} {}", side_name(side), fault.describe());
    let outcome = (
        GameResult::loss_of(color),
        Termination::Abandoned,
        reason,
        Some(FaultRecord { side, fault }),
    );
    let finished = Finished {
        id,
        opening_index,
        opening,
        started: Instant::now(),
        overhead: (Duration::ZERO, 0),
        search: [SearchTotals::default(); 2],
    };
    finished.record(&referee, &[], outcome, settings)
}

struct Finished<'a> {
    id: GameId,
    opening_index: usize,
    opening: &'a Opening,
    started: Instant,
    overhead: (Duration, u64),
    search: [SearchTotals; 2],
}

impl Finished<'_> {
    fn record(
        self,
        referee: &Referee,
        moves: &[(String, String)],
        outcome: Outcome,
        settings: &GameSettings,
    ) -> GameRecord {
        let (result, termination, reason, fault) = outcome;
        let white = self.id.white();
        let time_controls =
            [white, white.other()].map(|side| settings.limits[side.index()].pgn_time_control());
        let time_control = if settings.limits[0] == settings.limits[1] {
            TimeControlTags::Shared(&time_controls[0])
        } else {
            TimeControlTags::PerColour {
                white: &time_controls[0],
                black: &time_controls[1],
            }
        };
        let pgn = pgn::render(&PgnGame {
            event: "lab match",
            site: &settings.site,
            date: &crate::calendar::today_utc('.'),
            round: self.id.pair + 1,
            white: &settings.names[white.index()],
            black: &settings.names[white.other().index()],
            result: result.pgn(),
            fen: &self.opening.fen,
            time_control,
            termination: termination.pgn(),
            start_fullmove: referee.start_fullmove(),
            start_black: referee.start_black(),
            moves,
            closing_comment: &reason,
        });
        GameRecord {
            id: self.id,
            opening: self.opening_index,
            result,
            termination,
            reason,
            plies: referee.plies(),
            fault,
            duration_ms: self.started.elapsed().as_millis() as u64,
            lab_overhead_ns: self.overhead.0.as_nanos() as u64,
            lab_overhead_moves: self.overhead.1,
            search: self.search,
            pgn,
            sitting: None,
        }
    }
}

type Outcome = (GameResult, Termination, String, Option<FaultRecord>);

/// Runs the game to its end: `None` when `stop` was raised first. `log` receives the moves,
/// the lab's overhead and the searches as they happen.
fn referee_game(
    by_side: [&mut UciProcess; 2],
    white: Side,
    settings: &GameSettings,
    stop: &AtomicBool,
    referee: &mut Referee,
    log: &mut GameLog,
) -> Option<Outcome> {
    let sides = [white, white.other()];
    for (color, side) in sides.into_iter().enumerate() {
        let engine = &mut *by_side[side.index()];
        if let Err(fault) = engine.new_game() {
            return Some(fault_outcome(color, side, fault, referee, engine));
        }
    }
    let mut adjudicator = Adjudicator::new(settings.draw, settings.resign);
    // By colour, each under its engine's own limit.
    let limits = sides.map(|side| settings.limits[side.index()]);
    let mut clocks = limits.map(|limit| match limit {
        Limit::Clock { base_ms, .. } => Duration::from_millis(base_ms),
        _ => Duration::ZERO,
    });
    let mut last_reply: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        if let Some(ending) = referee.ending() {
            let result = match ending {
                RuleEnding::Checkmate { loser } => GameResult::loss_of(loser),
                _ => GameResult::Draw,
            };
            return Some((
                result,
                Termination::Normal,
                ending.describe().to_string(),
                None,
            ));
        }
        let mover = referee.side_to_move();
        let side = sides[mover];
        let (go, wait) = go_command(&limits, clocks, mover, settings.timemargin);
        let engine = &mut *by_side[side.index()];
        let ceiling = limits[mover].ceiling();
        let reply = match engine.search(
            referee.position_command(),
            &go,
            Instant::now() + wait,
            ceiling,
        ) {
            Ok(reply) => reply,
            Err(fault) => return Some(fault_outcome(mover, side, fault, referee, engine)),
        };
        if let Some(received) = last_reply {
            log.overhead.0 += reply.sent.saturating_duration_since(received);
            log.overhead.1 += 1;
        }
        log.search[side.index()].add_move(reply.elapsed, reply.depth, reply.nodes);
        last_reply = Some(reply.received);
        // The clock is the lab's: what the engine took is measured here, not reported by it.
        let over_time = match limits[mover] {
            Limit::Clock { increment_ms, .. } => {
                let over = reply.elapsed > clocks[mover] + settings.timemargin;
                clocks[mover] = clocks[mover].saturating_sub(reply.elapsed)
                    + Duration::from_millis(increment_ms);
                over
            }
            Limit::MoveTime { movetime_ms } => {
                reply.elapsed > Duration::from_millis(movetime_ms) + settings.timemargin
            }
            _ => false,
        };
        if over_time {
            let fault = Fault::Timeout {
                waited_ms: reply.elapsed.as_millis() as u64,
                command: Some(go),
            };
            return Some(fault_outcome(mover, side, fault, referee, engine));
        }
        if let Err(error) = referee.play(&reply.bestmove) {
            let fault = match error {
                MoveError::Malformed => Fault::Garbage {
                    line: format!("bestmove {}", reply.bestmove),
                },
                MoveError::Illegal => Fault::IllegalMove {
                    uci: reply.bestmove.clone(),
                },
            };
            return Some(fault_outcome(mover, side, fault, referee, engine));
        }
        let san = referee.san_moves().last().cloned().unwrap_or_default();
        log.moves
            .push((san, move_comment(reply.score, reply.depth, reply.elapsed)));
        if referee.ending().is_some() {
            continue;
        }
        let full_move = referee.full_move_number() - u32::from(mover == 1);
        match adjudicator.record(mover, full_move, reply.score) {
            Some(Adjudication::Draw(draw)) => {
                let reason = format!(
                    "draw adjudication: both scores within {} cp for {} moves",
                    draw.score, draw.move_count
                );
                return Some((GameResult::Draw, Termination::Adjudication, reason, None));
            }
            Some(Adjudication::Resign(color, resign)) => {
                let reason = format!(
                    "resign adjudication: {} scored -{} cp or worse for {} moves",
                    settings.names[sides[color].index()],
                    resign.score,
                    resign.move_count
                );
                return Some((
                    GameResult::loss_of(color),
                    Termination::Adjudication,
                    reason,
                    None,
                ));
            }
            None => {}
        }
        if let Some(max_moves) = settings.max_moves {
            if referee.plies() >= 2 * max_moves as usize {
                let reason = format!(
                    "draw adjudication: maximal game length, {max_moves} moves each (--maxmoves)"
                );
                return Some((GameResult::Draw, Termination::Adjudication, reason, None));
            }
        }
    }
}

/// The loss (or, for a flag fall against a side that cannot mate, the draw) a fault causes,
/// with the position and the engine's last output in the reason.
fn fault_outcome(
    color: usize,
    side: Side,
    fault: Fault,
    referee: &Referee,
    engine: &UciProcess,
) -> Outcome {
    let termination = match fault {
        Fault::Timeout { .. } => Termination::TimeForfeit,
        Fault::Garbage { .. } | Fault::IllegalMove { .. } | Fault::IgnoredLimit { .. } => {
            Termination::RulesInfraction
        }
        Fault::Startup { .. } | Fault::Crash { .. } => Termination::Abandoned,
    };
    let result = if termination == Termination::TimeForfeit && !referee.can_mate(1 - color) {
        GameResult::Draw
    } else {
        GameResult::loss_of(color)
    };
    let output = engine.recent_output();
    let reason = format!(
        "{} ({}) {} in {}; last output: {}",
        side_name(side),
        engine.id_name.as_deref().unwrap_or("engine"),
        fault.describe(),
        referee.fen(),
        if output.is_empty() {
            "none".to_string()
        } else {
            output.join(" | ")
        }
    );
    (
        result,
        termination,
        reason,
        Some(FaultRecord { side, fault }),
    )
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::A => "A",
        Side::B => "B",
    }
}

/// The `go` line for the mover's limit (`limits` and `clocks` by colour), and how long to wait
/// for its answer. A mover on a clock is told each clock that runs: its own, and its
/// opponent's when the opponent has one.
fn go_command(
    limits: &[Limit; 2],
    clocks: [Duration; 2],
    mover: usize,
    timemargin: Duration,
) -> (String, Duration) {
    match limits[mover] {
        Limit::Clock { .. } => {
            let mut go = String::from("go");
            for (color, time) in ["wtime", "btime"].into_iter().enumerate() {
                if matches!(limits[color], Limit::Clock { .. }) {
                    go.push_str(&format!(" {time} {}", clocks[color].as_millis()));
                }
            }
            for (color, increment) in ["winc", "binc"].into_iter().enumerate() {
                if let Limit::Clock { increment_ms, .. } = limits[color] {
                    go.push_str(&format!(" {increment} {increment_ms}"));
                }
            }
            (go, clocks[mover] + timemargin)
        }
        Limit::Nodes { nodes } => (format!("go nodes {nodes}"), UNTIMED_MOVE_DEADLINE),
        Limit::Depth { depth } => (format!("go depth {depth}"), UNTIMED_MOVE_DEADLINE),
        Limit::MoveTime { movetime_ms } => (
            format!("go movetime {movetime_ms}"),
            Duration::from_millis(movetime_ms) + timemargin,
        ),
    }
}

/// `+0.31/12 0.512s`, `#-3/20 1.204s`: the mover's score, depth and time, as fastchess writes.
fn move_comment(score: Option<Score>, depth: Option<u32>, elapsed: Duration) -> String {
    let score = match score {
        Some(Score::Centipawns(cp)) => format!("{:+.2}", f64::from(cp) / 100.0),
        Some(Score::Mate(moves)) => format!("#{moves}"),
        None => "?".to_string(),
    };
    let depth = depth.map_or_else(String::new, |d| format!("/{d}"));
    format!("{score}{depth} {:.3}s", elapsed.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mover_is_sent_its_own_limit_and_the_clocks_that_run() {
        let clock = |base_ms, increment_ms| Limit::Clock {
            base_ms,
            increment_ms,
        };
        let clocks = [Duration::from_millis(9_000), Duration::from_millis(4_000)];
        let margin = Duration::from_millis(50);
        // Both on clocks of their own: each its own base and increment.
        let both = [clock(10_000, 100), clock(5_000, 50)];
        assert_eq!(
            go_command(&both, clocks, 1, margin),
            (
                "go wtime 9000 btime 4000 winc 100 binc 50".to_string(),
                Duration::from_millis(4_050)
            )
        );
        // White on nodes, black on a clock: white gets `go nodes`, black only its clock.
        let mixed = [Limit::Nodes { nodes: 5000 }, clock(5_000, 50)];
        assert_eq!(
            go_command(&mixed, clocks, 0, margin),
            ("go nodes 5000".to_string(), UNTIMED_MOVE_DEADLINE)
        );
        assert_eq!(
            go_command(&mixed, clocks, 1, margin).0,
            "go btime 4000 binc 50"
        );
        let depth = [
            Limit::Depth { depth: 7 },
            Limit::MoveTime { movetime_ms: 300 },
        ];
        assert_eq!(go_command(&depth, clocks, 0, margin).0, "go depth 7");
        assert_eq!(
            go_command(&depth, clocks, 1, margin),
            ("go movetime 300".to_string(), Duration::from_millis(350))
        );
    }
}
