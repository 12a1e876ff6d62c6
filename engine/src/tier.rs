//! The tiered evaluation's vocabulary, shared by the evaluation, the counters, the samplers and
//! the bench: the tiers, the searches that ask for an evaluation, and the material buckets that index margins and counts. A leaf: it reads
//! the board and nothing of the evaluation or the counters.

use crate::board::Board;
use crate::types::{Color, PieceType};

/// The tier whose score an evaluation returned, cheapest first.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tier {
    SuperLazy = 0,
    Lazy = 1,
    Full = 2,
}

/// How many tiers there are: the length of every per-tier table.
pub const TIERS: usize = Tier::ALL.len();

impl Tier {
    pub const ALL: [Tier; 3] = [Tier::SuperLazy, Tier::Lazy, Tier::Full];

    pub const fn name(self) -> &'static str {
        match self {
            Tier::SuperLazy => "super-lazy",
            Tier::Lazy => "lazy",
            Tier::Full => "full",
        }
    }
}

/// Which search asked for an evaluation: the exits are counted apart, because quiescence's
/// stand-pat and the main search's pruning eval see different windows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SearchKind {
    Main = 0,
    Quiescence = 1,
}

/// How many searches the exits are split between.
pub const SEARCH_KINDS: usize = SearchKind::ALL.len();

impl SearchKind {
    pub const ALL: [SearchKind; 2] = [SearchKind::Main, SearchKind::Quiescence];

    pub fn name(self) -> &'static str {
        match self {
            SearchKind::Main => "main",
            SearchKind::Quiescence => "quiescence",
        }
    }
}

/// The largest army scaler: a full army's non-pawn material is 31 units of 100 cp.
pub const MAX_ARMY_SCALER: usize = 31;
/// Army-scaler units per side bucket.
pub const SCALER_UNITS_PER_SIDE_BUCKET: usize = 4;
/// Army-scaler units (both sides together) per material bucket.
pub const SCALER_UNITS_PER_MATERIAL_BUCKET: usize = 8;
/// Per-side buckets: the margin tables' rows and the counters' side axes.
pub const SIDE_BUCKETS: usize = 8;
/// Material buckets (both armies together): the counters' and the samplers' bucket axis.
pub const MATERIAL_BUCKETS: usize = 8;

/// Danger classes of a king, the king tables' second index: the number of enemy knights,
/// bishops, rooks and queens within `DANGER_RADIUS` squares of it, capped at the last class.
/// Attacks on a king come mostly from pieces near it, so the calm class 0 bounds the king term
/// far tighter than one table for all kings could.
pub const DANGER_CLASSES: usize = 2;
/// Chebyshev distance within which an enemy piece puts a king in the danger class.
pub const DANGER_RADIUS: i32 = 3;

/// The squares within `DANGER_RADIUS` of each square, computed at compile time.
const NEAR_KING: [u64; 64] = {
    let mut table = [0u64; 64];
    let mut king = 0;
    while king < 64 {
        let mut sq: usize = 0;
        while sq < 64 {
            let files = (king % 8) as i32 - (sq % 8) as i32;
            let ranks = (king / 8) as i32 - (sq / 8) as i32;
            if files.abs() <= DANGER_RADIUS && ranks.abs() <= DANGER_RADIUS {
                table[king] |= 1u64 << sq;
            }
            sq += 1;
        }
        king += 1;
    }
    table
};

/// The danger class of `color`'s king: one table load, a mask and a count, from the board's
/// bitboards alone, so the super-lazy tier can read it.
#[inline(always)]
pub fn danger_class(board: &Board, color: Color) -> usize {
    let enemy = !color;
    let pieces =
        board.color(enemy).0 & !(board.pieces(PieceType::Pawn).0 | board.pieces(PieceType::King).0);
    let near = (pieces & NEAR_KING[board.king(color).index()]).count_ones() as usize;
    near.min(DANGER_CLASSES - 1)
}

/// A side's army scaler: non-pawn material in units of 100 cp, 0..=`MAX_ARMY_SCALER`.
#[inline(always)]
pub fn army_scaler(board: &Board, color: Color) -> usize {
    ((board.material(color).non_pawn() / 100) as usize).min(MAX_ARMY_SCALER)
}

/// Per-side bucket: min(7, scaler / 4).
#[inline(always)]
pub fn side_bucket(board: &Board, color: Color) -> usize {
    (army_scaler(board, color) / SCALER_UNITS_PER_SIDE_BUCKET).min(SIDE_BUCKETS - 1)
}

/// Material bucket: min(7, (white scaler + black scaler) / 8).
#[inline(always)]
pub fn material_bucket(board: &Board) -> usize {
    ((army_scaler(board, Color::White) + army_scaler(board, Color::Black))
        / SCALER_UNITS_PER_MATERIAL_BUCKET)
        .min(MATERIAL_BUCKETS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_army_fills_the_top_buckets_and_bare_kings_the_bottom() {
        let start = Board::startpos();
        assert_eq!(army_scaler(&start, Color::White), MAX_ARMY_SCALER);
        assert_eq!(side_bucket(&start, Color::Black), SIDE_BUCKETS - 1);
        assert_eq!(material_bucket(&start), MATERIAL_BUCKETS - 1);
        let kings = Board::from_fen("8/8/4k3/8/8/4K3/8/8 w - - 0 1").unwrap();
        assert_eq!(
            (side_bucket(&kings, Color::White), material_bucket(&kings)),
            (0, 0)
        );
        // Rook and bishop (8 units) against a rook (5): side buckets 2 and 1, material 13 / 8.
        let ending = Board::from_fen("4k3/8/8/8/8/8/8/R1B1K2r w - - 0 1").unwrap();
        assert_eq!(side_bucket(&ending, Color::White), 2);
        assert_eq!(side_bucket(&ending, Color::Black), 1);
        assert_eq!(material_bucket(&ending), 1);
    }

    #[test]
    fn a_king_is_in_danger_when_an_enemy_piece_is_near() {
        // The knight on d6 is three ranks from the king on d3; on d7 it is four.
        let near = Board::from_fen("4k3/8/3n4/8/8/3K4/8/8 w - - 0 1").unwrap();
        let far = Board::from_fen("4k3/3n4/8/8/8/3K4/8/8 w - - 0 1").unwrap();
        assert_eq!(danger_class(&near, Color::White), 1);
        assert_eq!(danger_class(&far, Color::White), 0);
        // Pawns and the enemy king do not count, nor one's own pieces.
        let pawns = Board::from_fen("8/8/8/2k5/3p4/3K4/3N4/8 w - - 0 1").unwrap();
        assert_eq!(danger_class(&pawns, Color::White), 0);
        // The last class holds every count from there up.
        let crowd = Board::from_fen("4k3/8/8/1q1r4/2n5/3K4/8/8 w - - 0 1").unwrap();
        assert_eq!(danger_class(&crowd, Color::White), DANGER_CLASSES - 1);
        assert_eq!(danger_class(&Board::startpos(), Color::White), 0);
    }

    #[test]
    fn tiers_are_indexed_cheapest_first() {
        for (index, tier) in Tier::ALL.into_iter().enumerate() {
            assert_eq!(tier as usize, index);
        }
        assert_eq!(TIERS, 3);
    }
}
