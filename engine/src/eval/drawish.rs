//! Drawish-situation detection, bare-king and pawn-race tests. These run in the cheap tiers
//! (`drawish_scale` at every call, `pawn_race_possible` when the super-lazy score would exit,
//! `bare_king_either_side` in the lazy tier), so each is its own never-inlined function:
//! profilers and instruction counts attribute their fixed cost by name.

use crate::board::{Board, MINOR_VALUE, ROOK_VALUE};
use crate::types::{Bitboard, Color, PieceType};

/// Scale applied to the full score, out of `SCALE_NORMAL`.
pub const SCALE_NORMAL: i32 = 64;
/// The scale when the stronger side has no pawns, more than a lone minor piece, and less than
/// a rook more than the other side (KR v KB, KRB v KR).
const PAWNLESS_SMALL_EDGE_SCALE: i32 = 12;
/// The scale with opposite-coloured bishops as the only pieces and level pawns.
const OPPOSITE_BISHOPS_SCALE: i32 = 16;
/// With opposite-coloured bishops as the only pieces, the scale added per pawn of difference.
const OPPOSITE_BISHOPS_SCALE_PER_PAWN: i32 = 8;
/// The pawn difference `OPPOSITE_BISHOPS_SCALE_PER_PAWN` counts up to.
const OPPOSITE_BISHOPS_MAX_PAWN_GAP: i32 = 3;
/// The scale with opposite-coloured bishops and other pieces on the board.
const OPPOSITE_BISHOPS_WITH_PIECES_SCALE: i32 = 44;

/// A side with only its king left (a king with pawns is not bare). The lazy tier adds its
/// mop-up term then.
#[inline(never)]
pub fn bare_king_either_side(board: &Board) -> bool {
    Color::BOTH.iter().any(|&c| board.color(c).count() == 1)
}

/// A side without pieces (pawns only, or a bare king): the lazy tier's passer race
/// (unstoppable passers, king proximity) and mop-up can swing the score by more than any
/// super-lazy margin, so the super-lazy tier does not exit on material alone here.
#[inline(never)]
pub fn pawn_race_possible(board: &Board) -> bool {
    Color::BOTH
        .iter()
        .any(|&c| board.material(c).non_pawn() == 0)
}

/// How much of the full score to keep (`SCALE_NORMAL` = all of it) given drawish material.
/// The cheap tiers scale their scores by it too: a drawish scale shrinks a score and what the
/// tier cannot see alike, so the same margins hold.
#[inline(never)]
pub fn drawish_scale(board: &Board) -> i32 {
    let white = board.material(Color::White);
    let black = board.material(Color::Black);
    let pawns = [white.count(PieceType::Pawn), black.count(PieceType::Pawn)];
    // Every drawish pattern below needs a pawnless side, a lone minor piece, or a single
    // bishop on each side; most positions have none of these.
    let lone_minor = white.non_pawn() == MINOR_VALUE || black.non_pawn() == MINOR_VALUE;
    let single_bishops = white.count(PieceType::Bishop) == 1 && black.count(PieceType::Bishop) == 1;
    if pawns[0] > 0 && pawns[1] > 0 && !lone_minor && !single_bishops {
        return SCALE_NORMAL;
    }
    if insufficient_material(board) {
        return 0;
    }
    let mut scale = SCALE_NORMAL;
    for (strong, weak) in [(Color::White, Color::Black), (Color::Black, Color::White)] {
        let s = board.material(strong);
        let w = board.material(weak);
        if s.non_pawn() < w.non_pawn()
            || (s.non_pawn() == w.non_pawn() && pawns[strong.index()] <= pawns[weak.index()])
        {
            continue;
        }
        let strong_pawns = board.colored(strong, PieceType::Pawn);
        // Without pawns, an advantage of less than a rook rarely wins (KR v KB, KRB v KR).
        if strong_pawns.is_empty() && s.non_pawn() - w.non_pawn() < ROOK_VALUE {
            scale = scale.min(if s.non_pawn() <= MINOR_VALUE {
                0
            } else {
                PAWNLESS_SMALL_EDGE_SCALE
            });
        }
        // Bishop and rook pawns on one file whose queening square the bishop cannot cover.
        if s.non_pawn() == MINOR_VALUE
            && s.count(PieceType::Bishop) == 1
            && wrong_bishop_rook_pawn(board, strong)
        {
            scale = 0;
        }
    }
    if opposite_bishops(board) {
        let only_bishops = white.non_pawn() == MINOR_VALUE && black.non_pawn() == MINOR_VALUE;
        let pawn_gap = (pawns[0] as i32 - pawns[1] as i32).abs();
        scale = scale.min(if only_bishops {
            OPPOSITE_BISHOPS_SCALE
                + OPPOSITE_BISHOPS_SCALE_PER_PAWN * pawn_gap.min(OPPOSITE_BISHOPS_MAX_PAWN_GAP)
        } else {
            OPPOSITE_BISHOPS_WITH_PIECES_SCALE
        });
    }
    scale
}

/// Neither side can possibly mate: K v K, K+minor v K, K+N+N v K.
#[inline(always)]
fn insufficient_material(board: &Board) -> bool {
    if board.pieces(PieceType::Pawn).any() {
        return false;
    }
    let (w, b) = (board.material(Color::White), board.material(Color::Black));
    let minors_only = |m: &crate::board::Material| {
        m.count(PieceType::Rook) == 0 && m.count(PieceType::Queen) == 0
    };
    if !minors_only(w) || !minors_only(b) {
        return false;
    }
    let (wm, bm) = (w.piece_count(), b.piece_count());
    (wm <= 1 && bm <= 1)
        || (wm == 0 && bm == 2 && b.count(PieceType::Bishop) == 0)
        || (bm == 0 && wm == 2 && w.count(PieceType::Bishop) == 0)
}

fn opposite_bishops(board: &Board) -> bool {
    let wb = board.colored(Color::White, PieceType::Bishop);
    let bb = board.colored(Color::Black, PieceType::Bishop);
    if wb.count() != 1 || bb.count() != 1 {
        return false;
    }
    let light = |b: Bitboard| (b & Bitboard::LIGHT_SQUARES).any();
    light(wb) != light(bb)
}

fn wrong_bishop_rook_pawn(board: &Board, strong: Color) -> bool {
    let pawns = board.colored(strong, PieceType::Pawn);
    if pawns.is_empty() {
        return false;
    }
    let on_a = (pawns & !Bitboard::FILE_A).is_empty();
    let on_h = (pawns & !Bitboard::FILE_H).is_empty();
    if !on_a && !on_h {
        return false;
    }
    let queening = crate::types::Square::from_file_rank(
        if on_a { 0 } else { 7 },
        if strong.is_white() { 7 } else { 0 },
    );
    let bishop_light = (board.colored(strong, PieceType::Bishop) & Bitboard::LIGHT_SQUARES).any();
    let corner_light = Bitboard::LIGHT_SQUARES.has(queening);
    if bishop_light == corner_light {
        return false;
    }
    let defender = board.king(!strong);
    defender.distance(queening) <= 1
}
