//! Search: iterative deepening, PVS with aspiration windows, transposition table, null-move
//! pruning, late-move reductions, check extension, killer and history ordering, SEE, and a
//! quiescence search whose futility margin depends on the evaluation tier that produced the
//! stand-pat score.
//!
//! The search does no I/O: it reports each iteration through `Listener`.

mod ordering;
mod see;
pub mod tt;

pub use see::see_ge;

use crate::board::{Board, ROOK_VALUE};
use crate::counters::Counters;
use crate::eval::{margins::FUTILITY_BASE_MARGIN_BY_SOURCE, Evaluator};
use crate::movegen;
use crate::tier::{SearchKind, Tier};
use crate::timeman::{self, Deadlines};
use crate::types::{Move, PieceType};
use ordering::{is_quiet, History, ScoredMoves, HISTORY_MAX};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tt::{Bound, TranspositionTable};

pub const MATE: i32 = 30000;
pub const INFINITY: i32 = 32000;
pub const MAX_PLY: usize = 128;
const MATE_BOUND: i32 = MATE - MAX_PLY as i32;

// QSearch futility's base margins are calibrated: they live with the margin tables
// (`eval::margins::FUTILITY_BASE_MARGIN_BY_SOURCE`).

/// Reverse futility: a static eval this far above beta per ply left stands in for a search.
const REVERSE_FUTILITY_MARGIN_PER_PLY: i32 = 85;
/// Reverse futility only this close to the horizon: deeper, the static eval says too little.
const REVERSE_FUTILITY_MAX_DEPTH: i32 = 6;
/// Frontier futility: quiet moves are skipped when the static eval is this far below alpha
/// per ply left, since a quiet move rarely gains that much.
const FRONTIER_FUTILITY_MARGIN_PER_PLY: i32 = 120;
/// Frontier futility only at the last plies, where one quiet move has little time to pay off.
const FRONTIER_FUTILITY_MAX_DEPTH: i32 = 2;
/// Null move from this depth up: nearer the horizon a pass proves little that the static eval
/// and the futility prunings do not.
const NULL_MOVE_MIN_DEPTH: i32 = 3;
/// Null move only with at least a rook's worth of pieces (non-pawn material, cp): with a lone
/// minor piece zugzwang is common, and passing is then no lower bound.
const NULL_MOVE_MIN_NON_PAWN: i32 = ROOK_VALUE;
/// Plies the null move's search is reduced by, beyond the move itself, at any depth.
const NULL_MOVE_BASE_REDUCTION: i32 = 3;
/// One more ply of null-move reduction per this many plies of depth: a deep node's pass is
/// refuted as surely by a shallower search.
const NULL_MOVE_DEPTH_PER_EXTRA_REDUCTION: i32 = 4;
/// Late-move reduction at depth d for the move at index i: `LMR_BASE + ln d · ln i /
/// LMR_DIVISOR` plies, truncated.
const LMR_BASE: f64 = 0.75;
/// See `LMR_BASE`: the larger, the gentler the reduction grows with depth and move index.
const LMR_DIVISOR: f64 = 2.25;
/// Depths and move indices past the reduction table's last row and column share them.
const REDUCTION_TABLE_SIZE: usize = 64;
/// Late moves are reduced from this depth up: nearer the horizon a reduction leaves too little.
const LMR_MIN_DEPTH: i32 = 3;
/// The first move a PV node reduces, by index in move order.
const LMR_MIN_MOVE_INDEX_PV: usize = 3;
/// The first move a non-PV node reduces, by index in move order.
const LMR_MIN_MOVE_INDEX_NON_PV: usize = 2;
/// The first move a node reduces: tested last in the reduction's condition, so that a node
/// that reduces nothing pays nothing for the choice.
const fn lmr_min_move_index(pv_node: bool) -> usize {
    if pv_node {
        LMR_MIN_MOVE_INDEX_PV
    } else {
        LMR_MIN_MOVE_INDEX_NON_PV
    }
}
/// Plies a PV node reduces a late move less: the PV's moves are the ones the score rests on.
const LMR_PV_RELIEF: i32 = 1;
/// Plies a killer move is reduced less: it refuted a sibling, so it is likelier to matter here.
const LMR_KILLER_RELIEF: i32 = 1;
/// Half-width of the first aspiration window around the previous iteration's score (cp); it
/// doubles after each fail.
const ASPIRATION_DELTA: i32 = 25;
/// Aspiration windows from this depth up; shallower iterations search the full window.
const ASPIRATION_MIN_DEPTH: i32 = 5;
/// The largest history bonus (or malus) of one cutoff: depth² up to this.
const HISTORY_BONUS_MAX: i32 = 400;
/// The stop flag and the hard deadline are polled once per this many nodes (a power of two).
const CLOCK_POLL_NODES: u64 = 1024;
const _: () = assert!(CLOCK_POLL_NODES.is_power_of_two());

/// The clock of the side to move.
#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    pub time: Duration,
    pub increment: Duration,
    pub moves_to_go: Option<u32>,
}

/// When to stop searching. All `None` / `false` means "until stopped".
#[derive(Clone, Debug)]
pub struct Limits {
    pub depth: Option<i32>,
    pub nodes: Option<u64>,
    pub movetime: Option<Duration>,
    pub clock: Option<Clock>,
    pub infinite: bool,
    /// What a move costs on the clock besides the search (the UCI option `Move Overhead`); taken
    /// off every time allocation.
    pub move_overhead: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            depth: None,
            nodes: None,
            movetime: None,
            clock: None,
            infinite: false,
            move_overhead: timeman::DEFAULT_MOVE_OVERHEAD,
        }
    }
}

impl Limits {
    pub fn depth(depth: i32) -> Limits {
        Limits {
            depth: Some(depth),
            ..Limits::default()
        }
    }
}

/// A score for reporting: centipawns, or mate in N moves (negative: being mated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i32),
    Mate(i32),
}

impl Score {
    pub fn from_internal(value: i32) -> Score {
        if value >= MATE_BOUND {
            Score::Mate((MATE - value + 1) / 2)
        } else if value <= -MATE_BOUND {
            Score::Mate(-(MATE + value) / 2)
        } else {
            Score::Cp(value)
        }
    }
}

/// One completed iteration, as reported to the UCI layer.
pub struct SearchInfo<'a> {
    pub depth: i32,
    pub seldepth: i32,
    pub score: Score,
    pub nodes: u64,
    pub elapsed: Duration,
    pub pv: &'a [Move],
}

/// How the search talks to the edge (UCI, bench): it reports, the edge prints.
pub trait Listener {
    fn on_iteration(&mut self, info: &SearchInfo);
}

/// Reports nothing (bench, tests).
pub struct Silent;

impl Listener for Silent {
    fn on_iteration(&mut self, _: &SearchInfo) {}
}

#[derive(Clone, Debug)]
pub struct SearchResult {
    pub best_move: Move,
    pub score: Score,
    /// Internal score from the side to move's view; mates as ±(MATE - plies).
    pub score_cp: i32,
    pub depth: i32,
    pub nodes: u64,
}

pub struct Searcher {
    tt: TranspositionTable,
    eval: Evaluator,
    counters: Counters,
    killers: [[Move; 2]; MAX_PLY],
    history: Box<History>,
    pv: Box<[[Move; MAX_PLY]; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    /// Keys of the game before the root, then of the current search path.
    keys: Vec<u64>,
    reductions: Box<[[u8; REDUCTION_TABLE_SIZE]; REDUCTION_TABLE_SIZE]>,
    /// One move picker per ply, refilled at each node.
    pickers: Vec<ScoredMoves>,
    /// Whether the move into each ply was a null move (no two nulls in a row).
    after_null: [bool; MAX_PLY],
    // Per-search state.
    start: Instant,
    deadlines: Deadlines,
    node_limit: u64,
    stopped: bool,
    seldepth: usize,
}

impl Searcher {
    pub fn new(hash_mb: usize) -> Searcher {
        let mut reductions = Box::new([[0u8; REDUCTION_TABLE_SIZE]; REDUCTION_TABLE_SIZE]);
        for (depth, row) in reductions.iter_mut().enumerate().skip(1) {
            for (index, r) in row.iter_mut().enumerate().skip(1) {
                *r = (LMR_BASE + (depth as f64).ln() * (index as f64).ln() / LMR_DIVISOR) as u8;
            }
        }
        Searcher {
            tt: TranspositionTable::new(hash_mb),
            eval: Evaluator::new(),
            counters: Counters::default(),
            killers: [[Move::NULL; 2]; MAX_PLY],
            history: Box::new([[[0; 64]; 64]; 2]),
            pv: Box::new([[Move::NULL; MAX_PLY]; MAX_PLY]),
            pv_len: [0; MAX_PLY],
            keys: Vec::with_capacity(1024),
            reductions,
            pickers: (0..MAX_PLY).map(|_| ScoredMoves::default()).collect(),
            after_null: [false; MAX_PLY],
            start: Instant::now(),
            deadlines: Deadlines {
                soft: None,
                hard: None,
            },
            node_limit: u64::MAX,
            stopped: false,
            seldepth: 0,
        }
    }

    /// Resizes the transposition table (clears it).
    pub fn set_hash(&mut self, hash_mb: usize) {
        self.tt = TranspositionTable::new(hash_mb);
    }

    /// Disables both cheap-tier exits: every evaluation runs the full tier.
    pub fn set_full_eval(&mut self, full_eval: bool) {
        self.eval.set_cheap_exits(!full_eval);
    }

    /// Clears the transposition table, pawn hash, killers, history and counters.
    pub fn clear(&mut self) {
        self.tt.clear();
        self.eval.clear();
        self.counters = Counters::default();
        self.killers = [[Move::NULL; 2]; MAX_PLY];
        *self.history = [[[0; 64]; 64]; 2];
    }

    /// Counters of the last search.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn evaluator(&mut self) -> &mut Evaluator {
        &mut self.eval
    }

    /// Searches `board`. `game_keys` holds the Zobrist keys of the positions before it in the
    /// game, for repetition detection. Stops at the limits or when `stop` becomes true.
    pub fn search(
        &mut self,
        board: &Board,
        game_keys: &[u64],
        limits: &Limits,
        stop: &AtomicBool,
        listener: &mut impl Listener,
    ) -> SearchResult {
        self.start = Instant::now();
        self.deadlines = timeman::deadlines(limits, self.start);
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        self.stopped = false;
        self.counters = Counters::default();
        self.killers = [[Move::NULL; 2]; MAX_PLY];
        self.keys.clear();
        // Room for the deepest path too, so that no push in the search reallocates.
        self.keys.reserve(game_keys.len() + MAX_PLY);
        self.keys.extend_from_slice(game_keys);

        let legal = movegen::legal_moves(board);
        let mut result = SearchResult {
            best_move: legal.first().copied().unwrap_or(Move::NULL),
            score: Score::Cp(0),
            score_cp: 0,
            depth: 0,
            nodes: 0,
        };
        if legal.is_empty() {
            return result;
        }
        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as i32 - 1)
            .clamp(1, MAX_PLY as i32 - 1);
        let mut score = 0;
        for depth in 1..=max_depth {
            self.seldepth = 0;
            score = self.aspiration(board, depth, score, stop);
            if self.stopped && depth > 1 {
                break;
            }
            let pv_len = self.pv_len[0];
            if pv_len > 0 {
                result.best_move = self.pv[0][0];
            }
            result.score_cp = score;
            result.score = Score::from_internal(score);
            result.depth = depth;
            result.nodes = self.counters.nodes;
            listener.on_iteration(&SearchInfo {
                depth,
                seldepth: self.seldepth as i32,
                score: result.score,
                nodes: self.counters.nodes,
                elapsed: self.start.elapsed(),
                pv: &self.pv[0][..pv_len],
            });
            if self.stopped
                || self
                    .deadlines
                    .soft
                    .is_some_and(|soft| Instant::now() >= soft)
            {
                break;
            }
        }
        result.nodes = self.counters.nodes;
        result
    }

    fn aspiration(&mut self, board: &Board, depth: i32, previous: i32, stop: &AtomicBool) -> i32 {
        let mut delta = ASPIRATION_DELTA;
        let windowed = depth >= ASPIRATION_MIN_DEPTH && previous.abs() < MATE_BOUND;
        let (mut alpha, mut beta) = if windowed {
            (previous - delta, previous + delta)
        } else {
            (-INFINITY, INFINITY)
        };
        loop {
            let score = self.negamax(board, depth, alpha, beta, 0, true, stop);
            if self.stopped {
                return score;
            }
            if score <= alpha {
                alpha = (alpha - delta).max(-INFINITY);
            } else if score >= beta {
                beta = (beta + delta).min(INFINITY);
            } else {
                return score;
            }
            delta *= 2;
        }
    }

    #[inline]
    fn should_stop(&mut self, stop: &AtomicBool) -> bool {
        let poll = self.counters.nodes & (CLOCK_POLL_NODES - 1) == 0;
        if poll
            && (stop.load(Ordering::Relaxed)
                || self
                    .deadlines
                    .hard
                    .is_some_and(|hard| Instant::now() >= hard))
        {
            self.stopped = true;
        }
        if self.counters.nodes >= self.node_limit {
            self.stopped = true;
        }
        self.stopped
    }

    /// Fifty-move rule or a repetition of a position since the last irreversible move.
    fn is_draw(&self, board: &Board) -> bool {
        if board.halfmove_clock() >= 100 {
            return true;
        }
        let key = board.key();
        let n = self.keys.len();
        let reach = (board.halfmove_clock() as usize).min(n);
        (2..=reach)
            .step_by(2)
            .any(|back| self.keys[n - back] == key)
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        board: &Board,
        depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        pv_node: bool,
        stop: &AtomicBool,
    ) -> i32 {
        if depth <= 0 {
            return self.quiescence(board, alpha, beta, ply, stop);
        }
        self.pv_len[ply] = 0;
        self.counters.nodes += 1;
        if self.should_stop(stop) {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let root = ply == 0;
        if !root {
            if self.is_draw(board) {
                return 0;
            }
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
            if ply >= MAX_PLY - 1 {
                return self
                    .eval
                    .evaluate(board, alpha, beta, SearchKind::Main, &mut self.counters)
                    .score;
            }
        }

        self.counters.tt_probes += 1;
        let entry = self.tt.probe(board.key());
        let mut tt_move = Move::NULL;
        if let Some(entry) = entry {
            self.counters.tt_hits += 1;
            tt_move = entry.mv;
            let score = score_from_tt(entry.score as i32, ply);
            let usable = match entry.bound {
                Bound::Exact => true,
                Bound::Lower => score >= beta,
                Bound::Upper => score <= alpha,
                Bound::None => false,
            };
            if !pv_node && entry.depth as i32 >= depth && usable {
                return score;
            }
        }

        // The TT move is usually searched first, and a null move before it where one may be
        // tried: their slots load during the static evaluation.
        let in_check = board.in_check();
        if depth >= NULL_MOVE_MIN_DEPTH && !pv_node && !in_check {
            self.tt.prefetch(board.key_after_null());
        }
        if depth >= 2 && !tt_move.is_null() {
            self.tt.prefetch(board.key_after_hint(tt_move));
        }
        let static_eval = if in_check {
            -INFINITY
        } else {
            self.eval
                .evaluate(board, alpha, beta, SearchKind::Main, &mut self.counters)
                .score
        };

        if !pv_node && !in_check && beta.abs() < MATE_BOUND {
            // Reverse futility: far above beta with little depth left.
            if depth <= REVERSE_FUTILITY_MAX_DEPTH
                && static_eval - REVERSE_FUTILITY_MARGIN_PER_PLY * depth >= beta
            {
                return static_eval;
            }
            // Null move: if passing still fails high, a real move will too.
            if depth >= NULL_MOVE_MIN_DEPTH
                && static_eval >= beta
                && !self.after_null[ply]
                && board.material(board.side_to_move()).non_pawn() >= NULL_MOVE_MIN_NON_PAWN
            {
                let reduction =
                    NULL_MOVE_BASE_REDUCTION + depth / NULL_MOVE_DEPTH_PER_EXTRA_REDUCTION;
                let mut child = *board;
                child.play_null();
                self.keys.push(board.key());
                self.after_null[ply + 1] = true;
                let score = -self.negamax(
                    &child,
                    depth - 1 - reduction,
                    -beta,
                    -beta + 1,
                    ply + 1,
                    false,
                    stop,
                );
                self.keys.pop();
                self.after_null[ply + 1] = false;
                if self.stopped {
                    return 0;
                }
                if score >= beta {
                    return if score >= MATE_BOUND { beta } else { score };
                }
            }
        }

        let frontier_futile = !pv_node
            && !in_check
            && depth <= FRONTIER_FUTILITY_MAX_DEPTH
            && static_eval + FRONTIER_FUTILITY_MARGIN_PER_PLY * depth <= alpha;
        let picker = &mut self.pickers[ply];
        if !picker.start_main(
            board,
            tt_move,
            self.killers[ply],
            &self.history,
            frontier_futile,
        ) {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        let original_alpha = alpha;
        let mut best_score = -INFINITY;
        let mut best_move = Move::NULL;
        let mut quiets_tried = [Move::NULL; 64];
        let mut quiet_count = 0;
        let side = board.side_to_move().index();

        // One move ahead: the next move's TT slot loads while this move's subtree is searched
        // (children with depth left probe the TT; quiescence does not).
        // The look-ahead waits while the TT move is searched: picking past it generates the
        // other moves, which a cutoff makes unnecessary.
        let mut next = self.pickers[ply].pick_main(board, &self.history);
        if let Some(first) = next.filter(|&first| depth >= 2 && first != tt_move) {
            self.tt.prefetch(board.key_after_hint(first));
        }
        let mut looked_ahead = true;
        for index in 0.. {
            if !looked_ahead {
                next = self.pickers[ply].pick_main(board, &self.history);
            }
            // The held-back quiet moves are futile too unless every move so far lost to mate.
            if next.is_none() && best_score <= -MATE_BOUND && self.pickers[ply].release_held_back()
            {
                next = self.pickers[ply].pick_main(board, &self.history);
            }
            let Some(mv) = next else {
                break;
            };
            looked_ahead = !self.pickers[ply].generation_pending();
            if looked_ahead {
                next = self.pickers[ply].pick_main(board, &self.history);
                if let Some(following) = next.filter(|_| depth >= 2) {
                    self.tt.prefetch(board.key_after_hint(following));
                }
            }
            let quiet = is_quiet(board, mv);
            let mut child = *board;
            child.play(mv);
            let gives_check = child.in_check();
            // Futility at the frontier: a quiet, non-checking move cannot lift a hopeless
            // static eval. The picker holds most such moves back unpicked; castling still
            // reaches this test.
            if frontier_futile && quiet && !gives_check && index > 0 && best_score > -MATE_BOUND {
                continue;
            }
            let extension = i32::from(gives_check);
            let new_depth = depth - 1 + extension;
            self.keys.push(board.key());

            let mut score;
            if index == 0 {
                score = -self.negamax(&child, new_depth, -beta, -alpha, ply + 1, pv_node, stop);
            } else {
                let mut reduction = 0;
                if depth >= LMR_MIN_DEPTH
                    && quiet
                    && !in_check
                    && !gives_check
                    && index >= lmr_min_move_index(pv_node)
                {
                    let last = REDUCTION_TABLE_SIZE - 1;
                    reduction =
                        self.reductions[depth.min(last as i32) as usize][index.min(last)] as i32;
                    if pv_node {
                        reduction -= LMR_PV_RELIEF;
                    }
                    if mv == self.killers[ply][0] || mv == self.killers[ply][1] {
                        reduction -= LMR_KILLER_RELIEF;
                    }
                    reduction = reduction.clamp(0, new_depth - 1);
                }
                score = -self.negamax(
                    &child,
                    new_depth - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    false,
                    stop,
                );
                if score > alpha && reduction > 0 {
                    score =
                        -self.negamax(&child, new_depth, -alpha - 1, -alpha, ply + 1, false, stop);
                }
                if score > alpha && score < beta && pv_node {
                    score = -self.negamax(&child, new_depth, -beta, -alpha, ply + 1, true, stop);
                }
            }
            self.keys.pop();
            if self.stopped {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = mv;
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, mv);
                    }
                    if score >= beta {
                        self.counters.beta_cutoffs += 1;
                        if index == 0 {
                            self.counters.first_move_cutoffs += 1;
                        }
                        if quiet {
                            self.reward_quiet(side, ply, mv, depth, &quiets_tried[..quiet_count]);
                        }
                        break;
                    }
                }
            }
            if quiet && quiet_count < quiets_tried.len() {
                quiets_tried[quiet_count] = mv;
                quiet_count += 1;
            }
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(
            board.key(),
            best_move,
            score_to_tt(best_score, ply),
            depth,
            bound,
        );
        best_score
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let child_len = if ply + 1 < MAX_PLY {
            self.pv_len[ply + 1]
        } else {
            0
        };
        let (head, tail) = self.pv.split_at_mut(ply + 1);
        let row = &mut head[ply];
        row[0] = mv;
        let mut len = 1;
        if let Some(child) = tail.first() {
            for &m in &child[..child_len.min(MAX_PLY - 1)] {
                row[len] = m;
                len += 1;
            }
        }
        self.pv_len[ply] = len;
    }

    fn reward_quiet(&mut self, side: usize, ply: usize, mv: Move, depth: i32, failed: &[Move]) {
        if self.killers[ply][0] != mv {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = mv;
        }
        let bonus = (depth * depth).min(HISTORY_BONUS_MAX);
        let history = &mut self.history[side];
        let mut update = |m: Move, delta: i32| {
            let entry = &mut history[m.from().index()][m.to().index()];
            *entry += delta - *entry * delta.abs() / HISTORY_MAX;
        };
        update(mv, bonus);
        for &m in failed {
            update(m, -bonus);
        }
    }

    fn quiescence(
        &mut self,
        board: &Board,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        stop: &AtomicBool,
    ) -> i32 {
        self.pv_len[ply] = 0;
        self.counters.nodes += 1;
        self.counters.qnodes += 1;
        if self.should_stop(stop) {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if ply >= MAX_PLY - 1 {
            return self
                .eval
                .evaluate(
                    board,
                    alpha,
                    beta,
                    SearchKind::Quiescence,
                    &mut self.counters,
                )
                .score;
        }
        let in_check = board.in_check();
        let mut best_score;
        let mut futility = None;
        if in_check {
            best_score = -MATE + ply as i32;
        } else {
            let eval = self.eval.evaluate(
                board,
                alpha,
                beta,
                SearchKind::Quiescence,
                &mut self.counters,
            );
            if eval.score >= beta {
                return eval.score;
            }
            alpha = alpha.max(eval.score);
            best_score = eval.score;
            futility = Some(Futility {
                estimate: eval.score + eval.positional,
                tier: eval.tier,
            });
        }
        self.pickers[ply].fill_quiescence(board, in_check);
        #[cfg(feature = "calibrate")]
        let sample_futility = self.eval.calibration().is_some_and(|c| c.modes.qfutility);

        while let Some(mv) = self.pickers[ply].pick() {
            #[cfg_attr(not(feature = "calibrate"), allow(unused_mut))]
            let mut searched = None;
            if let Some(Futility { estimate, tier }) = futility {
                if mv.promotion_piece().is_some_and(|p| p != PieceType::Queen) {
                    continue;
                }
                if mv.promotion_piece().is_none() {
                    let estimate = estimate + see::captured_value(board, mv);
                    #[cfg(feature = "calibrate")]
                    if sample_futility {
                        let score = self.search_capture(board, mv, alpha, beta, ply, stop);
                        if let Some(calibration) = self.eval.calibration() {
                            calibration.record_qfutility(tier, score - estimate);
                        }
                        searched = Some(score);
                    }
                    if estimate + FUTILITY_BASE_MARGIN_BY_SOURCE[tier as usize] <= alpha {
                        self.counters.futility_prunes[tier as usize] += 1;
                        continue;
                    }
                }
                if !see_ge(board, mv, 0) {
                    continue;
                }
            }
            let score = match searched {
                Some(score) => score,
                None => self.search_capture(board, mv, alpha, beta, ply, stop),
            };
            if self.stopped {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        best_score
    }

    fn search_capture(
        &mut self,
        board: &Board,
        mv: Move,
        alpha: i32,
        beta: i32,
        ply: usize,
        stop: &AtomicBool,
    ) -> i32 {
        let mut child = *board;
        child.play(mv);
        -self.quiescence(&child, -beta, -alpha, ply + 1, stop)
    }
}

/// What QSearch futility needs from the stand-pat evaluation.
#[derive(Clone, Copy)]
struct Futility {
    /// Stand pat plus the exiting tier's positional estimate.
    estimate: i32,
    tier: Tier,
}

/// Mate scores are stored relative to the node, not the root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}
