//! Evaluation: colour symmetry, tier exits on hand-made positions, drawish scaling.

use squall::counters::Counters;
use squall::eval::{margins, Evaluator};
use squall::tier::{SearchKind, Tier};
use squall::Board;

const POSITIONS: &[&str] = &[
    Board::STARTPOS,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - - 0 1",
    "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1",
    "2r3k1/pp3ppp/8/3B4/8/8/PP3PPP/4R1K1 w - - 0 1",
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "8/5pk1/6p1/8/8/6P1/5PK1/8 w - - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1",
    "7k/8/8/8/8/8/8/KQ6 w - - 0 1",
];

#[test]
fn mirrored_position_scores_the_same_for_the_mirrored_side() {
    let mut eval = Evaluator::new();
    for fen in POSITIONS {
        let board = Board::from_fen(fen).unwrap();
        let mirrored = board.mirrored();
        // The mirrored position has the other side to move, so the side-to-move score matches.
        assert_eq!(
            eval.full(&board),
            eval.full(&mirrored),
            "{fen} vs {}",
            mirrored.to_fen()
        );
        let a = eval.breakdown(&board);
        let b = eval.breakdown(&mirrored);
        assert_eq!(a.lazy, [b.lazy[1], b.lazy[0]], "{fen}");
        assert_eq!(a.king, [b.king[1], b.king[0]], "{fen}");
        assert_eq!(a.rest, [b.rest[1], b.rest[0]], "{fen}");
    }
}

#[test]
fn wide_window_runs_the_full_tier() {
    let mut eval = Evaluator::new();
    let mut counters = Counters::default();
    for fen in POSITIONS {
        let board = Board::from_fen(fen).unwrap();
        let e = eval.evaluate(&board, -30000, 30000, SearchKind::Main, &mut counters);
        assert_eq!(e.tier, Tier::Full, "{fen}");
        assert_eq!(e.score, eval.full(&board), "{fen}");
    }
    assert_eq!(counters.exits, [0, 0, POSITIONS.len() as u64]);
}

#[test]
fn a_queen_up_fails_high_in_the_super_lazy_tier() {
    // White is a queen up; a window around zero is far below the material score.
    let board =
        Board::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
    let mut counters = Counters::default();
    let e = Evaluator::new().evaluate(&board, -10, 10, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::SuperLazy);
    assert!(e.score > 900);
    assert_eq!(
        e.positional,
        margins::super_lazy_positional(margins::Pair::of(&board))
    );
    assert_eq!(counters.exits, [1, 0, 0]);

    // From black's side the same material fails low.
    let black =
        Board::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1").unwrap();
    let e = Evaluator::new().evaluate(&black, -10, 10, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::SuperLazy);
    assert!(e.score < -900);
}

#[test]
fn margins_decide_the_exit_tier() {
    // Equal material: the super-lazy tier (material and placement) exits only when the window
    // is beyond its margin.
    let board =
        Board::from_fen("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
            .unwrap();
    let sl = margins::super_lazy(margins::Pair::of(&board));
    let mut eval = Evaluator::new();
    let mut counters = Counters::default();
    let score = squall::eval::super_lazy_only(&board);
    assert!(score.abs() < 50, "equal material, placement only: {score}");
    let tier = |eval: &mut Evaluator, counters: &mut Counters, alpha, beta| {
        eval.evaluate(&board, alpha, beta, SearchKind::Main, counters)
            .tier
    };
    // Beta just below score - fail_high: super-lazy fail high; exactly at it: no exit.
    let beta = score - sl.fail_high;
    assert_eq!(
        tier(&mut eval, &mut counters, -30000, beta - 1),
        Tier::SuperLazy
    );
    assert_ne!(
        tier(&mut eval, &mut counters, -30000, beta),
        Tier::SuperLazy
    );
    // Alpha just above score + fail_low: super-lazy fail low; exactly at it: no exit.
    let alpha = score + sl.fail_low;
    assert_eq!(
        tier(&mut eval, &mut counters, alpha + 1, 30000),
        Tier::SuperLazy
    );
    assert_ne!(
        tier(&mut eval, &mut counters, alpha, 30000),
        Tier::SuperLazy
    );

    // The lazy tier's own boundaries, where the super-lazy tier stands aside (black has no
    // pieces): its score is the lazy score, its margins the lazy tables'.
    let race = Board::from_fen("4k3/pp3ppp/8/8/8/8/PPP2PPP/3RK3 w - - 0 1").unwrap();
    let lazy_score = eval.lazy_only(&race);
    let lazy = margins::lazy(margins::Pair::of(&race));
    let beta = lazy_score - lazy.fail_high;
    let e = eval.evaluate(&race, -30000, beta - 1, SearchKind::Main, &mut counters);
    assert_eq!((e.tier, e.score), (Tier::Lazy, lazy_score));
    let e = eval.evaluate(&race, -30000, beta, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::Full);
    let alpha = lazy_score + lazy.fail_low;
    let e = eval.evaluate(&race, alpha + 1, 30000, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::Lazy);
    let e = eval.evaluate(&race, alpha, 30000, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::Full);
}

#[test]
fn cheap_exits_can_be_switched_off() {
    let board =
        Board::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
    let mut eval = Evaluator::new();
    eval.set_cheap_exits(false);
    let e = eval.evaluate(&board, -10, 10, SearchKind::Main, &mut Counters::default());
    assert_eq!(e.tier, Tier::Full);
}

#[test]
fn drawish_material_scales_every_tier() {
    let mut eval = Evaluator::new();
    let mut counters = Counters::default();
    // K+B v K: insufficient material is a dead draw, and a bare king keeps the cheap tiers out.
    let kbk = Board::from_fen("8/8/4k3/8/8/8/3B4/4K3 w - - 0 1").unwrap();
    let e = eval.evaluate(&kbk, -10, 10, SearchKind::Main, &mut counters);
    assert_eq!((e.tier, e.score), (Tier::Full, 0));
    // Opposite-coloured bishops with a pawn more: scaled well below the raw pawn edge.
    let ocb = Board::from_fen("8/5k2/8/3b4/8/2B1P3/5K2/8 w - - 0 1").unwrap();
    let scale = squall::eval::drawish_scale(&ocb);
    assert!(scale < squall::eval::SCALE_NORMAL, "{scale}");
    let full = eval.full(&ocb);
    assert!(full.abs() < 60, "{full}");
    // Far from the window, the super-lazy tier exits on the material scaled the same way,
    // failing high below the window and low above it.
    let material = squall::eval::scaled(squall::eval::super_lazy_only(&ocb), scale);
    assert!(material < squall::eval::super_lazy_only(&ocb));
    for (alpha, beta) in [(-2000, -1999), (1999, 2000)] {
        let e = eval.evaluate(&ocb, alpha, beta, SearchKind::Main, &mut counters);
        assert_eq!(
            (e.tier, e.score),
            (Tier::SuperLazy, material),
            "{alpha} {beta}"
        );
    }
    // Wrong-coloured bishop with a rook pawn and the defending king in the corner.
    let wrong = Board::from_fen("7k/8/6K1/7P/8/8/8/3B4 w - - 0 1").unwrap();
    assert_eq!(eval.full(&wrong), 0);
}

#[test]
fn the_passer_race_is_in_the_lazy_score() {
    let mut eval = Evaluator::new();
    // A pawn ending: the black king on a3 is outside the g-pawn's square, on f6 it catches
    // the pawn. The lazy tier alone sees the difference.
    let runs = Board::from_fen("8/p7/8/8/8/k7/6P1/7K w - - 0 1").unwrap();
    let caught = Board::from_fen("8/p7/5k2/8/8/8/6P1/7K w - - 0 1").unwrap();
    let gap = eval.lazy_only(&runs) - eval.lazy_only(&caught);
    assert!(
        gap >= 400,
        "unstoppable passer worth only {gap} cp to the lazy tier"
    );
    // The full tier adds nothing of its own for the race: full - lazy is the same small
    // residual in both positions.
    let residual = |eval: &mut Evaluator, b: &Board| eval.full(b) - eval.lazy_only(b);
    let (a, b) = (residual(&mut eval, &runs), residual(&mut eval, &caught));
    assert!((a - b).abs() < 60, "full tier residuals {a} vs {b}");
}

#[test]
fn a_side_without_pieces_keeps_the_super_lazy_tier_out() {
    // White has two queens more, black has only pawns: material alone is far above beta, but
    // a pawn race can swing any ending without pieces, so only the lazy tier may exit.
    let board = Board::from_fen("4k3/pppp4/8/8/8/8/8/QQ2K3 w - - 0 1").unwrap();
    assert!(squall::eval::pawn_race_possible(&board));
    let mut counters = Counters::default();
    let e = Evaluator::new().evaluate(&board, -10, 10, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::Lazy, "{e:?}");
    assert_eq!(counters.exits, [0, 1, 0]);
    // Give black a knight and the super-lazy tier decides again.
    let both_armed = Board::from_fen("3nk3/pppp4/8/8/8/8/8/QQ2K3 w - - 0 1").unwrap();
    assert!(!squall::eval::pawn_race_possible(&both_armed));
    let e = Evaluator::new().evaluate(&both_armed, -10, 10, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::SuperLazy, "{e:?}");
}

#[test]
fn mop_up_is_in_the_lazy_score_and_the_lazy_tier_decides_bare_kings() {
    let mut eval = Evaluator::new();
    // K+Q v K: the bare king in the corner, next to the winning king, against one in the centre.
    let cornered = Board::from_fen("7k/8/6K1/8/8/8/8/1Q6 w - - 0 1").unwrap();
    let central = Board::from_fen("8/8/8/4k3/8/8/8/KQ6 w - - 0 1").unwrap();
    let gap = eval.lazy_only(&cornered) - eval.lazy_only(&central);
    assert!(gap >= 100, "mop-up worth only {gap} cp to the lazy tier");
    // Material alone would fail high, but only the lazy tier, which sees the mop-up, exits.
    let mut counters = Counters::default();
    let e = eval.evaluate(&central, -10, 10, SearchKind::Main, &mut counters);
    assert_eq!(e.tier, Tier::Lazy, "{e:?}");
    assert_eq!(e.score, eval.lazy_only(&central));
}

#[test]
fn tier_scores_are_what_each_exit_returns() {
    let mut eval = Evaluator::new();
    let mut counters = Counters::default();
    let mut races = 0;
    for fen in POSITIONS {
        let board = Board::from_fen(fen).unwrap();
        let [super_lazy, lazy, full] = eval.tier_scores(&board);
        let wide = eval.evaluate(&board, -30_000, 30_000, SearchKind::Main, &mut counters);
        assert_eq!((wide.tier, wide.score), (Tier::Full, full), "{fen}");
        assert_eq!(eval.full(&board), full, "{fen}");
        // A window far below every score: the cheapest tier allowed to exit fails high with
        // its own score.
        let low = eval.evaluate(&board, -29_999, -29_998, SearchKind::Main, &mut counters);
        if squall::eval::pawn_race_possible(&board) {
            races += 1;
            assert_eq!((low.tier, low.score), (Tier::Lazy, lazy), "{fen}");
        } else {
            assert_eq!(
                (low.tier, low.score),
                (Tier::SuperLazy, super_lazy),
                "{fen}"
            );
        }
        let high = eval.evaluate(
            &board,
            29_998,
            29_999,
            SearchKind::Quiescence,
            &mut counters,
        );
        assert_eq!(high.tier, low.tier, "{fen}");
    }
    assert!(
        races > 0 && races < POSITIONS.len(),
        "both kinds of position"
    );
}
