//! Zobrist keys, generated at compile time from a fixed seed.

use crate::types::{Color, Piece, PieceType, Square};

pub struct Keys {
    pub pieces: [[u64; 64]; 12],
    pub castling: [u64; 16],
    pub en_passant_file: [u64; 8],
    pub black_to_move: u64,
}

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

const fn generate() -> Keys {
    let mut keys = Keys {
        pieces: [[0; 64]; 12],
        castling: [0; 16],
        en_passant_file: [0; 8],
        black_to_move: 0,
    };
    let mut state = 0x005E_ED0F_5A11_u64;
    let mut p = 0;
    while p < 12 {
        let mut s = 0;
        while s < 64 {
            let (next, value) = splitmix(state);
            state = next;
            keys.pieces[p][s] = value;
            s += 1;
        }
        p += 1;
    }
    // Castling keys are the XOR of one key per right, so a rights change is one XOR pair.
    let mut single = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        let (next, value) = splitmix(state);
        state = next;
        single[i] = value;
        i += 1;
    }
    let mut rights = 0;
    while rights < 16 {
        let mut k = 0;
        let mut bit = 0;
        while bit < 4 {
            if rights & (1 << bit) != 0 {
                k ^= single[bit];
            }
            bit += 1;
        }
        keys.castling[rights] = k;
        rights += 1;
    }
    let mut f = 0;
    while f < 8 {
        let (next, value) = splitmix(state);
        state = next;
        keys.en_passant_file[f] = value;
        f += 1;
    }
    keys.black_to_move = splitmix(state).1;
    keys
}

pub static KEYS: Keys = generate();

#[inline(always)]
pub fn piece(piece: Piece, sq: Square) -> u64 {
    KEYS.pieces[piece.index()][sq.index()]
}

/// The key of a `color` `kind` piece on `sq`.
#[inline(always)]
pub fn colored_piece(color: Color, kind: PieceType, sq: Square) -> u64 {
    KEYS.pieces[color.index() * 6 + kind.index()][sq.index()]
}
