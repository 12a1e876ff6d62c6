//! Instruction counts (callgrind, through gungraun, formerly iai-callgrind) of a short
//! fixed-depth search. Deterministic: the searcher is created and cleared in the (uncounted)
//! setup, the stop flag never fires and the only limit is depth.
//!
//! Needs valgrind and `cargo install gungraun-runner --version 0.20.0`. Run:
//! `cargo bench -p squall-benches --bench search_instructions`.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;

use gungraun::prelude::*;
use squall::search::{Limits, Searcher, Silent};
use squall::Board;

/// A cleared searcher, one of the bench positions and the depth to search it to.
pub struct Fixture {
    searcher: Searcher,
    board: Board,
    depth: i32,
}

fn fixture(index: usize, depth: i32) -> Fixture {
    let mut searcher = Searcher::new(squall::bench::DEFAULT_HASH_MB);
    searcher.clear();
    Fixture {
        searcher,
        board: Board::from_fen(squall::bench::BENCH_POSITIONS[index]).expect("valid bench FEN"),
        depth,
    }
}

// Runs about 10-20 ms natively per search, 1-2 s under callgrind.
#[library_benchmark]
#[bench::startpos_d7(args = (0, 7), setup = fixture)]
#[bench::kiwipete_d5(args = (4, 5), setup = fixture)]
#[bench::rook_ending_d10(args = (25, 10), setup = fixture)]
fn search(mut fx: Fixture) -> (u64, Fixture) {
    let stop = AtomicBool::new(false);
    let result = fx.searcher.search(
        black_box(&fx.board),
        &[],
        &Limits::depth(fx.depth),
        &stop,
        &mut Silent,
    );
    (black_box(result.nodes), fx)
}

library_benchmark_group!(name = short_search, benchmarks = [search]);

main!(library_benchmark_groups = short_search);
