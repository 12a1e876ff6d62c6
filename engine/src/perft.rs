//! Perft: counts leaf nodes of the legal move tree, the standard test of move generation.

use crate::board::Board;
use crate::movegen;
use crate::types::Move;

/// The deepest perft the `squall perft` command runs. Perft recurses once per ply, so a depth in
/// the thousands would overflow the stack; any depth near this one never finishes anyway.
pub const MAX_DEPTH: u32 = 64;

/// Perft with bulk counting: the last ply counts legal moves without playing them. `depth`
/// should not exceed `MAX_DEPTH` (each ply is a stack frame).
pub fn perft(board: &Board, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => movegen::count_legal_moves(board),
        _ => {
            let mut nodes = 0;
            movegen::for_each_legal(board, |mv| {
                let mut child = *board;
                child.play(mv);
                nodes += perft(&child, depth - 1);
            });
            nodes
        }
    }
}

/// Perft that plays every move down to the leaves: measures make-move as well as generation.
pub fn perft_no_bulk(board: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    movegen::for_each_legal(board, |mv| {
        let mut child = *board;
        child.play(mv);
        nodes += perft_no_bulk(&child, depth - 1);
    });
    nodes
}

/// Node count below each root move, in generation order.
pub fn divide(board: &Board, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut moves = Vec::new();
    movegen::for_each_legal(board, |mv| moves.push(mv));
    moves
        .into_iter()
        .map(|mv| {
            let mut child = *board;
            child.play(mv);
            (mv, perft(&child, depth - 1))
        })
        .collect()
}
