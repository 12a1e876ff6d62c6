//! Printing a bench report: the text format (OpenBench/Stockfish tooling parse its last two lines)
//! and the JSON object of `docs/bench-protocol.md`. The engine crate has no dependencies, so the
//! JSON is written by the small writer below.

use crate::json::Json;
use crate::output::{out, outln};
use squall::bench::{self, BenchReport, PositionResult};
use squall::eval::margins;
use squall::tier::{SearchKind, SIDE_BUCKETS, TIERS};
use squall::Board;

/// Bumped when a field is renamed, removed or becomes one the lab relies on (2: `eval.by_search`);
/// adding optional fields keeps the version.
pub const SCHEMA_VERSION: u64 = 2;

/// The per-position line, printed as each search finishes.
pub fn position_line(index: usize, count: usize, result: &PositionResult) -> String {
    format!(
        "position {}/{} nodes {} time {} ms bestmove {} score cp {} fen {}",
        index + 1,
        count,
        result.nodes,
        result.time_ns / 1_000_000,
        result.bestmove,
        result.score_cp,
        result.fen
    )
}

/// The summary that follows the position lines; `Nodes searched` and `Nodes/second` are last.
pub fn text_summary(report: &BenchReport) -> String {
    let [super_lazy, lazy, full] = report.totals.exit_percentages();
    format!(
        "Eval exits: super-lazy {super_lazy:.1}% lazy {lazy:.1}% full {full:.1}%\n\
         Nodes searched: {}\n\
         Nodes/second: {}\n",
        report.totals.nodes,
        report.nps()
    )
}

/// Cargo features compiled into this binary, as reported in `engine.features`.
pub fn compiled_features() -> Vec<&'static str> {
    let mut features = Vec::new();
    if cfg!(feature = "calibrate") {
        features.push("calibrate");
    }
    if cfg!(feature = "profile") {
        features.push("profile");
    }
    features
}

/// The `engine` object shared by every JSON report: name, version, compiled features.
pub fn engine_json() -> Json {
    Json::Object(engine_fields())
}

fn engine_fields() -> Vec<(&'static str, Json)> {
    let features = compiled_features()
        .into_iter()
        .map(|f| Json::Str(f.to_string()))
        .collect();
    vec![
        ("name", Json::Str("squall".to_string())),
        ("version", Json::Str(env!("CARGO_PKG_VERSION").to_string())),
        ("features", Json::Array(features)),
    ]
}

/// The calibrated constants compiled into this binary (`eval::margins`), whatever `--full-eval`
/// says: the lab reads them from the binary it calibrates rather than from its source.
fn calibrated_constants() -> Vec<(&'static str, Json)> {
    let values = |row: &[i32]| Json::Array(row.iter().map(|&v| Json::Int(i64::from(v))).collect());
    // The king tables by danger class: one row each.
    let rows =
        |table: &[[i32; SIDE_BUCKETS]]| Json::Array(table.iter().map(|r| values(r)).collect());
    let table = |lo: &[i32], hi: &[i32], p50: &[i32]| {
        Json::Object(vec![
            ("lo", values(lo)),
            ("hi", values(hi)),
            ("p50", values(p50)),
        ])
    };
    vec![
        (
            "margin_tables",
            Json::Object(vec![
                (
                    "king",
                    Json::Object(vec![
                        ("lo", rows(&margins::KING_LO)),
                        ("hi", rows(&margins::KING_HI)),
                        ("p50", rows(&margins::KING_P50)),
                    ]),
                ),
                (
                    "lazy_residual",
                    table(
                        &margins::LAZY_RESID_LO,
                        &margins::LAZY_RESID_HI,
                        &margins::LAZY_RESID_P50,
                    ),
                ),
                (
                    "super_lazy_residual",
                    table(
                        &margins::SUPER_LAZY_RESID_LO,
                        &margins::SUPER_LAZY_RESID_HI,
                        &margins::SUPER_LAZY_RESID_P50,
                    ),
                ),
            ]),
        ),
        (
            "futility_base_margin_by_source",
            values(&margins::FUTILITY_BASE_MARGIN_BY_SOURCE),
        ),
    ]
}

/// The whole report as one JSON object, newline-terminated.
pub fn json_report(report: &BenchReport) -> String {
    let totals = &report.totals;
    let tiers =
        |values: &[u64; TIERS]| Json::Array(values.iter().map(|&n| Json::UInt(n)).collect());
    let by_tier_name = |values: &[u64; TIERS]| {
        Json::Object(vec![
            ("super_lazy", Json::UInt(values[0])),
            ("lazy", Json::UInt(values[1])),
            ("full", Json::UInt(values[2])),
        ])
    };
    let by_search = SearchKind::ALL
        .iter()
        .map(|&search| {
            let exits = totals.search_exits(search);
            let by_bucket = &totals.exits_by_search[search as usize];
            (
                search.name(),
                Json::Object(vec![
                    ("exits", by_tier_name(&exits)),
                    (
                        "by_material_bucket",
                        Json::Array(by_bucket.iter().map(tiers).collect()),
                    ),
                ]),
            )
        })
        .collect();
    let positions = report
        .positions
        .iter()
        .map(|p| {
            Json::Object(vec![
                ("fen", Json::Str(p.fen.clone())),
                ("nodes", Json::UInt(p.nodes)),
                ("time_ns", Json::UInt(p.time_ns)),
                ("bestmove", Json::Str(p.bestmove.to_string())),
                ("score_cp", Json::Int(i64::from(p.score_cp))),
            ])
        })
        .collect();
    let mut engine = engine_fields();
    engine.extend(calibrated_constants());
    let root = Json::Object(vec![
        ("schema_version", Json::UInt(SCHEMA_VERSION)),
        ("engine", Json::Object(engine)),
        ("depth", Json::Int(i64::from(report.depth))),
        ("hash_mb", Json::UInt(report.hash_mb as u64)),
        ("full_eval", Json::Bool(report.full_eval)),
        ("positions", Json::Array(positions)),
        (
            "totals",
            Json::Object(vec![
                ("nodes", Json::UInt(totals.nodes)),
                ("time_ns", Json::UInt(report.time_ns)),
                ("nps", Json::UInt(report.nps())),
            ]),
        ),
        (
            "eval",
            Json::Object(vec![
                ("calls", Json::UInt(totals.eval_calls)),
                ("exits", by_tier_name(&totals.exits)),
                (
                    "by_material_bucket",
                    Json::Array(totals.exits_by_material_bucket.iter().map(tiers).collect()),
                ),
                (
                    "by_side_buckets",
                    Json::Array(
                        totals
                            .exits_by_side_buckets
                            .iter()
                            .map(|by_opponent| Json::Array(by_opponent.iter().map(tiers).collect()))
                            .collect(),
                    ),
                ),
                ("by_search", Json::Object(by_search)),
            ]),
        ),
        (
            "search",
            Json::Object(vec![
                ("qnodes", Json::UInt(totals.qnodes)),
                ("tt_probes", Json::UInt(totals.tt_probes)),
                ("tt_hits", Json::UInt(totals.tt_hits)),
                ("beta_cutoffs", Json::UInt(totals.beta_cutoffs)),
                ("first_move_cutoffs", Json::UInt(totals.first_move_cutoffs)),
                (
                    "futility_prunes_by_tier",
                    by_tier_name(&totals.futility_prunes),
                ),
            ]),
        ),
    ]);
    root.to_text()
}

/// Runs the bench and prints the text report, a line per position as it finishes (also used by
/// `bench` at the UCI prompt). A closed stdout ends the process (`output`).
pub fn run_text_bench(positions: &[Board], depth: i32, hash_mb: usize, full_eval: bool) {
    let count = positions.len();
    let report = bench::run(positions, depth, hash_mb, full_eval, |index, result| {
        outln!("{}", position_line(index, count, result));
    });
    out!("{}", text_summary(&report));
}
