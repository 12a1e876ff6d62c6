//! Attack lookups. Every table is generated at compile time by `build.rs`; sliders use fancy
//! magic bitboards, so each lookup is a mask, a multiply, a shift and a load.

use crate::types::{Bitboard, Color, Square};

struct Magic {
    mask: u64,
    magic: u64,
    shift: u32,
    offset: usize,
}

include!(concat!(env!("OUT_DIR"), "/tables.rs"));

#[inline(always)]
fn magic_lookup(entry: &Magic, occupied: Bitboard) -> Bitboard {
    let index = ((occupied.0 & entry.mask).wrapping_mul(entry.magic) >> entry.shift) as usize;
    Bitboard(SLIDER_ATTACKS[entry.offset + index])
}

#[inline(always)]
pub fn rook(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq.index()], occupied)
}

#[inline(always)]
pub fn bishop(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq.index()], occupied)
}

#[inline(always)]
pub fn queen(sq: Square, occupied: Bitboard) -> Bitboard {
    rook(sq, occupied) | bishop(sq, occupied)
}

#[inline(always)]
pub fn knight(sq: Square) -> Bitboard {
    Bitboard(KNIGHT_ATTACKS[sq.index()])
}

#[inline(always)]
pub fn king(sq: Square) -> Bitboard {
    Bitboard(KING_ATTACKS[sq.index()])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline(always)]
pub fn pawn(color: Color, sq: Square) -> Bitboard {
    match color {
        Color::White => Bitboard(WHITE_PAWN_ATTACKS[sq.index()]),
        Color::Black => Bitboard(BLACK_PAWN_ATTACKS[sq.index()]),
    }
}

/// Squares attacked by a whole set of pawns of `color`.
#[inline(always)]
pub fn pawn_set(color: Color, pawns: Bitboard) -> Bitboard {
    let ahead = pawns.forward(color.is_white());
    ahead.east() | ahead.west()
}

/// Squares strictly between `a` and `b` plus `b` itself when they share a line, else empty
/// (a knight or pawn checker shares no line with the king: callers add the checker).
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index() * 64 + b.index()])
}

/// The whole line through `a` and `b` when they share one, else empty.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a.index() * 64 + b.index()])
}

/// Rook attacks from `sq` on an empty board.
#[inline(always)]
pub fn rook_rays(sq: Square) -> Bitboard {
    Bitboard(ROOK_RAYS[sq.index()])
}

/// Bishop attacks from `sq` on an empty board.
#[inline(always)]
pub fn bishop_rays(sq: Square) -> Bitboard {
    Bitboard(BISHOP_RAYS[sq.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rook_on_a1_with_blockers() {
        let a1 = Square::parse("a1").unwrap();
        let occ = Square::parse("a4").unwrap().bb() | Square::parse("c1").unwrap().bb();
        let expected = ["a2", "a3", "a4", "b1", "c1"]
            .iter()
            .fold(Bitboard::EMPTY, |acc, s| {
                acc | Square::parse(s).unwrap().bb()
            });
        assert_eq!(rook(a1, occ), expected);
    }

    #[test]
    fn between_includes_target_only() {
        let (a1, d4) = (Square::parse("a1").unwrap(), Square::parse("d4").unwrap());
        let expected = ["b2", "c3", "d4"].iter().fold(Bitboard::EMPTY, |acc, s| {
            acc | Square::parse(s).unwrap().bb()
        });
        assert_eq!(between(a1, d4), expected);
        assert!(between(a1, Square::parse("b3").unwrap()).is_empty());
    }
}
