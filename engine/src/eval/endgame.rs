//! Endgame knowledge the lazy tier needs: mop-up against a bare king. It swings the score by up
//! to 232 cp on king placement alone, more than any O(1) margin, so it belongs to the tier
//! that exits there.

use super::score::S;
use crate::board::{Board, ROOK_VALUE};
use crate::types::Color;

/// Mop-up (endgame): bonus per ring the bare king stands from the centre.
const MOP_UP_EDGE: i32 = 40;
/// Mop-up: the kings' closeness is this minus `MOP_UP_CLOSENESS_PER_SQUARE` per square between
/// them (twice the longest king distance, so it never goes negative).
const MOP_UP_MAX_CLOSENESS: i32 = 14;
/// Mop-up: closeness lost per square between the kings.
const MOP_UP_CLOSENESS_PER_SQUARE: i32 = 2;
/// Mop-up (endgame): bonus per unit of the kings' closeness.
const MOP_UP_CLOSENESS: i32 = 8;

/// Drives a bare king to the edge and the winning king towards it: `color`'s bonus when the
/// enemy has only its king and `color` has at least a rook's worth of pieces.
#[inline]
pub fn mop_up(board: &Board, color: Color) -> S {
    let enemy = !color;
    if board.color(enemy).count() != 1 || board.material(color).non_pawn() < ROOK_VALUE {
        return S::ZERO;
    }
    let edge = board.king(enemy).center_ring() as i32;
    let closeness = MOP_UP_MAX_CLOSENESS
        - MOP_UP_CLOSENESS_PER_SQUARE * board.king(color).distance(board.king(enemy));
    S(0, MOP_UP_EDGE * edge + MOP_UP_CLOSENESS * closeness)
}
