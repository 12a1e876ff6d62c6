//! Instruction counts (callgrind, through gungraun, formerly iai-callgrind) of each evaluation
//! tier and of the fixed-cost checks, over the same fixed position set as the `eval` criterion
//! bench. Counts are deterministic: the same binary gives the same `Instructions` every run.
//!
//! Each benchmark evaluates all 37 positions of `squall::bench::default_positions()` once, so
//! instructions per call = reported `Instructions` / 37. The setup (building the boards, the
//! evaluator and warming its pawn hash) is not counted; neither is dropping the fixture, which
//! each benchmark returns.
//!
//! Needs valgrind and the runner at the library's exact version:
//! `cargo install gungraun-runner --version 0.20.0`. Run:
//! `cargo bench -p squall-benches --bench eval_instructions`.

use std::hint::black_box;

use gungraun::prelude::*;
use squall::eval::{self, Evaluator};
use squall::{tier, Board, Color};

/// The bench positions and an evaluator whose pawn hash already holds all of them (as in a
/// search, where the pawn hash mostly hits), or a cleared one (every probe misses).
pub struct Fixture {
    positions: Vec<Board>,
    evaluator: Evaluator,
}

fn positions() -> Fixture {
    Fixture {
        positions: squall::bench::default_positions(),
        evaluator: Evaluator::new(),
    }
}

fn warm_pawn_hash() -> Fixture {
    let mut fx = positions();
    for board in &fx.positions {
        fx.evaluator.full(board);
    }
    fx
}

#[library_benchmark]
#[bench::all_positions(setup = positions)]
fn super_lazy(fx: Fixture) -> (i64, Fixture) {
    let sum = fx
        .positions
        .iter()
        .map(|b| i64::from(eval::super_lazy_only(black_box(b))))
        .sum();
    (black_box(sum), fx)
}

#[library_benchmark]
#[bench::all_positions(setup = warm_pawn_hash)]
fn lazy(mut fx: Fixture) -> (i64, Fixture) {
    let mut sum = 0;
    for b in &fx.positions {
        sum += i64::from(fx.evaluator.lazy_only(black_box(b)));
    }
    (black_box(sum), fx)
}

#[library_benchmark]
#[bench::all_positions(setup = warm_pawn_hash)]
#[bench::cold_pawn_hash(setup = positions)]
fn full(mut fx: Fixture) -> (i64, Fixture) {
    let mut sum = 0;
    for b in &fx.positions {
        sum += i64::from(fx.evaluator.full(black_box(b)));
    }
    (black_box(sum), fx)
}

#[library_benchmark]
#[bench::all_positions(setup = positions)]
fn drawish_scale(fx: Fixture) -> (i64, Fixture) {
    let sum = fx
        .positions
        .iter()
        .map(|b| i64::from(eval::drawish_scale(black_box(b))))
        .sum();
    (black_box(sum), fx)
}

#[library_benchmark]
#[bench::all_positions(setup = positions)]
fn pawn_race_possible(fx: Fixture) -> (i64, Fixture) {
    let sum = fx
        .positions
        .iter()
        .map(|b| i64::from(eval::pawn_race_possible(black_box(b))))
        .sum();
    (black_box(sum), fx)
}

// The danger proxy: both kings' danger classes, the king tables' second index.
#[library_benchmark]
#[bench::all_positions(setup = positions)]
fn danger_class(fx: Fixture) -> (i64, Fixture) {
    let sum = fx
        .positions
        .iter()
        .map(|b| {
            let b = black_box(b);
            (tier::danger_class(b, Color::White) + tier::danger_class(b, Color::Black)) as i64
        })
        .sum();
    (black_box(sum), fx)
}

library_benchmark_group!(name = tiers, benchmarks = [super_lazy, lazy, full]);

library_benchmark_group!(
    name = fixed_cost,
    benchmarks = [drawish_scale, pawn_race_possible]
);

library_benchmark_group!(name = danger_proxy, benchmarks = [danger_class]);

main!(library_benchmark_groups = tiers, fixed_cost, danger_proxy);
