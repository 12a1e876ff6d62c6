//! Board: the key hints the search prefetches with, and the move tests it runs without
//! playing (`gives_check`) or generating (`movegen::is_legal`), and the material and placement
//! every move keeps up to date.

use squall::types::{Move, MoveKind, PieceType, Square};
use squall::{movegen, Board};

/// The perft suite's positions and every position one move from them.
fn suite_and_children() -> Vec<Board> {
    let suite = include_str!("data/perftsuite.epd");
    let mut boards = Vec::new();
    for line in suite.lines().filter(|l| !l.trim().is_empty()) {
        let board = Board::from_fen(line.split(';').next().unwrap().trim()).unwrap();
        boards.push(board);
        for &mv in movegen::legal_moves(&board).iter() {
            let mut child = board;
            child.play(mv);
            boards.push(child);
        }
    }
    boards
}

#[test]
fn key_hint_is_exact_for_ordinary_moves_and_captures() {
    let suite = include_str!("data/perftsuite.epd");
    let (mut exact, mut checked) = (0, 0);
    for line in suite.lines().filter(|l| !l.trim().is_empty()) {
        let board = Board::from_fen(line.split(';').next().unwrap().trim()).unwrap();
        for &mv in movegen::legal_moves(&board).iter() {
            let mut child = board;
            child.play(mv);
            let ordinary = mv.kind() == MoveKind::Normal && child.en_passant().is_none();
            checked += 1;
            if board.key_after_hint(mv) == child.key() {
                exact += 1;
            } else {
                assert!(!ordinary, "{} {mv}", board.to_fen());
            }
        }
    }
    // Castling, promotions and en passant are rare even in this suite, which is full of them.
    assert!(exact * 100 >= checked * 90, "{exact} of {checked}");
}

#[test]
fn key_after_null_is_the_key_play_null_leaves() {
    let suite = include_str!("data/perftsuite.epd");
    let mut with_en_passant = 0;
    for line in suite.lines().filter(|l| !l.trim().is_empty()) {
        let board = Board::from_fen(line.split(';').next().unwrap().trim()).unwrap();
        for &mv in movegen::legal_moves(&board).iter() {
            let mut child = board;
            child.play(mv);
            if child.in_check() {
                continue;
            }
            with_en_passant += usize::from(child.en_passant().is_some());
            let mut passed = child;
            passed.play_null();
            assert_eq!(child.key_after_null(), passed.key(), "{}", child.to_fen());
        }
    }
    assert!(with_en_passant > 0, "the suite reaches en-passant squares");
}

#[test]
fn gives_check_matches_playing_the_move() {
    let (mut checks, mut answered) = (0, 0);
    for board in suite_and_children() {
        for &mv in movegen::legal_moves(&board).iter() {
            let mut child = board;
            child.play(mv);
            match board.gives_check(mv) {
                Some(check) => {
                    assert_eq!(check, child.in_check(), "{} {mv}", board.to_fen());
                    answered += 1;
                    checks += usize::from(check);
                }
                None => assert_ne!(mv.kind(), MoveKind::Normal, "{} {mv}", board.to_fen()),
            }
        }
    }
    assert!(
        checks > 1000 && answered > 30_000,
        "{checks} checks of {answered}"
    );
}

#[test]
fn is_legal_accepts_exactly_the_generated_moves() {
    let (mut legal, mut rejected) = (0, 0);
    for board in suite_and_children() {
        let moves = movegen::legal_moves(&board);
        let ours = board.color(board.side_to_move());
        for from in ours {
            for to in Square::all() {
                let mut candidates = vec![
                    Move::new(from, to),
                    Move::castle(from, to),
                    Move::en_passant(from, to),
                ];
                for piece in [
                    PieceType::Queen,
                    PieceType::Rook,
                    PieceType::Bishop,
                    PieceType::Knight,
                ] {
                    candidates.push(Move::promotion(from, to, piece));
                }
                for mv in candidates {
                    let expected = moves.contains(&mv);
                    assert_eq!(
                        movegen::is_legal(&board, mv),
                        expected,
                        "{} {mv}",
                        board.to_fen()
                    );
                    legal += usize::from(expected);
                    rejected += usize::from(!expected);
                }
            }
        }
    }
    assert!(
        legal > 30_000 && rejected > legal,
        "{legal} legal, {rejected} rejected"
    );
}

#[test]
fn move_counters_saturate_instead_of_wrapping() {
    let board = Board::from_fen("4k3/8/8/8/8/8/8/4K3 b - - 65534 65535").unwrap();
    let mut after = board;
    // Black's move ends the full move: the fullmove number stays at its largest.
    after.play(movegen::parse_uci_move(&after, "e8d8").unwrap());
    assert_eq!(after.halfmove_clock(), 65535);
    assert_eq!(after.fullmove_number(), 65535);
    after.play(movegen::parse_uci_move(&after, "e1d1").unwrap());
    assert_eq!(
        after.halfmove_clock(),
        65535,
        "the fifty-move clock is kept"
    );
    after.play_null();
    assert_eq!(after.halfmove_clock(), 65535);
    // What the board prints, it parses again.
    let fen = after.to_fen();
    assert_eq!(fen, "3k4/8/8/8/8/8/8/3K4 w - - 65535 65535");
    assert_eq!(Board::from_fen(&fen).unwrap().to_fen(), fen);
}

#[test]
fn a_full_move_list_drops_moves_instead_of_overflowing() {
    let mut list = movegen::MoveList::new();
    let mv = Move::new(Square::new(12), Square::new(28));
    for _ in 0..movegen::MAX_MOVES + 10 {
        list.push(mv);
    }
    assert_eq!(list.len(), movegen::MAX_MOVES);
    assert!(list.iter().all(|&m| m == mv));
}

#[test]
fn material_and_placement_kept_by_moves_match_a_board_built_from_scratch() {
    let mut checked = 0;
    for board in suite_and_children() {
        for &mv in movegen::legal_moves(&board).iter() {
            let mut child = board;
            child.play(mv);
            let rebuilt = Board::from_fen(&child.to_fen()).unwrap();
            for color in squall::Color::BOTH {
                assert_eq!(
                    child.material(color),
                    rebuilt.material(color),
                    "{} then {mv}",
                    board.to_fen()
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 30_000, "{checked}");
}
