//! The position: bitboards, rights and clocks, and everything kept incrementally (Zobrist key,
//! pawn key, material per side, checkers and pins of the side to move).
//!
//! There is no mailbox: `piece_on` reads the bitboards. That keeps `Board` at 128 bytes, small
//! enough that copy-make (`let mut child = *board;`) compiles to inline moves, not a `memcpy`
//! call.

mod fen;
pub mod zobrist;

pub use fen::FenError;

use crate::attacks;
use crate::placement::{self, Placement};
use crate::types::{Bitboard, Color, Move, MoveKind, Piece, PieceType, Square};

/// The largest halfmove clock and fullmove number: both are 16-bit (the board stays within
/// 128 bytes) and saturate there rather than wrap, so a printed FEN always parses again and the
/// fifty-move rule still holds after any number of moves.
pub const MAX_MOVE_COUNTER: u16 = u16::MAX;

/// Castling rights as a 4-bit set.
pub mod castle {
    pub const WHITE_KING: u8 = 1;
    pub const WHITE_QUEEN: u8 = 2;
    pub const BLACK_KING: u8 = 4;
    pub const BLACK_QUEEN: u8 = 8;
}

/// Piece values that define a side's "army": non-pawn material in centipawns. A full army
/// (2N 2B 2R Q) is 3175, i.e. an army scaler of 31.
pub const ARMY_VALUE: [i32; 6] = [100, 300, 300, 500, 975, 0];

/// A knight's or a bishop's `ARMY_VALUE`: the non-pawn material of a lone minor piece.
pub const MINOR_VALUE: i32 = ARMY_VALUE[PieceType::Knight.index()];
/// A rook's `ARMY_VALUE`.
pub const ROOK_VALUE: i32 = ARMY_VALUE[PieceType::Rook.index()];
// `MINOR_VALUE` stands for either minor piece.
const _: () = assert!(ARMY_VALUE[PieceType::Bishop.index()] == MINOR_VALUE);

/// `ARMY_VALUE` without the pawn: what a piece adds to `Material::non_pawn`.
const NON_PAWN_VALUE: [i16; 6] = non_pawn_values();

const fn non_pawn_values() -> [i16; 6] {
    let mut values = [0; 6];
    let mut piece = PieceType::Knight.index();
    while piece < values.len() {
        values[piece] = ARMY_VALUE[piece] as i16;
        piece += 1;
    }
    values
}

/// Which piece keys also go into the pawn key (branch-free update).
const PAWN_KEY_MASK: [u64; 6] = [!0, 0, 0, 0, 0, 0];

/// One side's material and piece placement, kept up to date by every move so evaluation reads
/// them in O(1).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Material {
    pub counts: [u8; 6],
    /// Knights, bishops, rooks and queens valued by `ARMY_VALUE` (`i16` keeps the board in
    /// 128 bytes: nine queens and the rest stay far below its range).
    non_pawn: i16,
    /// The sum of this side's pieces' `placement::PLACEMENT` values (middlegame, endgame).
    placement: Placement,
}

impl Material {
    /// Knights, bishops, rooks and queens valued by `ARMY_VALUE`.
    #[inline(always)]
    pub fn non_pawn(&self) -> i32 {
        i32::from(self.non_pawn)
    }

    /// The placement values of this side's pieces, middlegame and endgame.
    #[inline(always)]
    pub fn placement(&self) -> [i32; 2] {
        [i32::from(self.placement[0]), i32::from(self.placement[1])]
    }

    #[inline(always)]
    pub fn count(&self, kind: PieceType) -> u8 {
        self.counts[kind.index()]
    }

    /// Number of knights, bishops, rooks and queens.
    #[inline(always)]
    pub fn piece_count(&self) -> u8 {
        self.counts[1] + self.counts[2] + self.counts[3] + self.counts[4]
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Board {
    pieces: [Bitboard; 6],
    colors: [Bitboard; 2],
    key: u64,
    pawn_key: u64,
    checkers: Bitboard,
    pinned: Bitboard,
    material: [Material; 2],
    side: Color,
    castling: u8,
    en_passant: Option<Square>,
    halfmove: u16,
    fullmove: u16,
}

// Copy-make relies on this: above 128 bytes the copy becomes a `memcpy` call (x86-64 baseline).
const _: () = assert!(std::mem::size_of::<Board>() <= 128);

/// For each square, the castling rights that survive a move from or to it.
const CASTLE_KEEP: [u8; 64] = {
    let mut keep = [0b1111u8; 64];
    keep[0] = !castle::WHITE_QUEEN & 0b1111;
    keep[7] = !castle::WHITE_KING & 0b1111;
    keep[4] = !(castle::WHITE_KING | castle::WHITE_QUEEN) & 0b1111;
    keep[56] = !castle::BLACK_QUEEN & 0b1111;
    keep[63] = !castle::BLACK_KING & 0b1111;
    keep[60] = !(castle::BLACK_KING | castle::BLACK_QUEEN) & 0b1111;
    keep
};

impl Board {
    pub const STARTPOS: &'static str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    pub fn startpos() -> Board {
        Board::from_fen(Self::STARTPOS).expect("the start position is a valid FEN")
    }

    fn empty() -> Board {
        Board {
            pieces: [Bitboard::EMPTY; 6],
            colors: [Bitboard::EMPTY; 2],
            side: Color::White,
            castling: 0,
            en_passant: None,
            halfmove: 0,
            fullmove: 1,
            key: 0,
            pawn_key: 0,
            material: [Material::default(); 2],
            checkers: Bitboard::EMPTY,
            pinned: Bitboard::EMPTY,
        }
    }

    // ---- accessors -------------------------------------------------------------------------

    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.side
    }
    #[inline(always)]
    pub fn pieces(&self, kind: PieceType) -> Bitboard {
        self.pieces[kind.index()]
    }
    #[inline(always)]
    pub fn color(&self, color: Color) -> Bitboard {
        self.colors[color.index()]
    }
    #[inline(always)]
    pub fn colored(&self, color: Color, kind: PieceType) -> Bitboard {
        self.pieces[kind.index()] & self.colors[color.index()]
    }
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.colors[0] | self.colors[1]
    }
    #[inline(always)]
    pub fn piece_on(&self, sq: Square) -> Option<Piece> {
        let color = if self.colors[0].has(sq) {
            Color::White
        } else if self.colors[1].has(sq) {
            Color::Black
        } else {
            return None;
        };
        Some(Piece::new(color, self.kind_on(sq)))
    }

    /// The kind of the piece on an occupied square (branch-free; meaningless if empty): the
    /// kind's index bit by bit, each bit read from the union of the kinds that have it set.
    #[inline(always)]
    fn kind_on(&self, sq: Square) -> PieceType {
        let [_, n, b, r, q, k] = self.pieces.map(|bb| bb.0);
        let shift = sq.index();
        let bit0 = ((n | r | k) >> shift) & 1;
        let bit1 = ((b | r) >> shift) & 1;
        let bit2 = ((q | k) >> shift) & 1;
        const KINDS: [PieceType; 8] = [
            PieceType::Pawn,
            PieceType::Knight,
            PieceType::Bishop,
            PieceType::Rook,
            PieceType::Queen,
            PieceType::King,
            PieceType::King,
            PieceType::King,
        ];
        KINDS[(bit0 | bit1 << 1 | bit2 << 2) as usize & 7]
    }
    #[inline(always)]
    pub fn king(&self, color: Color) -> Square {
        self.colored(color, PieceType::King).lsb()
    }
    #[inline(always)]
    pub fn castling_rights(&self) -> u8 {
        self.castling
    }
    #[inline(always)]
    pub fn en_passant(&self) -> Option<Square> {
        self.en_passant
    }
    #[inline(always)]
    pub fn halfmove_clock(&self) -> u16 {
        self.halfmove
    }
    #[inline(always)]
    pub fn fullmove_number(&self) -> u16 {
        self.fullmove
    }
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }
    #[inline(always)]
    pub fn pawn_key(&self) -> u64 {
        self.pawn_key
    }
    #[inline(always)]
    pub fn material(&self, color: Color) -> &Material {
        &self.material[color.index()]
    }
    /// Pieces giving check to the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }
    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.checkers.any()
    }
    /// Pieces of the side to move pinned to their own king.
    #[inline(always)]
    pub fn pinned(&self) -> Bitboard {
        self.pinned
    }

    /// Every piece of either colour attacking `sq` given occupancy `occupied`.
    #[inline]
    pub fn attackers_to(&self, sq: Square, occupied: Bitboard) -> Bitboard {
        let rooks = self.pieces(PieceType::Rook) | self.pieces(PieceType::Queen);
        let bishops = self.pieces(PieceType::Bishop) | self.pieces(PieceType::Queen);
        (attacks::rook(sq, occupied) & rooks)
            | (attacks::bishop(sq, occupied) & bishops)
            | (attacks::knight(sq) & self.pieces(PieceType::Knight))
            | (attacks::king(sq) & self.pieces(PieceType::King))
            | (attacks::pawn(Color::White, sq) & self.colored(Color::Black, PieceType::Pawn))
            | (attacks::pawn(Color::Black, sq) & self.colored(Color::White, PieceType::Pawn))
    }

    /// Whether `by` attacks `sq` given occupancy `occupied`.
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color, occupied: Bitboard) -> bool {
        let them = self.color(by);
        let queens = self.pieces(PieceType::Queen);
        (attacks::knight(sq) & self.pieces(PieceType::Knight) & them).any()
            || (attacks::pawn(!by, sq) & self.pieces(PieceType::Pawn) & them).any()
            || (attacks::king(sq) & self.pieces(PieceType::King) & them).any()
            || (attacks::rook(sq, occupied) & (self.pieces(PieceType::Rook) | queens) & them).any()
            || (attacks::bishop(sq, occupied) & (self.pieces(PieceType::Bishop) | queens) & them)
                .any()
    }

    // ---- piece placement -------------------------------------------------------------------

    #[inline(always)]
    fn put(&mut self, piece: Piece, sq: Square) {
        self.add(piece.color(), piece.kind(), sq);
    }

    /// Puts a piece on an empty square.
    #[inline(always)]
    fn add(&mut self, color: Color, kind: PieceType, sq: Square) {
        let bb = sq.bb();
        self.pieces[kind.index()] ^= bb;
        self.colors[color.index()] ^= bb;
        self.toggle_keys(color, kind, sq);
        let m = &mut self.material[color.index()];
        m.counts[kind.index()] += 1;
        m.non_pawn += NON_PAWN_VALUE[kind.index()];
        let [mg, eg] = placement::value(color.is_white(), kind, sq);
        m.placement[0] += mg;
        m.placement[1] += eg;
    }

    /// Takes a piece off its square.
    #[inline(always)]
    fn remove(&mut self, color: Color, kind: PieceType, sq: Square) {
        let bb = sq.bb();
        self.pieces[kind.index()] ^= bb;
        self.colors[color.index()] ^= bb;
        self.toggle_keys(color, kind, sq);
        let m = &mut self.material[color.index()];
        m.counts[kind.index()] -= 1;
        m.non_pawn -= NON_PAWN_VALUE[kind.index()];
        let [mg, eg] = placement::value(color.is_white(), kind, sq);
        m.placement[0] -= mg;
        m.placement[1] -= eg;
    }

    #[inline(always)]
    fn toggle_keys(&mut self, color: Color, kind: PieceType, sq: Square) {
        let key = zobrist::colored_piece(color, kind, sq);
        self.key ^= key;
        self.pawn_key ^= key & PAWN_KEY_MASK[kind.index()];
    }

    #[inline(always)]
    fn shift(&mut self, color: Color, kind: PieceType, from: Square, to: Square) {
        let bb = from.bb() | to.bb();
        self.pieces[kind.index()] ^= bb;
        self.colors[color.index()] ^= bb;
        let delta =
            zobrist::colored_piece(color, kind, from) ^ zobrist::colored_piece(color, kind, to);
        self.key ^= delta;
        self.pawn_key ^= delta & PAWN_KEY_MASK[kind.index()];
        let white = color.is_white();
        let [from_mg, from_eg] = placement::value(white, kind, from);
        let [to_mg, to_eg] = placement::value(white, kind, to);
        let m = &mut self.material[color.index()];
        m.placement[0] += to_mg - from_mg;
        m.placement[1] += to_eg - from_eg;
    }

    /// The key after `mv`, to start loading its TT slot before the move is played. Exact for
    /// ordinary moves and captures; castling's rook, promotions, en passant and a new
    /// en-passant square are left out: a wrong guess only wastes a prefetch.
    #[inline(always)]
    pub fn key_after_hint(&self, mv: Move) -> u64 {
        let (from, to) = (mv.from(), mv.to());
        let mover = self.kind_on(from);
        let mut key = self.key
            ^ zobrist::KEYS.black_to_move
            ^ zobrist::colored_piece(self.side, mover, from)
            ^ zobrist::colored_piece(self.side, mover, to);
        if self.colors[(!self.side).index()].has(to) {
            key ^= zobrist::colored_piece(!self.side, self.kind_on(to), to);
        }
        if let Some(ep) = self.en_passant {
            key ^= zobrist::KEYS.en_passant_file[ep.file() as usize];
        }
        let castling = self.castling & CASTLE_KEEP[from.index()] & CASTLE_KEEP[to.index()];
        key ^ zobrist::KEYS.castling[self.castling as usize]
            ^ zobrist::KEYS.castling[castling as usize]
    }

    /// Whether a quiet or capturing `Normal` move gives check, without playing it: the mover
    /// attacks the enemy king from `to`, or leaving `from` uncovers one of our sliders. The
    /// search skips futile quiet moves on it instead of playing each one. `None` for castling,
    /// promotions and en passant, which only `play` answers.
    #[inline(always)]
    pub fn gives_check(&self, mv: Move) -> Option<bool> {
        if mv.kind() != MoveKind::Normal {
            return None;
        }
        let us = self.side;
        let (from, to) = (mv.from(), mv.to());
        let king = self.king(!us);
        let occupied = (self.occupied() ^ from.bb()) | to.bb();
        let direct = match self.kind_on(from) {
            PieceType::Pawn => attacks::pawn(us, to),
            PieceType::Knight => attacks::knight(to),
            PieceType::Bishop => attacks::bishop(to, occupied),
            PieceType::Rook => attacks::rook(to, occupied),
            PieceType::Queen => attacks::bishop(to, occupied) | attacks::rook(to, occupied),
            PieceType::King => Bitboard::EMPTY,
        };
        if direct.has(king) {
            return Some(true);
        }
        if !(attacks::rook_rays(king) | attacks::bishop_rays(king)).has(from) {
            return Some(false);
        }
        let ours = self.color(us) & !from.bb();
        let queens = self.pieces(PieceType::Queen);
        let rooks = (self.pieces(PieceType::Rook) | queens) & ours;
        let bishops = (self.pieces(PieceType::Bishop) | queens) & ours;
        Some(
            (attacks::rook(king, occupied) & rooks).any()
                || (attacks::bishop(king, occupied) & bishops).any(),
        )
    }

    // ---- making moves ----------------------------------------------------------------------

    /// Plays a legal move in place. Callers that need the old position copy the board first.
    pub fn play(&mut self, mv: Move) {
        let us = self.side;
        let them = !us;
        let (from, to) = (mv.from(), mv.to());
        debug_assert!(self.color(us).has(from), "a legal move starts on our piece");
        let kind = self.kind_on(from);

        if let Some(ep) = self.en_passant.take() {
            self.key ^= zobrist::KEYS.en_passant_file[ep.file() as usize];
        }
        self.halfmove = self.halfmove.saturating_add(1);
        // The piece standing on `to` after the move: only it can give a non-slider check.
        let mut arrived = kind;

        if mv.kind() == MoveKind::Normal {
            if self.colors[them.index()].has(to) {
                self.remove(them, self.kind_on(to), to);
                self.halfmove = 0;
            }
            self.shift(us, kind, from, to);
            if kind == PieceType::Pawn {
                self.halfmove = 0;
                if from.index() ^ to.index() == 16 {
                    let ep = Square::new(((from.index() + to.index()) / 2) as u8);
                    if (attacks::pawn(us, ep) & self.colored(them, PieceType::Pawn)).any() {
                        self.en_passant = Some(ep);
                        self.key ^= zobrist::KEYS.en_passant_file[ep.file() as usize];
                    }
                }
            }
        } else {
            arrived = self.play_special(mv);
        }

        let castling = self.castling & CASTLE_KEEP[from.index()] & CASTLE_KEEP[to.index()];
        if castling != self.castling {
            self.key ^= zobrist::KEYS.castling[self.castling as usize]
                ^ zobrist::KEYS.castling[castling as usize];
            self.castling = castling;
        }
        self.key ^= zobrist::KEYS.black_to_move;
        if us == Color::Black {
            self.fullmove = self.fullmove.saturating_add(1);
        }
        self.side = them;

        // Check info for the new side to move, incrementally: a knight or pawn can only give
        // check from `to`, a king never, and sliders are found by the pin scan below.
        let king = self.king(them);
        self.checkers = match arrived {
            PieceType::Knight => attacks::knight(king) & to.bb(),
            PieceType::Pawn => attacks::pawn(them, king) & to.bb(),
            _ => Bitboard::EMPTY,
        };
        self.update_sliders(king);
    }

    /// Promotions, en passant and castling: the pieces and the halfmove clock reset (`play`
    /// does the rest). Returns the kind of the piece that lands on `to`.
    #[inline]
    fn play_special(&mut self, mv: Move) -> PieceType {
        let us = self.side;
        let them = !us;
        let (from, to) = (mv.from(), mv.to());
        match mv.kind() {
            MoveKind::Normal => unreachable!("play handles normal moves"),
            MoveKind::Promotion => {
                if self.colors[them.index()].has(to) {
                    self.remove(them, self.kind_on(to), to);
                }
                self.remove(us, PieceType::Pawn, from);
                let promoted = mv.promotion_piece().expect("a promotion names its piece");
                self.add(us, promoted, to);
                self.halfmove = 0;
                promoted
            }
            MoveKind::EnPassant => {
                let captured_sq = Square::from_file_rank(to.file(), from.rank());
                self.remove(them, PieceType::Pawn, captured_sq);
                self.shift(us, PieceType::Pawn, from, to);
                self.halfmove = 0;
                PieceType::Pawn
            }
            MoveKind::Castle => {
                let rank = from.rank();
                let (rook_from, rook_to) = if to.file() == 6 { (7, 5) } else { (0, 3) };
                self.shift(us, PieceType::King, from, to);
                self.shift(
                    us,
                    PieceType::Rook,
                    Square::from_file_rank(rook_from, rank),
                    Square::from_file_rank(rook_to, rank),
                );
                PieceType::King
            }
        }
    }

    /// The key after `play_null`: the side to move flips and an en-passant square lapses.
    #[inline(always)]
    pub fn key_after_null(&self) -> u64 {
        let ep = self
            .en_passant
            .map_or(0, |ep| zobrist::KEYS.en_passant_file[ep.file() as usize]);
        self.key ^ zobrist::KEYS.black_to_move ^ ep
    }

    /// Passes the move to the opponent (null-move pruning). Not legal when in check.
    pub fn play_null(&mut self) {
        debug_assert!(!self.in_check());
        if let Some(ep) = self.en_passant.take() {
            self.key ^= zobrist::KEYS.en_passant_file[ep.file() as usize];
        }
        self.halfmove = self.halfmove.saturating_add(1);
        self.key ^= zobrist::KEYS.black_to_move;
        self.side = !self.side;
        self.update_check_info();
    }

    /// Recomputes checkers and pins of the side to move from scratch.
    fn update_check_info(&mut self) {
        let us = self.side;
        let king = self.king(us);
        let non_sliders = self.pieces(PieceType::Knight) | self.pieces(PieceType::Pawn);
        self.checkers = self.attackers_to(king, self.occupied()) & self.color(!us) & non_sliders;
        self.update_sliders(king);
    }

    /// Adds enemy sliders checking `king` (the side to move's) to `checkers` and sets `pinned`.
    #[inline(always)]
    fn update_sliders(&mut self, king: Square) {
        let us = self.side;
        let occupied = self.occupied();
        let queens = self.pieces(PieceType::Queen);
        let snipers = ((attacks::rook_rays(king) & (self.pieces(PieceType::Rook) | queens))
            | (attacks::bishop_rays(king) & (self.pieces(PieceType::Bishop) | queens)))
            & self.color(!us);
        let mut pinned = Bitboard::EMPTY;
        let mut checkers = self.checkers;
        for sniper in snipers {
            // `between` includes the sniper itself.
            let blockers = (attacks::between(king, sniper) & occupied) ^ sniper.bb();
            if blockers.is_empty() {
                checkers |= sniper.bb();
            } else if !blockers.more_than_one() {
                pinned |= blockers;
            }
        }
        self.checkers = checkers;
        self.pinned = pinned & self.color(us);
    }

    /// The position with colours swapped and the board mirrored vertically: evaluation of it
    /// must be the negation of the original's (tested as eval symmetry).
    pub fn mirrored(&self) -> Board {
        let mut b = Board::empty();
        for sq in Square::all() {
            if let Some(p) = self.piece_on(sq) {
                b.put(Piece::new(!p.color(), p.kind()), sq.flip());
            }
        }
        b.side = !self.side;
        let c = self.castling;
        b.castling = (c & 3) << 2 | (c >> 2);
        b.en_passant = self.en_passant.map(Square::flip);
        b.halfmove = self.halfmove;
        b.fullmove = self.fullmove;
        b.key = b.compute_key();
        b.update_check_info();
        b
    }

    fn compute_key(&self) -> u64 {
        let mut key = 0;
        for sq in Square::all() {
            if let Some(p) = self.piece_on(sq) {
                key ^= zobrist::piece(p, sq);
            }
        }
        key ^= zobrist::KEYS.castling[self.castling as usize];
        if let Some(ep) = self.en_passant {
            key ^= zobrist::KEYS.en_passant_file[ep.file() as usize];
        }
        if self.side == Color::Black {
            key ^= zobrist::KEYS.black_to_move;
        }
        key
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Board({})", self.to_fen())
    }
}
