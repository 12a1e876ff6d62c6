//! Material and placement: the super-lazy tier's whole score, read from the board's
//! incremental counts and placement sums.

use super::score::{MAX_PHASE, S};
use crate::board::Board;
use crate::types::{Color, PieceType};

/// Tapered piece values, indexed by `PieceType`.
pub const PIECE_VALUE: [S; 6] = [
    S(90, 120),
    S(330, 310),
    S(345, 330),
    S(470, 540),
    S(980, 1000),
    S(0, 0),
];

const PHASE_WEIGHT: [i32; 6] = [0, 1, 1, 2, 4, 0];

/// Game phase from piece counts: `MAX_PHASE` at the start, 0 with only kings and pawns.
#[inline(always)]
pub fn phase(board: &Board) -> i32 {
    let mut phase = 0;
    for color in Color::BOTH {
        let counts = &board.material(color).counts;
        for kind in 1..5 {
            phase += PHASE_WEIGHT[kind] * counts[kind] as i32;
        }
    }
    phase.min(MAX_PHASE)
}

/// Tapered material and placement balance for `color`: one pass over the count differences.
#[inline(always)]
pub fn balance(board: &Board, color: Color, phase: i32) -> i32 {
    let ours = board.material(color);
    let theirs = board.material(!color);
    let mut total = S::ZERO;
    // The king's entry is zero: five kinds are enough.
    for ((&value, &mine), &their) in PIECE_VALUE
        .iter()
        .zip(&ours.counts)
        .zip(&theirs.counts)
        .take(5)
    {
        total += value * (i32::from(mine) - i32::from(their));
    }
    let ([our_mg, our_eg], [their_mg, their_eg]) = (ours.placement(), theirs.placement());
    total += S(our_mg - their_mg, our_eg - their_eg);
    total.taper(phase)
}

/// One side's material and placement, untapered.
#[inline(always)]
pub fn side_material(board: &Board, color: Color) -> S {
    let material = board.material(color);
    let [mg, eg] = material.placement();
    let mut total = S(mg, eg);
    for kind in PieceType::ALL {
        total += PIECE_VALUE[kind.index()] * material.counts[kind.index()] as i32;
    }
    total
}
