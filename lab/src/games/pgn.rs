//! PGN export: the seven-tag roster, FEN and SetUp for book positions, TimeControl (or
//! WhiteTimeControl and BlackTimeControl when the engines' limits differ, as cutechess writes
//! them) and Termination, a `{score/depth time}` comment after each move (the fastchess convention), and
//! a closing comment that says why the game ended.

use std::fmt::Write as _;

/// Everything a game's PGN says.
pub(crate) struct PgnGame<'a> {
    pub(crate) event: &'a str,
    pub(crate) site: &'a str,
    /// `YYYY.MM.DD`.
    pub(crate) date: &'a str,
    /// Both games of a pair carry the pair's number, so tools can pool pairs from the PGN.
    pub(crate) round: u64,
    pub(crate) white: &'a str,
    pub(crate) black: &'a str,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub(crate) result: &'a str,
    pub(crate) fen: &'a str,
    pub(crate) time_control: TimeControlTags<'a>,
    /// A PGN Termination value: normal, adjudication, time forfeit, rules infraction,
    /// abandoned.
    pub(crate) termination: &'a str,
    pub(crate) start_fullmove: u32,
    pub(crate) start_black: bool,
    /// SAN with check suffixes, and a comment for each move (may be empty).
    pub(crate) moves: &'a [(String, String)],
    pub(crate) closing_comment: &'a str,
}

/// The PGN TimeControl values of a game (`-` for a limit without a clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeControlTags<'a> {
    /// Both players under one limit: the standard's TimeControl tag.
    Shared(&'a str),
    /// Each player under a limit of its own.
    PerColour { white: &'a str, black: &'a str },
}

const LINE_WIDTH: usize = 79;

pub(crate) fn render(game: &PgnGame) -> String {
    let mut text = String::new();
    let mut tags = vec![
        ("Event", game.event.to_string()),
        ("Site", game.site.to_string()),
        ("Date", game.date.to_string()),
        ("Round", game.round.to_string()),
        ("White", game.white.to_string()),
        ("Black", game.black.to_string()),
        ("Result", game.result.to_string()),
        ("FEN", game.fen.to_string()),
        ("SetUp", "1".to_string()),
    ];
    match game.time_control {
        TimeControlTags::Shared(value) => tags.push(("TimeControl", value.to_string())),
        TimeControlTags::PerColour { white, black } => {
            tags.push(("WhiteTimeControl", white.to_string()));
            tags.push(("BlackTimeControl", black.to_string()));
        }
    }
    tags.push(("Termination", game.termination.to_string()));
    tags.push(("PlyCount", game.moves.len().to_string()));
    for (name, value) in tags {
        let _ = writeln!(text, "[{name} \"{}\"]", escape_tag(&value));
    }
    text.push('\n');
    let mut tokens: Vec<String> = Vec::with_capacity(game.moves.len() * 3);
    let mut number = game.start_fullmove;
    let mut black = game.start_black;
    for (index, (san, comment)) in game.moves.iter().enumerate() {
        if !black {
            tokens.push(format!("{number}."));
        } else if index == 0 {
            tokens.push(format!("{number}..."));
        }
        tokens.push(san.clone());
        if !comment.is_empty() {
            tokens.push(format!("{{{}}}", clean_comment(comment)));
        }
        if black {
            // A book may start at any fullmove number up to u32's largest.
            number = number.saturating_add(1);
        }
        black = !black;
    }
    if !game.closing_comment.is_empty() {
        tokens.push(format!("{{{}}}", clean_comment(game.closing_comment)));
    }
    tokens.push(game.result.to_string());
    let mut line = String::new();
    for token in tokens {
        if !line.is_empty() && line.len() + 1 + token.len() > LINE_WIDTH {
            text.push_str(&line);
            text.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    }
    text.push_str(&line);
    text.push_str("\n\n");
    text
}

fn escape_tag(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// A comment holds no closing brace and no control characters (engine output may have any).
fn clean_comment(comment: &str) -> String {
    comment
        .chars()
        .map(|c| match c {
            '}' => ')',
            '{' => '(',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn black_to_move_starts_with_an_ellipsis_and_comments_are_cleaned() {
        let moves = vec![
            ("e5".to_string(), "+0.10/5 0.1s".to_string()),
            ("Nf3".to_string(), String::new()),
            ("Nc6".to_string(), "a } b".to_string()),
        ];
        let text = render(&PgnGame {
            event: "lab match",
            site: "here",
            date: "2026.11.30",
            round: 3,
            white: "A \"quoted\"",
            black: "B",
            result: "1/2-1/2",
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            time_control: TimeControlTags::Shared("10+0.1"),
            termination: "adjudication",
            start_fullmove: 1,
            start_black: true,
            moves: &moves,
            closing_comment: "draw\nby adjudication",
        });
        assert!(text.contains("[White \"A \\\"quoted\\\"\"]"), "{text}");
        assert!(
            text.contains(
                "1... e5 {+0.10/5 0.1s} 2. Nf3 Nc6 {a ) b} {draw by adjudication} 1/2-1/2"
            ),
            "{text}"
        );
        assert!(text.contains("[Round \"3\"]\n"), "{text}");
        assert!(text.contains("[TimeControl \"10+0.1\"]\n"), "{text}");
    }

    #[test]
    fn players_under_limits_of_their_own_get_a_tag_each() {
        let text = render(&PgnGame {
            event: "lab match",
            site: "here",
            date: "2026.12.01",
            round: 1,
            white: "A",
            black: "B",
            result: "1-0",
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            time_control: TimeControlTags::PerColour {
                white: "-",
                black: "10+0.1",
            },
            termination: "normal",
            start_fullmove: 1,
            start_black: false,
            moves: &[],
            closing_comment: "",
        });
        assert!(
            text.contains("[SetUp \"1\"]\n[WhiteTimeControl \"-\"]\n[BlackTimeControl \"10+0.1\"]\n[Termination"),
            "{text}"
        );
        assert!(!text.contains("[TimeControl"), "{text}");
    }
}
