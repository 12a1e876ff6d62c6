//! Opening books: EPD or PGN files (plain or `.gz`), or the built-in book of balanced openings
//! that `lab pool generate --book` made from self-play. Every opening is checked by the
//! referee when the book is read, so a bad line fails before any engine starts.

use std::io::Cursor;
use std::ops::ControlFlow;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use git2::{ObjectType, Oid};
use pgn_reader::{RawTag, Reader, SanPlus, Skip, Visitor};
use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position};

use super::referee::{fen_of, parse_position};
use crate::pool::SplitMix;

/// The shipped book: openings 8 to 12 plies deep whose shallow search is level.
pub const BUILT_IN: &str = include_str!("../../books/openings.epd");
pub const BUILT_IN_NAME: &str = "built-in (lab/books/openings.epd)";

/// The openings of a match, in file order.
#[derive(Debug, Clone)]
pub struct Book {
    pub openings: Vec<Opening>,
    pub identity: BookIdentity,
}

/// A checked starting position and its six-field FEN.
#[derive(Debug, Clone)]
pub struct Opening {
    pub fen: String,
    pub position: Chess,
}

/// What names a book in a results file: two shards agree on a book when these agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookIdentity {
    pub source: String,
    /// Git blob id of the openings as read (one FEN a line), so a renamed copy still matches.
    pub digest: String,
    pub openings: usize,
    pub plies: Option<u32>,
}

impl Book {
    pub fn load(path: Option<&Path>, plies: Option<u32>) -> Result<Book> {
        let (source, openings) = match path {
            None => {
                if plies.is_some() {
                    bail!("--book-plies goes with a PGN --book");
                }
                (
                    BUILT_IN_NAME.to_string(),
                    read_epd(BUILT_IN, BUILT_IN_NAME)?,
                )
            }
            Some(path) => {
                let text = crate::pool::read_text(path, "book")?;
                let name = path.display().to_string();
                let stem = name.trim_end_matches(".gz");
                if stem.ends_with(".pgn") {
                    (name.clone(), read_pgn(&text, &name, plies)?)
                } else if plies.is_some() {
                    bail!("--book-plies goes with a PGN book; {name} is read as EPD");
                } else {
                    (name.clone(), read_epd(&text, &name)?)
                }
            }
        };
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
    pub fn opening_index(order: &[usize], pair: u64) -> usize {
        order[(pair % order.len() as u64) as usize]
    }
}

/// A seeded Fisher–Yates shuffle of the book's indices; the same seed gives the same order on
/// every machine, which is what lets shards split one match.
pub fn shuffled_order(len: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    let mut random = SplitMix::new(seed);
    for i in (1..len).rev() {
        order.swap(i, random.below(i + 1));
    }
    order
}

/// One position a line: the four FEN fields, then either the two counters or EPD operations.
fn read_epd(text: &str, name: &str) -> Result<Vec<Opening>> {
    let mut openings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line
            .split(';')
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        if fields.len() < 4 {
            bail!(
                "{name}:{}: expected a FEN or EPD line, got `{line}`",
                index + 1
            );
        }
        let counters: Vec<&str> = fields[4..]
            .iter()
            .take(2)
            .copied()
            .take_while(|field| field.parse::<u32>().is_ok())
            .collect();
        let fen = match counters.as_slice() {
            [halfmove, fullmove] => format!("{} {halfmove} {fullmove}", fields[..4].join(" ")),
            _ => format!("{} 0 1", fields[..4].join(" ")),
        };
        let position = parse_position(&fen).with_context(|| format!("{name}:{}", index + 1))?;
        openings.push(opening(position).with_context(|| format!("{name}:{}", index + 1))?);
    }
    Ok(openings)
}

fn opening(position: Chess) -> Result<Opening> {
    if position.legal_moves().is_empty() {
        bail!("the opening is already over (no legal move)");
    }
    Ok(Opening {
        fen: fen_of(&position),
        position,
    })
}

/// The main line of every game, cut after `plies` plies when given.
fn read_pgn(text: &str, name: &str, plies: Option<u32>) -> Result<Vec<Opening>> {
    let mut reader = Reader::new(Cursor::new(text.as_bytes()));
    let mut openings = Vec::new();
    let mut visitor = OpeningVisitor { plies };
    let mut game = 0;
    while let Some(result) = reader
        .read_game(&mut visitor)
        .with_context(|| format!("reading {name}"))?
    {
        game += 1;
        let position = result.map_err(|error| anyhow!("{name}: game {game}: {error}"))?;
        openings.push(opening(position).with_context(|| format!("{name}: game {game}"))?);
    }
    Ok(openings)
}

struct OpeningVisitor {
    plies: Option<u32>,
}

struct Movetext {
    position: Result<Chess, String>,
    played: u32,
}

impl Visitor for OpeningVisitor {
    type Tags = Option<String>;
    type Movetext = Movetext;
    type Output = Result<Chess, String>;

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
        let position = match tags {
            Some(fen) => parse_position(&fen).map_err(|error| error.to_string()),
            None => Ok(Chess::default()),
        };
        ControlFlow::Continue(Movetext {
            position,
            played: 0,
        })
    }

    fn san(
        &mut self,
        movetext: &mut Self::Movetext,
        san_plus: SanPlus,
    ) -> ControlFlow<Self::Output> {
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
        movetext.position
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
