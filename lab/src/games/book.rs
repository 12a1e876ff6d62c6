//! Opening books: EPD or PGN files (plain or `.gz`), or the built-in book of balanced openings
//! that `lab pool generate --book` made from self-play. Every opening is checked by the
//! referee when the book is read, so a bad line fails before any engine starts.

use std::ops::ControlFlow;
use std::path::Path;

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid};
use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use serde::{Deserialize, Serialize};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

use super::referee::fen_of;
use crate::positions::SplitMix;

/// The shipped book: openings 8 to 12 plies deep whose shallow search is level.
pub(crate) const BUILT_IN: &str = include_str!("../../books/openings.epd");
pub(crate) const BUILT_IN_NAME: &str = "built-in (lab/books/openings.epd)";

/// The openings of a match, in file order.
#[derive(Debug, Clone)]
pub struct Book {
    pub openings: Vec<Opening>,
    pub(crate) identity: BookIdentity,
}

/// A checked starting position and its six-field FEN.
#[derive(Debug, Clone)]
pub struct Opening {
    pub fen: String,
    pub position: Chess,
}

/// What names a book in a results file: two shards agree on a book when these agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BookIdentity {
    pub(crate) source: String,
    /// Git blob id of the openings as read (one FEN a line), so a renamed copy still matches.
    pub(crate) digest: String,
    pub(crate) openings: usize,
    pub(crate) plies: Option<u32>,
}

impl Book {
    pub fn load(path: Option<&Path>, plies: Option<u32>) -> Result<Book> {
        match path {
            None => {
                if plies.is_some() {
                    bail!("--book-plies goes with a PGN --book");
                }
                Book::parse(BUILT_IN_NAME, BUILT_IN, None)
            }
            Some(path) => {
                let text = crate::positions::read_text(path, crate::input::BOOK)?;
                Book::parse(&path.display().to_string(), &text, plies)
            }
        }
    }

    /// The book `text` read from `name`: PGN when the name ends in `.pgn` (or `.pgn.gz`), EPD
    /// otherwise.
    pub fn parse(name: &str, text: &str, plies: Option<u32>) -> Result<Book> {
        let stem = name.trim_end_matches(".gz");
        let openings = if stem.ends_with(".pgn") {
            read_pgn(text, name, plies)?
        } else if plies.is_some() {
            bail!("--book-plies goes with a PGN book; {name} is read as EPD");
        } else {
            read_epd(text, name)?
        };
        let source = name.to_string();
        if openings.is_empty() {
            bail!("book {source} has no openings");
        }
        let fens: Vec<&str> = openings.iter().map(|o: &Opening| o.fen.as_str()).collect();
        let digest = Oid::hash_object(ObjectType::Blob, fens.join("\n").as_bytes())?;
        Ok(Book {
            identity: BookIdentity {
                source,
                digest: digest.to_string(),
                openings: openings.len(),
                plies,
            },
            openings,
        })
    }

    /// The index of the opening of game pair `pair`: the book shuffled by `seed` (see
    /// [`shuffled_order`]), then taken in turn.
    pub(crate) fn opening_index(order: &[usize], pair: u64) -> usize {
        order[(pair % order.len() as u64) as usize]
    }
}

/// A seeded Fisher–Yates shuffle of the book's indices; the same seed gives the same order on
/// every machine, which is what lets shards split one match.
pub(crate) fn shuffled_order(len: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut random = SplitMix::new(seed);
    for i in (1..len).rev() {
        order.swap(i, random.below(i + 1));
    }
    order
}

/// The most characters of a book's line quoted in an error.
const QUOTED_CHARS: usize = 100;

/// One position a line: the four FEN fields, then either the two counters or EPD operations
/// (`hmvc` and `fmvn` set the counters). An error names the line and quotes it as written.
fn read_epd(text: &str, name: &str) -> Result<Vec<Opening>> {
    let mut openings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let checked = position_of_line(line).and_then(opening);
        match checked {
            Ok(opening) => openings.push(opening),
            Err(why) => bail!(
                "{name}:{}: `{}`: {why}",
                index + 1,
                crate::input::excerpt(line, QUOTED_CHARS)
            ),
        }
    }
    Ok(openings)
}

/// The position of a FEN or EPD line, its counters checked: a clock past the fifty-move rule,
/// a fullmove number of 0 or a counter too large for a FEN is refused, never replaced.
fn position_of_line(line: &str) -> Result<Chess, String> {
    let fields: Vec<&str> = line
        .split(';')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    if fields.len() < 4 {
        return Err("expected a FEN or EPD line (board, side, castling, en passant)".into());
    }
    let starts_numeric = |field: &&str| field.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    let (halfmove, fullmove) = if fields.get(4).is_some_and(starts_numeric) {
        // FEN counters.
        let Some(fullmove) = fields.get(5) else {
            return Err("a halfmove clock without a fullmove number".into());
        };
        (Some(fields[4]), Some(*fullmove))
    } else {
        epd_counters(line)
    };
    let halfmove = match halfmove {
        None => 0,
        Some(text) => match text.parse::<u32>() {
            Ok(clock) if clock < 100 => clock,
            Ok(_) => {
                return Err(format!(
                    "halfmove clock {text}: the fifty-move rule has already drawn the game (an \
                     opening's clock is below 100)"
                ))
            }
            Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
                return Err(format!(
                    "halfmove clock {}: out of range (an opening's clock is below 100)",
                    crate::input::excerpt(text, 24)
                ))
            }
            Err(_) => {
                return Err(format!(
                    "halfmove clock `{}` is not a number",
                    crate::input::excerpt(text, 24)
                ))
            }
        },
    };
    let fullmove = match fullmove {
        None => 1,
        Some(text) => match text.parse::<u32>() {
            Ok(number) if number >= 1 => number,
            _ => {
                return Err(format!(
                    "fullmove number `{}` is not a number from 1 to {}",
                    crate::input::excerpt(text, 24),
                    u32::MAX
                ))
            }
        },
    };
    let fen = format!("{} {halfmove} {fullmove}", fields[..4].join(" "));
    let parsed = Fen::from_ascii(fen.as_bytes()).map_err(|error| format!("not a FEN: {error}"))?;
    parsed
        .into_position(CastlingMode::Standard)
        .map_err(|error| format!("not a legal position: {error}"))
}

/// The operands of an EPD line's `hmvc` (halfmove clock) and `fmvn` (fullmove number).
fn epd_counters(line: &str) -> (Option<&str>, Option<&str>) {
    let mut operations = line;
    for _ in 0..4 {
        let rest = operations.trim_start();
        operations = &rest[rest.find(char::is_whitespace).unwrap_or(rest.len())..];
    }
    let (mut halfmove, mut fullmove) = (None, None);
    for operation in operations.split(';') {
        let mut words = operation.split_whitespace();
        match (words.next(), words.next()) {
            (Some("hmvc"), operand) => halfmove = Some(operand.unwrap_or_default()),
            (Some("fmvn"), operand) => fullmove = Some(operand.unwrap_or_default()),
            _ => {}
        }
    }
    (halfmove, fullmove)
}

/// A position as an opening: one where the game can still be played and is not already drawn.
fn opening(position: Chess) -> Result<Opening, String> {
    if position.legal_moves().is_empty() {
        return Err("the opening is already over (no legal move)".into());
    }
    if position.halfmoves() >= 100 {
        return Err(format!(
            "the fifty-move rule has already drawn the opening (halfmove clock {})",
            position.halfmoves()
        ));
    }
    if position.is_insufficient_material() {
        return Err("the opening is already drawn: neither side has the material to mate".into());
    }
    Ok(Opening {
        fen: fen_of(&position),
        position,
    })
}

/// The main line of every game, cut after `plies` plies when given. A game is an opening only
/// when it has moves or a FEN tag: text that holds neither (any file named `.pgn`) is refused.
/// An error names the game and the line it starts on.
fn read_pgn(text: &str, name: &str, plies: Option<u32>) -> Result<Vec<Opening>> {
    let consumed = std::cell::Cell::new(0usize);
    let mut reader = Reader::new(CountedBytes {
        rest: text.as_bytes(),
        consumed: &consumed,
    });
    let mut openings = Vec::new();
    let mut visitor = OpeningVisitor { plies };
    let mut game = 0;
    loop {
        // Where the reader stands: what it took from the text less what it holds unread.
        let offset = consumed.get().saturating_sub(reader.buffer().len());
        let Some(result) = reader
            .read_game(&mut visitor)
            .with_context(|| format!("reading {name}"))?
        else {
            break;
        };
        game += 1;
        let line = starting_line(text, offset);
        let checked = result.and_then(|game| match game {
            PgnGame::Empty => Err("neither moves nor a FEN tag: not a PGN game".into()),
            PgnGame::Position(position) => opening(position),
        });
        match checked {
            Ok(opening) => openings.push(opening),
            Err(why) => bail!("{name}:{line}: game {game}: {why}"),
        }
    }
    Ok(openings)
}

/// The 1-based line of the first character at or after byte `offset` that is not white space
/// (where a game's text starts).
fn starting_line(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let start = offset.min(bytes.len());
    let first = bytes[start..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(bytes.len(), |skipped| start + skipped);
    1 + bytes[..first].iter().filter(|&&b| b == b'\n').count()
}

/// A byte slice read in order, counting what was taken.
struct CountedBytes<'a> {
    rest: &'a [u8],
    consumed: &'a std::cell::Cell<usize>,
}

impl std::io::Read for CountedBytes<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.rest.read(buffer)?;
        self.consumed.set(self.consumed.get() + read);
        Ok(read)
    }
}

struct OpeningVisitor {
    plies: Option<u32>,
}

/// What a game of a PGN book gives.
enum PgnGame {
    /// No FEN tag and no move.
    Empty,
    Position(Chess),
}

struct Movetext {
    position: Result<Chess, String>,
    played: u32,
    /// Whether the movetext held a move, played or past the ply limit.
    any_move: bool,
    from_fen: bool,
}

impl Visitor for OpeningVisitor {
    type Tags = Option<String>;
    type Movetext = Movetext;
    type Output = Result<PgnGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(None)
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        if name == b"FEN" {
            *tags = Some(value.decode_utf8_lossy().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let from_fen = tags.is_some();
        let position = match tags {
            Some(fen) => position_of_line(&fen).map_err(|why| {
                format!(
                    "FEN tag `{}`: {why}",
                    crate::input::excerpt(&fen, QUOTED_CHARS)
                )
            }),
            None => Ok(Chess::default()),
        };
        ControlFlow::Continue(Movetext {
            position,
            played: 0,
            any_move: false,
            from_fen,
        })
    }
    fn san(
        &mut self,
        movetext: &mut Self::Movetext,
        san_plus: SanPlus,
    ) -> ControlFlow<Self::Output> {
        movetext.any_move = true;
        if self.plies.is_some_and(|plies| movetext.played >= plies) {
            return ControlFlow::Continue(());
        }
        if let Ok(position) = &mut movetext.position {
            match san_plus.san.to_move(position) {
                Ok(chess_move) => {
                    position.play_unchecked(chess_move);
                    movetext.played += 1;
                }
                Err(_) => {
                    movetext.position = Err(format!(
                        "move {} is illegal (ply {})",
                        san_plus,
                        movetext.played + 1
                    ));
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(
        &mut self,
        _movetext: &mut Self::Movetext,
    ) -> ControlFlow<Self::Output, Skip> {
        ControlFlow::Continue(Skip(true))
    }

    fn end_game(&mut self, movetext: Self::Movetext) -> Self::Output {
        let position = movetext.position?;
        if !movetext.any_move && !movetext.from_fen {
            return Ok(PgnGame::Empty);
        }
        Ok(PgnGame::Position(position))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_book_is_read_and_checked() {
        let book = Book::load(None, None).unwrap();
        assert!(book.openings.len() >= 500, "{}", book.openings.len());
        let order = shuffled_order(book.openings.len(), 1);
        assert_eq!(order, shuffled_order(book.openings.len(), 1));
        assert_ne!(order, shuffled_order(book.openings.len(), 2));
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..book.openings.len()).collect::<Vec<_>>());
    }

    #[test]
    fn epd_lines_take_counters_or_operations() {
        let text = "\u{feff}rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n\
                    # a comment\n\
                    rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - bm Nf3; id \"x\";\n";
        let openings = read_epd(text, "t.epd").unwrap();
        assert_eq!(openings.len(), 2);
        assert!(
            openings[1].fen.ends_with(" w KQkq - 0 1"),
            "{}",
            openings[1].fen
        );
        let error = read_epd("8/8/8/8 w - -\n", "bad.epd").unwrap_err();
        assert!(format!("{error:#}").starts_with("bad.epd:1"), "{error:#}");
    }

    #[test]
    fn pgn_books_play_the_main_line_to_the_ply_limit() {
        let pgn = "[Event \"a\"]\n\n1. e4 e5 (1... c5) 2. Nf3 Nc6 3. Bb5 *\n\n\
                   [Event \"b\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1\"]\n[SetUp \"1\"]\n\n1. e4 Kd7 *\n";
        let openings = read_pgn(pgn, "b.pgn", Some(4)).unwrap();
        assert_eq!(
            openings[0].fen,
            "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        );
        assert_eq!(openings[1].fen, "8/3k4/8/8/4P3/8/8/4K3 w - - 1 2");
        let error = read_pgn("1. e4 e4 *\n", "c.pgn", None).unwrap_err();
        assert!(error.to_string().contains("game 1"), "{error}");
    }
}
