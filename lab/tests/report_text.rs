//! `lab report`'s pages over arbitrary Unicode: every string field of a compare, match,
//! history, calibration, verdict, speed-Elo and frontier document replaced by any text is drawn without a panic (no byte
//! slicing of strings), escaped, and a document of a schema version the lab does not read is
//! refused naming the versions it reads. In-process, through the rendering functions that
//! `lab report` calls.

use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{json, Value};

use squall_lab::analysis::compare::{compare, Criteria, Settings, Thresholds};
use squall_lab::analysis::measure::{
    Instructions, Measured, Measurement, PositionRecord, RevisionRecord,
};
use squall_lab::engine::bench::{EngineIdentity, EvalCounters, Exits};
use squall_lab::report::html::from_json;
use squall_lab::report::Format;
use squall_lab::report::{render, Report};
use squall_lab::schema::Kind;

/// Text every free-text field is set to when the fields are sorted out: characters of two,
/// three and four bytes, right-to-left override, and markup.
const PROBE: &str = "é日本\u{1F600}\u{202E}<script>&\"'";

fn measurement(spec: &str, slowdown: u64) -> Measurement {
    let positions = vec![
        PositionRecord {
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_string(),
            nodes: 1000,
        },
        PositionRecord {
            fen: "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1".to_string(),
            nodes: 500,
        },
    ];
    let buckets = vec![[10u64, 20, 30]; 8];
    Measurement {
        revision: RevisionRecord {
            spec: spec.to_string(),
            commit: Some("0123456789abcdef0123456789abcdef01234567".to_string()),
            tree: "89abcdef0123456789abcdef0123456789abcdef".to_string(),
            binary_key: "fedcba9876543210fedcba9876543210fedcba98".to_string(),
            cached_build: false,
        },
        engine: EngineIdentity {
            name: "squall".to_string(),
            version: "0.1.0".to_string(),
            features: vec!["calibrate".to_string()],
        },
        depth: Some(6),
        signature: 1500,
        positions,
        runs_time_ns: (0..4)
            .map(|run| vec![1_000_000 * slowdown + run, 500_000 * slowdown + 3 * run])
            .collect(),
        eval: Some(EvalCounters {
            calls: 200,
            exits: Exits {
                super_lazy: 60,
                lazy: 80,
                full: 60,
            },
            by_material_bucket: buckets.clone(),
            by_side_buckets: vec![buckets; 8],
            by_search: None,
        }),
        instructions: Instructions::Skipped {
            reason: "no valgrind".to_string(),
        },
    }
}

fn compare_document() -> Value {
    let settings = Settings {
        rounds: 4,
        depth: Some(6),
        instr_depth: 6,
        thresholds: Thresholds {
            threshold_pct: 1.0,
            instr_threshold_pct: 0.5,
        },
        positions: None,
    };
    let comparison = compare(
        Kind::Compare,
        settings,
        &Measured::new("A", measurement("HEAD~1", 10)),
        &Measured::new("B", measurement("HEAD", 11)),
        Criteria::local(false),
    );
    let text = render(&Report::Comparison(Box::new(comparison)), Format::Json);
    serde_json::from_str(&text).unwrap()
}

fn match_document() -> Value {
    json!({
        "schema_version": 1,
        "kind": "match",
        "engines": [
            {"spec": "HEAD~1", "name": "squall 0.1.0 (0123456)", "binary": "ab",
             "commit": "0123456789abcdef0123456789abcdef01234567", "options": [["Hash", "16"]]},
            {"spec": "HEAD", "name": "squall 0.1.0 (89abcde)", "binary": "cd",
             "commit": null, "options": []}
        ],
        "tc": "tc 10+0.1",
        "book": {"source": "built-in", "openings": 500},
        "seed": 1,
        "games_budget": 100,
        "shards": [{"index": 1, "count": 1}],
        "games": 20,
        "pairs": 10,
        "wdl": {"wins": 8, "draws": 6, "losses": 6},
        "pentanomial": [1, 2, 3, 2, 2],
        "elo": {"value": 34.0, "ci_low": -50.0, "ci_high": 120.0},
        "nelo": {"value": 40.0, "ci_low": -60.0, "ci_high": 140.0},
        "los": 0.7,
        "sprt": {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05, "model": "normalized",
                 "llr": 0.3, "lower": -2.94, "upper": 2.94, "result": "continue"},
        "verdict": "undecided after 20 games",
        "results_file": "target/lab/matches/x.jsonl",
        "measured": {"measured_unix": 1_700_000_000u64, "hostname": "host",
                     "machine": {"cpu_model": "a cpu", "cores": 4}},
        "trajectory": [
            {"pairs": 5, "games": 10, "elo": 10.0, "elo_low": -80.0, "elo_high": 100.0, "llr": 0.1},
            {"pairs": 10, "games": 20, "elo": 34.0, "elo_low": -50.0, "elo_high": 120.0, "llr": 0.3}
        ]
    })
}

fn history_document() -> Value {
    let row = |id: &str, changed: bool, nps: f64| {
        json!({
            "commit": {"id": id, "short": &id[..7], "date": "2024-01-02", "subject": "a change"},
            "signature": if changed { 1600 } else { 1500 },
            "signature_changed": changed,
            "nps": {"median": nps},
            "instructions_per_node": 1200.0,
            "instructions_skipped": null,
            "eval_rates": {"super_lazy": 0.3, "lazy": 0.4, "full": 0.3},
            "measured_unix": 1_700_000_000u64
        })
    };
    let ids = [
        "0123456789abcdef0123456789abcdef01234567",
        "89abcdef0123456789abcdef0123456789abcdef",
        "fedcba9876543210fedcba9876543210fedcba98",
    ];
    json!({
        "schema_version": 2,
        "kind": "history",
        "range": "HEAD~3..HEAD",
        "series": "m-t-s",
        "machine_id": "0123456789ab",
        "settings": {"engine": "squall", "depth": null, "rounds": 4, "instr_depth": 6,
                     "instructions": true, "features": []},
        "commits_in_range": 3,
        "rows": [row(ids[0], false, 1.0e6), row(ids[1], true, 1.1e6), row(ids[2], false, 1.05e6)],
        "machine": {"cpu_model": "a cpu", "cores": 4},
        "machines": [
            {"label": "this machine", "this_machine": true,
             "points": [{"commit": ids[0], "nps": 1.0e6}, {"commit": ids[2], "nps": 1.05e6}]},
            {"label": "another", "this_machine": false,
             "points": [{"commit": ids[1], "nps": 2.0e6}]}
        ]
    })
}

fn calibration_document() -> Value {
    json!({
        "schema_version": 1,
        "kind": "squall-calibration",
        "engine": {"name": "squall", "version": "0.1.0", "features": ["calibrate"]},
        "depth": 6,
        "hash_mb": 16,
        "positions": 100,
        "modes": ["residual"],
        "nodes": 12345,
        "exit_rate": {"calls": 3000, "exits": [1000, 500, 1500],
                      "by_material_bucket": [[100, 50, 200], [100, 50, 200], [100, 50, 200],
                          [100, 50, 200], [100, 50, 200], [100, 50, 200], [100, 50, 200],
                          [100, 50, 200]]},
        "lab": {
            "pool": "lab/pools/small.epd",
            "pool_digest": "0123456789abcdef0123456789abcdef01234567",
            "pool_positions": 100,
            "revision": "HEAD",
            "tree": "89abcdef0123456789abcdef0123456789abcdef",
            "shard_count": 1,
            "shards": [1],
            "measured": {"measured_unix": 1_700_000_000u64, "hostname": "host",
                         "machine": {"cpu_model": "a cpu", "cores": 4}}
        }
    })
}

/// A verdict document: the compare document as its measurement, and with `games` the
/// fixed-node match of different signatures (without, the same signature: no game).
fn verdict_document(games: bool) -> Value {
    let estimate =
        |value: f64| json!({"value": value, "ci_low": value - 10.0, "ci_high": value + 10.0});
    let search = games.then(|| {
        json!({
            "nodes_per_move": 164455,
            "nps": 2349364.0,
            "typical_move_ms": 70,
            "shifted_sprt": {"elo0": 3.2, "elo1": 8.2, "alpha": 0.05, "beta": 0.05,
                             "model": "logistic"},
            "match": match_document()
        })
    });
    json!({
        "schema_version": 2,
        "kind": "verdict",
        "limit": {"kind": "clock", "base_ms": 2000, "increment_ms": 20},
        "tc": "2+0.02",
        "sprt": {"elo0": -5.0, "elo1": 0.0, "alpha": 0.05, "beta": 0.05, "model": "logistic"},
        "comparison": compare_document(),
        "model": {"elo_per_doubling": estimate(155.0), "fitted_on": "5d05aef", "same_binary": true,
                  "games": 400, "date": "2026-12-02", "path": "target/lab/speed-elo/m.json"},
        "speed_ratio": {"value": 0.82, "ci_low": 0.70, "ci_high": 0.96},
        "speed_elo": estimate(-44.0),
        "search_elo": estimate(if games { -20.0 } else { 0.0 }),
        "total_elo": estimate(-64.0),
        "llr": -0.6,
        "llr_lower": -2.94,
        "llr_upper": 2.94,
        "games": if games { 20 } else { 0 },
        "rounds": 6,
        "search": search,
        "decision": "continue",
        "wall_time_s": 116.5,
        "notes": ["a note"]
    })
}

fn speed_elo_document() -> Value {
    let fit = json!({
        "value": 155.1, "ci_low": 116.1, "ci_high": 194.1,
        "points": [
            {"odds": 1.5, "elo": {"value": 77.7, "ci_low": 39.2, "ci_high": 118.2}, "games": 200},
            {"odds": 2.0, "elo": {"value": 166.2, "ci_low": 121.4, "ci_high": 216.9}, "games": 200}
        ]
    });
    json!({
        "schema_version": 2,
        "kind": "speed-elo",
        "elo_per_doubling": fit.clone(),
        "models": [{
            "kind": "lab-speed-elo",
            "schema_version": 1,
            "engine": {"spec": "HEAD", "commit": "5d05aefaa1e1743aba28bb2f05b1469882e318bf",
                       "binary": "74b32d52d7cae663e493b05c27af95d74bba4245"},
            "limit": {"kind": "clock", "base_ms": 2000, "increment_ms": 20},
            "machine": {"cpu_model": "a cpu", "cores": 2, "kernel": "6.1",
                        "transparent_hugepages": "madvise", "governor": "unavailable"},
            "machine_id": "98dad7d66072",
            "elo_per_doubling": fit,
            "games": 400,
            "date": "2026-12-02"
        }],
        "unusable": ["target/lab/match/old.jsonl: another binary"],
        "stored": "target/lab/speed-elo/m.json",
        "results_files": ["target/lab/match/HEAD-vs-HEAD.jsonl"]
    })
}

/// The documents of every kind, each with the pointers of its free-text fields: the string
/// fields whose value any text may take and the page is still drawn. The others (kinds,
/// enums, hex ids parsed as such) may refuse the document, never panic.
struct Fixture {
    name: &'static str,
    document: Value,
    free: Vec<String>,
    other: Vec<String>,
}

fn string_pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::String(_) => out.push(prefix),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                string_pointers(item, format!("{prefix}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                string_pointers(item, format!("{prefix}/{key}"), out);
            }
        }
        _ => {}
    }
}

fn with(document: &Value, pointers: &[String], text: &[String]) -> Value {
    let mut changed = document.clone();
    for (pointer, text) in pointers.iter().zip(text.iter().cycle()) {
        *changed.pointer_mut(pointer).unwrap() = Value::String(text.clone());
    }
    changed
}

/// A frontier document: the reference and two levels, one without a calibration.
fn frontier_document() -> Value {
    let interval =
        |value: f64, low: f64, high: f64| json!({"value": value, "ci_low": low, "ci_high": high});
    let engine =
        |spec: &str| json!({"spec": spec, "commit": "0123456789abcdef", "binary_key": "feedbeef"});
    let safety = json!({
        "file": "cal.json",
        "worst_exceeded": {"upper": 0.0078, "tier": "lazy", "bucket": 3, "class": 1, "exceeded": 4, "exits": 1000},
        "overall_exceeded": interval(0.002, 0.001, 0.003),
        "exit_shares": [0.4, 0.25, 0.35]
    });
    let sprt = json!({"elo0": -5.0, "elo1": 0.0, "alpha": 0.05, "beta": 0.05, "model": "logistic"});
    json!({
        "schema_version": 2, "kind": "frontier", "tc": "5+0.05",
        "reference": {"label": "1%", "engine": engine("main"), "verdict_file": null,
            "safety": safety.clone(), "speed_ratio": interval(1.0, 1.0, 1.0),
            "speed_elo": interval(0.0, 0.0, 0.0), "search_elo": interval(0.0, 0.0, 0.0),
            "total_elo": interval(0.0, 0.0, 0.0), "games": 0, "sprt": null, "decision": null},
        "points": [
            {"label": "2%", "engine": engine("tables-2"), "verdict_file": "v2.json",
             "safety": safety, "speed_ratio": interval(1.06, 1.04, 1.08),
             "speed_elo": interval(9.0, 6.0, 12.0), "search_elo": interval(-3.0, -10.0, 4.0),
             "total_elo": interval(6.0, -2.0, 14.0), "games": 1200, "sprt": sprt.clone(),
             "decision": "undecided"},
            {"label": "x", "engine": engine("tables-x"), "verdict_file": "vx.json",
             "safety": null, "speed_ratio": interval(1.01, 0.99, 1.03),
             "speed_elo": interval(1.5, -1.5, 4.5), "search_elo": interval(-0.5, -7.5, 6.5),
             "total_elo": interval(1.0, -5.0, 7.0), "games": 1200, "sprt": sprt,
             "decision": "h1"}
        ],
        "optimal": {"label": "2%", "runner_up": "x", "separated": false}
    })
}

/// How many documents [`fixtures`] holds.
const FIXTURES: usize = 8;

fn fixtures() -> &'static [Fixture] {
    static DOCUMENTS: OnceLock<Vec<Fixture>> = OnceLock::new();
    let fixtures = DOCUMENTS.get_or_init(|| {
        let documents = [
            ("compare", compare_document()),
            ("match", match_document()),
            ("history", history_document()),
            ("calibration", calibration_document()),
            ("verdict without games", verdict_document(false)),
            ("verdict with games", verdict_document(true)),
            ("speed-elo", speed_elo_document()),
            ("frontier", frontier_document()),
        ];
        documents
            .into_iter()
            .map(|(name, document)| {
                if let Err(error) = from_json(&document) {
                    panic!("the {name} fixture is not drawn: {error:#}");
                }
                let mut pointers = Vec::new();
                string_pointers(&document, String::new(), &mut pointers);
                let probe = [PROBE.to_string()];
                let (free, other) = pointers.into_iter().partition(|pointer| {
                    pointer != "/kind"
                        && from_json(&with(&document, std::slice::from_ref(pointer), &probe))
                            .is_ok()
                });
                Fixture {
                    name,
                    document,
                    free,
                    other,
                }
            })
            .collect::<Vec<_>>()
    });
    assert_eq!(fixtures.len(), FIXTURES);
    fixtures
}

#[test]
fn every_kind_has_free_text_fields_and_draws_them_escaped() {
    for fixture in fixtures() {
        assert!(
            fixture.free.len() >= 3,
            "{}: {:?}",
            fixture.name,
            fixture.free
        );
        let page = from_json(&with(
            &fixture.document,
            &fixture.free,
            &[PROBE.to_string()],
        ))
        .unwrap_or_else(|error| panic!("{}: {error:#}", fixture.name));
        assert!(!page.contains("<script>"), "{}: unescaped", fixture.name);
    }
    let names: Vec<&str> = fixtures()
        .iter()
        .find(|f| f.name == "calibration")
        .unwrap()
        .free
        .iter()
        .map(String::as_str)
        .collect();
    assert!(names.contains(&"/lab/tree"), "{names:?}");
}

#[test]
fn unknown_schema_versions_are_refused_naming_the_versions_read() {
    for fixture in fixtures() {
        for version in [json!(0), json!(99), json!("2"), Value::Null] {
            let mut document = fixture.document.clone();
            document["schema_version"] = version.clone();
            let error = format!("{:#}", from_json(&document).unwrap_err());
            assert!(
                error.contains("this lab reads schema_version")
                    && error.contains("compare 2")
                    && error.contains("match 1"),
                "{} {version}: {error}",
                fixture.name
            );
        }
        let mut document = fixture.document.clone();
        document.as_object_mut().unwrap().remove("schema_version");
        let error = format!("{:#}", from_json(&document).unwrap_err());
        assert!(error.contains("no schema_version"), "{error}");
    }
}

/// Any text: every char, with the multi-byte ones common.
fn any_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            any::<char>(),
            "[é日本\u{1F600}\u{202E}\u{0300}]".prop_map(|s| s.chars().next().unwrap())
        ],
        0..40,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn free_text_of_any_unicode_is_drawn(
        which in 0usize..FIXTURES,
        texts in prop::collection::vec(any_text(), 1..8),
    ) {
        let fixture = &fixtures()[which];
        let page = from_json(&with(&fixture.document, &fixture.free, &texts));
        prop_assert!(page.is_ok(), "{}: {:#}", fixture.name, page.unwrap_err());
    }

    #[test]
    fn any_text_in_any_string_field_never_panics(
        which in 0usize..FIXTURES,
        field in any::<prop::sample::Index>(),
        text in any_text(),
    ) {
        let fixture = &fixtures()[which];
        let all: Vec<String> = fixture.free.iter().chain(&fixture.other).cloned().collect();
        let pointer = all[field.index(all.len())].clone();
        let _ = from_json(&with(&fixture.document, &[pointer], &[text]));
    }
}
