//! Legal move generation. One generator, monomorphised over a `Sink`: the move-list sink
//! expands target sets into moves, the counting sink only pop-counts them (bulk counting for
//! perft). Pins and checks are handled up front, so every emitted move is legal.

use crate::attacks;
use crate::board::{castle, Board};
use crate::types::{Bitboard, Color, Move, PieceType, Square};

/// The move list's capacity. A reachable position has at most 218 legal moves, and every board
/// comes from a FEN the parser accepted (reachable material) or from legal moves played on one.
pub const MAX_MOVES: usize = 256;

/// A fixed-capacity move list: no allocation in search. It never overflows: a push onto a full
/// list is dropped (see `push`).
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl MoveList {
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move::NULL; MAX_MOVES],
            len: 0,
        }
    }
    /// Appends `mv`; onto a full list it is dropped, never written out of bounds (a reachable
    /// position has at most 218 moves, and the FEN parser refuses unreachable material, so this
    /// is a last line of defence). The full case is a cold call, off the hot path.
    #[inline(always)]
    pub fn push(&mut self, mv: Move) {
        if self.len >= MAX_MOVES {
            list_full();
            return;
        }
        self.moves[self.len] = mv;
        self.len += 1;
    }
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }
}

/// Where a push onto a full list goes: nowhere. Cold and out of line, so the generator's loops
/// keep the layout of a plain indexed store.
#[cold]
#[inline(never)]
fn list_full() {}

impl Default for MoveList {
    fn default() -> Self {
        Self::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

/// Receives target sets from the generator.
trait Sink {
    /// Ordinary moves from one square to each target.
    fn moves(&mut self, from: Square, targets: Bitboard);
    /// Promotions (all four pieces) from one square to each target.
    fn promotions(&mut self, from: Square, targets: Bitboard);
    /// Pawn moves found set-wise: each target came from `target - delta`.
    fn pawn_shift(&mut self, targets: Bitboard, delta: i8);
    fn pawn_shift_promotions(&mut self, targets: Bitboard, delta: i8);
    /// En passant and castling.
    fn special(&mut self, mv: Move);
}

const PROMOTION_PIECES: [PieceType; 4] = [
    PieceType::Queen,
    PieceType::Knight,
    PieceType::Rook,
    PieceType::Bishop,
];

impl Sink for MoveList {
    #[inline(always)]
    fn moves(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            self.push(Move::new(from, to));
        }
    }
    #[inline(always)]
    fn promotions(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            for piece in PROMOTION_PIECES {
                self.push(Move::promotion(from, to, piece));
            }
        }
    }
    #[inline(always)]
    fn pawn_shift(&mut self, targets: Bitboard, delta: i8) {
        for to in targets {
            self.push(Move::new(to.offset(-delta), to));
        }
    }
    #[inline(always)]
    fn pawn_shift_promotions(&mut self, targets: Bitboard, delta: i8) {
        for to in targets {
            for piece in PROMOTION_PIECES {
                self.push(Move::promotion(to.offset(-delta), to, piece));
            }
        }
    }
    #[inline(always)]
    fn special(&mut self, mv: Move) {
        self.push(mv);
    }
}

struct Counter(u64);

impl Sink for Counter {
    #[inline(always)]
    fn moves(&mut self, _: Square, targets: Bitboard) {
        self.0 += targets.count() as u64;
    }
    #[inline(always)]
    fn promotions(&mut self, _: Square, targets: Bitboard) {
        self.0 += 4 * targets.count() as u64;
    }
    #[inline(always)]
    fn pawn_shift(&mut self, targets: Bitboard, _: i8) {
        self.0 += targets.count() as u64;
    }
    #[inline(always)]
    fn pawn_shift_promotions(&mut self, targets: Bitboard, _: i8) {
        self.0 += 4 * targets.count() as u64;
    }
    #[inline(always)]
    fn special(&mut self, _: Move) {
        self.0 += 1;
    }
}

/// Hands every legal move to a closure as it is generated.
struct Visitor<F: FnMut(Move)>(F);

impl<F: FnMut(Move)> Sink for Visitor<F> {
    #[inline(always)]
    fn moves(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            (self.0)(Move::new(from, to));
        }
    }
    #[inline(always)]
    fn promotions(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            for piece in PROMOTION_PIECES {
                (self.0)(Move::promotion(from, to, piece));
            }
        }
    }
    #[inline(always)]
    fn pawn_shift(&mut self, targets: Bitboard, delta: i8) {
        for to in targets {
            (self.0)(Move::new(to.offset(-delta), to));
        }
    }
    #[inline(always)]
    fn pawn_shift_promotions(&mut self, targets: Bitboard, delta: i8) {
        for to in targets {
            for piece in PROMOTION_PIECES {
                (self.0)(Move::promotion(to.offset(-delta), to, piece));
            }
        }
    }
    #[inline(always)]
    fn special(&mut self, mv: Move) {
        (self.0)(mv);
    }
}

/// Calls `visit` with every legal move, without building a list (perft).
#[inline(always)]
pub fn for_each_legal(board: &Board, visit: impl FnMut(Move)) {
    generate::<_, true>(board, &mut Visitor(visit));
}

/// Replaces `list`'s contents with every legal move (search reuses per-ply lists).
pub fn fill_legal(board: &Board, list: &mut MoveList) {
    list.len = 0;
    generate::<MoveList, true>(board, list);
}

/// Replaces `list`'s contents with the legal captures and promotions.
pub fn fill_noisy(board: &Board, list: &mut MoveList) {
    list.len = 0;
    generate::<MoveList, false>(board, list);
}

/// Every legal move.
pub fn legal_moves(board: &Board) -> MoveList {
    let mut list = MoveList::new();
    generate::<MoveList, true>(board, &mut list);
    list
}

/// Legal captures and promotions only (quiescence search). Not evasion-complete: callers
/// generate all moves when in check.
pub fn noisy_moves(board: &Board) -> MoveList {
    let mut list = MoveList::new();
    generate::<MoveList, false>(board, &mut list);
    list
}

/// The number of legal moves, without building them (perft bulk counting).
pub fn count_legal_moves(board: &Board) -> u64 {
    let mut counter = Counter(0);
    generate::<Counter, true>(board, &mut counter);
    counter.0
}

/// Finds the legal move written as UCI text (`e2e4`, `e7e8q`, `e1g1`).
pub fn parse_uci_move(board: &Board, text: &str) -> Option<Move> {
    legal_moves(board)
        .iter()
        .copied()
        .find(|mv| mv.to_string() == text)
}

/// Whether `mv` is legal here: only the piece on its from-square is generated. The search
/// plays a transposition-table move before generating the others, and a table entry can come
/// from another position whose key shares the slot's bits.
pub fn is_legal(board: &Board, mv: Move) -> bool {
    let mut found = false;
    generate_from::<_, true>(board, &mut Visitor(|m| found |= m == mv), mv.from().bb());
    found
}

#[inline(always)]
fn generate<S: Sink, const QUIETS: bool>(board: &Board, sink: &mut S) {
    generate_from::<S, QUIETS>(board, sink, Bitboard::FULL);
}

/// The legal moves of the pieces on `movers`.
#[inline(always)]
fn generate_from<S: Sink, const QUIETS: bool>(board: &Board, sink: &mut S, movers: Bitboard) {
    let us = board.side_to_move();
    let them = !us;
    let ours = board.color(us);
    let theirs = board.color(them);
    let occupied = ours | theirs;
    let king = board.king(us);
    let checkers = board.checkers();
    let movable_ours = ours & movers;

    let mut king_targets = attacks::king(king) & !ours;
    if !QUIETS {
        king_targets &= theirs;
    }
    if !movers.has(king) {
        king_targets = Bitboard::EMPTY;
    }
    let without_king = occupied ^ king.bb();
    let mut safe = Bitboard::EMPTY;
    for to in king_targets {
        if !board.is_attacked(to, them, without_king) {
            safe |= to.bb();
        }
    }
    sink.moves(king, safe);
    if checkers.more_than_one() {
        return;
    }

    let mut target = !ours;
    if checkers.any() {
        let checker = checkers.lsb();
        target &= attacks::between(king, checker) | checker.bb();
    }
    let piece_target = if QUIETS { target } else { target & theirs };
    let pinned = board.pinned();
    let movable = if checkers.any() {
        !pinned
    } else {
        Bitboard::FULL
    };

    for from in board.colored(us, PieceType::Knight) & movers & !pinned {
        sink.moves(from, attacks::knight(from) & piece_target);
    }
    let queens = board.pieces(PieceType::Queen);
    for from in (board.pieces(PieceType::Bishop) | queens) & movable_ours & movable {
        let mut to = attacks::bishop(from, occupied) & piece_target;
        if pinned.has(from) {
            to &= attacks::line(king, from);
        }
        sink.moves(from, to);
    }
    for from in (board.pieces(PieceType::Rook) | queens) & movable_ours & movable {
        let mut to = attacks::rook(from, occupied) & piece_target;
        if pinned.has(from) {
            to &= attacks::line(king, from);
        }
        sink.moves(from, to);
    }

    pawn_moves::<S, QUIETS>(board, sink, target, movable & movers);

    if QUIETS && checkers.is_empty() && movers.has(king) {
        castling(board, sink);
    }
    if let Some(ep) = board.en_passant() {
        en_passant(board, sink, ep, movers);
    }
}

#[inline(always)]
fn pawn_moves<S: Sink, const QUIETS: bool>(
    board: &Board,
    sink: &mut S,
    target: Bitboard,
    movable: Bitboard,
) {
    let us = board.side_to_move();
    let white = us == Color::White;
    let theirs = board.color(!us);
    let empty = !board.occupied();
    let pawns = board.colored(us, PieceType::Pawn) & movable;
    let pinned = board.pinned();
    let (up, promotion_rank, third_rank) = if white {
        (8i8, Bitboard::RANK_8, Bitboard::rank(2))
    } else {
        (-8i8, Bitboard::RANK_1, Bitboard::rank(5))
    };

    let free = pawns & !pinned;
    let single = free.forward(white) & empty;
    let push = single & target;
    if QUIETS {
        sink.pawn_shift(push & !promotion_rank, up);
        let double = (single & third_rank).forward(white) & empty & target;
        sink.pawn_shift(double, 2 * up);
    }
    sink.pawn_shift_promotions(push & promotion_rank, up);

    let ahead = free.forward(white);
    let capture_target = theirs & target;
    for (captures, delta) in [
        (ahead.west() & capture_target, up - 1),
        (ahead.east() & capture_target, up + 1),
    ] {
        sink.pawn_shift(captures & !promotion_rank, delta);
        sink.pawn_shift_promotions(captures & promotion_rank, delta);
    }

    let king = board.king(us);
    for from in pawns & pinned {
        let pin_line = attacks::line(king, from);
        let one = from.bb().forward(white) & empty;
        let two = (one & third_rank).forward(white) & empty;
        let captures = attacks::pawn(us, from) & theirs;
        let reach = (one | two | captures) & pin_line & target;
        let promoting = reach & promotion_rank;
        sink.promotions(from, promoting);
        let ordinary = reach & !promotion_rank;
        sink.moves(from, if QUIETS { ordinary } else { ordinary & theirs });
    }
}

#[inline(always)]
fn castling<S: Sink>(board: &Board, sink: &mut S) {
    let us = board.side_to_move();
    let rights = board.castling_rights();
    let (king_side, queen_side, rank) = match us {
        Color::White => (castle::WHITE_KING, castle::WHITE_QUEEN, 0),
        Color::Black => (castle::BLACK_KING, castle::BLACK_QUEEN, 7),
    };
    let occupied = board.occupied();
    let sq = |file| Square::from_file_rank(file, rank);
    let free = |files: &[u8]| files.iter().all(|&f| !occupied.has(sq(f)));
    let safe = |files: &[u8]| {
        files
            .iter()
            .all(|&f| !board.is_attacked(sq(f), !us, occupied))
    };
    if rights & king_side != 0 && free(&[5, 6]) && safe(&[5, 6]) {
        sink.special(Move::castle(sq(4), sq(6)));
    }
    if rights & queen_side != 0 && free(&[1, 2, 3]) && safe(&[3, 2]) {
        sink.special(Move::castle(sq(4), sq(2)));
    }
}

/// En passant is checked by simulation: it removes two pieces from one line, which pin
/// bookkeeping does not capture.
#[inline(always)]
fn en_passant<S: Sink>(board: &Board, sink: &mut S, ep: Square, movers: Bitboard) {
    let us = board.side_to_move();
    let them = !us;
    let king = board.king(us);
    let captured = Square::from_file_rank(ep.file(), if us == Color::White { 4 } else { 3 });
    let queens = board.colored(them, PieceType::Queen);
    for from in attacks::pawn(them, ep) & board.colored(us, PieceType::Pawn) & movers {
        let occupied = board.occupied() ^ from.bb() ^ ep.bb() ^ captured.bb();
        let exposed = (attacks::rook(king, occupied)
            & (board.colored(them, PieceType::Rook) | queens))
            | (attacks::bishop(king, occupied) & (board.colored(them, PieceType::Bishop) | queens))
            | (attacks::knight(king) & board.colored(them, PieceType::Knight))
            | (attacks::pawn(us, king) & board.colored(them, PieceType::Pawn) & !captured.bb());
        if exposed.is_empty() {
            sink.special(Move::en_passant(from, ep));
        }
    }
}
