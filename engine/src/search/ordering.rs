//! Move ordering: TT move (searched before the others are generated), winning captures by
//! MVV-LVA, killers, history, losing captures. At a frontier-futile node the quiet moves that
//! give no check are held back instead of being picked only to be skipped.

use super::see::{see_ge, SEE_VALUE};
use crate::board::Board;
use crate::movegen::{self, MoveList, MAX_MOVES};
use crate::types::{Move, MoveKind, PieceType};

// Ordering scores, small enough that a score and a slot index share one `i32` key (see
// `key`): MVV-LVA stays within ±16,000 and history within ±HISTORY_MAX, so the classes never
// overlap.
const TT_MOVE: i32 = 1 << 22;
const GOOD_CAPTURE: i32 = 1 << 21;
const FIRST_KILLER: i32 = 1 << 20;
const SECOND_KILLER: i32 = (1 << 20) - 1;
const BAD_CAPTURE: i32 = -(1 << 21);
/// MVV-LVA: the victim's value times this, less the attacker's index (below 8), so a more
/// valuable victim always comes first.
const VICTIM_SCALE: i32 = 8;
/// The low bits of a key hold its slot, inverted, so that of equal scores the first slot is the
/// largest key: a plain maximum picks the best move and breaks ties by order.
const SLOT_BITS: u32 = 8;
const SLOT_MASK: i32 = (1 << SLOT_BITS) - 1;
const _: () = assert!(MAX_MOVES <= 1 << SLOT_BITS);
const _: () =
    assert!(TT_MOVE < (i32::MAX >> SLOT_BITS) && BAD_CAPTURE - (1 << 15) > (i32::MIN >> SLOT_BITS));

/// A move's score and its slot in one orderable key.
#[inline(always)]
fn key(score: i32, slot: usize) -> i32 {
    (score << SLOT_BITS) | (SLOT_MASK - slot as i32)
}

/// History of quiet moves that caused cutoffs, by side, from and to square.
pub type History = [[[i32; 64]; 64]; 2];
pub const HISTORY_MAX: i32 = 1 << 14;

#[inline(always)]
pub fn is_quiet(board: &Board, mv: Move) -> bool {
    match mv.kind() {
        MoveKind::Normal | MoveKind::Castle => board.piece_on(mv.to()).is_none(),
        MoveKind::Promotion | MoveKind::EnPassant => false,
    }
}

/// Most valuable victim, least valuable attacker.
#[inline(always)]
pub fn mvv_lva(board: &Board, mv: Move) -> i32 {
    let victim = match mv.kind() {
        MoveKind::EnPassant => SEE_VALUE[PieceType::Pawn.index()],
        _ => board
            .piece_on(mv.to())
            .map_or(0, |p| SEE_VALUE[p.kind().index()]),
    };
    let attacker = board
        .piece_on(mv.from())
        .map_or(0, |p| p.kind().index() as i32);
    let promotion = match mv.promotion_piece() {
        Some(PieceType::Queen) => SEE_VALUE[PieceType::Queen.index()],
        Some(_) => -SEE_VALUE[PieceType::Queen.index()],
        None => 0,
    };
    victim * VICTIM_SCALE + promotion * VICTIM_SCALE - attacker
}

/// Where a main-search node's picker stands.
#[derive(Clone, Copy)]
enum Stage {
    /// A legal TT move is handed out before anything is generated.
    TtMove(Move),
    /// The TT move has been searched; the other moves are generated on the next pick.
    AfterTtMove(Move),
    /// Picking the generated moves by score.
    Scored,
}

/// Moves with their ordering scores, picked best-first by selection. The search keeps one per
/// ply and refills it, so a node neither allocates nor clears a move buffer.
///
/// In the main search a legal TT move comes first, before anything is generated: where there
/// is one it causes most cutoffs, and then the other moves are never generated or scored.
pub struct ScoredMoves {
    moves: MoveList,
    /// Each slot's ordering key (`key`): its score and the slot itself.
    keys: [i32; MAX_MOVES],
    next: usize,
    /// Picking stops here; the moves past it are held back (see `fill_main`).
    end: usize,
    stage: Stage,
    /// The node's killers, scored when the moves are generated.
    killers: [Move; 2],
    /// Quiet moves that give no check are held back (frontier futility).
    futile: bool,
}

impl Default for ScoredMoves {
    fn default() -> Self {
        ScoredMoves {
            moves: MoveList::new(),
            keys: [0; MAX_MOVES],
            next: 0,
            end: 0,
            stage: Stage::Scored,
            killers: [Move::NULL; 2],
            futile: false,
        }
    }
}

impl ScoredMoves {
    /// Starts a main-search node. Returns false when the side to move has no legal move.
    /// `futile`: the node prunes quiet moves that give no check after its first move, so
    /// those are held back rather than picked one by one to be skipped.
    pub fn start_main(
        &mut self,
        board: &Board,
        tt_move: Move,
        killers: [Move; 2],
        history: &History,
        futile: bool,
    ) -> bool {
        self.futile = futile;
        self.killers = killers;
        if !tt_move.is_null() && movegen::is_legal(board, tt_move) {
            self.stage = Stage::TtMove(tt_move);
            return true;
        }
        self.stage = Stage::Scored;
        self.fill_main(board, Move::NULL, history);
        !self.moves.is_empty()
    }

    /// Whether the next `pick_main` generates the moves (the TT move has just been handed out).
    pub fn generation_pending(&self) -> bool {
        matches!(self.stage, Stage::AfterTtMove(_))
    }

    /// The next move of a main-search node: the TT move first, then the rest by score.
    #[inline]
    pub fn pick_main(&mut self, board: &Board, history: &History) -> Option<Move> {
        match self.stage {
            Stage::TtMove(tt_move) => {
                self.stage = Stage::AfterTtMove(tt_move);
                return Some(tt_move);
            }
            Stage::AfterTtMove(tt_move) => {
                self.stage = Stage::Scored;
                self.fill_main(board, tt_move, history);
                // The TT move, already searched, goes to the front, where `pick` would put it.
                if let Some(at) = self.moves.iter().position(|&mv| mv == tt_move) {
                    self.swap(0, at);
                }
                self.next = 1;
            }
            Stage::Scored => {}
        }
        self.pick()
    }

    /// Makes the held-back moves pickable. False if there are none.
    pub fn release_held_back(&mut self) -> bool {
        let held = self.end < self.moves.len();
        self.end = self.moves.len();
        held
    }

    /// All legal moves, ordered for the main search. At a futile node the quiet moves that give
    /// no check go behind `end`, except the best-scored move, which is always searched.
    fn fill_main(&mut self, board: &Board, tt_move: Move, history: &History) {
        movegen::fill_legal(board, &mut self.moves);
        self.next = 0;
        self.end = self.moves.len();
        let side = board.side_to_move().index();
        let killers = self.killers;
        for (i, &mv) in self.moves.iter().enumerate() {
            let score = if mv == tt_move {
                TT_MOVE
            } else if !is_quiet(board, mv) {
                let base = if see_ge(board, mv, 0) {
                    GOOD_CAPTURE
                } else {
                    BAD_CAPTURE
                };
                base + mvv_lva(board, mv)
            } else if mv == killers[0] {
                FIRST_KILLER
            } else if mv == killers[1] {
                SECOND_KILLER
            } else {
                history[side][mv.from().index()][mv.to().index()]
            };
            self.keys[i] = key(score, i);
        }
        if self.futile {
            self.hold_back_quiets(board);
        }
    }

    /// Moves the quiet moves that give no check behind `end`, keeping the order of the others.
    fn hold_back_quiets(&mut self, board: &Board) {
        let n = self.moves.len();
        let first_best = self.first_best(0, n);
        let mut kept = 0;
        for i in 0..n {
            let mv = self.moves.as_slice()[i];
            let held =
                i != first_best && is_quiet(board, mv) && board.gives_check(mv) == Some(false);
            if !held {
                self.swap(kept, i);
                kept += 1;
            }
        }
        self.end = kept;
    }

    /// Quiescence moves by MVV-LVA: all evasions when in check, else captures and promotions.
    pub fn fill_quiescence(&mut self, board: &Board, in_check: bool) {
        if in_check {
            movegen::fill_legal(board, &mut self.moves);
        } else {
            movegen::fill_noisy(board, &mut self.moves);
        }
        self.next = 0;
        self.end = self.moves.len();
        for (i, &mv) in self.moves.iter().enumerate() {
            self.keys[i] = key(mvv_lva(board, mv), i);
        }
    }

    /// The best remaining move, by selection (quiescence; the main search calls `pick_main`).
    #[inline]
    pub fn pick(&mut self) -> Option<Move> {
        if self.next >= self.end {
            return None;
        }
        let best = self.first_best(self.next, self.end);
        self.swap(self.next, best);
        let mv = self.moves.as_slice()[self.next];
        self.next += 1;
        Some(mv)
    }

    /// Swaps two slots' moves and scores; each key keeps naming its slot.
    #[inline(always)]
    fn swap(&mut self, i: usize, j: usize) {
        self.moves.as_mut_slice().swap(i, j);
        let (ki, kj) = (self.keys[i], self.keys[j]);
        self.keys[i] = (kj & !SLOT_MASK) | (ki & SLOT_MASK);
        self.keys[j] = (ki & !SLOT_MASK) | (kj & SLOT_MASK);
    }

    /// The index of the best score in `from..to` (`from` if it is empty); the first of equal
    /// scores wins.
    #[inline(always)]
    fn first_best(&self, from: usize, to: usize) -> usize {
        // One maximum over the keys, which the compiler vectorises; the key names its slot.
        if from >= to {
            return from;
        }
        let best = self.keys[from..to]
            .iter()
            .fold(i32::MIN, |best, &k| best.max(k));
        (SLOT_MASK - (best & SLOT_MASK)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Square;

    const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

    fn picked(picker: &mut ScoredMoves, board: &Board, history: &History) -> Vec<Move> {
        std::iter::from_fn(|| picker.pick_main(board, history)).collect()
    }

    #[test]
    fn the_tt_move_comes_first_and_once() {
        let board = Board::from_fen(KIWIPETE).unwrap();
        let history = [[[0; 64]; 64]; 2];
        let legal = movegen::legal_moves(&board);
        let tt_move = legal[legal.len() / 2];
        let mut picker = ScoredMoves::default();
        assert!(picker.start_main(&board, tt_move, [Move::NULL; 2], &history, false));
        assert_eq!(picker.pick_main(&board, &history), Some(tt_move));
        assert!(picker.generation_pending());
        let mut rest = picked(&mut picker, &board, &history);
        assert!(!rest.contains(&tt_move));
        rest.push(tt_move);
        rest.sort_by_key(|m| m.to_string());
        let mut all = legal.to_vec();
        all.sort_by_key(|m| m.to_string());
        assert_eq!(rest, all);
    }

    #[test]
    fn an_illegal_tt_move_is_ignored() {
        let board = Board::from_fen(KIWIPETE).unwrap();
        let history = [[[0; 64]; 64]; 2];
        let illegal = Move::new(Square::new(0), Square::new(63));
        let mut picker = ScoredMoves::default();
        assert!(picker.start_main(&board, illegal, [Move::NULL; 2], &history, false));
        let moves = picked(&mut picker, &board, &history);
        assert_eq!(moves.len(), movegen::legal_moves(&board).len());
        assert!(!moves.contains(&illegal));
    }

    #[test]
    fn a_futile_node_holds_back_quiet_moves_that_give_no_check() {
        let board = Board::from_fen(KIWIPETE).unwrap();
        let history = [[[0; 64]; 64]; 2];
        let mut picker = ScoredMoves::default();
        assert!(picker.start_main(&board, Move::NULL, [Move::NULL; 2], &history, true));
        let searched = picked(&mut picker, &board, &history);
        assert!(picker.release_held_back());
        let held = picked(&mut picker, &board, &history);
        assert!(!held.is_empty());
        for &mv in &held {
            assert!(
                is_quiet(&board, mv) && board.gives_check(mv) == Some(false),
                "{mv}"
            );
        }
        // The best-scored move is searched even when it is quiet; all the others that are not
        // held back are captures, promotions, checks or castling.
        for &mv in &searched[1..] {
            assert!(
                !is_quiet(&board, mv) || board.gives_check(mv) != Some(false),
                "{mv}"
            );
        }
        assert_eq!(
            searched.len() + held.len(),
            movegen::legal_moves(&board).len()
        );
    }
}
