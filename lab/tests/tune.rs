//! `lab tune` on synthetic samples files: the search finds the percentile a known trap allows,
//! its `lab tables` command writes the tables it predicted, the CLI's candidates agree, and bad
//! input ends with one error line and exit 2.

use std::path::{Path, PathBuf};

mod common;

use common::{lab, LabRun};
use squall::calibrate::Histogram;
use squall::tier::{SearchKind, MATERIAL_BUCKETS};
use squall_lab::calibration::data::{CalibrationFile, ExitRate, Histograms, SparseHistogram};
use squall_lab::calibration::margins_source::MARGINS_FILE;
use squall_lab::tune::samples::{Sample, Samples};
use squall_lab::tune::search::{search, GREEDY_LIMIT_SHARES};
use squall_lab::tune::Replay;

const LO: i32 = -1500;
const HI: i32 = 1500;
/// The side bucket of both sides in every sample, and the material bucket of every sample.
const SIDE: usize = 3;
const MATERIAL: usize = 4;

/// Residuals uniform over -100..=100, 100 samples each: percentile p is about -100 + 2p.
fn uniform() -> Histogram {
    let mut h = Histogram::new(LO, HI);
    for v in -100..=100 {
        for _ in 0..100 {
            h.record(v);
        }
    }
    h
}

/// The margin of the pair (SIDE, SIDE) at pLOW/p(100-LOW) of `uniform`, with king terms 0.
fn margin(low: f64) -> i32 {
    let h = uniform();
    h.percentile(100.0 - low).unwrap() - h.percentile(low).unwrap()
}

fn calibration(with_histograms: bool) -> CalibrationFile {
    let residual = || Some(vec![SparseHistogram::from_dense(&uniform()); 8]);
    let mut king = Histogram::new(LO, HI);
    for _ in 0..20_000 {
        king.record(0);
    }
    // The calls the samples' reservoir saw (`seen`), all in one material bucket.
    let exit_rate = ExitRate {
        calls: 40_000,
        exits: [12_000, 8_000, 20_000],
        by_material_bucket: (0..8)
            .map(|b| {
                if b == MATERIAL {
                    [12_000, 8_000, 20_000]
                } else {
                    [0, 0, 0]
                }
            })
            .collect(),
    };
    CalibrationFile {
        histograms: with_histograms.then(|| Histograms {
            lo: LO,
            hi: HI,
            lazy_residual: residual(),
            super_lazy_residual: residual(),
            king: Some(vec![SparseHistogram::from_dense(&king); 8]),
            qfutility_excess: None,
        }),
        ..common::calibration::calibration_file(
            3000,
            6,
            &["residual", "samples"],
            1_000_000,
            exit_rate,
        )
    }
}

/// Null-window calls (alpha -1, beta 0) in one material bucket, all with a passer race so only
/// the lazy tier can exit: 2,000 sound calls (full = lazy, lazy 1..=400) and 50 traps whose
/// full score is 0 at lazy `margin(10)`. A lazy exit needs lazy > M, so the traps exit, all
/// exceeded, exactly when the margin is narrower than at p10/p90: the largest safe pair.
fn samples() -> Samples {
    let call = |position: u32, lazy: i32, full: i32| Sample {
        position,
        search: if position.is_multiple_of(3) {
            SearchKind::Main
        } else {
            SearchKind::Quiescence
        },
        my_bucket: SIDE,
        opp_bucket: SIDE,
        alpha: -1,
        beta: 0,
        super_lazy: lazy,
        lazy,
        full,
        race: true,
        my_class: 0,
        opp_class: 0,
    };
    let mut bucket: Vec<Sample> = (0..2000)
        .map(|i| call(i % 700, 1 + (i as i32 % 400), 1 + (i as i32 % 400)))
        .collect();
    bucket.extend((0..50).map(|i| call(1000 + i, margin(10.0), 0)));
    let mut by_material_bucket: [Vec<Sample>; MATERIAL_BUCKETS] = Default::default();
    by_material_bucket[MATERIAL] = bucket;
    let mut seen = [0; MATERIAL_BUCKETS];
    seen[MATERIAL] = 40_000;
    Samples {
        capacity: 2_050,
        seed: 1,
        seen,
        by_material_bucket,
    }
}

fn write(dir: &Path, name: &str, value: &serde_json::Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(value).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

fn samples_file(with_histograms: bool) -> serde_json::Value {
    let mut file = calibration(with_histograms);
    file.samples = Some(samples().to_file());
    serde_json::to_value(file).unwrap()
}

/// The JSON a successful run printed.
fn json(run: &LabRun) -> serde_json::Value {
    assert_eq!(run.code, 0, "{run}");
    run.json()
}

fn workspace_margins() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/src/eval/margins.rs")
}

#[test]
fn the_search_finds_the_largest_safe_percentile() {
    assert!(
        margin(12.0) < margin(10.0),
        "the grid steps must change the margin"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "samples.json", &samples_file(true));
    let replay = Replay::load(Path::new(&path)).unwrap();
    let result = search(&replay.file, &replay.samples, 0.01).unwrap();
    assert_eq!(result.lazy[SIDE], [10.0, 90.0], "{result:#?}");
    // Nothing else changes the exits, so nothing else moves from the widest pair.
    for b in (0..8).filter(|&b| b != SIDE) {
        assert_eq!(result.lazy[b], [0.5, 99.5]);
    }
    assert!(result
        .king
        .iter()
        .flatten()
        .chain(&result.super_lazy)
        .all(|p| *p == [0.5, 99.5]));
    let (first, last) = (&result.steps[0], result.steps.last().unwrap());
    assert!(first.change.is_none() && last.change.is_some());
    assert!(last.cheap_share > first.cheap_share);
    assert!(last.worst_exceeded_upper <= 0.01);
    // The run kept is one of the ascents under the smaller limits, and within the real one.
    assert!(
        GREEDY_LIMIT_SHARES
            .iter()
            .any(|share| (share * 0.01 - result.greedy_limit).abs() < 1e-12),
        "{}",
        result.greedy_limit
    );
    assert!(last.worst_exceeded_upper <= result.greedy_limit + 1e-12);
    // Calls with lazy > margin(10) exit, all soundly, out of 2,050.
    let exits = (1..=400).filter(|&l| l > margin(10.0)).count() as f64 * 5.0;
    assert!((last.cheap_share - exits / 2050.0).abs() < 1e-9, "{last:?}");
    // A stricter limit than the sound exits allow has no answer at all.
    let error = search(&replay.file, &replay.samples, 0.0001).unwrap_err();
    assert!(
        format!("{error:#}").contains("no margins of the grid bring the lazy exits"),
        "{error:#}"
    );
}

#[test]
fn the_cli_predicts_searches_and_writes_what_it_predicted() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "samples.json", &samples_file(true));

    // --search: the frontier, the choice and the `lab tables` command.
    let found = json(&lab(&["tune", &path, "--search", "--format", "json"]));
    assert_eq!(found["kind"], "tune");
    let search = &found["search"];
    assert_eq!(search["lazy"][SIDE], serde_json::json!([10.0, 90.0]));
    let predicted = found["prediction"]["cheap_share"].as_f64().unwrap();
    let last = search["frontier"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!((last["cheap_share"].as_f64().unwrap() - predicted).abs() < 1e-9);
    let command = search["lab_tables_command"].as_str().unwrap();
    assert!(
        command.starts_with(&format!("lab tables {path} --lo 0.5 --hi 99.5")),
        "{command}"
    );
    assert!(
        command.contains(&format!("--bucket lazy:{SIDE}=10:90")),
        "{command}"
    );

    // The printed arguments make `lab tables` write exactly the searched block ...
    let mut args = vec!["tables".to_string(), path.clone()];
    args.extend(
        search["lab_tables_args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let tables = lab(&args);
    assert_eq!(tables.code, 0, "{tables}");
    let printed = tables.stdout;
    assert!(
        printed.contains(search["block"].as_str().unwrap()),
        "{printed}"
    );
    // ... which `--tables` reads back to the same prediction.
    let saved = dir.path().join("tables.rs");
    std::fs::write(&saved, &printed).unwrap();
    let again = json(&lab(&[
        "tune",
        &path,
        "--tables",
        &saved.to_string_lossy(),
        "--format",
        "json",
    ]));
    assert_eq!(again["prediction"], found["prediction"]);

    // --lo/--hi: the same tables as percentiles.
    let at = json(&lab(&[
        "tune",
        &path,
        "--lo",
        "0.5",
        "--hi",
        "99.5",
        "--bucket",
        "lazy:3=10:90",
        "--format",
        "json",
    ]));
    assert_eq!(at["prediction"], found["prediction"]);

    // The terminal and markdown layouts carry the same figures.
    for format in ["terminal", "markdown"] {
        let output = lab(&["tune", &path, "--search", "--format", format]);
        assert_eq!(output.code, 0, "{output}");
        let out = &output.stdout;
        for needle in [
            "Predicted lazy exits",
            "all (weighted)",
            "Chosen percentiles",
            "p10/p90",
            command,
        ] {
            assert!(out.contains(needle), "{format}: no {needle:?}:\n{out}");
        }
    }
}

#[test]
fn the_default_candidate_is_the_working_tree_s_tables() {
    let dir = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path()).unwrap();
    let margins = dir.path().join(MARGINS_FILE);
    std::fs::create_dir_all(margins.parent().unwrap()).unwrap();
    std::fs::copy(workspace_margins(), &margins).unwrap();
    let path = write(dir.path(), "samples.json", &samples_file(false));
    let repo = dir.path().to_string_lossy().into_owned();
    let in_force = json(&lab(&["--repo", &repo, "tune", &path, "--format", "json"]));
    assert!(in_force["candidate"]
        .as_str()
        .unwrap()
        .starts_with("in force"));
    let given = json(&lab(&[
        "tune",
        &path,
        "--tables",
        &margins.to_string_lossy(),
        "--format",
        "json",
    ]));
    assert_eq!(in_force["prediction"], given["prediction"]);
    let buckets = in_force["prediction"]["by_material_bucket"]
        .as_array()
        .unwrap();
    assert_eq!(buckets[MATERIAL]["calls"], 2050);
    assert_eq!(buckets[MATERIAL]["positions"], 750);
    assert_eq!(buckets[MATERIAL]["weight"], 1.0);
    assert_eq!(buckets[0]["calls"], 0);
}

#[test]
fn bad_input_ends_with_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let no_samples = write(
        dir.path(),
        "plain.json",
        &serde_json::to_value(calibration(true)).unwrap(),
    );
    let mut wrong_kind = samples_file(true);
    wrong_kind["kind"] = serde_json::json!("bench");
    let wrong_kind = write(dir.path(), "kind.json", &wrong_kind);
    let mut bad_sample = samples_file(true);
    bad_sample["samples"]["by_material_bucket"][MATERIAL][0][2] = serde_json::json!(9);
    let bad_sample = write(dir.path(), "bucket.json", &bad_sample);
    let no_histograms = write(dir.path(), "samples-only.json", &samples_file(false));
    let margins = workspace_margins().to_string_lossy().into_owned();
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["tune", &no_samples, "--tables", &margins],
            "no `samples` field",
        ),
        (
            vec!["tune", &wrong_kind, "--tables", &margins],
            "not a schema-1 squall-calibration file",
        ),
        (
            vec!["tune", &bad_sample, "--tables", &margins],
            "my_bucket 9",
        ),
        (vec!["tune", &no_histograms, "--search"], "no histograms"),
        (
            vec!["tune", &no_histograms, "--lo", "5", "--hi", "95"],
            "no histograms",
        ),
        (
            vec!["tune", &no_histograms, "--tables", &no_histograms],
            "no margin tables",
        ),
    ];
    for (args, message) in cases {
        let output = lab(&args);
        assert_eq!(output.code, 2, "{args:?}: {output}");
        assert_eq!(output.stderr.lines().count(), 1, "{args:?}: {output}");
        assert!(output.stderr.contains(message), "{args:?}: {output}");
        assert!(output.stdout.is_empty(), "{output}");
    }
}

/// Scores and tables the engine could not have would wrap in the replay's `i32` arithmetic
/// and predict nonsense; they are refused with the field, exit 2.
#[test]
fn out_of_range_scores_and_tables_are_refused_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let margins = workspace_margins().to_string_lossy().into_owned();
    // A sample row: [position, search, my_bucket, opp_bucket, alpha, beta, super_lazy, lazy,
    // full, race, my_class, opp_class].
    let with_sample = |column: usize, value: i64, name: &str| {
        let mut file = samples_file(true);
        file["samples"]["by_material_bucket"][MATERIAL][5][column] = serde_json::json!(value);
        write(dir.path(), name, &file)
    };
    let min_full = with_sample(8, i64::from(i32::MIN), "min-full.json");
    let inverted = with_sample(4, 5, "inverted.json");
    // A bare marked block whose king tables of class 0 span all of i32 in bucket 0.
    let flat =
        |name: &str| format!("pub const {name}: [i32; SIDE_BUCKETS] = [0, 0, 0, 0, 0, 0, 0, 0];\n");
    let king = |name: &str, first: i64| {
        format!(
            "pub const {name}: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] = [\n    \
             [{first}, 0, 0, 0, 0, 0, 0, 0],\n    [0, 0, 0, 0, 0, 0, 0, 0],\n];\n"
        )
    };
    let wrapping = format!(
        "// source: hand-written\n{}{}{}{}{}{}{}{}{}",
        king("KING_LO", i64::from(i32::MIN)),
        king("KING_HI", i64::from(i32::MAX)),
        king("KING_P50", 0),
        flat("LAZY_RESID_LO"),
        flat("LAZY_RESID_HI"),
        flat("LAZY_RESID_P50"),
        flat("SUPER_LAZY_RESID_LO"),
        flat("SUPER_LAZY_RESID_HI"),
        flat("SUPER_LAZY_RESID_P50"),
    );
    let wrapping_tables = dir.path().join("wrapping.rs");
    std::fs::write(&wrapping_tables, wrapping).unwrap();
    let wrapping_tables = wrapping_tables.to_string_lossy().into_owned();
    let good = write(dir.path(), "good.json", &samples_file(true));
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["tune", &min_full, "--tables", &margins],
            "samples.by_material_bucket[4][5].full: -2147483648 is outside the engine's scores \
             [-32000, 32000]",
        ),
        (
            vec!["tune", &inverted, "--tables", &margins],
            "samples.by_material_bucket[4][5].alpha: 5 is above beta 0",
        ),
        (
            vec!["tune", &good, "--tables", &wrapping_tables],
            "fail-high margin of side buckets (0, 0), danger classes (0, 0): (KING_HI[0][0] - \
             KING_LO[0][0])",
        ),
    ];
    for (args, message) in cases {
        let output = lab(&args);
        assert_eq!(output.code, 2, "{args:?}: {output}");
        assert_eq!(output.stderr.lines().count(), 1, "{args:?}: {output}");
        assert!(output.stderr.contains(message), "{args:?}: {output}");
        assert!(output.stdout.is_empty(), "{output}");
    }
}

/// A run with two danger classes whose king terms spread like `uniform` and whose residuals are
/// all 0: a lazy exit of a null-window call with both kings of class C fails high when
/// lazy > KING_HI[C] - KING_LO[C]. Class 0's calls are all sound; class 1 adds 50 traps (full
/// 0) at lazy `margin(10)`, so its king table can narrow to p10/p90 and no further, while
/// class 0's can narrow to the grid's end.
fn two_class_samples_file() -> serde_json::Value {
    let mut file = calibration(true);
    let mut zeros = Histogram::new(LO, HI);
    for _ in 0..20_000 {
        zeros.record(0);
    }
    let histograms = file.histograms.as_mut().unwrap();
    let residual = Some(vec![SparseHistogram::from_dense(&zeros); 8]);
    histograms.lazy_residual = residual.clone();
    histograms.super_lazy_residual = residual;
    histograms.king = Some(vec![SparseHistogram::from_dense(&uniform()); 16]);
    let call = |position: u32, class: usize, lazy: i32, full: i32| Sample {
        position,
        search: SearchKind::Main,
        my_bucket: SIDE,
        opp_bucket: SIDE,
        alpha: -1,
        beta: 0,
        super_lazy: lazy,
        lazy,
        full,
        race: true,
        my_class: class,
        opp_class: class,
    };
    let mut bucket: Vec<Sample> = Vec::new();
    for class in 0..2 {
        let first = 1000 * class as u32;
        bucket.extend((0..2000).map(|i| call(first + i % 700, class, 1 + (i as i32 % 400), 1)));
    }
    bucket.extend((0..50).map(|i| call(2000 + i, 1, margin(10.0), 0)));
    let mut by_material_bucket: [Vec<Sample>; MATERIAL_BUCKETS] = Default::default();
    by_material_bucket[MATERIAL] = bucket;
    let mut seen = [0; MATERIAL_BUCKETS];
    seen[MATERIAL] = 40_000;
    file.samples = Some(
        Samples {
            capacity: 4_050,
            seed: 1,
            seen,
            by_material_bucket,
        }
        .to_file(),
    );
    serde_json::to_value(file).unwrap()
}

#[test]
fn the_search_tunes_each_danger_class_s_king_table_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "classes.json", &two_class_samples_file());
    let report = json(&lab(&["tune", &path, "--search", "--format", "json"]));
    let search = &report["search"];
    assert_eq!(
        search["king"][0][SIDE],
        serde_json::json!([20.0, 80.0]),
        "{search}"
    );
    assert_eq!(
        search["king"][1][SIDE],
        serde_json::json!([10.0, 90.0]),
        "{search}"
    );
    assert!(report["prediction"]["worst_exceeded_upper"].as_f64() <= Some(0.01));
    let args: Vec<String> = serde_json::from_value(search["lab_tables_args"].clone()).unwrap();
    assert!(args.contains(&format!("king0:{SIDE}=20:80")), "{args:?}");
    assert!(args.contains(&format!("king1:{SIDE}=10:90")), "{args:?}");
    // The printed command writes the tables the search predicted: run its arguments through
    // `lab tables`, then predict that block again.
    let mut tables_args = vec!["tables".to_string(), path.clone()];
    tables_args.extend(args);
    let argv: Vec<&str> = tables_args.iter().map(String::as_str).collect();
    let printed = lab(&argv);
    assert_eq!(printed.code, 0, "{printed}");
    assert!(
        printed.stdout.contains(search["block"].as_str().unwrap()),
        "{printed}"
    );
    // Each class's exits: the traps only ever bet on a class-1 king.
    let by_class = &report["prediction"]["by_danger_class"];
    assert_eq!(
        by_class[0]["exceeded"],
        serde_json::json!([0, 0]),
        "{by_class}"
    );
    assert!(by_class[1]["exits"][1].as_u64() > Some(0), "{by_class}");
}

/// A class's bucket that its calibration could not measure (no attacker of that bucket ever
/// brought that many pieces to a king) takes the calmer class's histogram: the search and
/// `lab tables` both go on, and the cell gets the calmer class's entries.
#[test]
fn a_class_s_unmeasured_bucket_takes_the_calmer_class_s_entries() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = two_class_samples_file();
    let calmer = file["histograms"]["king"][0].clone();
    let mut sparse = file["histograms"]["king"][0].clone();
    sparse["bins"] = serde_json::json!([[-7, 3]]);
    sparse["underflow"] = serde_json::json!(0);
    sparse["overflow"] = serde_json::json!(0);
    // Class 1, attacker bucket 0: three samples, far fewer than a table entry needs.
    file["histograms"]["king"][8] = sparse;
    let path = write(dir.path(), "unmeasured.json", &file);
    let report = json(&lab(&["tune", &path, "--search", "--format", "json"]));
    assert!(report["prediction"]["worst_exceeded_upper"].as_f64() <= Some(0.01));
    let printed = lab(&["tables", &path, "--lo", "5", "--hi", "95"]);
    assert_eq!(printed.code, 0, "{printed}");
    let row = |class: usize| {
        let line = printed
            .stdout
            .lines()
            .skip_while(|l| !l.contains("KING_LO"))
            .nth(1 + class)
            .unwrap()
            .to_string();
        line.trim().trim_end_matches(',').to_string()
    };
    let first_entry = |row: String| {
        row.trim_start_matches('[')
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(first_entry(row(1)), first_entry(row(0)), "{printed}");
    // The calmer histogram itself is untouched in the file.
    assert_eq!(file["histograms"]["king"][0], calmer);
}
