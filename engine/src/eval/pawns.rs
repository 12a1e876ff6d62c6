//! Pawn structure, passed pawns, space and the pawn shelter of each king, cached in a pawn
//! hash keyed by the board's pawn key (the shelter also by the king's square). Part of the
//! lazy tier.

use super::score::S;
use crate::attacks;
use crate::board::Board;
use crate::types::{Bitboard, Color, PieceType, Square};

const DOUBLED: S = S(-10, -22);
const ISOLATED: S = S(-12, -16);
const BACKWARD: S = S(-8, -12);
/// Bonus for a pawn defended by a pawn or standing beside one, by relative rank.
const CONNECTED: [i32; 8] = [0, 4, 7, 11, 20, 34, 55, 0];
/// Passed-pawn bonus by relative rank (structure only; `passer_race` adds the kings).
const PASSED: [S; 8] = [
    S(0, 0),
    S(2, 8),
    S(5, 14),
    S(12, 24),
    S(26, 44),
    S(48, 80),
    S(80, 130),
    S(0, 0),
];
/// Pawn placement: centre pawns want to advance in the middlegame. Per file, counted once per
/// two ranks the pawn stands past its second.
const CENTER_FILE: [i32; 8] = [-4, -2, 2, 6, 6, 2, -2, -4];
/// Ranks past its second a pawn advances for each `CENTER_FILE` step.
const CENTER_RANKS_PER_STEP: i32 = 2;
/// A connected pawn's bonus in halves of `CONNECTED`: side by side (a phalanx) or defended.
const CONNECTED_HALVES_PHALANX: i32 = 3;
const CONNECTED_HALVES_DEFENDED: i32 = 2;
/// A connected pawn's endgame bonus: its middlegame bonus times its ranks past the third, over
/// this.
const CONNECTED_ENDGAME_DIVISOR: i32 = 4;
/// Own pawns in the shelter that count.
const MAX_SHELTER_PAWNS: i32 = 3;
/// Own pawns on the king's and the neighbouring files, up to two ranks ahead (at most
/// `MAX_SHELTER_PAWNS` count).
const SHELTER_PAWN: S = S(14, 0);
/// An enemy pawn on those files, by how far it has advanced (its rank counted from its own side):
/// most on our third rank, where it is about to break the shelter.
const STORM_PAWN: [i32; 8] = [0, 0, 0, -4, -10, -16, 0, 0];
const OPEN_FILE_NEAR_KING: S = S(-16, 0);
/// Passer race (endgame, per rank the passer stands beyond its third): bonus per square between
/// the enemy king and the passer's stop square.
const PASSER_RACE_ENEMY_KING: i32 = 5;
/// Passer race (endgame, per rank the passer stands beyond its third): penalty per square
/// between our own king and the passer's stop square.
const PASSER_RACE_OWN_KING: i32 = 2;
/// A passer the enemy king cannot catch, against a side with no pieces.
const UNSTOPPABLE_PASSER: S = S(0, 400);
/// Per safe central square behind our pawns, times our pieces over `SPACE_PIECES_PER_UNIT`.
const SPACE: i32 = 2;
const SPACE_PIECES_PER_UNIT: i32 = 4;
/// `PawnEntry::shelter_king` before the shelter of that side is first computed.
const NO_KING: u8 = 64;

/// How far a pawn on relative `rank` (from 0) stands past its third rank: what passers and
/// connected pawns gain by in the endgame.
#[inline(always)]
pub(crate) fn ranks_past_third(rank: i32) -> i32 {
    (rank - 2).max(0)
}

#[derive(Clone, Copy)]
pub struct PawnEntry {
    key: u64,
    /// Structure score from each side's own point of view.
    pub score: [S; 2],
    pub passed: [Bitboard; 2],
    /// Safe central squares behind each side's pawns (`space` weighs them by its pieces).
    pub space_squares: [u8; 2],
    /// The square of each side's king when `shelter` was computed (`NO_KING`: not yet).
    shelter_king: [u8; 2],
    /// Each side's pawn shelter and the enemy's pawn storm against its king.
    pub shelter: [S; 2],
}

impl Default for PawnEntry {
    fn default() -> Self {
        PawnEntry {
            key: 0,
            score: [S::ZERO; 2],
            passed: [Bitboard::EMPTY; 2],
            space_squares: [0; 2],
            shelter_king: [NO_KING; 2],
            shelter: [S::ZERO; 2],
        }
    }
}

impl PawnEntry {
    /// Space for `color`: the cached squares weighed by its piece count (middlegame only).
    #[inline(always)]
    pub fn space(&self, board: &Board, color: Color) -> S {
        let weight = board.material(color).piece_count() as i32;
        S(
            SPACE * self.space_squares[color.index()] as i32 * weight / SPACE_PIECES_PER_UNIT,
            0,
        )
    }
}

/// The pawn hash. Kept across searches (a pawn structure's entry does not depend on the search)
/// and cleared with the transposition table by `Searcher::clear`.
pub struct PawnTable {
    entries: Vec<PawnEntry>,
    pub probes: u64,
    pub hits: u64,
}

const PAWN_TABLE_SIZE: usize = 1 << 14;

#[inline(always)]
fn slot_index(pawn_key: u64) -> usize {
    (pawn_key as usize) & (PAWN_TABLE_SIZE - 1)
}

impl PawnTable {
    pub fn new() -> PawnTable {
        PawnTable {
            entries: vec![PawnEntry::default(); PAWN_TABLE_SIZE],
            probes: 0,
            hits: 0,
        }
    }

    pub fn clear(&mut self) {
        self.entries.fill(PawnEntry::default());
        self.probes = 0;
        self.hits = 0;
    }

    /// Starts loading `board`'s slot, so the memory latency overlaps the super-lazy tier.
    #[inline(always)]
    pub fn prefetch(&self, board: &Board) {
        crate::prefetch::prefetch(&self.entries[slot_index(board.pawn_key())]);
    }

    /// The entry for `board`'s pawn structure, computed on a miss; the shelters are
    /// recomputed when a king has moved since they were cached.
    #[inline]
    pub fn probe(&mut self, board: &Board) -> PawnEntry {
        let key = board.pawn_key();
        let slot = &mut self.entries[slot_index(key)];
        self.probes += 1;
        // Key 0 is the empty table's key, so a pawnless board recomputes (cheaply) every time.
        if slot.key == key && key != 0 {
            self.hits += 1;
        } else {
            *slot = evaluate_pawns(board, key);
        }
        for color in Color::BOTH {
            let king = board.king(color).index() as u8;
            if slot.shelter_king[color.index()] != king {
                slot.shelter_king[color.index()] = king;
                slot.shelter[color.index()] = king_shelter(board, color);
            }
        }
        *slot
    }
}

impl Default for PawnTable {
    fn default() -> Self {
        Self::new()
    }
}

fn evaluate_pawns(board: &Board, key: u64) -> PawnEntry {
    let mut entry = PawnEntry {
        key,
        ..PawnEntry::default()
    };
    for color in Color::BOTH {
        let (score, passed) = side_pawns(board, color);
        entry.score[color.index()] = score;
        entry.passed[color.index()] = passed;
        entry.space_squares[color.index()] = space_squares(board, color);
    }
    entry
}

/// Safe squares in the centre behind `color`'s pawns: on the four centre files, in its own
/// half (ranks 2-4 from its side), not holding its pawn and not attacked by an enemy pawn.
fn space_squares(board: &Board, color: Color) -> u8 {
    let centre_files = Bitboard(0x3C3C_3C3C_3C3C_3C3C);
    let home = if color.is_white() {
        Bitboard(0x0000_FFFF_FF00)
    } else {
        Bitboard(0x00FF_FFFF_0000_0000)
    };
    let own_pawns = board.colored(color, PieceType::Pawn);
    let their_attacks = attacks::pawn_set(!color, board.colored(!color, PieceType::Pawn));
    let safe = centre_files & home & !own_pawns & !their_attacks;
    let behind = if color.is_white() {
        own_pawns.fill_south()
    } else {
        own_pawns.fill_north()
    };
    (safe & behind).count() as u8
}

/// The pawn shelter in front of `color`'s king and the enemy pawns storming it. It depends on
/// the pawns and the king's square only, so the pawn hash caches it per king square.
fn king_shelter(board: &Board, color: Color) -> S {
    let king = board.king(color);
    let ours = board.colored(color, PieceType::Pawn);
    let file = Bitboard::file(king.file() as usize);
    let files = file | file.east() | file.west();
    let shelter = (ours & files & close_ranks(king, color.is_white())).count() as i32;
    let mut score = SHELTER_PAWN * shelter.min(MAX_SHELTER_PAWNS);
    let king_file = king.file() as i32;
    for f in (king_file - 1).max(0)..=(king_file + 1).min(7) {
        if (Bitboard::file(f as usize) & ours).is_empty() {
            score += OPEN_FILE_NEAR_KING;
        }
    }
    for storm in board.colored(!color, PieceType::Pawn) & files {
        let rank = storm.relative_rank(color.is_white()) as usize;
        score += S(STORM_PAWN[7 - rank], 0);
    }
    score
}

/// The two ranks in front of the king.
fn close_ranks(king: Square, white: bool) -> Bitboard {
    let r = king.rank() as i32;
    let (a, b) = if white {
        (r + 1, r + 2)
    } else {
        (r - 1, r - 2)
    };
    let mut ranks = Bitboard::EMPTY;
    for rank in [a, b] {
        if (0..8).contains(&rank) {
            ranks |= Bitboard::rank(rank as usize);
        }
    }
    ranks
}

/// Squares in front of `sq` (from `color`'s view) on its file and both neighbours.
#[inline(always)]
pub fn passed_span(color: Color, sq: Square) -> Bitboard {
    let file = Bitboard::file(sq.file() as usize);
    let files = file | file.east() | file.west();
    let ahead = if color.is_white() {
        Bitboard(!0u64 << 8).0 << (8 * sq.rank() as u32)
    } else {
        (!0u64 >> 8) >> (8 * (7 - sq.rank()) as u32)
    };
    files & Bitboard(ahead)
}

fn side_pawns(board: &Board, color: Color) -> (S, Bitboard) {
    let white = color.is_white();
    let ours = board.colored(color, PieceType::Pawn);
    let theirs = board.colored(!color, PieceType::Pawn);
    let their_attacks = attacks::pawn_set(!color, theirs);
    let mut score = S::ZERO;
    let mut passed = Bitboard::EMPTY;

    for sq in ours {
        let rank = sq.relative_rank(white) as usize;
        let file_bb = Bitboard::file(sq.file() as usize);
        let neighbours = file_bb.east() | file_bb.west();
        let front = passed_span(color, sq) & file_bb;

        score += S(
            CENTER_FILE[sq.file() as usize] * (rank as i32 - 1) / CENTER_RANKS_PER_STEP,
            0,
        );
        if (front & ours).any() {
            score += DOUBLED;
        }
        if (neighbours & ours).is_empty() {
            score += ISOLATED;
        } else {
            let supported = attacks::pawn(!color, sq) & ours;
            let phalanx = (sq.bb().east() | sq.bb().west()) & ours;
            if supported.any() || phalanx.any() {
                let halves = if phalanx.any() {
                    CONNECTED_HALVES_PHALANX
                } else {
                    CONNECTED_HALVES_DEFENDED
                };
                let bonus = CONNECTED[rank] * halves / 2;
                score += S(
                    bonus,
                    bonus * ranks_past_third(rank as i32) / CONNECTED_ENDGAME_DIVISOR,
                );
            } else {
                // Backward: no neighbour can ever defend it and its stop square is attacked.
                let stop = sq.bb().forward(white);
                let behind_or_level = !passed_span(color, sq);
                let defenders = neighbours & ours & behind_or_level;
                if defenders.is_empty() && (stop & their_attacks).any() {
                    score += BACKWARD;
                }
            }
        }
        if (passed_span(color, sq) & theirs).is_empty() && (front & ours).is_empty() {
            passed |= sq.bb();
            score += PASSED[rank];
        }
    }
    (score, passed)
}

/// The race between passed pawns and kings: king proximity to each passer's stop square and
/// the square rule against a side with no pieces. It depends on the kings and the side to
/// move, so it is computed per call, not cached in the pawn hash. Part of the lazy tier: in
/// pawn endings these terms decide the game, and without them the lazy exits there would be
/// unsound.
#[inline(always)]
pub fn passer_race(board: &Board, color: Color, passed: Bitboard) -> S {
    let white = color.is_white();
    let own_king = board.king(color);
    let enemy_king = board.king(!color);
    let enemy_has_pieces = board.material(!color).non_pawn() > 0;
    // The square rule counts one move more when the enemy king moves first.
    let tempo = i32::from(board.side_to_move() != color);
    let mut score = S::ZERO;
    for sq in passed {
        let rank = sq.relative_rank(white) as i32;
        let weight = ranks_past_third(rank);
        let stop = sq.offset(if white { 8 } else { -8 });
        score += S(
            0,
            weight
                * (PASSER_RACE_ENEMY_KING * stop.distance(enemy_king)
                    - PASSER_RACE_OWN_KING * stop.distance(own_king)),
        );
        if !enemy_has_pieces {
            let promote = Square::from_file_rank(sq.file(), if white { 7 } else { 0 });
            let to_go = 7 - rank + if rank == 1 { -1 } else { 0 };
            if promote.distance(enemy_king) - tempo > to_go {
                score += UNSTOPPABLE_PASSER;
            }
        }
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(fen: &str) -> Board {
        Board::from_fen(fen).unwrap()
    }

    #[test]
    fn the_cached_shelter_follows_the_king_on_a_pawn_hash_hit() {
        // Same pawns, so the same pawn key: castled, then with the king still in the centre.
        let castled = board("r4rk1/ppp2ppp/8/8/8/8/PPP2PPP/R4RK1 w - - 0 1");
        let central = board("r4rk1/ppp2ppp/8/8/8/8/PPP2PPP/R3K2R w - - 0 1");
        assert_eq!(castled.pawn_key(), central.pawn_key());

        let mut table = PawnTable::new();
        let first = table.probe(&castled);
        let second = table.probe(&central);
        assert_eq!(table.hits, 1, "the second probe hits the first entry");
        assert_eq!(second.shelter, PawnTable::new().probe(&central).shelter);
        assert_eq!(first.shelter[Color::White.index()], SHELTER_PAWN * 3);
        // e1: only f2 of the d-e-f files shelters it, and the d and e files are open.
        assert_eq!(
            second.shelter[Color::White.index()],
            SHELTER_PAWN + OPEN_FILE_NEAR_KING * 2
        );
        assert_eq!(table.probe(&castled).shelter, first.shelter);
    }

    #[test]
    fn space_counts_safe_centre_squares_behind_the_pawns() {
        let entry = PawnTable::new().probe(&Board::startpos());
        // c2-f2 hold the pawns: nothing lies behind them yet.
        assert_eq!(entry.space_squares, [0, 0]);
        let advanced = board("4k3/8/8/8/2PPPP2/8/8/4K3 w - - 0 1");
        // c2, c3 ... f2, f3 behind the four pawns, none attacked: 8 squares.
        assert_eq!(PawnTable::new().probe(&advanced).space_squares, [8, 0]);
    }
}
