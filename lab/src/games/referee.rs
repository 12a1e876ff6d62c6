//! The referee: the rules of chess from shakmaty, independent of any engine under test. It
//! checks every move, keeps the game's SAN and the engines' `position` command, and says when
//! the rules end the game.

use anyhow::Result;
use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::{Zobrist64, ZobristHash};
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

/// How the rules end a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleEnding {
    /// The side that was mated (0 white, 1 black).
    Checkmate {
        loser: usize,
    },
    Stalemate,
    InsufficientMaterial,
    ThreefoldRepetition,
    FiftyMoves,
}

impl RuleEnding {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            RuleEnding::Checkmate { .. } => "checkmate",
            RuleEnding::Stalemate => "stalemate",
            RuleEnding::InsufficientMaterial => "insufficient material",
            RuleEnding::ThreefoldRepetition => "threefold repetition",
            RuleEnding::FiftyMoves => "fifty-move rule",
        }
    }
}

pub(crate) struct Referee {
    position: Chess,
    /// `position fen F moves ...`, grown by one move at a time.
    command: String,
    /// Position keys since the last capture or pawn move, the current one last.
    keys: Vec<Zobrist64>,
    san: Vec<String>,
    start_fullmove: u32,
    start_black: bool,
}

/// A legal starting position, or why it is not.
#[cfg(test)]
pub(crate) fn parse_position(fen: &str) -> Result<Chess> {
    let parsed: Fen = fen
        .trim()
        .parse()
        .map_err(|error| anyhow::anyhow!("`{fen}` is not a FEN: {error}"))?;
    parsed
        .into_position(CastlingMode::Standard)
        .map_err(|error| anyhow::anyhow!("`{fen}` is not a legal position: {error}"))
}

/// The six-field FEN of a position.
pub(crate) fn fen_of(position: &Chess) -> String {
    Fen::from_position(position, EnPassantMode::Legal).to_string()
}

impl Referee {
    pub(crate) fn new(start: &Chess) -> Referee {
        let fen = fen_of(start);
        Referee {
            command: format!("position fen {fen}"),
            keys: vec![start.zobrist_hash(EnPassantMode::Legal)],
            san: Vec::new(),
            start_fullmove: start.fullmoves().get(),
            start_black: start.turn() == Color::Black,
            position: start.clone(),
        }
    }

    /// 0 when white is to move, 1 for black.
    pub(crate) fn side_to_move(&self) -> usize {
        usize::from(self.position.turn() == Color::Black)
    }

    pub(crate) fn full_move_number(&self) -> u32 {
        self.position.fullmoves().get()
    }

    pub(crate) fn plies(&self) -> usize {
        self.san.len()
    }

    pub(crate) fn position_command(&self) -> &str {
        &self.command
    }

    pub(crate) fn fen(&self) -> String {
        fen_of(&self.position)
    }

    pub(crate) fn san_moves(&self) -> &[String] {
        &self.san
    }

    pub(crate) fn start_fullmove(&self) -> u32 {
        self.start_fullmove
    }

    pub(crate) fn start_black(&self) -> bool {
        self.start_black
    }

    /// Whether `side` could still mate with any sequence of moves; a flag fall against a side
    /// that cannot is a draw.
    pub(crate) fn can_mate(&self, side: usize) -> bool {
        let color = if side == 0 {
            Color::White
        } else {
            Color::Black
        };
        !self.position.has_insufficient_material(color)
    }

    /// Checks and plays a move in UCI notation. `Err` says whether it was not a move at all
    /// (garbage) or an illegal one.
    pub(crate) fn play(&mut self, uci: &str) -> Result<(), MoveError> {
        let parsed: UciMove = uci.parse().map_err(|_| MoveError::Malformed)?;
        let chess_move = parsed
            .to_move(&self.position)
            .map_err(|_| MoveError::Illegal)?;
        let irreversible = chess_move.is_zeroing();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.position, chess_move);
        self.san.push(san.to_string());
        if self.san.len() == 1 {
            self.command.push_str(" moves");
        }
        self.command.push(' ');
        self.command
            .push_str(&chess_move.to_uci(CastlingMode::Standard).to_string());
        if irreversible {
            self.keys.clear();
        }
        self.keys
            .push(self.position.zobrist_hash(EnPassantMode::Legal));
        Ok(())
    }

    /// The rule that ends the game now, if any. Mate and stalemate come first: a mate on the
    /// hundredth reversible ply still wins.
    pub(crate) fn ending(&self) -> Option<RuleEnding> {
        if self.position.legal_moves().is_empty() {
            return Some(if self.position.is_check() {
                RuleEnding::Checkmate {
                    loser: self.side_to_move(),
                }
            } else {
                RuleEnding::Stalemate
            });
        }
        if self.position.is_insufficient_material() {
            return Some(RuleEnding::InsufficientMaterial);
        }
        let current = self.keys.last().copied();
        if self
            .keys
            .iter()
            .filter(|&&key| Some(key) == current)
            .count()
            >= 3
        {
            return Some(RuleEnding::ThreefoldRepetition);
        }
        if self.position.halfmoves() >= 100 {
            return Some(RuleEnding::FiftyMoves);
        }
        None
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MoveError {
    Malformed,
    Illegal,
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    fn referee(fen: &str) -> Referee {
        Referee::new(&parse_position(fen).unwrap())
    }

    fn play_all(referee: &mut Referee, moves: &str) {
        for uci in moves.split_whitespace() {
            referee.play(uci).unwrap_or_else(|e| panic!("{uci}: {e:?}"));
        }
    }

    #[test]
    fn moves_are_checked_and_recorded() {
        let mut game = referee(START);
        assert_eq!(game.play("e2e5"), Err(MoveError::Illegal));
        assert_eq!(game.play("zzzz"), Err(MoveError::Malformed));
        assert_eq!(game.play(""), Err(MoveError::Malformed));
        play_all(&mut game, "e2e4 e7e5 g1f3");
        assert_eq!(game.san_moves(), ["e4", "e5", "Nf3"]);
        assert_eq!(
            game.position_command(),
            format!("position fen {START} moves e2e4 e7e5 g1f3")
        );
        assert_eq!(game.side_to_move(), 1);
        assert_eq!(game.ending(), None);
    }

    #[test]
    fn fools_mate_is_checkmate() {
        let mut game = referee(START);
        play_all(&mut game, "f2f3 e7e5 g2g4 d8h4");
        assert_eq!(game.ending(), Some(RuleEnding::Checkmate { loser: 0 }));
        assert_eq!(game.san_moves().last().unwrap(), "Qh4#");
    }

    #[test]
    fn stalemate_and_insufficient_material() {
        let stalemate = referee("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
        assert_eq!(stalemate.ending(), Some(RuleEnding::Stalemate));
        let bare = referee("8/8/4k3/8/8/3NK3/8/8 w - - 0 1");
        assert_eq!(bare.ending(), Some(RuleEnding::InsufficientMaterial));
        assert!(!bare.can_mate(0) && !bare.can_mate(1));
    }

    #[test]
    fn threefold_repetition_counts_the_same_position_three_times() {
        let mut game = referee(START);
        play_all(&mut game, "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1");
        assert_eq!(game.ending(), None, "the start position has occurred twice");
        play_all(&mut game, "f6g8");
        assert_eq!(game.ending(), Some(RuleEnding::ThreefoldRepetition));
    }

    #[test]
    fn fifty_moves_without_capture_or_pawn_move_is_a_draw() {
        let mut game = referee("8/8/4k3/8/8/3RK3/8/8 w - - 98 80");
        play_all(&mut game, "d3d1");
        assert_eq!(game.ending(), None);
        play_all(&mut game, "e6e5");
        assert_eq!(game.ending(), Some(RuleEnding::FiftyMoves));
        // A mate on the hundredth ply wins.
        let mut mate = referee("k7/8/1K6/8/8/8/8/7R w - - 99 80");
        play_all(&mut mate, "h1h8");
        assert_eq!(mate.ending(), Some(RuleEnding::Checkmate { loser: 1 }));
    }

    #[test]
    fn bad_positions_are_refused() {
        assert!(parse_position("not a fen").is_err());
        assert!(
            parse_position("8/8/8/8/8/8/8/8 w - - 0 1").is_err(),
            "no kings"
        );
        assert!(parse_position(START).is_ok());
    }
}
