//! Static exchange evaluation: does a capture sequence on one square win at least `threshold`?

use crate::attacks;
use crate::board::Board;
use crate::types::{Bitboard, Move, MoveKind, PieceType};

/// Exchange values (simpler than evaluation values; only their order matters much).
pub const SEE_VALUE: [i32; 6] = [100, 320, 330, 500, 950, 20000];

/// The value a move captures (en passant captures a pawn; promotions are not counted).
#[inline]
pub fn captured_value(board: &Board, mv: Move) -> i32 {
    match mv.kind() {
        MoveKind::EnPassant => SEE_VALUE[0],
        _ => board
            .piece_on(mv.to())
            .map_or(0, |p| SEE_VALUE[p.kind().index()]),
    }
}

/// Whether `mv` wins at least `threshold` once all exchanges on its square are played out.
pub fn see_ge(board: &Board, mv: Move, threshold: i32) -> bool {
    if mv.kind() != MoveKind::Normal {
        return 0 >= threshold;
    }
    let (from, to) = (mv.from(), mv.to());
    let mut balance = captured_value(board, mv) - threshold;
    if balance < 0 {
        return false;
    }
    let mover = board
        .piece_on(from)
        .expect("a move starts on a piece")
        .kind();
    balance -= SEE_VALUE[mover.index()];
    if balance >= 0 {
        return true;
    }
    let mut occupied = board.occupied() ^ from.bb() ^ to.bb();
    let mut attackers = board.attackers_to(to, occupied) & occupied;
    let mut side = !board.side_to_move();
    let diagonal = board.pieces(PieceType::Bishop) | board.pieces(PieceType::Queen);
    let straight = board.pieces(PieceType::Rook) | board.pieces(PieceType::Queen);

    loop {
        let ours = attackers & board.color(side);
        if ours.is_empty() {
            break;
        }
        let (kind, sq) = least_valuable(board, ours);
        occupied ^= sq.bb();
        if matches!(kind, PieceType::Pawn | PieceType::Bishop | PieceType::Queen) {
            attackers |= attacks::bishop(to, occupied) & diagonal;
        }
        if matches!(kind, PieceType::Rook | PieceType::Queen) {
            attackers |= attacks::rook(to, occupied) & straight;
        }
        attackers &= occupied;
        side = !side;
        balance = -balance - 1 - SEE_VALUE[kind.index()];
        if balance >= 0 {
            // A king may not capture onto a square the other side still attacks.
            if kind == PieceType::King && (attackers & board.color(side)).any() {
                side = !side;
            }
            break;
        }
    }
    side != board.side_to_move()
}

fn least_valuable(board: &Board, set: Bitboard) -> (PieceType, crate::types::Square) {
    for kind in PieceType::ALL {
        let pieces = set & board.pieces(kind);
        if pieces.any() {
            return (kind, pieces.lsb());
        }
    }
    unreachable!("least_valuable is called with a non-empty attacker set")
}
