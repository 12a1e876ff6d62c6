//! FEN parsing and printing. A bad FEN is a `FenError` naming the field and the reason.

use super::{castle, Board, MAX_MOVE_COUNTER};
use crate::attacks;
use crate::types::{Bitboard, Color, Piece, PieceType, Square};
use std::fmt;

/// The FEN field an error was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenField {
    /// The number of fields, or the position as a whole (kings, checks).
    Whole,
    Placement,
    SideToMove,
    Castling,
    EnPassant,
    HalfmoveClock,
    FullmoveNumber,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenError {
    pub field: FenField,
    pub reason: String,
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = match self.field {
            FenField::Whole => "position",
            FenField::Placement => "piece placement",
            FenField::SideToMove => "side to move",
            FenField::Castling => "castling field",
            FenField::EnPassant => "en-passant field",
            FenField::HalfmoveClock => "halfmove clock",
            FenField::FullmoveNumber => "fullmove number",
        };
        write!(f, "invalid FEN: {field}: {}", self.reason)
    }
}

impl std::error::Error for FenError {}

fn err<T>(field: FenField, reason: impl Into<String>) -> Result<T, FenError> {
    Err(FenError {
        field,
        reason: reason.into(),
    })
}

impl Board {
    /// Parses a FEN. The halfmove and fullmove fields may be omitted (EPD style) and default to
    /// `0 1`; they are plain decimal numbers up to `MAX_MOVE_COUNTER`.
    ///
    /// Positions no game can reach are refused, as python-chess's `Board.status()` does: a side
    /// with more than 16 pieces or 8 pawns, or with more promoted pieces than missing pawns. A
    /// reachable position has at most 218 legal moves, well within `movegen::MAX_MOVES`.
    pub fn from_fen(fen: &str) -> Result<Board, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.len() != 4 && fields.len() != 6 {
            return err(
                FenField::Whole,
                format!("expected 6 fields (or 4), found {}", fields.len()),
            );
        }
        let mut board = Board::empty();
        parse_placement(&mut board, fields[0])?;
        board.side = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return err(FenField::SideToMove, format!("`{other}` is not `w` or `b`")),
        };
        board.castling = parse_castling(&board, fields[2])?;
        board.en_passant = parse_en_passant(&board, fields[3])?;
        if fields.len() == 6 {
            board.halfmove = parse_counter(fields[4], FenField::HalfmoveClock, 0)?;
            board.fullmove = parse_counter(fields[5], FenField::FullmoveNumber, 1)?;
        }
        validate_kings(&board)?;
        validate_material(&board)?;
        board.key = board.compute_key();
        board.update_check_info();
        if board.checkers().count() > 2 {
            return err(
                FenField::Whole,
                "the side to move is in check by more than two pieces",
            );
        }
        Ok(board)
    }

    pub fn to_fen(&self) -> String {
        let mut out = String::with_capacity(90);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.piece_on(Square::from_file_rank(file, rank)) {
                    Some(p) => {
                        if empty > 0 {
                            out.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        out.push(p.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out.push_str(if self.side == Color::White {
            " w "
        } else {
            " b "
        });
        if self.castling == 0 {
            out.push('-');
        }
        for (bit, c) in [
            (castle::WHITE_KING, 'K'),
            (castle::WHITE_QUEEN, 'Q'),
            (castle::BLACK_KING, 'k'),
            (castle::BLACK_QUEEN, 'q'),
        ] {
            if self.castling & bit != 0 {
                out.push(c);
            }
        }
        match self.en_passant {
            Some(sq) => out.push_str(&format!(" {sq}")),
            None => out.push_str(" -"),
        }
        out.push_str(&format!(" {} {}", self.halfmove, self.fullmove));
        out
    }
}

fn parse_placement(board: &mut Board, text: &str) -> Result<(), FenError> {
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return err(
            FenField::Placement,
            format!("expected 8 ranks, found {}", ranks.len()),
        );
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        // The rank's width first, counted wide: a long run of digits must not wrap around.
        let mut squares = 0usize;
        for c in rank_text.chars() {
            let width = match c.to_digit(10).filter(|d| (1..=8).contains(d)) {
                Some(d) => d as usize,
                None if PieceType::from_char(c).is_some() => 1,
                None => {
                    return err(
                        FenField::Placement,
                        format!("unexpected character `{c}` in rank {}", rank + 1),
                    )
                }
            };
            squares = squares.saturating_add(width);
        }
        if squares != 8 {
            let bound = if squares > 8 { "more than" } else { "not" };
            return err(
                FenField::Placement,
                format!("rank {} has {squares} squares, {bound} 8", rank + 1),
            );
        }
        let mut file = 0u8;
        for c in rank_text.chars() {
            if let Some(d) = c.to_digit(10) {
                file += d as u8;
                continue;
            }
            let kind = PieceType::from_char(c).expect("checked above");
            let color = if c.is_ascii_uppercase() {
                Color::White
            } else {
                Color::Black
            };
            if kind == PieceType::Pawn && (rank == 0 || rank == 7) {
                return err(FenField::Placement, format!("pawn on rank {}", rank + 1));
            }
            board.put(Piece::new(color, kind), Square::from_file_rank(file, rank));
            file += 1;
        }
    }
    Ok(())
}

/// A halfmove clock or fullmove number: decimal digits only (no sign), `min..=MAX_MOVE_COUNTER`.
fn parse_counter(text: &str, field: FenField, min: u16) -> Result<u16, FenError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        let why = if text.starts_with(['+', '-']) {
            "is not a plain number (digits only, no sign)"
        } else {
            "is not a number"
        };
        return err(field, format!("`{text}` {why}"));
    }
    match text.parse::<u16>() {
        Ok(n) if n >= min => Ok(n),
        Ok(_) => err(field, format!("`{text}` is not a positive number")),
        // Only digits: the one way to fail is a value past u16.
        Err(_) => err(
            field,
            format!("`{text}` is out of range ({min}..={MAX_MOVE_COUNTER})"),
        ),
    }
}

fn parse_castling(board: &Board, text: &str) -> Result<u8, FenError> {
    if text == "-" {
        return Ok(0);
    }
    let mut rights = 0;
    for c in text.chars() {
        let (bit, color, king, rook) = match c {
            'K' => (castle::WHITE_KING, Color::White, Square::E1, Square::H1),
            'Q' => (castle::WHITE_QUEEN, Color::White, Square::E1, Square::A1),
            'k' => (castle::BLACK_KING, Color::Black, Square::E8, Square::H8),
            'q' => (castle::BLACK_QUEEN, Color::Black, Square::E8, Square::A8),
            _ => {
                return err(
                    FenField::Castling,
                    format!("`{text}`: unexpected character `{c}`"),
                )
            }
        };
        if rights & bit != 0 {
            return err(FenField::Castling, format!("`{text}`: `{c}` appears twice"));
        }
        if board.piece_on(king) != Some(Piece::new(color, PieceType::King))
            || board.piece_on(rook) != Some(Piece::new(color, PieceType::Rook))
        {
            return err(
                FenField::Castling,
                format!("`{text}`: right `{c}` needs the king on {king} and a rook on {rook}"),
            );
        }
        rights |= bit;
    }
    Ok(rights)
}

/// Keeps the en-passant square only when a pawn can actually capture there, so two FENs of the
/// same position hash alike.
fn parse_en_passant(board: &Board, text: &str) -> Result<Option<Square>, FenError> {
    if text == "-" {
        return Ok(None);
    }
    let Some(sq) = Square::parse(text) else {
        return err(FenField::EnPassant, format!("`{text}` is not a square"));
    };
    let us = board.side;
    let expected_rank = if us == Color::White { 5 } else { 2 };
    if sq.rank() != expected_rank {
        return err(
            FenField::EnPassant,
            format!("`{text}` is not on rank {}", expected_rank + 1),
        );
    }
    let pushed = if us == Color::White {
        sq.offset(-8)
    } else {
        sq.offset(8)
    };
    let origin = if us == Color::White {
        sq.offset(8)
    } else {
        sq.offset(-8)
    };
    if board.piece_on(pushed) != Some(Piece::new(!us, PieceType::Pawn))
        || board.piece_on(sq).is_some()
        || board.piece_on(origin).is_some()
    {
        return err(
            FenField::EnPassant,
            format!("`{text}`: no pawn can have just passed over it"),
        );
    }
    let capturers = attacks::pawn(!us, sq) & board.colored(us, PieceType::Pawn);
    Ok(capturers.any().then_some(sq))
}

fn validate_kings(board: &Board) -> Result<(), FenError> {
    for color in Color::BOTH {
        let n = board.colored(color, PieceType::King).count();
        if n != 1 {
            let name = if color == Color::White {
                "white"
            } else {
                "black"
            };
            return err(
                FenField::Placement,
                format!("{n} {name} kings, expected exactly 1"),
            );
        }
    }
    let waiting = !board.side;
    if board.is_attacked(board.king(waiting), board.side, board.occupied()) {
        return err(FenField::Whole, "the side not to move is in check");
    }
    Ok(())
}

/// Refuses material no game can reach (python-chess's `Board.status()` checks): a side has at
/// most 16 pieces and 8 pawns, and each piece beyond the starting set (a second queen, a third
/// rook or knight, a second bishop on one square colour) is a promoted pawn.
fn validate_material(board: &Board) -> Result<(), FenError> {
    for color in Color::BOTH {
        let name = if color == Color::White {
            "white"
        } else {
            "black"
        };
        let pieces = board.color(color).count();
        if pieces > 16 {
            return err(
                FenField::Placement,
                format!("{name} has {pieces} pieces, more than 16"),
            );
        }
        let pawns = board.colored(color, PieceType::Pawn).count();
        if pawns > 8 {
            return err(
                FenField::Placement,
                format!("{name} has {pawns} pawns, more than 8"),
            );
        }
        let beyond = |pieces: Bitboard, start: u32| pieces.count().saturating_sub(start);
        let bishops = board.colored(color, PieceType::Bishop);
        let promoted = beyond(board.colored(color, PieceType::Queen), 1)
            + beyond(board.colored(color, PieceType::Rook), 2)
            + beyond(board.colored(color, PieceType::Knight), 2)
            + beyond(bishops & Bitboard::LIGHT_SQUARES, 1)
            + beyond(bishops & Bitboard::DARK_SQUARES, 1);
        let missing = 8 - pawns;
        if promoted > missing {
            return err(
                FenField::Placement,
                format!(
                    "{name} has {promoted} promoted pieces but only {missing} missing pawns \
                     (a second queen, a third rook or knight, or a second bishop on one square \
                     colour is a promoted pawn)"
                ),
            );
        }
    }
    Ok(())
}
