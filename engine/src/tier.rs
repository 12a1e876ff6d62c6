//! The tiered evaluation's vocabulary, shared by the evaluation, the counters, the samplers and
//! the bench: the tiers, the searches that ask for an evaluation, and the material buckets that index margins and counts. A leaf: it reads
//! the board and nothing of the evaluation or the counters.

use crate::board::Board;
use crate::types::{Bitboard, Color, PieceType};

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

/// Danger classes of a king, the king tables' second index, from the enemy knights, bishops,
/// rooks and queens that could reach its zone on an empty board (`zone_attackers`): class 0 for
/// at most one (the full tier scales a lone attacker down to a few centipawns), then one class
/// per further attacker, the last holding every count from there up. On the 3k pool at depth 6
/// the king term's 0.5th percentile with a full enemy army is -14 cp in class 0, -93 in class 1
/// and about -220 in class 2, against -183 for every king in one table. The shipped tables hold
/// the same row in every class (`margins::CLASSES_DIFFER` is false, so no evaluation reads a
/// class): the tuned class rows did not win their verdict (docs/strength.md).
pub const DANGER_CLASSES: usize = 3;

/// A king's zone as the full tier's king safety sees it: the king's square, its neighbours, and
/// those squares one rank forward.
const fn king_zone(king: usize, white: bool) -> u64 {
    let (file, rank) = ((king % 8) as i32, (king / 8) as i32);
    let (back, front) = if white { (1, 2) } else { (2, 1) };
    let mut zone = 0u64;
    let mut sq: usize = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        if (f - file).abs() <= 1 && r >= rank - back && r <= rank + front {
            zone |= 1u64 << sq;
        }
        sq += 1;
    }
    zone
}

/// For each king square (and the colour of the king, which sets its zone's forward rank), the
/// squares from which a piece moving as `step` says reaches the zone on an empty board.
const fn zone_reach(step: Step) -> [[u64; 64]; 2] {
    let mut table = [[0u64; 64]; 2];
    let mut color = 0;
    while color < 2 {
        let mut king = 0;
        while king < 64 {
            let zone = king_zone(king, color == 0);
            let mut from: usize = 0;
            while from < 64 {
                let mut to: usize = 0;
                while to < 64 {
                    if zone & (1u64 << to) != 0 && from != to {
                        let files = (from % 8) as i32 - (to % 8) as i32;
                        let ranks = (from / 8) as i32 - (to / 8) as i32;
                        if step.reaches(files, ranks) {
                            table[color][king] |= 1u64 << from;
                            break;
                        }
                    }
                    to += 1;
                }
                from += 1;
            }
            king += 1;
        }
        color += 1;
    }
    table
}

/// How a piece moves, for `zone_reach`.
#[derive(Clone, Copy)]
enum Step {
    Knight,
    Diagonal,
    Straight,
}

impl Step {
    /// Whether a piece moving like this gets from one square to another `files` and `ranks`
    /// away on an empty board.
    const fn reaches(self, files: i32, ranks: i32) -> bool {
        match self {
            Step::Knight => files * files + ranks * ranks == 5,
            Step::Diagonal => files == ranks || files == -ranks,
            Step::Straight => files == 0 || ranks == 0,
        }
    }
}

const KNIGHT_REACH: [[u64; 64]; 2] = zone_reach(Step::Knight);
const DIAGONAL_REACH: [[u64; 64]; 2] = zone_reach(Step::Diagonal);
const STRAIGHT_REACH: [[u64; 64]; 2] = zone_reach(Step::Straight);

/// The enemy knights, bishops, rooks and queens that could reach `color`'s king zone on an
/// empty board: three table loads and four masks, from the board's bitboards alone, so the
/// super-lazy tier can read it.
#[inline(always)]
pub fn zone_attackers(board: &Board, color: Color) -> Bitboard {
    let (c, king) = (color.index(), board.king(color).index());
    let enemy = board.color(!color).0;
    let of = |kind: PieceType| board.pieces(kind).0 & enemy;
    let (diagonal, straight) = (DIAGONAL_REACH[c][king], STRAIGHT_REACH[c][king]);
    Bitboard(
        (of(PieceType::Knight) & KNIGHT_REACH[c][king])
            | (of(PieceType::Bishop) & diagonal)
            | (of(PieceType::Rook) & straight)
            | (of(PieceType::Queen) & (diagonal | straight)),
    )
}

/// The danger class of `color`'s king (see `DANGER_CLASSES`): the attackers beyond the first,
/// counted by clearing their lowest bits up to the last class (no popcount instruction needed).
#[inline(always)]
pub fn danger_class(board: &Board, color: Color) -> usize {
    let attackers = zone_attackers(board, color).0;
    let mut beyond_first = attackers & attackers.wrapping_sub(1);
    let mut class = 0;
    while class < DANGER_CLASSES - 1 && beyond_first != 0 {
        beyond_first &= beyond_first - 1;
        class += 1;
    }
    class
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
    fn zone_attackers_count_pieces_that_reach_the_zone_on_an_empty_board() {
        // White king g1, zone f1-h3. The rook on f8 reaches the f-file squares (through the
        // pawn: an empty board), the knight on e4 jumps to f2, the queen on a1 runs along the
        // first rank; the rook on a8 reaches none of them.
        let board = Board::from_fen("r4rk1/8/8/8/4n3/8/5PPP/q5K1 w - - 0 1").unwrap();
        assert_eq!(zone_attackers(&board, Color::White).count(), 3);
        assert_eq!(danger_class(&board, Color::White), 2);
        // White has nothing but pawns and its king.
        assert_eq!(zone_attackers(&board, Color::Black).count(), 0);
        assert_eq!(danger_class(&board, Color::Black), 0);
        // Without the queen: two attackers, class 1.
        let two = Board::from_fen("r4rk1/8/8/8/4n3/8/5PPP/6K1 w - - 0 1").unwrap();
        assert_eq!(zone_attackers(&two, Color::White).count(), 2);
        assert_eq!(danger_class(&two, Color::White), 1);
        // A lone attacker leaves the king in class 0; a knight on a2 cannot jump into f1-h3.
        let lone = Board::from_fen("6k1/8/8/8/8/8/n4PPP/3r2K1 w - - 0 1").unwrap();
        assert_eq!(zone_attackers(&lone, Color::White).count(), 1);
        assert_eq!(danger_class(&lone, Color::White), 0);
        // Of black's pieces at the start only the queen sees down the d-file into e1's zone.
        assert_eq!(zone_attackers(&Board::startpos(), Color::White).count(), 1);
        // Four or more attackers share the last class.
        let crowd = Board::from_fen("4k3/8/8/8/8/2nbq3/8/3rK3 w - - 0 1").unwrap();
        assert_eq!(zone_attackers(&crowd, Color::White).count(), 4);
        assert_eq!(danger_class(&crowd, Color::White), DANGER_CLASSES - 1);
    }

    #[test]
    fn the_zone_runs_two_ranks_toward_the_enemy_and_one_back() {
        // Kings on e3 and e6: white's zone spans ranks 2-5, black's ranks 4-7 (d to f files).
        let forward = Board::from_fen("8/8/4k3/R7/7r/4K3/8/8 w - - 0 1").unwrap();
        assert_eq!(zone_attackers(&forward, Color::White).count(), 1);
        assert_eq!(zone_attackers(&forward, Color::Black).count(), 1);
        let behind = Board::from_fen("R7/8/4k3/8/8/4K3/8/7r w - - 0 1").unwrap();
        assert_eq!(zone_attackers(&behind, Color::White).count(), 0);
        assert_eq!(zone_attackers(&behind, Color::Black).count(), 0);
    }

    #[test]
    fn tiers_are_indexed_cheapest_first() {
        for (index, tier) in Tier::ALL.into_iter().enumerate() {
            assert_eq!(tier as usize, index);
        }
        assert_eq!(TIERS, 3);
    }
}
