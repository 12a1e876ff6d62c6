//! squall: a classical bitboard chess engine whose evaluation runs in three tiers
//! (super-lazy, lazy, full). The library does no I/O: the `squall` binary (UCI, bench, perft)
//! sits at the edge and talks to the search through `search::Searcher` and `search::Listener`.

pub mod attacks;
pub mod bench;
pub mod board;
pub mod calibrate;
pub mod counters;
pub mod eval;
pub mod huge_table;
pub mod movegen;
pub mod perft;
pub mod placement;
pub mod prefetch;
pub mod search;
pub mod tier;
pub mod timeman;
pub mod types;

pub use board::{Board, FenError};
pub use types::{Bitboard, Color, Move, Piece, PieceType, Square};
