//! Move-generation benchmark: perft on the standard positions, squall against cozy-chess.
//!
//! For every (position, mode) pair, both engines run perft at the same depth in the same
//! criterion group, so criterion's report shows them side by side in nodes/s
//! (`Throughput::Elements(nodes)`). Two modes:
//!
//! * `bulk`: the last ply counts legal moves without playing them (generation speed);
//! * `no_bulk`: every leaf move is played (generation plus make-move).
//!
//! Before anything is timed, both engines' node counts are checked against each other and
//! against the published reference counts; a mismatch panics, so a bench that computes
//! wrong numbers fails loudly instead of reporting a fast wrong answer.
//!
//! After criterion's groups, a short extra pass prints the speed ratio squall/cozy for
//! each pair (see [`print_ratios`] for why this is measured separately).
//!
//! Run: `cargo bench -p squall-benches --bench movegen` (a criterion filter may follow `--`;
//! the ratio pass honours the same substring filter).

mod criterion_files;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use criterion_files::criterion_median_ns;

/// A test position with the depths benchmarked in each mode and the reference node counts.
struct Position {
    name: &'static str,
    fen: &'static str,
    /// Depth and expected nodes for perft with bulk counting.
    bulk: (u32, u64),
    /// Depth and expected nodes for perft playing every leaf move.
    no_bulk: (u32, u64),
}

/// The standard perft positions (chessprogramming.org "Perft Results"). Depths are chosen
/// so one iteration takes roughly 10–100 ms for both engines (measured on a 2-core Xeon at
/// 30–60 M nodes/s without bulk counting, 250–600 M nodes/s with it). Where one more ply
/// would jump past 200 ms, the shallower depth was kept: kiwipete, pos5 and pos6 bulk run
/// at 4–8 ms per iteration, start position, kiwipete and pos6 no_bulk at 110–140 ms.
const POSITIONS: &[Position] = &[
    Position {
        name: "startpos",
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        bulk: (5, 4_865_609),
        no_bulk: (5, 4_865_609),
    },
    Position {
        name: "kiwipete",
        fen: "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        bulk: (4, 4_085_603),
        no_bulk: (4, 4_085_603),
    },
    Position {
        name: "pos3",
        fen: "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        bulk: (6, 11_030_083),
        no_bulk: (5, 674_624),
    },
    Position {
        name: "pos4",
        fen: "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        bulk: (5, 15_833_292),
        no_bulk: (4, 422_333),
    },
    Position {
        name: "pos5",
        fen: "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        bulk: (4, 2_103_487),
        no_bulk: (4, 2_103_487),
    },
    Position {
        name: "pos6",
        fen: "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        bulk: (4, 3_894_594),
        no_bulk: (4, 3_894_594),
    },
];

#[derive(Clone, Copy)]
enum Mode {
    Bulk,
    NoBulk,
}

impl Mode {
    const ALL: [Mode; 2] = [Mode::Bulk, Mode::NoBulk];

    fn name(self) -> &'static str {
        match self {
            Mode::Bulk => "bulk",
            Mode::NoBulk => "no_bulk",
        }
    }

    fn depth_and_nodes(self, pos: &Position) -> (u32, u64) {
        match self {
            Mode::Bulk => pos.bulk,
            Mode::NoBulk => pos.no_bulk,
        }
    }
}

/// cozy-chess perft with bulk counting: at depth 1, sum the sizes of the piece-move groups.
fn cozy_perft(board: &cozy_chess::Board, depth: u32) -> u64 {
    let mut nodes = 0;
    match depth {
        0 => return 1,
        1 => {
            board.generate_moves(|moves| {
                nodes += moves.len() as u64;
                false
            });
        }
        _ => {
            board.generate_moves(|moves| {
                for mv in moves {
                    let mut child = board.clone();
                    child.play_unchecked(mv);
                    nodes += cozy_perft(&child, depth - 1);
                }
                false
            });
        }
    }
    nodes
}

/// cozy-chess perft that plays every move down to depth 0.
fn cozy_perft_no_bulk(board: &cozy_chess::Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    board.generate_moves(|moves| {
        for mv in moves {
            let mut child = board.clone();
            child.play_unchecked(mv);
            nodes += cozy_perft_no_bulk(&child, depth - 1);
        }
        false
    });
    nodes
}

/// Both engines' boards for one position.
struct Boards {
    squall: squall::Board,
    cozy: cozy_chess::Board,
}

impl Boards {
    fn new(pos: &Position) -> Self {
        let squall = squall::Board::from_fen(pos.fen)
            .unwrap_or_else(|e| panic!("squall rejects {} FEN: {e:?}", pos.name));
        let cozy = cozy_chess::Board::from_fen(pos.fen, false)
            .unwrap_or_else(|e| panic!("cozy-chess rejects {} FEN: {e:?}", pos.name));
        Boards { squall, cozy }
    }

    fn squall(&self, mode: Mode, depth: u32) -> u64 {
        let board = black_box(&self.squall);
        match mode {
            Mode::Bulk => squall::perft::perft(board, black_box(depth)),
            Mode::NoBulk => squall::perft::perft_no_bulk(board, black_box(depth)),
        }
    }

    fn cozy(&self, mode: Mode, depth: u32) -> u64 {
        let board = black_box(&self.cozy);
        match mode {
            Mode::Bulk => cozy_perft(board, black_box(depth)),
            Mode::NoBulk => cozy_perft_no_bulk(board, black_box(depth)),
        }
    }
}

/// Runs every (position, mode) pair once on both engines and panics on any disagreement,
/// between the engines or with the reference count.
fn verify_node_counts() {
    for pos in POSITIONS {
        let boards = Boards::new(pos);
        for mode in Mode::ALL {
            let (depth, expected) = mode.depth_and_nodes(pos);
            let squall_nodes = boards.squall(mode, depth);
            let cozy_nodes = boards.cozy(mode, depth);
            assert_eq!(
                squall_nodes,
                cozy_nodes,
                "{} {} depth {depth}: squall counts {squall_nodes} nodes, cozy-chess {cozy_nodes}",
                pos.name,
                mode.name()
            );
            assert_eq!(
                squall_nodes,
                expected,
                "{} {} depth {depth}: both engines count {squall_nodes} nodes, reference is {expected}",
                pos.name,
                mode.name()
            );
        }
    }
}

/// Group id for a (position, mode) pair, e.g. `perft_bulk/kiwipete`.
fn group_name(pos: &Position, mode: Mode) -> String {
    format!("perft_{}/{}", mode.name(), pos.name)
}

fn bench_movegen(c: &mut Criterion) {
    for pos in POSITIONS {
        let boards = Boards::new(pos);
        for mode in Mode::ALL {
            let (depth, nodes) = mode.depth_and_nodes(pos);
            let mut group = c.benchmark_group(group_name(pos, mode));
            group
                .throughput(Throughput::Elements(nodes))
                // Iterations take tens of milliseconds: flat sampling (same iteration count
                // in every sample) suits long iterations and keeps the run short.
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_millis(1500));
            group.bench_function(BenchmarkId::new("squall", depth), |b| {
                b.iter(|| boards.squall(mode, depth))
            });
            group.bench_function(BenchmarkId::new("cozy", depth), |b| {
                b.iter(|| boards.cozy(mode, depth))
            });
            group.finish();
        }
    }
}

/// The ratio pass times each engine for about this long per pair...
const RATIO_BUDGET: Duration = Duration::from_millis(400);
/// ...but with at least `MIN_RUNS` and at most `MAX_RUNS` runs per engine.
const MIN_RUNS: usize = 5;
const MAX_RUNS: usize = 61;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Prints `ratio squall/cozy <position> <mode>: R` where R = (nodes/s squall) / (nodes/s cozy)
/// = (time cozy) / (time squall), so R > 1 means squall is faster.
///
/// Criterion does not hand its estimates back to the caller; they only land in
/// `<target>/criterion/<group>/<id>/new/estimates.json`. Two numbers are printed:
///
/// * the main one is an independent measurement in this binary: per pair, each engine is
///   timed `MIN_RUNS..=MAX_RUNS` times (about `RATIO_BUDGET` each), interleaved squall, cozy,
///   squall, cozy, … so both share the same machine noise (other builds on a shared 2-core
///   machine), and the ratio of the medians is reported, which shrugs off the occasional run
///   slowed by a competing process;
/// * for cross-checking, the ratio of criterion's median estimates from this run's
///   estimates.json (`n/a` when the file is missing or older than this process). The two
///   were measured at different moments, so they differ when machine load changed between
///   criterion's groups and this pass; when they disagree, distrust both and rerun.
fn print_ratios(filter: Option<&str>, since: SystemTime) {
    println!();
    println!("Speed ratio squall/cozy (nodes/s squall / nodes/s cozy; > 1 = squall faster):");
    println!("median of interleaved runs; in brackets the same ratio from criterion's medians.");
    for pos in POSITIONS {
        let boards = Boards::new(pos);
        for mode in Mode::ALL {
            let group = group_name(pos, mode);
            if filter.is_some_and(|f| !group.contains(f)) {
                continue;
            }
            let (depth, _) = mode.depth_and_nodes(pos);
            let mut squall_times = Vec::with_capacity(MAX_RUNS);
            let mut cozy_times = Vec::with_capacity(MAX_RUNS);
            let start_pass = Instant::now();
            while squall_times.len() < MAX_RUNS
                && (squall_times.len() < MIN_RUNS || start_pass.elapsed() < 2 * RATIO_BUDGET)
            {
                let start = Instant::now();
                black_box(boards.squall(mode, depth));
                squall_times.push(start.elapsed());
                let start = Instant::now();
                black_box(boards.cozy(mode, depth));
                cozy_times.push(start.elapsed());
            }
            let runs = squall_times.len();
            let (squall_t, cozy_t) = (median(squall_times), median(cozy_times));
            let from_criterion = match (
                criterion_median_ns(&group, &format!("squall/{depth}"), since),
                criterion_median_ns(&group, &format!("cozy/{depth}"), since),
            ) {
                (Some(s), Some(c)) => format!("{:.2}", c / s),
                _ => "n/a".to_string(),
            };
            println!(
                "ratio squall/cozy {} {}: {:.2}   [criterion {from_criterion}; depth {depth}, \
                 {runs} runs, median squall {:.1} ms, cozy {:.1} ms]",
                pos.name,
                mode.name(),
                cozy_t.as_secs_f64() / squall_t.as_secs_f64(),
                squall_t.as_secs_f64() * 1e3,
                cozy_t.as_secs_f64() * 1e3,
            );
        }
    }
}

fn main() {
    let since = SystemTime::now();
    verify_node_counts();

    let mut criterion = Criterion::default().configure_from_args();
    bench_movegen(&mut criterion);
    criterion.final_summary();

    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) criterion only
    // smoke-tests each benchmark once, and the timed ratio pass is skipped as well.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--list") {
        // The first free argument is criterion's filter; apply it to the ratio pass too.
        let filter = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .map(String::as_str);
        print_ratios(filter, since);
    }
}
