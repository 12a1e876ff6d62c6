//! The full tier: mobility, attack-based king safety, trapped pieces, rook and queen terms,
//! detailed passed-pawn terms and threats by pieces. (Placement by square alone is kept
//! incrementally by the board, `crate::placement`; threats by pawns are the lazy tier's.)
//! Every term is kept per side, so calibration can measure each side's residual and king term
//! separately.

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
const ROOK_BEHIND_PASSER: S = S(0, 18);
const MAJOR_ON_SEVENTH: S = S(18, 30);
const TRAPPED_BISHOP: S = S(-90, -90);
const TRAPPED_ROOK: S = S(-45, -10);
const KNIGHT_OUTPOST: S = S(28, 16);
const BISHOP_OUTPOST: S = S(14, 8);
const BAD_BISHOP_PAWN: S = S(-2, -5);
const KING_PROTECTOR: S = S(-3, -1);
const THREAT_BY_MINOR: S = S(28, 24);
const THREAT_BY_ROOK: S = S(24, 30);
const HANGING: S = S(-12, -10);
const TEMPO: S = S(12, 6);
/// A passed pawn whose stop square is occupied, per rank it stands beyond its third.
const PASSER_BLOCKED: S = S(-4, -8);
/// A passed pawn with no enemy piece on its path, per rank it stands beyond its third.
const PASSER_FREE_PATH: S = S(3, 7);

/// King-attack weight of each piece type that reaches the enemy king zone.
const ATTACK_WEIGHT: [i32; 6] = [0, 3, 3, 4, 6, 0];
/// King-zone squares the enemy attacks, each.
const ZONE_SQUARE_ATTACKED: i32 = 2;
/// Weight of a safe check by each piece type (counted once per type, not per square).
const SAFE_CHECK_WEIGHT: [i32; 6] = [0, 8, 5, 8, 7, 0];
const WEAK_ZONE_SQUARE: i32 = 1;
/// Share of the attack kept by number of attackers (out of `ATTACKER_SCALE_FULL`).
const ATTACKER_SCALE: [i32; 8] = [0, 15, 55, 80, 95, 100, 100, 100];
/// The whole attack kept: the denominator of `ATTACKER_SCALE`.
const ATTACKER_SCALE_FULL: i32 = 100;
/// King danger (middlegame cp) is the scaled square of the attack units divided by this.
const KING_DANGER_DIVISOR: i32 = 6;
/// The endgame part of the king danger is the middlegame part divided by this.
const KING_DANGER_ENDGAME_DIVISOR: i32 = 8;
const MAX_KING_DANGER: i32 = 300;
/// Without a queen the attack rarely mates: its danger is divided by this.
const QUEENLESS_ATTACK_DIVISOR: i32 = 2;
/// The relative ranks (from 0) on which a supported minor piece no enemy pawn can chase is an
/// outpost: the fourth to the sixth.
const OUTPOST_RANKS: std::ops::RangeInclusive<u8> = 3..=5;

/// Attack maps built in one pass over the pieces, shared by every full-tier term.
struct AttackInfo {
    by: [[Bitboard; 6]; 2],
    all: [Bitboard; 2],
    twice: [Bitboard; 2],
    zone: [Bitboard; 2],
    /// King-attack units each side has gathered against the enemy king.
    king_units: [i32; 2],
    king_attackers: [usize; 2],
}

impl AttackInfo {
    #[inline(always)]
    fn add(&mut self, color: Color, kind: PieceType, reach: Bitboard) {
        let c = color.index();
        self.by[c][kind.index()] |= reach;
        self.twice[c] |= self.all[c] & reach;
        self.all[c] |= reach;
    }
}

/// Computes the full tier's per-side terms. `passed` comes from the pawn hash.
pub fn full_terms(board: &Board, passed: [Bitboard; 2]) -> FullTerms {
    let mut info = AttackInfo {
        by: [[Bitboard::EMPTY; 6]; 2],
        all: [Bitboard::EMPTY; 2],
        twice: [Bitboard::EMPTY; 2],
        zone: [
            king_zone(board, Color::White),
            king_zone(board, Color::Black),
        ],
        king_units: [0; 2],
        king_attackers: [0; 2],
    };
    for color in Color::BOTH {
        info.add(
            color,
            PieceType::Pawn,
            attacks::pawn_set(color, board.colored(color, PieceType::Pawn)),
        );
        info.add(color, PieceType::King, attacks::king(board.king(color)));
    }
    let mut terms = FullTerms::default();
    for color in Color::BOTH {
        terms.rest[color.index()] = pieces(board, color, &mut info);
    }
    for color in Color::BOTH {
        let us = color.index();
        let mut rest = terms.rest[us];
        rest += threats(board, color, &info);
        rest += passed_pawn_terms(board, color, passed[us]);
        rest += rook_terms(board, color, passed[us]);
        rest += trapped_pieces(board, color);
        if board.side_to_move() == color {
            rest += TEMPO;
        }
        terms.rest[us] = rest;
        terms.king[us] = king_safety(board, color, &info);
    }
    terms
}

/// Mobility, outposts, king protectors and bad bishops of one side's pieces; gathers attack maps
/// and king-attack units on the way.
fn pieces(board: &Board, color: Color, info: &mut AttackInfo) -> S {
    let us = color.index();
    let them = (!color).index();
    let white = color.is_white();
    let occupied = board.occupied();
    let own = board.color(color);
    let mobility_area = !own & !info.by[them][PieceType::Pawn.index()];
    let our_pawns = board.colored(color, PieceType::Pawn);
    let their_pawns = board.colored(!color, PieceType::Pawn);
    let our_king = board.king(color);
    let mut score = S::ZERO;

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
            info.add(color, kind, reach);
            let mobility = (reach & mobility_area).count() as i32 - MOBILITY_PIVOT[kind.index()];
            if (reach & info.zone[them]).any() {
                info.king_attackers[us] += 1;
                info.king_units[us] += ATTACK_WEIGHT[kind.index()];
            }
            score += match kind {
                PieceType::Knight => KNIGHT_MOBILITY * mobility,
                PieceType::Bishop => BISHOP_MOBILITY * mobility,
                PieceType::Rook => ROOK_MOBILITY * mobility,
                _ => QUEEN_MOBILITY * mobility,
            };
            if matches!(kind, PieceType::Knight | PieceType::Bishop) {
                let rank = sq.relative_rank(white);
                let supported = (attacks::pawn(!color, sq) & our_pawns).any();
                let attackable = (super::pawns::passed_span(color, sq)
                    & !Bitboard::file(sq.file() as usize)
                    & their_pawns)
                    .any();
                if OUTPOST_RANKS.contains(&rank) && supported && !attackable {
                    score += if kind == PieceType::Knight {
                        KNIGHT_OUTPOST
                    } else {
                        BISHOP_OUTPOST
                    };
                }
                score += KING_PROTECTOR * sq.distance(our_king);
                if kind == PieceType::Bishop {
                    let colour = if Bitboard::LIGHT_SQUARES.has(sq) {
                        Bitboard::LIGHT_SQUARES
                    } else {
                        Bitboard::DARK_SQUARES
                    };
                    score += BAD_BISHOP_PAWN * (our_pawns & colour).count() as i32;
                }
            }
        }
    }
    score
}

/// Bonuses for attacking enemy pieces with cheaper ones, penalties for our pieces left
/// hanging.
fn threats(board: &Board, color: Color, info: &AttackInfo) -> S {
    let us = color.index();
    let them = (!color).index();
    let ours = board.color(color) & !board.pieces(PieceType::Pawn) & !board.pieces(PieceType::King);
    let theirs = board.color(!color);
    let majors = theirs & (board.pieces(PieceType::Rook) | board.pieces(PieceType::Queen));
    let queens = theirs & board.pieces(PieceType::Queen);
    let minors_attack =
        info.by[us][PieceType::Knight.index()] | info.by[us][PieceType::Bishop.index()];
    let mut score = S::ZERO;
    score += THREAT_BY_MINOR * (minors_attack & majors).count() as i32;
    score += THREAT_BY_ROOK * (info.by[us][PieceType::Rook.index()] & queens).count() as i32;
    score += HANGING * (ours & info.all[them] & !info.all[us]).count() as i32;
    score
}

/// The danger from the enemy's attack on this side's king (its pawn shelter is the lazy
/// tier's, `pawns::king_shelter`).
fn king_safety(board: &Board, color: Color, info: &AttackInfo) -> S {
    let us = color.index();
    let them = (!color).index();
    let enemy = !color;
    let king = board.king(color);
    let occupied = board.occupied();

    let safe = !board.color(enemy) & (!info.all[us] | (info.twice[them] & !info.twice[us]));
    let checks = [
        attacks::knight(king) & info.by[them][PieceType::Knight.index()],
        attacks::bishop(king, occupied) & info.by[them][PieceType::Bishop.index()],
        attacks::rook(king, occupied) & info.by[them][PieceType::Rook.index()],
        attacks::queen(king, occupied) & info.by[them][PieceType::Queen.index()],
    ];
    let mut units = info.king_units[them]
        + ZONE_SQUARE_ATTACKED * (info.zone[us] & info.all[them]).count() as i32;
    for (kind, squares) in [
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
    ]
    .into_iter()
    .zip(checks)
    {
        if (squares & safe).any() {
            units += SAFE_CHECK_WEIGHT[kind.index()];
        }
    }
    let defended_by_king_only = info.by[us][PieceType::King.index()] & !info.twice[us];
    units +=
        WEAK_ZONE_SQUARE * (info.zone[us] & info.all[them] & defended_by_king_only).count() as i32;

    let has_queen = board.colored(enemy, PieceType::Queen).any();
    let scale = ATTACKER_SCALE[info.king_attackers[them].min(7)]
        / if has_queen {
            1
        } else {
            QUEENLESS_ATTACK_DIVISOR
        };
    // Attackers and safe checks count once per piece (type), not per square, and the danger is
    // capped at 3 pawns: that keeps the king term's tail within what an O(1) margin can bound,
    // so the cheap tiers' middlegame exits stay sound.
    let danger =
        (units * units * scale / ATTACKER_SCALE_FULL / KING_DANGER_DIVISOR).min(MAX_KING_DANGER);
    S(-danger, -danger / KING_DANGER_ENDGAME_DIVISOR)
}

fn king_zone(board: &Board, color: Color) -> Bitboard {
    let king = board.king(color);
    let around = attacks::king(king) | king.bb();
    around | around.forward(color.is_white())
}

fn rook_terms(board: &Board, color: Color, passed: Bitboard) -> S {
    let white = color.is_white();
    let ours = board.colored(color, PieceType::Pawn);
    let theirs = board.colored(!color, PieceType::Pawn);
    let mut score = S::ZERO;
    for sq in board.colored(color, PieceType::Rook) {
        let file = Bitboard::file(sq.file() as usize);
        let ahead_of_rook = if white {
            sq.bb().fill_north()
        } else {
            sq.bb().fill_south()
        };
        if (passed & file & ahead_of_rook).any() {
            score += ROOK_BEHIND_PASSER;
        }
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
    for (b, p) in [(Square::A7, Square::B6), (Square::H7, Square::G6)] {
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

/// What pieces do to passed pawns: blockades and a path free of enemy pieces. The race
/// between kings and passers is the lazy tier's (`pawns::passer_race`).
fn passed_pawn_terms(board: &Board, color: Color, passed: Bitboard) -> S {
    let white = color.is_white();
    let enemy_pieces = board.color(!color);
    let mut score = S::ZERO;
    for sq in passed {
        let weight = super::pawns::ranks_past_third(sq.relative_rank(white) as i32);
        let stop = sq.offset(if white { 8 } else { -8 });
        if board.occupied().has(stop) {
            score += PASSER_BLOCKED * weight;
        } else if (passed_span(color, sq) & Bitboard::file(sq.file() as usize) & enemy_pieces)
            .is_empty()
        {
            score += PASSER_FREE_PATH * weight;
        }
    }
    score
}
