//! Move ordering: TT move, winning captures by MVV-LVA, killers, history, losing captures.

use super::see::{see_ge, SEE_VALUE};
use crate::board::Board;
use crate::movegen::{self, MoveList, MAX_MOVES};
use crate::types::{Move, MoveKind, PieceType};

const TT_MOVE: i32 = 1 << 30;
const GOOD_CAPTURE: i32 = 1 << 28;
const FIRST_KILLER: i32 = 1 << 27;
const SECOND_KILLER: i32 = (1 << 27) - 1;
const BAD_CAPTURE: i32 = -(1 << 28);

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
        MoveKind::EnPassant => SEE_VALUE[0],
        _ => board
            .piece_on(mv.to())
            .map_or(0, |p| SEE_VALUE[p.kind().index()]),
    };
    let attacker = board
        .piece_on(mv.from())
        .map_or(0, |p| p.kind().index() as i32);
    let promotion = match mv.promotion_piece() {
        Some(PieceType::Queen) => SEE_VALUE[4],
        Some(_) => -SEE_VALUE[4],
        None => 0,
    };
    victim * 8 + promotion * 8 - attacker
}

/// Moves with their ordering scores, picked best-first by selection. The search keeps one per
/// ply and refills it, so a node neither allocates nor clears a move buffer.
pub struct ScoredMoves {
    moves: MoveList,
    scores: [i32; MAX_MOVES],
    next: usize,
}

impl Default for ScoredMoves {
    fn default() -> Self {
        ScoredMoves {
            moves: MoveList::new(),
            scores: [0; MAX_MOVES],
            next: 0,
        }
    }
}

impl ScoredMoves {
    /// All legal moves, ordered for the main search.
    pub fn fill_main(
        &mut self,
        board: &Board,
        tt_move: Move,
        killers: [Move; 2],
        history: &History,
    ) {
        movegen::fill_legal(board, &mut self.moves);
        self.next = 0;
        let side = board.side_to_move().index();
        for (i, &mv) in self.moves.iter().enumerate() {
            self.scores[i] = if mv == tt_move {
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
        }
    }

    /// Quiescence moves by MVV-LVA: all evasions when in check, else captures and promotions.
    pub fn fill_quiescence(&mut self, board: &Board, in_check: bool) {
        if in_check {
            movegen::fill_legal(board, &mut self.moves);
        } else {
            movegen::fill_noisy(board, &mut self.moves);
        }
        self.next = 0;
        for (i, &mv) in self.moves.iter().enumerate() {
            self.scores[i] = mvv_lva(board, mv);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// The best remaining move, by selection.
    #[inline]
    pub fn pick(&mut self) -> Option<Move> {
        let n = self.moves.len();
        if self.next >= n {
            return None;
        }
        // Over a slice, so the scan has no bounds checks; the first of equal scores wins.
        let mut best = self.next;
        let mut best_score = self.scores[best];
        for (i, &score) in self.scores[self.next..n].iter().enumerate().skip(1) {
            if score > best_score {
                best = self.next + i;
                best_score = score;
            }
        }
        let slice = self.moves.as_mut_slice();
        slice.swap(self.next, best);
        self.scores.swap(self.next, best);
        let mv = slice[self.next];
        self.next += 1;
        Some(mv)
    }
}
