//! Property tests: the FEN parser never panics and round-trips what it accepts, and move
//! generation agrees with perft's invariants on positions reached by random legal play.
//!
//! The case counts are fixed and modest, so the whole file adds well under a second to
//! `cargo test` (the test profile is optimised). On a failure proptest shrinks the input and
//! prints it; `PROPTEST_CASES` overrides the counts for a longer hunt.

use proptest::prelude::*;
use squall::board::MAX_MOVE_COUNTER;
use squall::{movegen, perft, Board, Move};

/// Cases per run for the properties of single strings (microseconds each).
const STRING_CASES: u32 = 5_000;
/// Cases per run for the random games (each plays up to `MAX_PLIES` and checks every move).
const GAME_CASES: u32 = 1_000;
const MAX_PLIES: usize = 300;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Failing inputs are printed; no regression files are written into the source tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text shaped like a FEN, so the parser gets past its first checks: eight ranks of pieces and
/// digits (wrong widths and kings included), then side, castling, en passant and counters drawn
/// from valid and invalid values.
fn fen_like() -> impl Strategy<Value = String> {
    let rank = "[pnbrqkPNBRQK1-9]{0,10}";
    let placement = prop::collection::vec(rank, 6..=9).prop_map(|ranks| ranks.join("/"));
    let side = prop_oneof!["w", "b", "[a-zA-Z-]{0,2}"];
    let castling = prop_oneof!["-", "K?Q?k?q?", "[KQkqx-]{1,5}"];
    let en_passant = prop_oneof!["-", "[a-h][1-8]", "[a-z0-9]{0,3}"];
    let counter = prop_oneof!["[0-9]{1,3}", "[0-9]{5,25}", "[+-]?[0-9]{1,6}", "[^ ]{0,4}"];
    let fields = (
        placement,
        side,
        castling,
        en_passant,
        counter.clone(),
        counter,
        0..=7usize,
    );
    fields.prop_map(|(placement, side, castling, ep, half, full, count)| {
        let all = [placement.as_str(), &side, &castling, &ep, &half, &full, "x"];
        all[..count].join(" ")
    })
}

/// A legal FEN with one character changed: the parser must refuse or accept it cleanly.
fn mutated_fen() -> impl Strategy<Value = String> {
    (random_game(), any::<prop::sample::Index>(), any::<char>()).prop_map(
        |(board, index, replacement)| {
            let mut chars: Vec<char> = board.to_fen().chars().collect();
            let at = index.index(chars.len());
            chars[at] = replacement;
            chars.into_iter().collect()
        },
    )
}

/// Plays random legal moves from the start position: each choice picks one of the legal moves
/// (modulo their number); the game stops early at mate or stalemate.
fn play_random(choices: &[prop::sample::Index]) -> Board {
    let mut board = Board::startpos();
    for choice in choices {
        let moves = movegen::legal_moves(&board);
        if moves.is_empty() {
            break;
        }
        board.play(moves[choice.index(moves.len())]);
    }
    board
}

fn random_game() -> impl Strategy<Value = Board> {
    prop::collection::vec(any::<prop::sample::Index>(), 0..=MAX_PLIES).prop_map(|c| play_random(&c))
}

/// Whether the side that just moved left its own king attacked.
fn mover_in_check(child: &Board) -> bool {
    let mover = !child.side_to_move();
    child.is_attacked(child.king(mover), child.side_to_move(), child.occupied())
}

/// Parses `fen`; whatever it accepts prints a FEN that parses back to the same board.
fn check_round_trip(fen: &str) -> Result<(), TestCaseError> {
    if let Ok(board) = Board::from_fen(fen) {
        let printed = board.to_fen();
        let again = Board::from_fen(&printed)
            .map_err(|e| TestCaseError::fail(format!("{fen} printed as {printed}: {e}")))?;
        prop_assert_eq!(again, board, "{} printed as {}", fen, printed);
        prop_assert_eq!(again.to_fen(), printed);
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(STRING_CASES))]

    #[test]
    fn fen_parser_never_panics_on_any_text(text in any::<String>()) {
        check_round_trip(&text)?;
    }

    #[test]
    fn fen_parser_never_panics_on_fen_like_text(text in fen_like()) {
        check_round_trip(&text)?;
    }

    #[test]
    fn fen_parser_never_panics_on_a_mutated_fen(text in mutated_fen()) {
        check_round_trip(&text)?;
    }

    #[test]
    fn counters_round_trip_or_are_out_of_range(half in any::<u32>(), full in any::<u32>()) {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 w - - {half} {full}");
        let max = u32::from(MAX_MOVE_COUNTER);
        match Board::from_fen(&fen) {
            Ok(board) => {
                prop_assert!(half <= max && (1..=max).contains(&full), "{}", fen);
                prop_assert_eq!(u32::from(board.halfmove_clock()), half);
                prop_assert_eq!(u32::from(board.fullmove_number()), full);
                prop_assert_eq!(board.to_fen(), fen);
            }
            Err(error) => {
                let message = error.to_string();
                let expected = if half > max || full > max {
                    "out of range"
                } else {
                    "not a positive number"
                };
                prop_assert!(message.contains(expected), "{}: {}", fen, message);
            }
        }
    }
}

proptest! {
    #![proptest_config(config(GAME_CASES))]

    #[test]
    fn reached_positions_round_trip_through_fen(board in random_game()) {
        let fen = board.to_fen();
        let parsed = Board::from_fen(&fen)
            .map_err(|e| TestCaseError::fail(format!("reached {fen}, which is refused: {e}")))?;
        // Equal boards: the incremental key, pawn key, material, checkers and pins match the
        // ones computed from scratch.
        prop_assert_eq!(parsed, board, "{}", fen);
        prop_assert_eq!(parsed.to_fen(), fen);
    }

    #[test]
    fn move_generation_agrees_with_perft(board in random_game()) {
        let fen = board.to_fen();
        let moves = movegen::legal_moves(&board);
        prop_assert!(moves.len() <= 218, "{}: {} moves", fen, moves.len());
        prop_assert_eq!(moves.len() as u64, perft::perft(&board, 1), "{}", fen);
        prop_assert_eq!(moves.len() as u64, movegen::count_legal_moves(&board), "{}", fen);
        let mut visited = Vec::new();
        movegen::for_each_legal(&board, |mv| visited.push(mv));
        prop_assert_eq!(&visited[..], &moves[..], "{}", fen);
        let divide = perft::divide(&board, 2);
        prop_assert_eq!(divide.len(), moves.len());
        prop_assert_eq!(
            divide.iter().map(|(_, n)| n).sum::<u64>(),
            perft::perft_no_bulk(&board, 2),
            "{}", fen
        );

        let mut distinct: Vec<Move> = moves.to_vec();
        distinct.sort_by_key(|mv| mv.to_string());
        distinct.dedup();
        prop_assert_eq!(distinct.len(), moves.len(), "{}: a move generated twice", fen);
        let noisy = movegen::noisy_moves(&board);
        for &mv in moves.iter() {
            let mut child = board;
            child.play(mv);
            prop_assert!(!mover_in_check(&child), "{} {} leaves the king in check", fen, mv);
            prop_assert!(movegen::is_legal(&board, mv), "{} {}", fen, mv);
            prop_assert_eq!(movegen::parse_uci_move(&board, &mv.to_string()), Some(mv));
            let (_, subtree) = divide.iter().find(|(m, _)| *m == mv).copied().unwrap();
            prop_assert_eq!(subtree, movegen::count_legal_moves(&child), "{} {}", fen, mv);
        }
        for &mv in noisy.iter() {
            prop_assert!(moves.contains(&mv), "{}: noisy {} is not legal", fen, mv);
        }
    }
}
