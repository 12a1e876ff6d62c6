//! The full tier: piece placement, mobility, attack-based king safety, trapped pieces,
//! rook and queen terms, detailed passed-pawn terms, threats and mop-up. Every term is kept
//! per side, so calibration can measure each side's residual and king term separately.

use super::pawns::passed_span;
use super::score::S;
use crate::attacks;
use crate::board::Board;
use crate::types::{Bitboard, Color, PieceType, Square};

/// Per-side full-tier terms, each from that side's own point of view.
#[derive(Clone, Copy, Default, Debug)]
pub struct FullTerms {
    /// Safety of this side's own king (usually negative: danger from the enemy's attack).
    pub king: [S; 2],
    /// Everything else the full tier adds for this side.
    pub rest: [S; 2],
}

const KNIGHT_MOBILITY: S = S(4, 4);
const BISHOP_MOBILITY: S = S(5, 5);
const ROOK_MOBILITY: S = S(2, 4);
const QUEEN_MOBILITY: S = S(1, 2);
const MOBILITY_PIVOT: [i32; 6] = [0, 4, 6, 7, 13, 0];

const ROOK_OPEN_FILE: S = S(30, 12);
const ROOK_SEMI_OPEN_FILE: S = S(14, 8);
const MAJOR_ON_SEVENTH: S = S(18, 30);
const TRAPPED_BISHOP: S = S(-90, -90);
const TRAPPED_ROOK: S = S(-45, -10);
const THREAT_BY_PAWN: S = S(-40, -30);
const HANGING: S = S(-12, -10);
const TEMPO: S = S(12, 6);

/// King-attack weight of each attacker type per attacked king-zone square.
const ATTACK_WEIGHT: [i32; 6] = [0, 2, 2, 3, 5, 0];
/// Share of the attack kept by number of attackers (out of 100).
const ATTACKER_SCALE: [i32; 8] = [0, 15, 55, 80, 95, 100, 100, 100];
const SHELTER_PAWN: S = S(14, 0);
const OPEN_FILE_NEAR_KING: S = S(-16, 0);

/// Centralisation bonus by distance from the centre (0..=3, Chebyshev rings).
const CENTRALITY: [i32; 4] = [4, 2, 0, -3];

#[inline(always)]
fn center_ring(sq: Square) -> usize {
    let f = sq.file() as i32;
    let r = sq.rank() as i32;
    let df = if f < 4 { 3 - f } else { f - 4 };
    let dr = if r < 4 { 3 - r } else { r - 4 };
    df.max(dr) as usize
}

#[inline(always)]
fn distance(a: Square, b: Square) -> i32 {
    (a.file() as i32 - b.file() as i32)
        .abs()
        .max((a.rank() as i32 - b.rank() as i32).abs())
}

/// Computes the full tier's per-side terms. `passed` comes from the pawn hash.
pub fn full_terms(board: &Board, passed: [Bitboard; 2]) -> FullTerms {
    let mut terms = FullTerms::default();
    let occupied = board.occupied();
    let pawn_attacks = [
        attacks::pawn_set(Color::White, board.colored(Color::White, PieceType::Pawn)),
        attacks::pawn_set(Color::Black, board.colored(Color::Black, PieceType::Pawn)),
    ];
    let mut attacked = [pawn_attacks[0], pawn_attacks[1]];
    let mut king_attack_units = [0i32; 2];
    let mut king_attackers = [0usize; 2];
    let zones = [
        king_zone(board, Color::White),
        king_zone(board, Color::Black),
    ];

    for color in Color::BOTH {
        let us = color.index();
        let them = (!color).index();
        let white = color.is_white();
        let own = board.color(color);
        let mobility_area = !own & !pawn_attacks[them];
        let enemy_zone = zones[them];
        let mut rest = S::ZERO;

        for kind in [
            PieceType::Knight,
            PieceType::Bishop,
            PieceType::Rook,
            PieceType::Queen,
        ] {
            for sq in board.colored(color, kind) {
                let reach = match kind {
                    PieceType::Knight => attacks::knight(sq),
                    PieceType::Bishop => attacks::bishop(sq, occupied),
                    PieceType::Rook => attacks::rook(sq, occupied),
                    _ => attacks::queen(sq, occupied),
                };
                attacked[us] |= reach;
                let mobility =
                    (reach & mobility_area).count() as i32 - MOBILITY_PIVOT[kind.index()];
                rest += match kind {
                    PieceType::Knight => KNIGHT_MOBILITY,
                    PieceType::Bishop => BISHOP_MOBILITY,
                    PieceType::Rook => ROOK_MOBILITY,
                    _ => QUEEN_MOBILITY,
                } * mobility;
                let hits = (reach & enemy_zone).count() as i32;
                if hits > 0 {
                    king_attackers[us] += 1;
                    king_attack_units[us] += ATTACK_WEIGHT[kind.index()] * hits;
                }
                let ring = CENTRALITY[center_ring(sq)];
                rest += match kind {
                    PieceType::Knight => S(ring * 5, ring * 4),
                    PieceType::Bishop => S(ring * 3, ring * 2),
                    PieceType::Queen => S(ring, ring * 3),
                    _ => S::ZERO,
                };
                if (sq.bb() & pawn_attacks[them]).any() {
                    rest += THREAT_BY_PAWN;
                }
            }
        }

        rest += rook_terms(board, color);
        rest += trapped_pieces(board, color);
        rest += passed_pawn_terms(board, color, passed[us]);
        let king = board.king(color);
        let ring = center_ring(king) as i32;
        let back_rank = king.relative_rank(white) == 0;
        rest += S(
            if back_rank {
                10
            } else {
                -10 - 4 * king.relative_rank(white) as i32
            },
            (3 - ring) * 10,
        );
        if board.side_to_move() == color {
            rest += TEMPO;
        }
        terms.rest[us] = rest;
        terms.king[us] = king_shelter(board, color);
    }

    for color in Color::BOTH {
        let us = color.index();
        let them = (!color).index();
        // Undefended pieces attacked by the enemy.
        let loose =
            (board.color(color) & !board.pieces(PieceType::Pawn) & !board.pieces(PieceType::King))
                & attacked[them]
                & !attacked[us];
        terms.rest[us] += HANGING * loose.count() as i32;
        // Danger to our king comes from the enemy's attack.
        let units = king_attack_units[them];
        let has_queen = board.colored(!color, PieceType::Queen).any();
        // Without a queen the attack rarely mates: count half of it.
        let scale = ATTACKER_SCALE[king_attackers[them].min(7)] / if has_queen { 1 } else { 2 };
        let danger = (units * units * scale / 100 / 3).min(700);
        terms.king[us] -= S(danger, danger / 8);
    }
    mop_up(board, &mut terms);
    terms
}

fn king_zone(board: &Board, color: Color) -> Bitboard {
    let king = board.king(color);
    let around = attacks::king(king) | king.bb();
    around | around.forward(color.is_white())
}

fn king_shelter(board: &Board, color: Color) -> S {
    let king = board.king(color);
    let ours = board.colored(color, PieceType::Pawn);
    let file = Bitboard::file(king.file() as usize);
    let files = file | file.east() | file.west();
    let shelter = (ours & files & close_ranks(king, color.is_white())).count() as i32;
    let mut score = SHELTER_PAWN * shelter.min(3);
    let king_file = king.file() as i32;
    for f in (king_file - 1).max(0)..=(king_file + 1).min(7) {
        if (Bitboard::file(f as usize) & ours).is_empty() {
            score += OPEN_FILE_NEAR_KING;
        }
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

fn rook_terms(board: &Board, color: Color) -> S {
    let white = color.is_white();
    let ours = board.colored(color, PieceType::Pawn);
    let theirs = board.colored(!color, PieceType::Pawn);
    let mut score = S::ZERO;
    for sq in board.colored(color, PieceType::Rook) {
        let file = Bitboard::file(sq.file() as usize);
        if (file & ours).is_empty() {
            score += if (file & theirs).is_empty() {
                ROOK_OPEN_FILE
            } else {
                ROOK_SEMI_OPEN_FILE
            };
        }
    }
    let seventh = Bitboard::rank(if white { 6 } else { 1 });
    let eighth = Bitboard::rank(if white { 7 } else { 0 });
    let majors = board.colored(color, PieceType::Rook) | board.colored(color, PieceType::Queen);
    if (majors & seventh).any()
        && ((theirs & seventh).any() || board.king(!color).bb().0 & eighth.0 != 0)
    {
        score += MAJOR_ON_SEVENTH * (majors & seventh).count() as i32;
    }
    score
}

fn trapped_pieces(board: &Board, color: Color) -> S {
    let white = color.is_white();
    let theirs = board.colored(!color, PieceType::Pawn);
    let mut score = S::ZERO;
    // A bishop on a7/h7 (a2/h2 for black) shut in by a pawn on b6/g6 (b3/g3).
    for (bishop, pawn) in [("a7", "b6"), ("h7", "g6")] {
        let b = Square::parse(bishop).unwrap();
        let p = Square::parse(pawn).unwrap();
        let (b, p) = if white { (b, p) } else { (b.flip(), p.flip()) };
        if board.colored(color, PieceType::Bishop).has(b) && theirs.has(p) {
            score += TRAPPED_BISHOP;
        }
    }
    // A rook boxed in by its own uncastled king on the king side.
    let king = board.king(color);
    if king.relative_rank(white) == 0 && (king.file() == 5 || king.file() == 6) {
        let rooks = board.colored(color, PieceType::Rook);
        let back = Bitboard::rank(if white { 0 } else { 7 });
        let corner = back & Bitboard(0xC0C0_C0C0_C0C0_C0C0);
        if (rooks & corner).any() && king.file() < (rooks & corner).lsb().file() {
            score += TRAPPED_ROOK;
        }
    }
    score
}

fn passed_pawn_terms(board: &Board, color: Color, passed: Bitboard) -> S {
    let white = color.is_white();
    let own_king = board.king(color);
    let enemy_king = board.king(!color);
    let enemy_pieces = board.color(!color);
    let enemy_has_pieces = board.material(!color).non_pawn > 0;
    let mut score = S::ZERO;
    for sq in passed {
        let rank = sq.relative_rank(white) as i32;
        let weight = (rank - 2).max(0);
        let stop = sq.offset(if white { 8 } else { -8 });
        // King proximity to the stop square matters in the endgame.
        score += S(
            0,
            weight * (5 * distance(enemy_king, stop) - 2 * distance(own_king, stop)),
        );
        if board.occupied().has(stop) {
            score -= S(4 * weight, 8 * weight);
        } else if (passed_span(color, sq) & Bitboard::file(sq.file() as usize) & enemy_pieces)
            .is_empty()
        {
            score += S(3 * weight, 7 * weight);
        }
        // Square rule: a lone king cannot catch it.
        if !enemy_has_pieces {
            let promote = Square::from_file_rank(sq.file(), if white { 7 } else { 0 });
            let to_go = 7 - rank + if rank == 1 { -1 } else { 0 };
            let tempo = if board.side_to_move() == color { 0 } else { 1 };
            if distance(enemy_king, promote) - tempo > to_go {
                score += S(0, 400);
            }
        }
    }
    score
}

/// Drives a bare king to the edge and the winning king towards it.
fn mop_up(board: &Board, terms: &mut FullTerms) {
    for color in Color::BOTH {
        let enemy = !color;
        if board.color(enemy).count() == 1 && board.material(color).non_pawn >= 500 {
            let edge = center_ring(board.king(enemy)) as i32;
            let closeness = 14 - 2 * distance(board.king(color), board.king(enemy));
            terms.rest[color.index()] += S(0, 40 * edge + 8 * closeness);
        }
    }
}
