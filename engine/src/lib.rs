//! squall: a classical bitboard chess engine whose evaluation runs in three tiers
//! (super-lazy, lazy, full). The library does no I/O: the `squall` binary (UCI, bench, perft)
//! sits at the edge.

pub mod attacks;
pub mod board;
pub mod movegen;
pub mod perft;
pub mod types;

pub use board::{Board, FenError};
pub use types::{Bitboard, Color, Move, Piece, PieceType, Square};
