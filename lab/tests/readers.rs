//! Property tests of the lab's readers of untrusted input: the engine's bench JSON and stored
//! baselines. Arbitrary input never panics; valid input round-trips.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Value};

use squall_lab::analysis::compare::{compare, summarize, Criteria, Settings, Thresholds};
use squall_lab::analysis::measure::{
    check_report, InstructionCount, Instructions, Measured, Measurement, PositionRecord,
    RevisionRecord,
};
use squall_lab::baseline::{self, Baseline, BaselineSettings, BASELINE_SCHEMA_VERSION};
use squall_lab::engine::adapter::{BenchRequest, BenchResult, EngineAdapter, SquallAdapter};
use squall_lab::engine::bench::{parse_bench, EngineIdentity, EvalCounters, Exits};
use squall_lab::machine::{Machine, Toolchain};
use squall_lab::report::Format;
use squall_lab::report::{render, BaselineOutput, Report};
use squall_lab::schema::Kind;

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,10}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// JSON pointers of every value inside `value`, the root excluded.
fn pointers(value: &Value, prefix: String, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let pointer = format!("{prefix}/{i}");
                out.push(pointer.clone());
                pointers(item, pointer, out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let pointer = format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1"));
                out.push(pointer.clone());
                pointers(item, pointer, out);
            }
        }
        _ => {}
    }
}

/// `document` with the value at one of its pointers replaced (or, for `None`, removed).
fn mutate(document: &Value, at: Index, replacement: Option<Value>) -> Value {
    let mut all = Vec::new();
    pointers(document, String::new(), &mut all);
    let mut mutated = document.clone();
    if all.is_empty() {
        return replacement.unwrap_or(Value::Null);
    }
    let pointer = &all[at.index(all.len())];
    match replacement {
        Some(value) => *mutated.pointer_mut(pointer).unwrap() = value,
        None => {
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            match mutated.pointer_mut(parent).unwrap() {
                Value::Object(map) => {
                    map.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Value::Array(items) => {
                    items.remove(key.parse::<usize>().unwrap());
                }
                _ => unreachable!("a parent is a container"),
            }
        }
    }
    mutated
}

/// Up to four damages at once: replaced or removed values anywhere in a document.
fn damages() -> impl Strategy<Value = Vec<(Index, Option<Value>)>> {
    let number = prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(-1)),
        Just(json!(u64::MAX)),
        Just(json!(u64::MAX / 2 + 1)),
        Just(json!(u32::MAX)),
        Just(json!(1e300)),
        Just(json!(0.5)),
    ];
    prop::collection::vec(
        (
            any::<Index>(),
            prop::option::of(prop_oneof![2 => number, 3 => any_json()]),
        ),
        1..5,
    )
}

fn damage(document: &Value, damages: Vec<(Index, Option<Value>)>) -> Value {
    damages
        .into_iter()
        .fold(document.clone(), |document, (at, replacement)| {
            mutate(&document, at, replacement)
        })
}

#[derive(Debug, Clone)]
struct BenchPosition {
    fen: String,
    nodes: u64,
    time_ns: u64,
}

/// Plausible timings: every position searches at most a node per nanosecond.
fn bench_positions() -> impl Strategy<Value = Vec<BenchPosition>> {
    prop::collection::vec(
        (".{0,30}", 1u64..1_000_000_000, 1u64..10_000).prop_map(|(fen, nodes, ns_per_node)| {
            BenchPosition {
                fen,
                nodes,
                time_ns: nodes * ns_per_node,
            }
        }),
        1..12,
    )
}

fn tier_rows() -> impl Strategy<Value = Vec<[u64; 3]>> {
    prop::collection::vec(any::<[u64; 3]>(), 8)
}

/// A bench document of schema_version 2 (with `eval.by_search`) when `split`, else of 1.
fn bench_document(
    positions: &[BenchPosition],
    buckets: &[[u64; 3]],
    depth: u32,
    split: bool,
) -> Value {
    let nodes: u64 = positions.iter().map(|p| p.nodes).sum();
    let time: u64 = positions.iter().map(|p| p.time_ns).sum();
    let mut document = json!({
        "schema_version": 1,
        "engine": {"name": "squall", "version": "0.1.0", "features": ["x"]},
        "depth": depth,
        "hash_mb": 16,
        "positions": positions.iter().map(|p| json!({
            "fen": p.fen, "nodes": p.nodes, "time_ns": p.time_ns, "bestmove": "e2e4", "score_cp": 3
        })).collect::<Vec<_>>(),
        "totals": {"nodes": nodes, "time_ns": time, "nps": 1},
        "eval": {
            "calls": nodes,
            "exits": {"super_lazy": 1, "lazy": 2, "full": 3},
            "by_material_bucket": buckets,
            "by_side_buckets": vec![buckets.to_vec(); 8],
        },
    });
    if split {
        // Every exit of `eval.exits` in bucket 0, split between the searches.
        let search = |exits: [u64; 3]| {
            let mut rows = vec![[0u64; 3]; 8];
            rows[0] = exits;
            json!({
                "exits": {"super_lazy": exits[0], "lazy": exits[1], "full": exits[2]},
                "by_material_bucket": rows,
            })
        };
        document["schema_version"] = json!(2);
        document["eval"]["by_search"] = json!({
            "main": search([1, 0, 2]),
            "quiescence": search([0, 2, 1]),
        });
    }
    document
}

fn valid_bench_document() -> impl Strategy<Value = Value> {
    (bench_positions(), tier_rows(), 1u32..64, any::<bool>()).prop_map(
        |(positions, buckets, depth, split)| bench_document(&positions, &buckets, depth, split),
    )
}

#[test]
fn node_counts_that_overflow_are_an_error() {
    let positions = [u64::MAX / 2 + 1, u64::MAX / 2 + 1].map(|nodes| BenchPosition {
        fen: "x".to_string(),
        nodes,
        time_ns: u64::MAX,
    });
    let mut document = bench_document(&positions[..1], &[[0; 3]; 8], 5, true);
    document["positions"] = json!([
        {"fen": "a", "nodes": positions[0].nodes, "time_ns": u64::MAX},
        {"fen": "b", "nodes": positions[1].nodes, "time_ns": u64::MAX},
    ]);
    document["totals"]["nodes"] = json!(0);
    let error = parse_bench(document.to_string().as_bytes()).unwrap_err();
    assert!(error.to_string().contains("overflow"), "{error}");
}

/// A squall bench document as the lab measures it.
fn read_squall_bench(stdout: &[u8]) -> anyhow::Result<BenchResult> {
    SquallAdapter.read_bench(stdout, b"", &BenchRequest::default())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn bench_reader_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_bench(&bytes);
    }

    #[test]
    fn bench_reader_never_panics_on_json(value in any_json()) {
        let _ = parse_bench(value.to_string().as_bytes());
    }

    #[test]
    fn bench_reader_never_panics_on_a_damaged_document(
        document in valid_bench_document(),
        damages in damages(),
    ) {
        let damaged = damage(&document, damages);
        if let Ok(report) = read_squall_bench(damaged.to_string().as_bytes()) {
            let _ = check_report(&report);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn valid_bench_documents_round_trip(
        positions in bench_positions(),
        buckets in tier_rows(),
        depth in 1u32..64,
        split in any::<bool>(),
        zero in any::<Index>(),
    ) {
        let document = bench_document(&positions, &buckets, depth, split);
        let report =
            read_squall_bench(serde_json::to_string_pretty(&document).unwrap().as_bytes())
                .unwrap();
        prop_assert_eq!(report.depth, Some(depth));
        prop_assert_eq!(report.positions.len(), positions.len());
        for (read, written) in report.positions.iter().zip(&positions) {
            prop_assert_eq!(&read.fen, &written.fen);
            prop_assert_eq!(read.nodes, written.nodes);
            prop_assert_eq!(read.time_ns, written.time_ns);
        }
        prop_assert_eq!(&report.eval.as_ref().unwrap().by_material_bucket, &buckets);
        let by_search = report.eval.as_ref().unwrap().by_search.as_ref();
        prop_assert_eq!(by_search.map(|s| s.quiescence.exits.as_array()), split.then_some([0, 2, 1]));
        prop_assert!(check_report(&report).is_ok());
        // A zero timer in any position makes the report invalid, by position number.
        let mut broken = report.clone();
        let index = zero.index(broken.positions.len());
        broken.positions[index].time_ns = 0;
        let error = check_report(&broken).unwrap_err();
        prop_assert_eq!(error.field, format!("position {} ({})", index + 1, positions[index].fen));
    }
}

fn revision_record() -> impl Strategy<Value = RevisionRecord> {
    (
        ".{0,12}",
        prop::option::of("[0-9a-f]{40}"),
        "[0-9a-f]{40}",
        "[0-9a-f]{40}",
        any::<bool>(),
    )
        .prop_map(
            |(spec, commit, tree, binary_key, cached_build)| RevisionRecord {
                spec,
                commit,
                tree,
                binary_key,
                cached_build,
            },
        )
}

fn instructions() -> impl Strategy<Value = Instructions> {
    let count = (1u32..64, 1u64..u64::MAX / 2, 1u64..u64::MAX / 2);
    prop_oneof![
        ".{0,20}".prop_map(|reason| Instructions::Skipped { reason }),
        (count.clone(), prop::option::of(count)).prop_map(|((depth, total, nodes), base)| {
            Instructions::Measured {
                depth: Some(depth),
                total,
                nodes,
                base: base.map(|(depth, total, nodes)| InstructionCount {
                    depth: Some(depth),
                    total,
                    nodes,
                }),
                note: None,
            }
        }),
    ]
}

/// Any baseline the lab itself could have saved.
fn valid_baseline() -> impl Strategy<Value = Baseline> {
    let machine = (
        ".{0,20}",
        1usize..512,
        prop::option::of(".{1,12}"),
        prop::option::of("always|madvise|never"),
        prop::option::of("[a-z]{1,12}"),
    )
        .prop_map(
            |(cpu_model, cores, kernel, transparent_hugepages, governor)| Machine {
                cpu_model,
                cores,
                kernel,
                transparent_hugepages,
                governor,
            },
        );
    let toolchain = (
        "rustc [0-9.]{1,8}( \\(.{0,10}\\))?",
        ".{0,12}",
        prop::collection::vec("[a-z0-9.]{1,8}", 0..4),
    )
        .prop_map(|(rustc, rustflags, target_features)| Toolchain {
            rustc,
            rustflags,
            target_features,
        });
    let settings = (
        prop::option::of(1u32..=64),
        2u32..7,
        1u32..=64,
        prop::collection::vec("[a-z][a-z0-9-]{0,8}", 0..3),
    );
    (
        "[a-z][a-z0-9_-]{0,10}",
        any::<u64>(),
        machine,
        toolchain,
        settings,
        (
            revision_record(),
            bench_positions(),
            tier_rows(),
            instructions(),
            1u32..64,
            any::<u64>(),
        ),
        prop::collection::vec(prop::collection::vec(1u64..1000, 12), 7),
    )
        .prop_map(
            |(name, created_unix, machine, toolchain, settings, parts, slowdowns)| {
                let (depth, rounds, instr_depth, features) = settings;
                let (revision, positions, buckets, instructions, bench_depth, calls) = parts;
                let runs_time_ns = slowdowns[..rounds as usize]
                    .iter()
                    .map(|run| {
                        positions
                            .iter()
                            .zip(run)
                            .map(|(p, factor)| p.time_ns.saturating_mul(*factor))
                            .collect()
                    })
                    .collect();
                Baseline {
                    schema_version: BASELINE_SCHEMA_VERSION,
                    name,
                    created_unix,
                    machine,
                    toolchain,
                    settings: BaselineSettings {
                        depth,
                        rounds,
                        instr_depth,
                        features: features.clone(),
                    },
                    measurement: Measurement {
                        revision,
                        engine: EngineIdentity {
                            name: "squall".to_string(),
                            version: "0.1.0".to_string(),
                            features,
                        },
                        depth: Some(bench_depth),
                        signature: positions.iter().map(|p| p.nodes).sum(),
                        positions: positions
                            .iter()
                            .map(|p| PositionRecord {
                                fen: p.fen.clone(),
                                nodes: p.nodes,
                            })
                            .collect(),
                        runs_time_ns,
                        eval: Some(EvalCounters {
                            calls,
                            exits: Exits {
                                super_lazy: 1,
                                lazy: 2,
                                full: 3,
                            },
                            by_material_bucket: buckets.clone(),
                            by_side_buckets: vec![buckets; 8],
                            by_search: None,
                        }),
                        instructions,
                    },
                }
            },
        )
}

fn write_and_load(dir: &std::path::Path, text: &str) -> anyhow::Result<Baseline> {
    let path = dir.join("case.json");
    std::fs::write(&path, text).unwrap();
    baseline::load(&path)
}

/// What every loaded baseline must allow without a panic: a comparison with itself and every
/// report format of it and of the baseline.
fn compare_with_itself(stored: &Baseline) -> squall_lab::analysis::compare::Comparison {
    let comparison = comparison_with_itself(stored);
    let shown = BaselineOutput {
        schema_version: 2,
        kind: Kind::Baseline,
        name: stored.name.clone(),
        created_unix: stored.created_unix,
        machine: stored.machine.clone(),
        toolchain: stored.toolchain.clone(),
        settings: comparison.settings.clone(),
        revision: summarize(&stored.name, &stored.measurement),
    };
    let reports = [
        Report::Comparison(Box::new(comparison.clone())),
        Report::Baseline(Box::new(shown)),
    ];
    for format in [Format::Terminal, Format::Json, Format::Markdown] {
        for report in &reports {
            render(report, format);
        }
    }
    comparison
}

fn comparison_with_itself(stored: &Baseline) -> squall_lab::analysis::compare::Comparison {
    let settings = Settings {
        rounds: stored.settings.rounds,
        depth: stored.settings.depth,
        instr_depth: stored.settings.instr_depth,
        thresholds: Thresholds {
            threshold_pct: 1.0,
            instr_threshold_pct: 0.5,
        },
        positions: None,
    };
    compare(
        Kind::BaselineCheck,
        settings,
        &Measured::new("A", stored.measurement.clone()),
        &Measured::new("B", stored.measurement.clone()),
        Criteria::local(false),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn baseline_loader_never_panics_on_json(value in any_json()) {
        let dir = tempfile::tempdir().unwrap();
        if let Ok(stored) = write_and_load(dir.path(), &value.to_string()) {
            compare_with_itself(&stored);
        }
    }

    #[test]
    fn baseline_loader_never_panics_on_a_damaged_baseline(
        stored in valid_baseline(),
        damages in damages(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let document = serde_json::to_value(&stored).unwrap();
        let damaged = damage(&document, damages);
        if let Ok(loaded) = write_and_load(dir.path(), &damaged.to_string()) {
            compare_with_itself(&loaded);
        }
    }

    #[test]
    fn valid_baselines_round_trip(stored in valid_baseline()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round-trip.json");
        baseline::save(&path, &stored).unwrap();
        let loaded = baseline::load(&path).unwrap();
        prop_assert_eq!(
            serde_json::to_value(&loaded).unwrap(),
            serde_json::to_value(&stored).unwrap()
        );
        let comparison = compare_with_itself(&loaded);
        prop_assert!(!comparison.regression);
        let ratio = comparison.speed.cost_ratio.unwrap();
        prop_assert!(ratio.estimate == 1.0 && ratio.ci_low <= 1.0 && 1.0 <= ratio.ci_high);
    }
}

// Books, history store files, calibration files (with replay samples) and pools: outside data
// never panics a reader, and out-of-range values are refused, never replaced.

mod outside_files {
    use proptest::prelude::*;
    use shakmaty::Position;

    use squall_lab::calibration::data::CalibrationFile;
    use squall_lab::games::book::Book;
    use squall_lab::history::store::{Series, SeriesSettings, Stored};
    use squall_lab::machine::{Machine, Toolchain};

    const BOARD: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -";

    /// Lines a book or pool might hold: noise, FEN pieces, counters and EPD operations.
    fn book_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just(BOARD.to_string()),
            Just("4k3/8/8/8/8/8/8/4K3 w - -".to_string()),
            Just("[FEN \"".to_string()),
            Just("\"]".to_string()),
            Just("1. e4 e5".to_string()),
            Just("hmvc".to_string()),
            Just("fmvn".to_string()),
            Just(";".to_string()),
            "[0-9]{1,25}",
            "-?[0-9]{1,3}",
            "\\PC{0,12}",
        ];
        prop::collection::vec(prop::collection::vec(piece, 0..6), 0..6).prop_map(|lines| {
            lines
                .iter()
                .map(|words| words.join(" "))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    fn series(store: &std::path::Path) -> Series {
        Series::new(
            store,
            Machine {
                cpu_model: "cpu".to_string(),
                cores: 2,
                kernel: None,
                transparent_hugepages: None,
                governor: None,
            },
            Toolchain {
                rustc: "rustc 1.0".to_string(),
                rustflags: String::new(),
                target_features: Vec::new(),
            },
            SeriesSettings {
                engine: "squall".to_string(),
                depth: None,
                rounds: 2,
                instr_depth: 6,
                instructions: false,
                features: Vec::new(),
                engine_definition: None,
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn book_readers_never_panic_and_keep_only_playable_openings(
            text in book_text(),
            pgn in any::<bool>(),
        ) {
            let name = if pgn { "b.pgn" } else { "b.epd" };
            if let Ok(book) = Book::parse(name, &text, None) {
                for opening in &book.openings {
                    prop_assert!(opening.position.halfmoves() < 100);
                    prop_assert!(!opening.position.is_insufficient_material());
                    prop_assert!(!opening.position.legal_moves().is_empty());
                }
            }
        }

        #[test]
        fn epd_counters_are_kept_or_refused_never_replaced(
            halfmove in prop_oneof![0u64..120, any::<u64>()],
            fullmove in prop_oneof![0u64..3, any::<u64>()],
        ) {
            let line = format!("{BOARD} {halfmove} {fullmove}");
            let parsed = Book::parse("b.epd", &line, None);
            let in_range = halfmove < 100 && (1..=u64::from(u32::MAX)).contains(&fullmove);
            match parsed {
                Ok(book) => {
                    prop_assert!(in_range, "{line} accepted");
                    let expected = format!(" {halfmove} {fullmove}");
                    prop_assert!(book.openings[0].fen.ends_with(&expected));
                }
                Err(error) => {
                    prop_assert!(!in_range, "{line}: {error:#}");
                    prop_assert!(format!("{error:#}").contains(&line), "{error:#}");
                }
            }
        }

        #[test]
        fn store_files_never_panic_the_history(
            value in super::any_json(),
            bytes in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let series = series(dir.path());
            std::fs::create_dir_all(&series.dir).unwrap();
            for (commit, contents) in [("a", value.to_string().into_bytes()), ("b", bytes)] {
                std::fs::write(series.path(commit), contents).unwrap();
                prop_assert!(!matches!(series.load(commit), Stored::Found(_)));
            }
        }

        #[test]
        fn calibration_and_sample_readers_never_panic(
            value in super::any_json(),
            samples in super::any_json(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let _ = CalibrationFile::parse(&value.to_string(), "case");
            let mut document = value;
            if let Some(map) = document.as_object_mut() {
                map.insert("samples".to_string(), samples);
            }
            let path = dir.path().join("calibration.json");
            std::fs::write(&path, document.to_string()).unwrap();
            let _ = squall_lab::tune::Replay::load(&path);
        }

        #[test]
        fn pool_reader_never_panics(text in book_text()) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("pool.epd");
            std::fs::write(&path, text).unwrap();
            let _ = squall_lab::positions::read_pool(&path);
        }
    }
}
