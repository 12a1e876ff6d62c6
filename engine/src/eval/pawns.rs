//! Pawn structure and passed pawns, cached in a pawn hash keyed by the board's pawn key.
//! Part of the lazy tier.

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
/// Pawn placement: centre pawns want to advance in the middlegame.
const CENTER_FILE: [i32; 8] = [-4, -2, 2, 6, 6, 2, -2, -4];

#[derive(Clone, Copy, Default)]
pub struct PawnEntry {
    key: u64,
    /// Structure score from each side's own point of view.
    pub score: [S; 2],
    pub passed: [Bitboard; 2],
}

/// The pawn hash. Cleared with the rest of per-search state.
pub struct PawnTable {
    entries: Vec<PawnEntry>,
    pub probes: u64,
    pub hits: u64,
}

const PAWN_TABLE_SIZE: usize = 1 << 14;

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

    /// The entry for `board`'s pawn structure, computed on a miss.
    #[inline]
    pub fn probe(&mut self, board: &Board) -> PawnEntry {
        let key = board.pawn_key();
        let slot = &mut self.entries[(key as usize) & (PAWN_TABLE_SIZE - 1)];
        self.probes += 1;
        // Key 0 is the empty table's key, so a pawnless board recomputes (cheaply) every time.
        if slot.key == key && key != 0 {
            self.hits += 1;
            return *slot;
        }
        let entry = evaluate_pawns(board, key);
        *slot = entry;
        entry
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
    }
    entry
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

        score += S(CENTER_FILE[sq.file() as usize] * (rank as i32 - 1) / 2, 0);
        if (front & ours).any() {
            score += DOUBLED;
        }
        if (neighbours & ours).is_empty() {
            score += ISOLATED;
        } else {
            let supported = attacks::pawn(!color, sq) & ours;
            let phalanx = (sq.bb().east() | sq.bb().west()) & ours;
            if supported.any() || phalanx.any() {
                let bonus = CONNECTED[rank] * if phalanx.any() { 3 } else { 2 } / 2;
                score += S(bonus, bonus * (rank as i32 - 2).max(0) / 4);
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
/// pawn endings these terms decide the game, and leaving them to the full tier made the lazy
/// exits there unsound.
#[inline(always)]
pub fn passer_race(board: &Board, color: Color, passed: Bitboard) -> S {
    let white = color.is_white();
    let own_king = board.king(color);
    let enemy_king = board.king(!color);
    let enemy_has_pieces = board.material(!color).non_pawn > 0;
    // The square rule counts one move more when the enemy king moves first.
    let tempo = i32::from(board.side_to_move() != color);
    let mut score = S::ZERO;
    for sq in passed {
        let rank = sq.relative_rank(white) as i32;
        let weight = (rank - 2).max(0);
        let stop = sq.offset(if white { 8 } else { -8 });
        score += S(
            0,
            weight * (5 * stop.distance(enemy_king) - 2 * stop.distance(own_king)),
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

/// A passer the enemy king cannot catch, against a side with no pieces.
const UNSTOPPABLE_PASSER: S = S(0, 400);
