//! Endgame knowledge the lazy tier needs: mop-up against a bare king. It swings the score by up
//! to 232 cp on king placement alone, more than any O(1) margin, so it belongs to the tier
//! that exits there.

use super::score::S;
use crate::board::Board;
use crate::types::Color;

/// Drives a bare king to the edge and the winning king towards it: `color`'s bonus when the
/// enemy has only its king and `color` has at least a rook's worth of pieces.
#[inline]
pub fn mop_up(board: &Board, color: Color) -> S {
    let enemy = !color;
    if board.color(enemy).count() != 1 || board.material(color).non_pawn() < 500 {
        return S::ZERO;
    }
    let edge = board.king(enemy).center_ring() as i32;
    let closeness = 14 - 2 * board.king(color).distance(board.king(enemy));
    S(0, 40 * edge + 8 * closeness)
}
