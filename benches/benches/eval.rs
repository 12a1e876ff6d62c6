//! Evaluation benchmark: the cost per call of each evaluation tier, of the fixed-cost checks
//! alone, and of `evaluate` with its cheap tiers on and off.
//!
//! Every iteration evaluates the whole fixed position set (`squall::bench::default_positions()`,
//! 37 positions covering every material bucket), and criterion reports it per call through
//! `Throughput::Elements(positions)`. Groups:
//!
//! * `eval_tier/{super_lazy,lazy,full}`: `eval::super_lazy_only` (material plus the fixed-cost
//!   checks a super-lazy exit pays), `Evaluator::lazy_only` (plus pawn hash and lazy terms) and
//!   `Evaluator::full` (the full tier whatever the window). The pawn hash is warm, as it mostly
//!   is in a search: the first iteration fills it, every later one hits.
//! * `fixed_cost/{drawish_scale,pawn_race_possible}`: the two checks a super-lazy exit pays
//!   (`drawish_scale` at every `evaluate` call, `pawn_race_possible` when the material score
//!   would exit), alone.
//! * `danger_proxy/danger_class`: both kings' danger classes (`tier::danger_class`, the king
//!   tables' second index), the cost a cheap tier pays when the classes' rows differ and a score
//!   clears the floor.
//! * `evaluate_window_mix/{tiers_on,tiers_off}`: `Evaluator::evaluate` over every position with
//!   null windows placed at fixed offsets around its full score (see [`WINDOW_OFFSETS`]), with
//!   the cheap exits enabled and disabled (`set_cheap_exits(false)` = `squall bench --full-eval`).
//!
//! After criterion's groups, a short extra pass prints each tier's cost relative to the full
//! tier and the share of the full evaluation spent in the fixed-cost checks (see
//! [`print_relative_costs`]).
//!
//! Run: `cargo bench -p squall-benches --bench eval` (a criterion filter may follow `--`).
//! Flamegraphs: `cargo bench -p squall-benches --bench eval -- --profile-time 5` writes
//! `<target>/criterion/<group>/<id>/profile/flamegraph.svg` for every benchmark (no timing then).

mod criterion_files;

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput};
use pprof::criterion::{Output, PProfProfiler};
use squall::counters::Counters;
use squall::eval::{self, Evaluator};
use squall::tier::{self, SearchKind, Tier};
use squall::{Board, Color};

use criterion_files::criterion_median_ns;

/// Null windows `(s - 1, s + 1)` with `s` = full score + each offset (centipawns): near the
/// score every tier has to run to the full one, far from it the cheap tiers exit. The mix is
/// symmetric and spans the margins, so all three tiers get a share (printed by the summary).
const WINDOW_OFFSETS: &[i32] = &[
    -800, -400, -200, -100, -50, -20, 0, 20, 50, 100, 200, 400, 800,
];

/// The fixed position set and an evaluator whose pawn hash already holds every position.
struct Fixture {
    positions: Vec<Board>,
    evaluator: Evaluator,
    /// `(position index, alpha, beta)` for the `evaluate` window mix.
    windows: Vec<(usize, i32, i32)>,
}

impl Fixture {
    fn new() -> Self {
        let positions = squall::bench::default_positions();
        let mut evaluator = Evaluator::new();
        let mut windows = Vec::new();
        for (i, board) in positions.iter().enumerate() {
            let full = evaluator.full(board);
            windows.extend(
                WINDOW_OFFSETS
                    .iter()
                    .map(|off| (i, full + off - 1, full + off + 1)),
            );
        }
        Fixture {
            positions,
            evaluator,
            windows,
        }
    }
}

/// What one iteration measures: a pass over the whole position set (or window mix).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    SuperLazy,
    Lazy,
    Full,
    DrawishScale,
    PawnRace,
    DangerClass,
    TiersOn,
    TiersOff,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::SuperLazy,
        Kind::Lazy,
        Kind::Full,
        Kind::DrawishScale,
        Kind::PawnRace,
        Kind::DangerClass,
        Kind::TiersOn,
        Kind::TiersOff,
    ];

    /// Criterion group and id.
    fn id(self) -> (&'static str, &'static str) {
        match self {
            Kind::SuperLazy => ("eval_tier", "super_lazy"),
            Kind::Lazy => ("eval_tier", "lazy"),
            Kind::Full => ("eval_tier", "full"),
            Kind::DrawishScale => ("fixed_cost", "drawish_scale"),
            Kind::PawnRace => ("fixed_cost", "pawn_race_possible"),
            Kind::DangerClass => ("danger_proxy", "danger_class"),
            Kind::TiersOn => ("evaluate_window_mix", "tiers_on"),
            Kind::TiersOff => ("evaluate_window_mix", "tiers_off"),
        }
    }

    fn calls(self, fx: &Fixture) -> usize {
        match self {
            Kind::TiersOn | Kind::TiersOff => fx.windows.len(),
            _ => fx.positions.len(),
        }
    }
}

/// One pass of `kind` over the fixture; returns a checksum so nothing is optimised away.
fn run(kind: Kind, fx: &mut Fixture) -> i64 {
    let positions = black_box(&fx.positions);
    let ev = &mut fx.evaluator;
    let mut sum = 0i64;
    match kind {
        Kind::SuperLazy => {
            for b in positions {
                sum += i64::from(eval::super_lazy_only(black_box(b)));
            }
        }
        Kind::Lazy => {
            for b in positions {
                sum += i64::from(ev.lazy_only(black_box(b)));
            }
        }
        Kind::Full => {
            for b in positions {
                sum += i64::from(ev.full(black_box(b)));
            }
        }
        Kind::DrawishScale => {
            for b in positions {
                sum += i64::from(eval::drawish_scale(black_box(b)));
            }
        }
        Kind::PawnRace => {
            for b in positions {
                sum += i64::from(eval::pawn_race_possible(black_box(b)));
            }
        }
        Kind::DangerClass => {
            for b in positions {
                let b = black_box(b);
                let classes =
                    tier::danger_class(b, Color::White) + tier::danger_class(b, Color::Black);
                sum += classes as i64;
            }
        }
        Kind::TiersOn | Kind::TiersOff => {
            ev.set_cheap_exits(kind == Kind::TiersOn);
            let mut counters = Counters::default();
            for &(i, alpha, beta) in black_box(&fx.windows) {
                let e = ev.evaluate(&positions[i], alpha, beta, SearchKind::Main, &mut counters);
                sum += i64::from(e.score);
            }
            ev.set_cheap_exits(true);
        }
    }
    sum
}

fn bench_eval(c: &mut Criterion) {
    let mut fx = Fixture::new();
    for name in [
        "eval_tier",
        "fixed_cost",
        "danger_proxy",
        "evaluate_window_mix",
    ] {
        let mut group = c.benchmark_group(name);
        group
            .warm_up_time(Duration::from_millis(700))
            .measurement_time(Duration::from_secs(2));
        for kind in Kind::ALL.into_iter().filter(|k| k.id().0 == name) {
            group.throughput(Throughput::Elements(kind.calls(&fx) as u64));
            group.bench_function(kind.id().1, |b| b.iter(|| run(kind, &mut fx)));
        }
        group.finish();
    }
}

/// Rounds of the relative-cost pass, each timing one batch of every kind in turn.
const ROUNDS: usize = 801;
/// Each batch runs about this long: well under a scheduler time slice, so most batches run
/// uninterrupted even when other processes compete for the cores.
const BATCH_TARGET: Duration = Duration::from_micros(200);
/// Percentile of the batch times reported. Interference only ever adds time, and on a shared
/// 2-core machine it can hit more than half the batches, so the median is not robust there;
/// a low percentile is.
const PERCENTILE: usize = 10;

fn percentile(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() * PERCENTILE / 100]
}

/// Prints each tier's cost per call relative to the full tier, and the fixed-cost share.
///
/// Criterion's groups run one after the other, so on a shared machine their medians can see
/// different load. This pass times every kind in interleaved batches (`ROUNDS` rounds of one
/// ~0.2 ms batch per kind), so all kinds share the same conditions, and reports the
/// `PERCENTILE`th percentile per call. In brackets, the same figure from criterion's medians
/// of this run (`n/a` if missing); the two agree on a quiet machine.
fn print_relative_costs(since: SystemTime) {
    let mut fx = Fixture::new();
    // Batch sizes: passes per batch so a batch of each kind lasts about BATCH_TARGET.
    let batches: Vec<usize> = Kind::ALL
        .iter()
        .map(|&kind| {
            let start = Instant::now();
            let mut n = 0usize;
            while start.elapsed() < BATCH_TARGET {
                black_box(run(kind, &mut fx));
                n += 1;
            }
            n.max(1)
        })
        .collect();
    let mut per_call: Vec<Vec<f64>> = vec![Vec::with_capacity(ROUNDS); Kind::ALL.len()];
    for _ in 0..ROUNDS {
        for (k, &kind) in Kind::ALL.iter().enumerate() {
            let start = Instant::now();
            for _ in 0..batches[k] {
                black_box(run(kind, &mut fx));
            }
            let ns = start.elapsed().as_secs_f64() * 1e9;
            per_call[k].push(ns / (batches[k] * kind.calls(&fx)) as f64);
        }
    }
    let ns: Vec<f64> = per_call.into_iter().map(percentile).collect();
    let crit: Vec<Option<f64>> = Kind::ALL
        .iter()
        .map(|&k| {
            let (group, id) = k.id();
            criterion_median_ns(group, id, since).map(|t| t / k.calls(&fx) as f64)
        })
        .collect();
    let at = |kind: Kind| {
        Kind::ALL
            .iter()
            .position(|&k| k == kind)
            .expect("kind listed")
    };
    let ratio = |a: Kind, b: Kind| ns[at(a)] / ns[at(b)];
    let crit_ratio = |a: Kind, b: Kind| match (crit[at(a)], crit[at(b)]) {
        (Some(x), Some(y)) => format!("{:.3}", x / y),
        _ => "n/a".to_string(),
    };

    println!();
    println!(
        "Cost per call ({PERCENTILE}th percentile of {ROUNDS} interleaved batches; \
         in brackets criterion's median):"
    );
    for (k, &kind) in Kind::ALL.iter().enumerate() {
        let (group, id) = kind.id();
        let c = crit[k].map_or("n/a".to_string(), |t| format!("{t:.1} ns"));
        println!("  {group}/{id}: {:.1} ns   [{c}]", ns[k]);
    }
    println!("Tier cost relative to full (per call):");
    for kind in [Kind::SuperLazy, Kind::Lazy, Kind::Full] {
        println!(
            "  relative cost {}: {:.3}   [criterion {}]",
            kind.id().1,
            ratio(kind, Kind::Full),
            crit_ratio(kind, Kind::Full)
        );
    }
    let fixed = ns[at(Kind::DrawishScale)] + ns[at(Kind::PawnRace)];
    let crit_fixed = match (crit[at(Kind::DrawishScale)], crit[at(Kind::PawnRace)]) {
        (Some(d), Some(b)) => Some(d + b),
        _ => None,
    };
    let share = |of: Kind| {
        let c = match (crit_fixed, crit[at(of)]) {
            (Some(f), Some(t)) => format!("{:.1}%", 100.0 * f / t),
            _ => "n/a".to_string(),
        };
        format!("{:.1}%   [criterion {c}]", 100.0 * fixed / ns[at(of)])
    };
    println!("Fixed-cost checks (drawish_scale + pawn_race_possible = {fixed:.1} ns per call):");
    println!("  share of full eval: {}", share(Kind::Full));
    println!("  share of a super-lazy call: {}", share(Kind::SuperLazy));
    println!(
        "  drawish_scale alone, share of full eval: {:.1}%",
        100.0 * ratio(Kind::DrawishScale, Kind::Full)
    );
    println!(
        "Danger proxy (both kings' classes = {:.1} ns per call): {:.1}% of full eval, {:.1}% of \
         a lazy call",
        ns[at(Kind::DangerClass)],
        100.0 * ratio(Kind::DangerClass, Kind::Full),
        100.0 * ratio(Kind::DangerClass, Kind::Lazy)
    );

    // Which tier each window of the mix exits in, and the resulting saving.
    let mut counters = Counters::default();
    for &(i, alpha, beta) in &fx.windows {
        fx.evaluator.evaluate(
            &fx.positions[i],
            alpha,
            beta,
            SearchKind::Main,
            &mut counters,
        );
    }
    let total = fx.windows.len() as f64;
    println!(
        "evaluate window mix ({} windows): exits super-lazy {:.0}%, lazy {:.0}%, full {:.0}%; \
         tiers on / tiers off = {:.3}   [criterion {}]",
        fx.windows.len(),
        100.0 * counters.exits[Tier::SuperLazy as usize] as f64 / total,
        100.0 * counters.exits[Tier::Lazy as usize] as f64 / total,
        100.0 * counters.exits[Tier::Full as usize] as f64 / total,
        ratio(Kind::TiersOn, Kind::TiersOff),
        crit_ratio(Kind::TiersOn, Kind::TiersOff)
    );
}

fn main() {
    let since = SystemTime::now();
    // 1000 Hz: a 5 s profile gets ~5000 samples, enough to show the fixed-cost checks.
    let mut criterion = Criterion::default()
        .with_profiler(PProfProfiler::new(1000, Output::Flamegraph(None)))
        .configure_from_args();
    bench_eval(&mut criterion);
    criterion.final_summary();

    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) criterion only
    // smoke-tests each benchmark once, and the timed pass is skipped too. It is also skipped
    // when profiling (`--profile-time`), with a filter, or for `--list`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let filtered = args.iter().any(|a| !a.starts_with('-'));
    if has("--bench") && !has("--list") && !has("--profile-time") && !filtered {
        print_relative_costs(since);
    }
}
