//! Search benchmark: a fixed-depth search on a few positions, the searcher cleared before each.
//!
//! Each iteration clears the searcher (transposition table, pawn hash, killers, history), which
//! is not timed, then searches one position to a fixed depth, which is; so every iteration
//! visits exactly the same nodes, counted once up front and reported as
//! `Throughput::Elements(nodes)` (nodes/s). Iterations take tens of milliseconds, so the sample
//! size is small and sampling flat.
//!
//! Run: `cargo bench -p squall-benches --bench search`; flamegraphs of each search with
//! `-- --profile-time 5` (`<target>/criterion/search/<position>/profile/flamegraph.svg`).

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use pprof::criterion::{Output, PProfProfiler};
use squall::search::{Limits, Searcher, Silent};
use squall::Board;

/// Transposition table size in MB (the bench's default, `squall::bench::DEFAULT_HASH_MB`).
const HASH_MB: usize = squall::bench::DEFAULT_HASH_MB;

/// `(name, index in squall::bench::BENCH_POSITIONS, depth)`: an opening, a tactical
/// middlegame, a quiet middlegame and a rook ending. Depths give roughly 20-100 ms per search
/// (one ply deeper takes 2-4 times as long).
const POSITIONS: &[(&str, usize, i32)] = &[
    ("startpos", 0, 8),
    ("kiwipete", 4, 6),
    ("middlegame", 8, 7),
    ("rook_ending", 25, 11),
];

/// Clears `searcher`, then searches `board` to `depth`; returns the nodes visited.
fn search(searcher: &mut Searcher, board: &Board, depth: i32) -> u64 {
    searcher.clear();
    let stop = AtomicBool::new(false);
    searcher
        .search(
            black_box(board),
            &[],
            &Limits::depth(depth),
            &stop,
            &mut Silent,
        )
        .nodes
}

fn bench_search(c: &mut Criterion) {
    let mut searcher = Searcher::new(HASH_MB);
    let mut group = c.benchmark_group("search");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for &(name, index, depth) in POSITIONS {
        let board = Board::from_fen(squall::bench::BENCH_POSITIONS[index])
            .unwrap_or_else(|e| panic!("bench position {index} is invalid: {e:?}"));
        let nodes = search(&mut searcher, &board, depth);
        // Determinism check: the same search twice visits the same nodes.
        assert_eq!(
            nodes,
            search(&mut searcher, &board, depth),
            "{name}: depth {depth} search is not deterministic"
        );
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(BenchmarkId::new(name, depth), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    searcher.clear();
                    let stop = AtomicBool::new(false);
                    let start = Instant::now();
                    black_box(searcher.search(
                        black_box(&board),
                        &[],
                        &Limits::depth(depth),
                        &stop,
                        &mut Silent,
                    ));
                    total += start.elapsed();
                }
                total
            })
        });
    }
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default()
        .with_profiler(PProfProfiler::new(1000, Output::Flamegraph(None)))
        .configure_from_args();
    bench_search(&mut criterion);
    criterion.final_summary();
}
