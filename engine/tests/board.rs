//! Board: the key hints the search prefetches with.

use squall::types::MoveKind;
use squall::{movegen, Board};

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
