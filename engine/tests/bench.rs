//! The `squall bench` and `squall perft` command lines, run as the lab runs them. Depths stay low
//! so the suite is quick with the real search; the default-depth bench is never run here.

use serde_json::Value;
use squall::eval::margins;
use std::path::PathBuf;
use std::process::{Command, Output};

fn squall(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_squall"))
        .args(args)
        .output()
        .expect("run squall")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8 stderr")
}

/// Writes a positions file unique to the calling test (tests run in parallel).
fn positions_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("squall-bench-{}-{name}.epd", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

const SMALL_POSITIONS: &str = "\
# two openings, a middlegame and an ending
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1

r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - ;D1 48
2r3k1/5pp1/p3p2p/1p1q4/3P4/P3Q2P/1P3PP1/2R3K1 w - - 0 30
8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - bm Rxb4; id \"ending\";
";

fn bench_json(args: &[&str]) -> Value {
    let output = squall(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).expect("bench --json prints one JSON object")
}

fn uint(value: &Value, what: &str) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("{what} is not an unsigned integer: {value}"))
}

/// `[super_lazy, lazy, full]` rows summed per tier.
fn tier_sums<'a>(rows: impl Iterator<Item = &'a Value>) -> [u64; 3] {
    let mut sums = [0; 3];
    for row in rows {
        let row = row.as_array().expect("a tier row");
        assert_eq!(row.len(), 3);
        for (sum, value) in sums.iter_mut().zip(row) {
            *sum += uint(value, "an exit count");
        }
    }
    sums
}

#[test]
fn bench_is_deterministic() {
    let first = bench_json(&["bench", "--json", "--depth", "4"]);
    let second = bench_json(&["bench", "--json", "--depth", "4"]);
    let nodes = |report: &Value| uint(&report["totals"]["nodes"], "totals.nodes");
    assert_eq!(nodes(&first), nodes(&second));
    // Every number except the timings is part of the signature.
    for field in ["eval", "search"] {
        assert_eq!(first[field], second[field], "{field}");
    }
    let per_position = |report: &Value| -> Vec<(u64, String)> {
        report["positions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (uint(&p["nodes"], "nodes"), p["bestmove"].to_string()))
            .collect()
    };
    assert_eq!(per_position(&first), per_position(&second));
}

#[test]
fn bench_json_has_the_protocol_shape() {
    let file = positions_file("shape", SMALL_POSITIONS);
    let report = bench_json(&[
        "bench",
        "--json",
        "--depth",
        "3",
        "--hash",
        "4",
        "--positions",
        file.to_str().unwrap(),
    ]);
    assert_eq!(uint(&report["schema_version"], "schema_version"), 2);
    assert_eq!(report["engine"]["name"], "squall");
    assert_eq!(report["engine"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(report["engine"]["features"].is_array());
    assert_reports_the_compiled_constants(&report);
    assert_eq!(uint(&report["depth"], "depth"), 3);
    assert_eq!(uint(&report["hash_mb"], "hash_mb"), 4);
    assert_eq!(report["full_eval"], false);

    let positions = report["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 4);
    assert_eq!(
        positions[1]["fen"],
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    );
    for position in positions {
        assert!(position["fen"].is_string());
        uint(&position["nodes"], "nodes");
        uint(&position["time_ns"], "time_ns");
        let bestmove = position["bestmove"].as_str().unwrap();
        assert!((4..=5).contains(&bestmove.len()), "bestmove {bestmove}");
        assert!(position["score_cp"].is_i64());
    }

    let totals = &report["totals"];
    let node_sum: u64 = positions.iter().map(|p| uint(&p["nodes"], "nodes")).sum();
    assert_eq!(uint(&totals["nodes"], "totals.nodes"), node_sum);
    uint(&totals["time_ns"], "totals.time_ns");
    uint(&totals["nps"], "totals.nps");

    let eval = &report["eval"];
    uint(&eval["calls"], "eval.calls");
    let exits = [
        uint(&eval["exits"]["super_lazy"], "exits.super_lazy"),
        uint(&eval["exits"]["lazy"], "exits.lazy"),
        uint(&eval["exits"]["full"], "exits.full"),
    ];
    let by_material = eval["by_material_bucket"].as_array().unwrap();
    assert_eq!(by_material.len(), 8);
    assert_eq!(tier_sums(by_material.iter()), exits);
    let by_sides = eval["by_side_buckets"].as_array().unwrap();
    assert_eq!(by_sides.len(), 8);
    for by_opponent in by_sides {
        assert_eq!(by_opponent.as_array().unwrap().len(), 8);
    }
    let side_rows = by_sides.iter().flat_map(|r| r.as_array().unwrap().iter());
    assert_eq!(tier_sums(side_rows), exits);
    // Every exit is counted once, by the search that asked: main and quiescence add up to the
    // tier's total, in every material bucket.
    let search_exits = |search: &str| {
        let exits = &eval["by_search"][search]["exits"];
        let rows = eval["by_search"][search]["by_material_bucket"]
            .as_array()
            .unwrap();
        assert_eq!(rows.len(), 8, "{search}");
        let named = [
            uint(&exits["super_lazy"], "super_lazy"),
            uint(&exits["lazy"], "lazy"),
            uint(&exits["full"], "full"),
        ];
        assert_eq!(tier_sums(rows.iter()), named, "{search}");
        (named, rows.clone())
    };
    let (main, main_rows) = search_exits("main");
    let (quiescence, quiescence_rows) = search_exits("quiescence");
    assert_eq!([0, 1, 2].map(|t| main[t] + quiescence[t]), exits);
    for (bucket, row) in by_material.iter().enumerate() {
        assert_eq!(
            tier_sums([&main_rows[bucket], &quiescence_rows[bucket]].into_iter()),
            tier_sums([row].into_iter()),
            "bucket {bucket}"
        );
    }
    assert!(main.iter().sum::<u64>() > 0 && quiescence.iter().sum::<u64>() > 0);

    let search = &report["search"];
    for field in [
        "qnodes",
        "tt_probes",
        "tt_hits",
        "beta_cutoffs",
        "first_move_cutoffs",
    ] {
        uint(&search[field], field);
    }
    for tier in ["super_lazy", "lazy", "full"] {
        uint(&search["futility_prunes_by_tier"][tier], tier);
    }
    let _ = std::fs::remove_file(file);
}

#[test]
fn full_eval_disables_the_cheap_tiers() {
    let file = positions_file("full-eval", SMALL_POSITIONS);
    let path = file.to_str().unwrap();
    let report = bench_json(&[
        "bench",
        "--json",
        "--depth",
        "3",
        "--full-eval",
        "--positions",
        path,
    ]);
    assert_eq!(report["full_eval"], true);
    assert_eq!(
        uint(&report["eval"]["exits"]["super_lazy"], "super_lazy"),
        0
    );
    assert_eq!(uint(&report["eval"]["exits"]["lazy"], "lazy"), 0);
    // The binary's constants, even when it does not use the tables.
    assert_reports_the_compiled_constants(&report);
    let _ = std::fs::remove_file(file);
}

/// `engine.margin_tables` and `engine.futility_base_margin_by_source` are `eval::margins`'s.
fn assert_reports_the_compiled_constants(report: &Value) {
    let engine = &report["engine"];
    for (key, rows) in
        ["lo", "hi", "p50"]
            .into_iter()
            .zip([margins::KING_LO, margins::KING_HI, margins::KING_P50])
    {
        // One row per danger class.
        assert_eq!(
            engine["margin_tables"]["king"][key],
            serde_json::json!(rows),
            "king.{key}"
        );
    }
    let tables = [
        (
            "lazy_residual",
            [
                margins::LAZY_RESID_LO,
                margins::LAZY_RESID_HI,
                margins::LAZY_RESID_P50,
            ],
        ),
        (
            "super_lazy_residual",
            [
                margins::SUPER_LAZY_RESID_LO,
                margins::SUPER_LAZY_RESID_HI,
                margins::SUPER_LAZY_RESID_P50,
            ],
        ),
    ];
    for (name, rows) in tables {
        for (key, row) in ["lo", "hi", "p50"].into_iter().zip(rows) {
            assert_eq!(
                engine["margin_tables"][name][key],
                serde_json::json!(row),
                "{name}.{key}"
            );
        }
    }
    assert_eq!(
        engine["futility_base_margin_by_source"],
        serde_json::json!(margins::FUTILITY_BASE_MARGIN_BY_SOURCE)
    );
}

#[test]
fn text_report_ends_with_the_tooling_lines() {
    let file = positions_file("text", SMALL_POSITIONS);
    let output = squall(&[
        "bench",
        "--depth",
        "2",
        "--positions",
        file.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4 + 3, "{text}");
    for (i, line) in lines[..4].iter().enumerate() {
        assert!(
            line.starts_with(&format!("position {}/4 nodes ", i + 1)),
            "{line}"
        );
        for field in [" time ", " ms bestmove ", " score cp ", " fen "] {
            assert!(line.contains(field), "`{field}` missing from `{line}`");
        }
    }
    assert!(
        lines[4].starts_with("Eval exits: super-lazy "),
        "{}",
        lines[4]
    );
    assert!(lines[4].contains("% lazy ") && lines[4].ends_with('%'));
    let nodes = lines[5].strip_prefix("Nodes searched: ").expect(lines[5]);
    nodes.parse::<u64>().expect("a node count");
    let nps = lines[6].strip_prefix("Nodes/second: ").expect(lines[6]);
    nps.parse::<u64>().expect("a rate");
    let _ = std::fs::remove_file(file);
}

#[test]
fn bad_positions_file_names_its_line() {
    let file = positions_file(
        "bad",
        "# fine so far\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\nnot/a/fen w - -\n",
    );
    let path = file.to_str().unwrap();
    let output = squall(&["bench", "--positions", path]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.starts_with(&format!("error: {path}:4: ")),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(stdout(&output).is_empty());
    let _ = std::fs::remove_file(file);
}

#[test]
fn bad_bench_arguments_exit_2() {
    for args in [
        &["bench", "--frobnicate"][..],
        &["bench", "--depth"][..],
        &["bench", "--depth", "0"][..],
        &["bench", "--depth", "deep"][..],
        &["bench", "--hash", "0"][..],
        &["bench", "--positions", "/nonexistent/squall/positions.epd"][..],
        &["frobnicate"][..],
    ] {
        let output = squall(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let message = stderr(&output);
        assert!(message.starts_with("error: "), "{args:?}: {message}");
        if args[0] == "bench" {
            assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        }
    }
}

#[test]
fn perft_command_line() {
    let output = squall(&["perft", "0"]);
    assert!(output.status.success());
    assert_eq!(stdout(&output).lines().last(), Some("Nodes searched: 1"));

    let output = squall(&["perft", "3", "--divide"]);
    assert!(output.status.success());
    let text = stdout(&output);
    assert_eq!(text.lines().last(), Some("Nodes searched: 8902"));
    assert!(text.lines().any(|l| l == "e2e4: 600"));

    let output = squall(&["perft", "2", "--fen", "4k3/8/8/8/8/8/8/4K2R w K - 0 1"]);
    assert_eq!(stdout(&output).lines().last(), Some("Nodes searched: 66"));

    let output = squall(&["perft", "2", "--fen", "not a fen"]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.starts_with("error: "), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
}
