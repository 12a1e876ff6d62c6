//! Piece placement: the evaluation terms that depend only on a piece's kind and square. The
//! board keeps their per-side sum incrementally beside material, so the super-lazy tier reads
//! them for free. A leaf: it knows squares and piece kinds and nothing of the board.

use crate::types::{PieceType, Square};

/// Centralisation bonus by Chebyshev ring around the centre (0 on d4/e4/d5/e5, 3 on the edge).
const CENTRALITY: [i32; 4] = [4, 2, 0, -3];
/// Middlegame and endgame weight of `CENTRALITY` per piece kind (pawns, rooks and kings: none).
const CENTRALITY_WEIGHT: [(i32, i32); 6] = [(0, 0), (5, 4), (3, 2), (0, 0), (1, 3), (0, 0)];
/// Middlegame: the king at home on its back rank.
const KING_BACK_RANK: i32 = 10;
/// Middlegame: a king off its back rank loses this, and `KING_ADVANCE_PER_RANK` per rank.
const KING_OFF_BACK_RANK: i32 = -10;
const KING_ADVANCE_PER_RANK: i32 = -4;
/// Endgame: the king gains this per ring nearer the centre.
const KING_CENTRALITY_PER_RING: i32 = 10;

/// A placement value: middlegame and endgame centipawns (`i16` keeps the board in 128 bytes).
pub type Placement = [i16; 2];

/// The placement value of a white piece of each kind on each square; a black piece reads the
/// square flipped (`Square::flip`).
pub const PLACEMENT: [[Placement; 64]; 6] = {
    let mut table = [[[0i16; 2]; 64]; 6];
    let mut kind = 0;
    while kind < 6 {
        let mut index = 0;
        while index < 64 {
            table[kind][index] = white_value(kind, Square::new(index as u8));
            index += 1;
        }
        kind += 1;
    }
    table
};

const fn white_value(kind: usize, sq: Square) -> Placement {
    let ring = sq.center_ring();
    if kind == PieceType::King.index() {
        let rank = sq.relative_rank(true) as i32;
        let mg = if rank == 0 {
            KING_BACK_RANK
        } else {
            KING_OFF_BACK_RANK + KING_ADVANCE_PER_RANK * rank
        };
        let eg = (3 - ring as i32) * KING_CENTRALITY_PER_RING;
        return [mg as i16, eg as i16];
    }
    let (mg, eg) = CENTRALITY_WEIGHT[kind];
    [
        (CENTRALITY[ring] * mg) as i16,
        (CENTRALITY[ring] * eg) as i16,
    ]
}

/// The placement value of a piece of `kind` on `sq` for the side `white` says.
#[inline(always)]
pub fn value(white: bool, kind: PieceType, sq: Square) -> Placement {
    let sq = if white { sq } else { sq.flip() };
    PLACEMENT[kind.index()][sq.index()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knight_in_the_centre_beats_one_on_the_rim() {
        let centre = value(true, PieceType::Knight, Square::E4);
        let rim = value(true, PieceType::Knight, Square::A1);
        assert_eq!(centre, [20, 16]);
        assert_eq!(rim, [-15, -12]);
    }

    #[test]
    fn black_reads_the_flipped_square() {
        for kind in PieceType::ALL {
            for index in 0..64u8 {
                let sq = Square::new(index);
                assert_eq!(value(false, kind, sq.flip()), value(true, kind, sq));
            }
        }
    }

    #[test]
    fn the_king_is_safe_at_home_and_strong_in_the_centre() {
        assert_eq!(value(true, PieceType::King, Square::G1), [10, 0]);
        assert_eq!(value(false, PieceType::King, Square::G8), [10, 0]);
        assert_eq!(value(true, PieceType::King, Square::E4), [-22, 30]);
    }
}
