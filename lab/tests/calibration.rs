//! Calibration tooling without the engine binary: exact histogram merges and percentiles,
//! Wilson intervals against published references, `lab hist`, `lab tables --apply` on a
//! temporary copy of margins.rs, error handling, and the pool's stratification.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use squall::calibrate::stats::{wilson_interval, Z95};
use squall::calibrate::Histogram;
use squall_lab::calibration::data::{
    CalibrationFile, EngineInfo, ExitRate, Histograms, MarginSafety, SparseHistogram, Tally,
    TierSafety,
};
use squall_lab::calibration::report::rate_with_interval;
use squall_lab::calibration::tables;
use squall_lab::pool::{self, SplitMix};

const SETS: [&str; 4] = [
    "lazy_residual",
    "super_lazy_residual",
    "king",
    "qfutility_excess",
];
const LO: i32 = -1500;
const HI: i32 = 1500;

/// Raw samples of one synthetic run: per set, per bucket.
struct Samples(Vec<Vec<Vec<i32>>>);

fn samples(seed: u64, per_bucket: usize) -> Samples {
    let mut rng = SplitMix::new(seed);
    Samples(
        SETS.iter()
            .map(|set| {
                let buckets = if *set == "qfutility_excess" { 3 } else { 8 };
                (0..buckets)
                    .map(|b| {
                        (0..per_bucket)
                            .map(|_| {
                                // Mostly near a bucket-dependent centre, a few far out of range.
                                let centre = 20 * b - 60;
                                let spread = rng.below(400) as i32 - 200;
                                if rng.below(50) == 0 {
                                    centre + 10 * spread
                                } else {
                                    centre + spread / 3
                                }
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect(),
    )
}

fn sparse(values: &[i32]) -> SparseHistogram {
    let mut h = Histogram::new(LO, HI);
    for &v in values {
        h.record(v);
    }
    SparseHistogram::from_dense(&h)
}

fn tally(exits: u64, exceeded: u64, positions: u64, max: u64) -> Tally {
    Tally {
        exits,
        exceeded,
        positions,
        max_from_one_position: max,
    }
}

fn file(samples: &Samples, positions: u64, scale: u64) -> CalibrationFile {
    let set = |i: usize| Some(samples.0[i].iter().map(|v| sparse(v)).collect());
    let tier = |offset: u64| TierSafety {
        by_material_bucket: (0..8)
            .map(|b| {
                tally(
                    1000 * scale + b,
                    scale * (b + offset),
                    10 + b,
                    50 * scale + b,
                )
            })
            .collect(),
        by_side_buckets: (0..8)
            .map(|_| (0..8).map(|b| tally(100 + b, b % 3, 0, 0)).collect())
            .collect(),
    };
    CalibrationFile {
        schema_version: 1,
        kind: "squall-calibration".to_string(),
        engine: EngineInfo {
            name: "squall".to_string(),
            version: "0.1.0".to_string(),
            features: vec!["calibrate".to_string()],
        },
        depth: 6,
        hash_mb: 16,
        positions,
        modes: ["residual", "marginsafety", "qfutility"]
            .map(String::from)
            .to_vec(),
        nodes: 12345 * scale,
        exit_rate: ExitRate {
            calls: 3000 * scale,
            exits: [1000 * scale, 500 * scale, 1500 * scale],
            by_material_bucket: (0..8).map(|b| [100 * scale + b, 50, 200]).collect(),
        },
        histograms: Some(Histograms {
            lo: LO,
            hi: HI,
            lazy_residual: set(0),
            super_lazy_residual: set(1),
            king: set(2),
            qfutility_excess: set(3),
        }),
        margin_safety: Some(MarginSafety {
            super_lazy: tier(0),
            lazy: tier(1),
        }),
        lab: None,
    }
}

/// Nearest rank over the raw samples, with out-of-range values read as the histogram does.
fn nearest_rank(values: &[i32], p: f64) -> i32 {
    let mut sorted: Vec<i32> = values.iter().map(|&v| v.clamp(LO - 1, HI)).collect();
    sorted.sort_unstable();
    let n = sorted.len() as u64;
    let rank = ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n);
    sorted[(rank - 1) as usize]
}

#[test]
fn merged_histograms_give_exact_percentiles_and_tallies() {
    let (a, b) = (samples(1, 997), samples(2, 1500));
    let mut merged = file(&a, 10, 1);
    merged.merge(&file(&b, 20, 2)).unwrap();
    assert_eq!(merged.positions, 30);
    assert_eq!(merged.exit_rate.exits, [3000, 1500, 4500]);
    for (s, set) in SETS.iter().enumerate() {
        let hists = merged.histogram_set(set).unwrap();
        for (bucket, h) in hists.iter().enumerate() {
            let all: Vec<i32> = a.0[s][bucket]
                .iter()
                .chain(&b.0[s][bucket])
                .copied()
                .collect();
            assert_eq!(h.count(), all.len() as u64);
            for step in 0..=200 {
                let p = step as f64 / 2.0;
                assert_eq!(
                    h.percentile(p),
                    Some(nearest_rank(&all, p)),
                    "{set} bucket {bucket} p{p}"
                );
            }
        }
    }
    let lazy = &merged.margin_safety.as_ref().unwrap().lazy;
    // Sums of exits, exceeded and positions; the largest single position is a maximum.
    assert_eq!(lazy.by_material_bucket[3], tally(3003 + 3, 4 + 8, 26, 103));
    // Merging is order-independent, so shards can come back in any order.
    let mut other_order = file(&b, 20, 2);
    other_order.merge(&file(&a, 10, 1)).unwrap();
    assert_eq!(
        serde_json::to_value(&other_order).unwrap(),
        serde_json::to_value(&merged).unwrap()
    );
}

#[test]
fn merge_refuses_different_settings() {
    let a = samples(1, 10);
    let mut x = file(&a, 1, 1);
    let mut y = file(&a, 1, 1);
    y.depth = 5;
    assert!(x.merge(&y).unwrap_err().to_string().contains("depth"));
    let mut z = file(&a, 1, 1);
    z.histograms.as_mut().unwrap().lo = -1000;
    assert!(x.merge(&z).is_err());
}

#[test]
fn wilson_intervals_match_published_references() {
    // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
    // method 3 (score interval without continuity correction).
    for (x, n, lo, hi) in [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ] {
        let (l, h) = wilson_interval(x, n, Z95);
        assert!(
            (l - lo).abs() < 5e-5 && (h - hi).abs() < 5e-5,
            "{x}/{n}: {l} {h}"
        );
    }
    // And the lab prints them as percentages.
    assert_eq!(rate_with_interval(15, 148, 2), "10.14% [6.24, 16.05]");
    assert_eq!(rate_with_interval(0, 0, 2), "-");
}

fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--quiet")
        .args(args)
        .output()
        .expect("running lab")
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn save(dir: &Path, name: &str, file: &CalibrationFile) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(file).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn hist_reads_any_percentile_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = samples(3, 500);
    let path = save(dir.path(), "cal.json", &file(&a, 5, 1));
    let output = lab(&["hist", &path]);
    assert!(output.status.success(), "{}", text(&output));
    let out = String::from_utf8_lossy(&output.stdout);
    for label in [
        "p2",
        "p5",
        "p10",
        "p50",
        "p90",
        "p95",
        "p98",
        "[king]",
        "[qfutility_excess]",
    ] {
        assert!(out.contains(label), "missing {label}:\n{out}");
    }
    let output = lab(&["hist", &path, "37.5", "--set", "king"]);
    assert!(output.status.success(), "{}", text(&output));
    let out = String::from_utf8_lossy(&output.stdout);
    let expected = nearest_rank(&a.0[2][7], 37.5);
    let row = out
        .lines()
        .find(|l| l.contains("│ 7 "))
        .unwrap_or_else(|| panic!("no bucket 7 row:\n{out}"));
    assert!(
        row.contains(&format!(" {expected} ")),
        "{row} vs {expected}"
    );
    assert!(!out.contains("lazy_residual"));

    for (args, message) in [
        (vec!["hist", &path, "101"], "out of range"),
        (
            vec!["hist", &path, "--set", "nope"],
            "unknown histogram set",
        ),
        (
            vec!["hist", "/nonexistent/cal.json"],
            "/nonexistent/cal.json",
        ),
    ] {
        let output = lab(&args);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(message),
            "{}",
            text(&output)
        );
    }
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{ \"schema_version\": 1, ").unwrap();
    let output = lab(&["hist", &corrupt.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a calibration file"), "{stderr}");
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"schema_version": 1, "kind": "bench"}"#).unwrap();
    let output = lab(&["calibrate", "merge", &path, &other.to_string_lossy()]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
}

fn workspace_margins() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/src/eval/margins.rs")
}

#[test]
fn tables_apply_rewrites_only_the_marked_block() {
    let dir = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path()).unwrap();
    let margins = dir.path().join(tables::MARGINS_FILE);
    std::fs::create_dir_all(margins.parent().unwrap()).unwrap();
    let original = std::fs::read_to_string(workspace_margins()).unwrap();
    std::fs::write(&margins, &original).unwrap();
    let a = samples(4, 800);
    let cal = save(dir.path(), "cal.json", &file(&a, 7, 1));
    let repo = dir.path().to_string_lossy().into_owned();

    // Asymmetric pairs are refused unless asked for, and nothing is written.
    let output = lab(&[
        "--repo", &repo, "tables", &cal, "--lo", "10", "--hi", "98", "--apply",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("symmetric"));
    let output = lab(&[
        "tables", &cal, "--lo", "5", "--hi", "95", "--bucket", "3=10:98",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert_eq!(std::fs::read_to_string(&margins).unwrap(), original);

    // Without --apply: source on stdout only.
    let output = lab(&["tables", &cal, "--lo", "5", "--hi", "95"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stdout).contains("pub const LAZY_RESID_HI"));
    assert_eq!(std::fs::read_to_string(&margins).unwrap(), original);

    let output = lab(&[
        "--repo",
        &repo,
        "tables",
        &cal,
        "--lo",
        "5",
        "--hi",
        "95",
        "--king-lo",
        "2",
        "--king-hi",
        "98",
        "--bucket",
        "6=10:90",
        "--apply",
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let updated = std::fs::read_to_string(&margins).unwrap();
    let begin = updated.find(tables::BEGIN_MARKER).unwrap();
    let end = updated.find(tables::END_MARKER).unwrap();
    // Outside the block, the file is byte-for-byte the same.
    let (ob, oe) = (
        original.find(tables::BEGIN_MARKER).unwrap(),
        original.find(tables::END_MARKER).unwrap(),
    );
    assert_eq!(&updated[..begin], &original[..ob]);
    assert_eq!(&updated[end..], &original[oe..]);
    let row = |name: &str| -> Vec<i32> {
        let line = updated
            .lines()
            .find(|l| l.starts_with(&format!("pub const {name}:")))
            .unwrap();
        let list = &line[line.find("= [").unwrap() + 3..line.rfind(']').unwrap()];
        list.split(", ").map(|v| v.parse().unwrap()).collect()
    };
    let lazy = &a.0[0];
    let expect = |values: &[Vec<i32>], pick: &dyn Fn(usize) -> f64| -> Vec<i32> {
        (0..8).map(|b| nearest_rank(&values[b], pick(b))).collect()
    };
    assert_eq!(
        row("LAZY_RESID_LO"),
        expect(lazy, &|b| if b == 6 { 10.0 } else { 5.0 })
    );
    assert_eq!(
        row("LAZY_RESID_HI"),
        expect(lazy, &|b| if b == 6 { 90.0 } else { 95.0 })
    );
    assert_eq!(row("SUPER_LAZY_RESID_P50"), expect(&a.0[1], &|_| 50.0));
    assert_eq!(row("KING_LO"), expect(&a.0[2], &|_| 2.0));
    assert_eq!(row("KING_HI"), expect(&a.0[2], &|_| 98.0));
    // No temporary files are left beside it.
    let leftovers: Vec<_> = std::fs::read_dir(margins.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "margins.rs")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn pool_is_stratified_deduplicated_and_deterministic() {
    let count = 96;
    let first = pool::generate(count, 5, |_, _| {});
    assert_eq!(first.len(), count);
    let counts = pool::strata(&first);
    // 16 strata (8 material buckets x quiet/tactical) of 6 each; a short stratum would hand
    // its deficit to its sibling first, so every bucket still totals 12.
    for (bucket, c) in counts.iter().enumerate() {
        assert_eq!(c[0] + c[1], 12, "bucket {bucket}: {c:?}");
        assert!(c[0].abs_diff(c[1]) <= 1, "bucket {bucket}: {c:?}");
    }
    let mut fens: Vec<&str> = first.iter().map(|p| p.fen.as_str()).collect();
    fens.sort_unstable();
    fens.dedup();
    assert_eq!(fens.len(), count, "duplicates in the pool");
    // The labels are right: recompute bucket and kind from the FEN.
    for p in &first {
        let board = squall::Board::from_fen(&p.fen).unwrap();
        assert_eq!(squall::eval::material_bucket(&board), p.bucket);
        assert_eq!(pool::classify(&board), p.kind);
    }
    let again = pool::generate(count, 5, |_, _| {});
    let text = pool::pool_text(&first, count, 5);
    assert_eq!(text, pool::pool_text(&again, count, 5));

    // Round trip through .epd and .epd.gz.
    let dir = tempfile::tempdir().unwrap();
    for name in ["pool.epd", "pool.epd.gz"] {
        let path = dir.path().join(name);
        pool::write_pool(&path, &text).unwrap();
        let read = pool::read_pool(&path).unwrap();
        assert_eq!(
            read,
            first.iter().map(|p| p.fen.clone()).collect::<Vec<_>>()
        );
    }
    let gz = std::fs::read(dir.path().join("pool.epd.gz")).unwrap();
    assert!(gz.len() < text.len() / 2);
}

#[test]
fn bad_pools_are_reported_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.epd");
    std::fs::write(
        &path,
        "# comment\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ; c0 \"ok\"\nnot a fen at all\n",
    )
    .unwrap();
    let error = pool::read_pool(&path).unwrap_err().to_string();
    assert!(error.contains("bad.epd:4:"), "{error}");
    let gz = dir.path().join("fake.epd.gz");
    std::fs::write(&gz, "plain text").unwrap();
    assert!(pool::read_pool(&gz)
        .unwrap_err()
        .to_string()
        .contains("gzip"));
    let empty = dir.path().join("empty.epd");
    std::fs::write(&empty, "# nothing\n").unwrap();
    assert!(pool::read_pool(&empty)
        .unwrap_err()
        .to_string()
        .contains("no positions"));
}
