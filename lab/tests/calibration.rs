//! Calibration tooling without the engine binary: exact histogram merges and percentiles,
//! Wilson intervals against published references, `lab hist`, `lab tables --apply` on a
//! temporary copy of margins.rs, error handling, and the pool's stratification.

mod common;

use common::calibration::calibration_file;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use squall::calibrate::stats::{wilson_interval, Z95};
use squall::calibrate::Histogram;
use squall::tier::DANGER_CLASSES;
use squall_lab::calibration::data::{
    CalibrationFile, ExitRate, Histograms, MarginSafety, SampleRow, SampleRows, ShardProvenance,
    SparseHistogram, Tally, TierSafety,
};
use squall_lab::calibration::merge::{merge_samples, merge_shards};
use squall_lab::calibration::{margins_source, tables};
use squall_lab::pool;
use squall_lab::positions::{self, SplitMix};
use squall_lab::report::calibration::rate_with_interval;

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
        by_danger_class: None,
    };
    let exit_rate = ExitRate {
        calls: 3000 * scale,
        exits: [1000 * scale, 500 * scale, 1500 * scale],
        by_material_bucket: (0..8).map(|b| [100 * scale + b, 50, 200]).collect(),
    };
    CalibrationFile {
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
        ..calibration_file(
            positions,
            6,
            &["residual", "marginsafety", "qfutility"],
            12345 * scale,
            exit_rate,
        )
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
        (vec!["hist", &path, "101"], "is not a percentile"),
        (vec!["hist", &path, "NaN"], "is not a percentile"),
        // A percentile a histogram would clamp to its end is refused before any work.
        (
            vec!["calibrate", "--percentile", "150"],
            "is not a percentile",
        ),
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
    let margins = dir.path().join(margins_source::MARGINS_FILE);
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
    let begin = updated.find(margins_source::BEGIN_MARKER).unwrap();
    let end = updated.find(margins_source::END_MARKER).unwrap();
    // Outside the block, the file is byte-for-byte the same.
    let (ob, oe) = (
        original.find(margins_source::BEGIN_MARKER).unwrap(),
        original.find(margins_source::END_MARKER).unwrap(),
    );
    assert_eq!(&updated[..begin], &original[..ob]);
    assert_eq!(&updated[end..], &original[oe..]);
    let row = |name: &str| -> Vec<i32> {
        let rows = table_rows(&updated, name);
        assert_eq!(rows.len(), 1, "{name}");
        rows[0].clone()
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
    // One class of king histograms: every danger class gets its rows.
    let king = expect(&a.0[2], &|_| 2.0);
    assert_eq!(table_rows(&updated, "KING_LO"), vec![king; DANGER_CLASSES]);
    let king = expect(&a.0[2], &|_| 98.0);
    assert_eq!(table_rows(&updated, "KING_HI"), vec![king; DANGER_CLASSES]);
    // The block's other constants, which the tables do not write, stay as they were.
    let futility = |source: &str| {
        source
            .lines()
            .find(|l| l.starts_with("pub const FUTILITY_BASE_MARGIN_BY_SOURCE:"))
            .map(str::to_string)
    };
    assert!(futility(&original).is_some());
    assert_eq!(futility(&updated), futility(&original));
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
        assert_eq!(squall::tier::material_bucket(&board), p.bucket);
        assert_eq!(pool::position_kind(&board), p.kind);
    }
    let again = pool::generate(count, 5, |_, _| {});
    let text = pool::pool_text(&first, count, 5);
    assert_eq!(text, pool::pool_text(&again, count, 5));

    // Round trip through .epd and .epd.gz.
    let dir = tempfile::tempdir().unwrap();
    for name in ["pool.epd", "pool.epd.gz"] {
        let path = dir.path().join(name);
        positions::write_pool(&path, &text).unwrap();
        let read = positions::read_pool(&path).unwrap();
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
    let error = positions::read_pool(&path).unwrap_err().to_string();
    assert!(error.contains("bad.epd:4:"), "{error}");
    let gz = dir.path().join("fake.epd.gz");
    std::fs::write(&gz, "plain text").unwrap();
    assert!(positions::read_pool(&gz)
        .unwrap_err()
        .to_string()
        .contains("gzip"));
    let empty = dir.path().join("empty.epd");
    std::fs::write(&empty, "# nothing\n").unwrap();
    assert!(positions::read_pool(&empty)
        .unwrap_err()
        .to_string()
        .contains("no positions"));
}

/// A temporary repository holding a copy of the workspace's margins.rs, for `--apply`.
struct MarginsRepo {
    dir: tempfile::TempDir,
    original: Vec<u8>,
}

impl MarginsRepo {
    fn new() -> MarginsRepo {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let margins = dir.path().join(margins_source::MARGINS_FILE);
        std::fs::create_dir_all(margins.parent().unwrap()).unwrap();
        let original = std::fs::read(workspace_margins()).unwrap();
        std::fs::write(&margins, &original).unwrap();
        MarginsRepo { dir, original }
    }

    fn margins(&self) -> Vec<u8> {
        std::fs::read(self.dir.path().join(margins_source::MARGINS_FILE)).unwrap()
    }

    /// `lab tables FILE ARGS --apply` must fail with exit 2 and `message`, leaving margins.rs
    /// byte-identical and no file beside it.
    fn refused(&self, file: &CalibrationFile, args: &[&str], message: &str) {
        let cal = save(self.dir.path(), "cal.json", file);
        let repo = self.dir.path().to_string_lossy().into_owned();
        let mut all = vec!["--repo", &repo, "tables", &cal];
        all.extend(args);
        all.push("--apply");
        let output = lab(&all);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(output.stdout.is_empty(), "{}", text(&output));
        assert!(
            self.margins() == self.original,
            "{args:?}: margins.rs changed"
        );
        let beside: Vec<_> = std::fs::read_dir(self.dir.path().join("engine/src/eval"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(beside, ["margins.rs"]);
    }
}

fn with_samples(per_bucket: usize) -> CalibrationFile {
    file(&samples(9, per_bucket), 7, 1)
}

#[test]
fn tables_refuse_thin_or_empty_histograms() {
    let repo = MarginsRepo::new();
    let p5 = ["--lo", "5", "--hi", "95"];
    repo.refused(
        &with_samples(0),
        &p5,
        "KING_LO bucket 0 (`king` histogram, 0 samples): too few samples, at least 100 per \
         bucket (MIN_SAMPLES_PER_BUCKET)",
    );
    repo.refused(&with_samples(99), &p5, "99 samples): too few samples");
    // One empty bucket among full ones is named.
    let mut one_empty = with_samples(800);
    one_empty
        .histograms
        .as_mut()
        .unwrap()
        .lazy_residual
        .as_mut()
        .unwrap()[6] = sparse(&[]);
    repo.refused(
        &one_empty,
        &p5,
        "LAZY_RESID_LO bucket 6 (`lazy_residual` histogram, 0 samples): too few samples",
    );
    // 800 samples hold p2 (16 beyond it) but not p0.5 (4).
    repo.refused(
        &with_samples(800),
        &["--lo", "0.5", "--hi", "99.5"],
        "p0.5 rests on 4.0 samples beyond it, at least 5 needed (MIN_TAIL_SAMPLES)",
    );
}

#[test]
fn tables_refuse_bad_percentiles() {
    let repo = MarginsRepo::new();
    let good = with_samples(800);
    for (args, message) in [
        (
            &["--lo", "0", "--hi", "100"][..],
            "percentiles must satisfy 0 < lo < hi < 100 (got p0 / p100)",
        ),
        (&["--lo", "95", "--hi", "5"][..], "(got p95 / p5)"),
        (
            &["--lo", "95", "--hi", "5", "--allow-asymmetric"][..],
            "(got p95 / p5)",
        ),
        (&["--lo", "NaN", "--hi", "95"][..], "(got pNaN / p95)"),
        (&["--lo=-1", "--hi", "101"][..], "(got p-1 / p101)"),
        (
            &[
                "--lo",
                "5",
                "--hi",
                "95",
                "--king-lo",
                "0",
                "--king-hi",
                "100",
            ][..],
            "(got p0 / p100)",
        ),
        (
            &["--lo", "5", "--hi", "95", "--bucket", "king:3=100:0"][..],
            "(got p100 / p0)",
        ),
        (&["--lo", "10", "--hi", "98"][..], "not symmetric"),
    ] {
        repo.refused(&good, args, message);
    }
}

#[test]
fn tables_refuse_impossible_ranges_and_extreme_margins() {
    let repo = MarginsRepo::new();
    let p5 = ["--lo", "5", "--hi", "95"];
    // A histogram range with lo above hi, and one at the ends of i32.
    for (lo, hi) in [(100, -100), (100, 100), (i32::MIN + 1, 0), (0, i32::MAX)] {
        let mut bad = with_samples(800);
        let h = bad.histograms.as_mut().unwrap();
        (h.lo, h.hi) = (lo, hi);
        repo.refused(
            &bad,
            &p5,
            &format!(
                "cal.json: histograms: range [{lo}, {hi}) is not a range within [-100000, 100000]"
            ),
        );
    }
    // Samples beyond the recorded range: the tail percentile is in the underflow.
    let mut under = with_samples(800);
    let h = under.histograms.as_mut().unwrap();
    h.king.as_mut().unwrap()[2].underflow = 100;
    repo.refused(
        &under,
        &p5,
        "samples): p5 lies in the histogram's underflow (outside [-1500, 1500))",
    );
    let mut over = with_samples(800);
    over.histograms
        .as_mut()
        .unwrap()
        .super_lazy_residual
        .as_mut()
        .unwrap()[7]
        .overflow = 100;
    repo.refused(&over, &p5, "SUPER_LAZY_RESID_HI bucket 7");
    // A wide range whose recorded values are beyond any sane margin.
    let mut wide = with_samples(800);
    let h = wide.histograms.as_mut().unwrap();
    (h.lo, h.hi) = (-50_000, 50_000);
    for s in h.lazy_residual.as_mut().unwrap() {
        for bin in &mut s.bins {
            bin.0 += 5000;
        }
    }
    repo.refused(
        &wide,
        &p5,
        "LAZY_RESID_LO bucket 0 (`lazy_residual` histogram, 800 samples): p5 is",
    );
    repo.refused(
        &wide,
        &p5,
        "beyond the sane range of +-2000 cp (MARGIN_LIMIT)",
    );
}

#[test]
fn tables_write_no_bytes_of_the_path_into_source() {
    let repo = MarginsRepo::new();
    let name = "evil\n pub const INJECTED: i32 = 1; x.json";
    let cal = repo.dir.path().join(name);
    std::fs::write(&cal, serde_json::to_string(&with_samples(800)).unwrap()).unwrap();
    let root = repo.dir.path().to_string_lossy().into_owned();
    let output = lab(&[
        "--repo",
        &root,
        "tables",
        &cal.to_string_lossy(),
        "--lo",
        "5",
        "--hi",
        "95",
        "--apply",
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let updated = String::from_utf8(repo.margins()).unwrap();
    assert!(
        !updated
            .lines()
            .any(|l| l.trim_start().starts_with("pub const INJECTED")),
        "{updated}"
    );
    let begin =
        updated.find(margins_source::BEGIN_MARKER).unwrap() + margins_source::BEGIN_MARKER.len();
    let end = updated.find(margins_source::END_MARKER).unwrap();
    let block: Vec<&str> = updated[begin..end].lines().collect();
    // The source comment and the nine tables (the king tables wrapped as rustfmt wraps them),
    // then the kept futility margins with their doc.
    assert!(
        block[0].starts_with("// source: evil__pub_const_INJECTED__i32___1__x.json (7 positions"),
        "{}",
        block[0]
    );
    let (last, tables) = (block.len() - 1, &block[1..block.len() - 2]);
    assert!(
        tables
            .iter()
            .all(|l| l.starts_with("pub const ") || l.starts_with("    [") || *l == "];"),
        "{block:?}"
    );
    assert_eq!(
        tables
            .iter()
            .filter(|l| l.starts_with("pub const "))
            .count(),
        9
    );
    assert!(block[last - 1].starts_with("/// QSearch futility"));
    assert!(block[last].starts_with("pub const FUTILITY_BASE_MARGIN_BY_SOURCE:"));
    assert_eq!(tables::safe_origin(""), "calibration file");
    assert_eq!(tables::safe_origin(&"é".repeat(100)).len(), 64);
}

/// The lab's record of shard `index` of `count` of a 30-position pool.
fn provenance(index: u64, count: u64) -> ShardProvenance {
    ShardProvenance {
        pool: "lab/pools/test.epd".to_string(),
        pool_digest: "5d1e2c0e".to_string(),
        pool_positions: 30,
        revision: "HEAD".to_string(),
        tree: "0123abcd".to_string(),
        shard_count: count,
        shards: vec![index],
        margins: None,
        measured: None,
    }
}

/// Shard `index` of 3 of the 30-position pool (10 positions each), with its own samples.
fn shard(index: u64) -> CalibrationFile {
    let mut f = file(&samples(20 + index, 50 * index as usize), 10, index);
    f.lab = Some(provenance(index, 3));
    f
}

fn merge_files(files: &[(&str, CalibrationFile)]) -> anyhow::Result<CalibrationFile> {
    let named: Vec<(String, CalibrationFile)> = files
        .iter()
        .map(|(name, f)| (name.to_string(), f.clone()))
        .collect();
    merge_shards(&named)
}

fn merge_error(files: &[(&str, CalibrationFile)]) -> String {
    match merge_files(files) {
        Ok(_) => panic!("merged, but should have been refused"),
        Err(error) => format!("{error:#}"),
    }
}

#[test]
fn shard_merges_check_provenance_and_coverage() {
    let (a, b, c) = (shard(1), shard(2), shard(3));
    // Every shard, in any order: the whole pool, recorded as shard 1 of 1.
    let all = merge_files(&[("a", a.clone()), ("b", b.clone()), ("c", c.clone())]).unwrap();
    let other = merge_files(&[("c", c.clone()), ("a", a.clone()), ("b", b.clone())]).unwrap();
    assert_eq!(all, other);
    assert_eq!(all.positions, 30);
    let lab = all.lab.as_ref().unwrap();
    assert_eq!((lab.shard_count, lab.shards.clone()), (1, vec![1]));
    // A partial merge keeps its shards, and merges on with the rest.
    let ab = merge_files(&[("a", a.clone()), ("b", b.clone())]).unwrap();
    assert_eq!(ab.lab.as_ref().unwrap().shards, [1, 2]);
    assert_eq!(
        merge_files(&[("ab", ab.clone()), ("c", c.clone())]).unwrap(),
        all
    );

    // Duplicates and overlaps.
    assert_eq!(
        merge_error(&[("a", a.clone()), ("b", b.clone()), ("a2", a.clone())]),
        "a2 is the same run as a (identical contents): give each shard once"
    );
    let mut a_again = a.clone();
    a_again.nodes += 1;
    assert!(merge_error(&[("a", a.clone()), ("a'", a_again)])
        .contains("a and a' both cover shard 1/3: each position must be counted once"));
    assert!(merge_error(&[("ab", ab.clone()), ("b", b.clone())])
        .contains("ab and b both cover shard 2/3"));

    // Each differing field is named with both files.
    let differ = |change: &dyn Fn(&mut CalibrationFile), expected: &str| {
        let mut changed = b.clone();
        change(&mut changed);
        let error = merge_error(&[("a.json", a.clone()), ("b.json", changed)]);
        assert!(error.contains(expected), "{expected}: {error}");
    };
    fn record(f: &mut CalibrationFile) -> &mut ShardProvenance {
        f.lab.as_mut().unwrap()
    }
    differ(
        &|f| record(f).pool_digest = "ffff".into(),
        "pool: a.json has lab/pools/test.epd (5d1e2c0e), b.json has lab/pools/test.epd (ffff)",
    );
    differ(
        &|f| record(f).tree = "9999".into(),
        "engine tree: a.json has 0123abcd (HEAD), b.json has 9999 (HEAD)",
    );
    differ(&|f| f.depth = 7, "depth: a.json has 6, b.json has 7");
    differ(
        &|f| f.modes = vec!["residual".into()],
        "modes: a.json has residual,marginsafety,qfutility, b.json has residual",
    );
    differ(&|f| f.hash_mb = 64, "hash_mb: a.json has 16, b.json has 64");
    differ(
        &|f| {
            record(f).shard_count = 4;
            record(f).pool_positions = 40;
        },
        "pool positions: a.json has 30, b.json has 40; shard count: a.json has 3, b.json has 4",
    );
    // The positions must be what the shard holds.
    differ(
        &|f| f.positions = 11,
        "b.json: 11 positions, but shard(s) [2] of 3 of a 30-position pool hold 10",
    );
    // Files without the lab's record cannot be checked for overlaps.
    let mut bare = b.clone();
    bare.lab = None;
    assert!(merge_error(&[("a", a.clone()), ("bare.json", bare)])
        .starts_with("bare.json: no shard record (not written by `lab calibrate`)"));
}

#[test]
fn shard_merges_use_checked_arithmetic() {
    let (a, b) = (shard(1), shard(2));
    let half = u64::MAX / 2 + 1;
    let mut x = a.clone();
    let mut y = b.clone();
    for f in [&mut x, &mut y] {
        let king = &mut f.histograms.as_mut().unwrap().king.as_mut().unwrap()[3];
        king.bins = vec![(17, half)];
        king.underflow = 0;
        king.overflow = 0;
    }
    let error = merge_error(&[("x", x.clone()), ("y", y)]);
    assert!(
        error.contains(&format!(
            "merging y: histograms.king[3] bin 17: {half} + {half} overflows a u64"
        )),
        "{error}"
    );
    // Bins that each fit but whose total does not: named too.
    let mut z = b.clone();
    z.histograms.as_mut().unwrap().king.as_mut().unwrap()[3].bins = vec![(18, half)];
    let error = merge_error(&[("x", x), ("z", z)]);
    assert!(
        error.contains("the merged run: histograms.king[3]: the counts overflow a u64"),
        "{error}"
    );
    for (change, field) in [
        (
            (|f: &mut CalibrationFile| f.nodes = u64::MAX) as fn(&mut CalibrationFile),
            "nodes: ",
        ),
        (|f| f.exit_rate.calls = u64::MAX, "exit_rate.calls: "),
        (
            |f| f.margin_safety.as_mut().unwrap().lazy.by_side_buckets[2][5].positions = u64::MAX,
            "margin_safety.lazy.by_side_buckets[2][5].positions: ",
        ),
    ] {
        let (mut big_a, mut big_b) = (a.clone(), b.clone());
        change(&mut big_a);
        change(&mut big_b);
        let error = merge_error(&[("a", big_a), ("big", big_b)]);
        assert!(
            error.contains(field) && error.contains("overflows a u64"),
            "{error}"
        );
    }
}

#[test]
fn calibration_files_with_wrong_shapes_are_refused_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let good = shard(1);
    for (change, message) in [
        (
            (|f: &mut CalibrationFile| f.exit_rate.by_material_bucket.truncate(3))
                as fn(&mut CalibrationFile),
            "exit_rate.by_material_bucket: 3 rows, expected 8",
        ),
        (
            |f| {
                f.histograms
                    .as_mut()
                    .unwrap()
                    .lazy_residual
                    .as_mut()
                    .unwrap()
                    .push(sparse(&[]))
            },
            "histograms.lazy_residual: 9 rows, expected 8",
        ),
        (
            |f| f.margin_safety.as_mut().unwrap().super_lazy.by_side_buckets[4].truncate(7),
            "margin_safety.super_lazy.by_side_buckets[4]: 7 rows, expected 8",
        ),
        (
            |f| {
                let king = f.histograms.as_mut().unwrap().king.as_mut().unwrap();
                king.extend(king.clone()[..4].to_vec())
            },
            format!(
                "histograms.king: 12 rows, expected 8 per danger class for 1 to {DANGER_CLASSES} classes"
            )
            .leak(),
        ),
        (
            |f| {
                let king = f.histograms.as_mut().unwrap().king.as_mut().unwrap();
                *king = vec![king.clone(); DANGER_CLASSES + 1].concat()
            },
            format!(
                "histograms.king: {} rows, expected 8 per danger class for 1 to {DANGER_CLASSES} classes",
                8 * (DANGER_CLASSES + 1)
            )
            .leak(),
        ),
        (
            |f| f.margin_safety.as_mut().unwrap().lazy.by_danger_class = Some(vec![vec![]; 8]),
            format!("margin_safety.lazy.by_danger_class[0]: 0 rows, expected {DANGER_CLASSES}")
                .leak(),
        ),
        (
            |f| {
                let lazy = &mut f.margin_safety.as_mut().unwrap().lazy;
                lazy.by_danger_class = Some(danger_classes(&lazy.by_material_bucket));
                lazy.by_danger_class.as_mut().unwrap()[3][1].exits += 1;
            },
            "margin_safety.lazy.by_danger_class[3]: 1004 exits over the classes, but material \
             bucket 3 has 1003",
        ),
        (
            |f| {
                let lazy = &mut f.margin_safety.as_mut().unwrap().lazy;
                lazy.by_danger_class = Some(danger_classes(&lazy.by_material_bucket));
                lazy.by_danger_class.as_mut().unwrap()[5][0].exceeded = 1 << 40;
            },
            "margin_safety.lazy.by_danger_class[5][0]: exceeded 1099511627776 is more than exits",
        ),
        (
            |f| f.margin_safety.as_mut().unwrap().lazy.by_material_bucket[1].exceeded = 1 << 40,
            "margin_safety.lazy.by_material_bucket[1]: exceeded 1099511627776 is more than exits",
        ),
        (
            |f| f.exit_rate.exits = [u64::MAX, 1, 0],
            "exit_rate.exits: the counts overflow a u64 when added",
        ),
        (
            |f| f.lab.as_mut().unwrap().shards = vec![2, 2],
            "lab.shards: [2, 2] is not a set of distinct shards 1..=3",
        ),
        (|f| f.depth = 0, "depth: 0 is not a search depth"),
    ] {
        let mut bad = good.clone();
        change(&mut bad);
        let path = save(dir.path(), "bad.json", &bad);
        let error = format!("{:#}", CalibrationFile::load(Path::new(&path)).unwrap_err());
        assert!(error.starts_with(&format!("{path}: {message}")), "{error}");
        // And through the command line: exit 2, one line, the file and the field.
        let a = save(dir.path(), "a.json", &shard(2));
        let output = lab(&["calibrate", "merge", &a, &path]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(message),
            "{}",
            text(&output)
        );
    }
}

#[test]
fn merge_command_refuses_a_file_given_twice_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = save(dir.path(), "a.json", &shard(1));
    let b = save(dir.path(), "b.json", &shard(2));
    let copy = save(dir.path(), "copy.json", &shard(1));
    let out = dir.path().join("merged.json");
    let out_arg = out.to_string_lossy().into_owned();
    let same_path = format!("{}/./a.json", dir.path().display());
    for (files, message) in [
        (
            vec![&a, &b, &a],
            format!("{a} is given twice (also as {a})"),
        ),
        (
            vec![&a, &b, &same_path],
            format!("{same_path} is given twice (also as {a})"),
        ),
        (
            vec![&a, &b, &copy],
            format!("{copy} is the same run as {a} (identical contents)"),
        ),
    ] {
        let mut args = vec!["calibrate", "merge"];
        args.extend(files.iter().map(|s| s.as_str()));
        args.extend(["--out", &out_arg]);
        let output = lab(&args);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(&message),
            "{}",
            text(&output)
        );
        assert!(!out.exists());
    }
    let output = lab(&["calibrate", "merge", &a, &b, "--out", &out_arg]);
    assert!(output.status.success(), "{}", text(&output));
    let merged = CalibrationFile::load(&out).unwrap();
    assert_eq!(merged.positions, 20);
    assert_eq!(merged.lab.unwrap().shards, [1, 2]);
    // A calibration file is never replaced: the second merge is refused before it reads.
    let before = std::fs::read(&out).unwrap();
    let output = lab(&["calibrate", "merge", &a, &b, "--out", &out_arg]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("already exists: remove it or choose another --out"),
        "{}",
        text(&output)
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
}

#[test]
fn pool_output_is_checked_before_generating() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    for (out, message) in [
        (
            dir.path().to_path_buf(),
            "is a directory; give the pool file's name",
        ),
        (file.join("pool.epd"), "plain-file is not a directory"),
        (file.join("sub/pool.epd"), "plain-file is not a directory"),
        (
            file.clone(),
            "already exists: remove it or choose another --out",
        ),
    ] {
        for book in [false, true] {
            let out_arg = out.to_string_lossy().into_owned();
            let mut args = vec!["pool", "generate", "--count", "10000000", "--out", &out_arg];
            if book {
                args.push("--book");
            }
            // Without --quiet, so a started generation would show.
            let output = Command::new(env!("CARGO_BIN_EXE_lab"))
                .args(&args)
                .output()
                .unwrap();
            assert_eq!(output.status.code(), Some(2), "{}", text(&output));
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains(message), "{stderr}");
            assert!(!stderr.contains("generating"), "{stderr}");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // A missing directory is fine: it is created when the pool is written.
    pool::check_output(&dir.path().join("new/dir/pool.epd")).unwrap();
    assert!(!dir.path().join("new").exists());
}

/// Samples of shard `index` of 3 of the 30-position pool: as many calls per bucket as its exit
/// rate counts, at most `capacity` kept, each from one of the shard's positions.
fn with_replay_samples(mut f: CalibrationFile, index: u64, capacity: u64) -> CalibrationFile {
    let mut rng = SplitMix::new(index);
    let seen: Vec<u64> = f
        .exit_rate
        .by_material_bucket
        .iter()
        .map(|row| row.iter().sum())
        .collect();
    let by_material_bucket = seen
        .iter()
        .map(|&calls| {
            (0..calls.min(capacity))
                .map(|_| SampleRow {
                    position: (3 * rng.below(10) as u64 + index - 1) as u32,
                    search: rng.below(2) as u8,
                    my_bucket: rng.below(8) as u8,
                    opp_bucket: rng.below(8) as u8,
                    alpha: -20,
                    beta: 20,
                    super_lazy: rng.below(400) as i32 - 200,
                    lazy: rng.below(400) as i32 - 200,
                    full: rng.below(400) as i32 - 200,
                    race: rng.below(2) as u8,
                    my_class: rng.below(2) as u8,
                    opp_class: rng.below(2) as u8,
                })
                .collect()
        })
        .collect();
    f.modes.push("samples".to_string());
    f.samples = Some(SampleRows {
        capacity,
        seed: 1,
        seen,
        by_material_bucket,
    });
    f
}

fn sampled_shard(index: u64) -> CalibrationFile {
    with_replay_samples(shard(index), index, 100)
}

#[test]
fn merged_samples_are_a_sample_of_both_shards_with_the_calls_summed() {
    let (a, b, c) = (sampled_shard(1), sampled_shard(2), sampled_shard(3));
    let ab = merge_files(&[("a", a.clone()), ("b", b.clone())]).unwrap();
    let samples = ab.samples.as_ref().unwrap();
    let (sa, sb) = (a.samples.as_ref().unwrap(), b.samples.as_ref().unwrap());
    for bucket in 0..8 {
        assert_eq!(samples.seen[bucket], sa.seen[bucket] + sb.seen[bucket]);
        let kept = &samples.by_material_bucket[bucket];
        assert_eq!(kept.len(), 100, "the capacity, as each shard's");
        let from = |s: &SampleRows| {
            kept.iter()
                .filter(|x| s.by_material_bucket[bucket].contains(x))
                .count()
        };
        // Every sample is one of a shard's, drawn once; both shards contribute.
        assert_eq!(from(sa) + from(sb), 100);
        assert!(from(sa) > 20 && from(sb) > 20, "{} {}", from(sa), from(sb));
        assert!(kept.iter().all(|s| s.position % 3 < 2));
    }
    // The order the files come in changes nothing; shard 3 merges on.
    assert_eq!(
        merge_files(&[("b", b.clone()), ("a", a.clone())]).unwrap(),
        ab
    );
    let all = merge_files(&[("c", c), ("a", a), ("b", b)]).unwrap();
    let positions: std::collections::BTreeSet<u32> = all
        .samples
        .unwrap()
        .by_material_bucket
        .iter()
        .flatten()
        .map(|s| s.position)
        .collect();
    assert_eq!(
        positions
            .iter()
            .map(|p| p % 3)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        3
    );
}

#[test]
fn merged_samples_draw_each_run_by_its_share_of_the_calls() {
    // Run a made 1,000 calls and b 3,000; each kept 100. A uniform sample of the 4,000 holds
    // a's calls a quarter of the time; a merge that drew by kept samples would hold half.
    let run = |seed: u64, first: u32, seen: u64| SampleRows {
        capacity: 100,
        seed,
        seen: vec![seen],
        by_material_bucket: vec![(0..100)
            .map(|i| SampleRow {
                position: first + i,
                search: 0,
                my_bucket: 0,
                opp_bucket: 0,
                alpha: 0,
                beta: 1,
                super_lazy: 0,
                lazy: 0,
                full: 0,
                race: 0,
                my_class: 0,
                opp_class: 0,
            })
            .collect()],
    };
    let mut from_a = 0;
    let mut picked = vec![0u32; 100];
    for seed in 0..400 {
        let merged = merge_samples(&run(seed, 0, 1000), &run(7, 1000, 3000)).unwrap();
        assert_eq!(merged.seen, [4000]);
        assert_eq!(merged.by_material_bucket[0].len(), 100);
        for s in &merged.by_material_bucket[0] {
            if s.position < 1000 {
                from_a += 1;
                picked[s.position as usize] += 1;
            }
        }
    }
    // 40,000 draws, a quarter expected: 10,000, sd ~ 87 (less without replacement).
    assert!((9_600..=10_400).contains(&from_a), "{from_a}");
    // And a's samples are drawn alike: 100 each on average.
    assert!(
        picked.iter().all(|&n| (55..=150).contains(&n)),
        "{picked:?}"
    );
    // Fewer calls than the capacity: everything is kept.
    let mut small = run(1, 0, 30);
    small.by_material_bucket[0].truncate(30);
    let mut other = run(2, 1000, 50);
    other.by_material_bucket[0].truncate(50);
    let merged = merge_samples(&small, &other).unwrap();
    assert_eq!(merged.by_material_bucket[0].len(), 80);
    let mut capacity = run(1, 0, 30);
    capacity.capacity = 200;
    assert_eq!(
        merge_samples(&capacity, &other).unwrap_err().to_string(),
        "cannot merge samples of capacity 200 and 100"
    );
}

#[test]
fn samples_out_of_range_are_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = sampled_shard(1);
    CalibrationFile::parse(&serde_json::to_string(&good).unwrap(), "good").unwrap();
    fn first(f: &mut CalibrationFile) -> &mut SampleRow {
        &mut f.samples.as_mut().unwrap().by_material_bucket[2][5]
    }
    for (change, message) in [
        (
            (|f: &mut CalibrationFile| first(f).search = 2) as fn(&mut CalibrationFile),
            "samples.by_material_bucket[2][5]: search 2 is not 0 (main) or 1 (quiescence)",
        ),
        (
            |f| first(f).my_bucket = 8,
            "samples.by_material_bucket[2][5]: my_bucket 8 is not a side bucket 0..8",
        ),
        (
            |f| first(f).opp_bucket = 9,
            "samples.by_material_bucket[2][5]: opp_bucket 9 is not a side bucket 0..8",
        ),
        (
            |f| first(f).race = 2,
            "samples.by_material_bucket[2][5]: race 2 is not 0 or 1",
        ),
        (
            |f| first(f).my_class = DANGER_CLASSES as u8,
            format!(
                "samples.by_material_bucket[2][5]: my_class {DANGER_CLASSES} is not a danger class \
                 0..{DANGER_CLASSES}"
            )
            .leak(),
        ),
        (
            |f| first(f).opp_class = 7,
            format!(
                "samples.by_material_bucket[2][5]: opp_class 7 is not a danger class \
                 0..{DANGER_CLASSES}"
            )
            .leak(),
        ),
        (
            |f| first(f).position = 1,
            "samples.by_material_bucket[2][5]: position 1 is not in shard(s) [1] of 3 of the \
             30-position pool",
        ),
        (
            |f| first(f).position = 30,
            "position 30 is not in shard(s) [1] of 3 of the 30-position pool",
        ),
        (
            |f| {
                let s = *first(f);
                f.samples.as_mut().unwrap().by_material_bucket[2].push(s)
            },
            "samples.by_material_bucket[2]: 101 samples, expected 100 (capacity 100, seen 352)",
        ),
        (
            |f| f.samples.as_mut().unwrap().seen[4] += 1,
            "samples.seen[4]: 355 calls, but exit_rate counts 354 in material bucket 4",
        ),
        (
            |f| {
                f.samples
                    .as_mut()
                    .unwrap()
                    .seen
                    .pop()
                    .map(drop)
                    .unwrap_or(())
            },
            "samples.seen: 7 rows, expected 8",
        ),
        (
            |f| f.samples.as_mut().unwrap().capacity = 0,
            "samples.capacity: 0, expected at least 1",
        ),
    ] {
        let mut bad = good.clone();
        change(&mut bad);
        let path = save(dir.path(), "bad.json", &bad);
        let error = format!("{:#}", CalibrationFile::load(Path::new(&path)).unwrap_err());
        assert!(error.starts_with(&format!("{path}: ")), "{error}");
        assert!(error.contains(message), "{message}: {error}");
        let a = save(dir.path(), "a.json", &sampled_shard(2));
        let output = lab(&["calibrate", "merge", &a, &path]);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
    }
    // A sample field beyond its type is refused by the reader, naming the file.
    let text_of_good = serde_json::to_string(&good).unwrap();
    let first_sample =
        serde_json::to_string(&good.samples.as_ref().unwrap().by_material_bucket[0][0]).unwrap();
    let broken = text_of_good.replacen(&first_sample, "[0,0,0,0,0,0,0,0,0,300]", 1);
    let error = CalibrationFile::parse(&broken, "wide.json")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("wide.json: malformed calibration file"),
        "{error}"
    );
}

/// `by_danger_class` tallies that add up to `by_material_bucket`: a third of each bucket's exits
/// (and of its exceeded) in danger class 1.
fn danger_classes(by_material_bucket: &[Tally]) -> Vec<Vec<Tally>> {
    by_material_bucket
        .iter()
        .map(|t| {
            let danger = tally(t.exits / 3, t.exceeded / 3, 0, 0);
            let calm = tally(t.exits - danger.exits, t.exceeded - danger.exceeded, 0, 0);
            vec![calm, danger]
        })
        .collect()
}

/// A run of an engine with danger classes: king histograms of two classes (class 1's from
/// `danger`), margin safety by class, and samples whose last two fields are classes.
fn two_class_file(base: CalibrationFile, seed: u64, danger: &Samples) -> CalibrationFile {
    let shard = base.lab.as_ref().map_or(1, |lab| lab.shards[0]);
    let mut f = with_replay_samples(base, shard, 100);
    let king = f.histograms.as_mut().unwrap().king.as_mut().unwrap();
    king.extend(danger.0[2].iter().map(|v| sparse(v)));
    let safety = f.margin_safety.as_mut().unwrap();
    for tier in [&mut safety.super_lazy, &mut safety.lazy] {
        tier.by_danger_class = Some(danger_classes(&tier.by_material_bucket));
    }
    let mut rng = SplitMix::new(seed);
    for bucket in &mut f.samples.as_mut().unwrap().by_material_bucket {
        for s in bucket {
            (s.my_class, s.opp_class) = (rng.below(2) as u8, rng.below(2) as u8);
        }
    }
    f
}

/// The rows of the array constant `name` in `source`, nested (`[[..], [..]]`) or flat (one
/// row), however it is wrapped.
fn table_rows(source: &str, name: &str) -> Vec<Vec<i32>> {
    let start = source.find(&format!("pub const {name}:")).unwrap();
    let rest = &source[start..];
    let equals = rest.find('=').unwrap();
    let end = equals + rest[equals..].find("];").unwrap() + 1;
    let list: String = rest[equals + 1..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let inner = &list[1..list.len() - 1];
    let ints = |row: &str| -> Vec<i32> {
        row.split(',')
            .filter(|v| !v.is_empty())
            .map(|v| v.parse().unwrap())
            .collect()
    };
    if inner.starts_with('[') {
        inner
            .split(']')
            .map(|row| row.trim_start_matches(',').trim_start_matches('['))
            .filter(|row| !row.is_empty())
            .map(ints)
            .collect()
    } else {
        vec![ints(inner)]
    }
}

#[test]
fn files_with_danger_classes_load_merge_and_keep_old_files_loading() {
    let dir = tempfile::tempdir().unwrap();
    let danger = samples(31, 200);
    let two = two_class_file(shard(1), 5, &danger);
    let path = save(dir.path(), "two.json", &two);
    let loaded = CalibrationFile::load(Path::new(&path)).unwrap();
    assert_eq!(loaded, two, "every field round-trips");
    assert_eq!(loaded.histogram_set("king").unwrap().len(), 16);
    // A sample is written with twelve fields.
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let first = &value["samples"]["by_material_bucket"][0][0];
    assert_eq!(first.as_array().unwrap().len(), 12, "{first}");

    // The same file as an engine without danger classes writes it: ten-field samples, no
    // tallies by class, one class of king histograms. It loads, its classes 0.
    let mut old = value.clone();
    for bucket in old["samples"]["by_material_bucket"].as_array_mut().unwrap() {
        for sample in bucket.as_array_mut().unwrap() {
            sample.as_array_mut().unwrap().truncate(10);
        }
    }
    for tier in ["super_lazy", "lazy"] {
        old["margin_safety"][tier]
            .as_object_mut()
            .unwrap()
            .remove("by_danger_class");
    }
    old["histograms"]["king"]
        .as_array_mut()
        .unwrap()
        .truncate(8);
    let old_file = CalibrationFile::parse(&old.to_string(), "old.json").unwrap();
    let sample = old_file.samples.as_ref().unwrap().by_material_bucket[0][0];
    assert_eq!((sample.my_class, sample.opp_class), (0, 0));
    assert_eq!(old_file.histogram_set("king").unwrap().len(), 8);
    assert!(old_file
        .margin_safety
        .as_ref()
        .unwrap()
        .lazy
        .by_danger_class
        .is_none());
    // A sample of 11 or 13 fields is neither.
    for length in [11, 13] {
        let mut bad = value.clone();
        let sample = bad["samples"]["by_material_bucket"][0][0]
            .as_array_mut()
            .unwrap();
        sample.resize(length, serde_json::json!(0));
        let error = format!(
            "{:#}",
            CalibrationFile::parse(&bad.to_string(), "bad.json").unwrap_err()
        );
        assert!(
            error.contains("a sample array of 10 or 12 fields"),
            "{length}: {error}"
        );
    }

    // Shards of two classes merge, the tallies by class summed; a run of two classes and one
    // of one do not.
    let mut other = two_class_file(shard(2), 6, &samples(32, 200));
    other.lab = Some(provenance(2, 3));
    other.positions = 10;
    let merged = merge_files(&[("a", two.clone()), ("b", other.clone())]).unwrap();
    // The merge command's report: the king term's percentiles and the margin safety by class.
    let (a, b) = (
        save(dir.path(), "a.json", &two),
        save(dir.path(), "b.json", &other),
    );
    let report = lab(&["calibrate", "merge", &a, &b]);
    assert!(report.status.success(), "{}", text(&report));
    let printed = String::from_utf8_lossy(&report.stdout);
    for heading in [
        "King term, cp, defending king's danger class 0 [king]",
        "King term, cp, defending king's danger class 1 [king]",
        "Margin safety by the danger class of the king each exit bet on",
        "class 1 exceeded / exits",
    ] {
        assert!(printed.contains(heading), "{heading}: {printed}");
    }
    let by_class = |f: &CalibrationFile| {
        f.margin_safety
            .as_ref()
            .unwrap()
            .lazy
            .by_danger_class
            .clone()
            .unwrap()
    };
    assert_eq!(
        by_class(&merged)[4][1].exits,
        by_class(&two)[4][1].exits + by_class(&other)[4][1].exits
    );
    assert_eq!(merged.histogram_set("king").unwrap().len(), 16);
    let mut one_class = other.clone();
    one_class
        .histograms
        .as_mut()
        .unwrap()
        .king
        .as_mut()
        .unwrap()
        .truncate(8);
    let error = merge_error(&[("a", two.clone()), ("b", one_class)]);
    assert!(
        error.contains("histograms.king holds 2 danger class(es) in one run and 1 in the other"),
        "{error}"
    );
    let mut no_tallies = other.clone();
    no_tallies
        .margin_safety
        .as_mut()
        .unwrap()
        .lazy
        .by_danger_class = None;
    let error = merge_error(&[("a", two), ("b", no_tallies)]);
    assert!(
        error.contains("margin_safety.lazy.by_danger_class is in one run only"),
        "{error}"
    );
}

#[test]
fn tables_write_each_danger_class_from_its_own_histograms() {
    let repo = MarginsRepo::new();
    let danger = samples(31, 800);
    let calm = samples(21, 800);
    let mut base = file(&calm, 10, 1);
    base.lab = Some(provenance(1, 3));
    let two = two_class_file(base, 5, &danger);
    let cal = save(repo.dir.path(), "cal.json", &two);
    let root = repo.dir.path().to_string_lossy().into_owned();
    let output = lab(&[
        "--repo",
        &root,
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
        "king1:6=10:90",
        "--bucket",
        "king:2=4:96",
        "--apply",
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let updated = String::from_utf8(repo.margins()).unwrap();
    // Class 0 from the first eight king histograms, class 1 from the next eight.
    let calm = &calm.0[2];
    let expect = |values: &[Vec<i32>], pick: &dyn Fn(usize) -> f64| -> Vec<i32> {
        (0..8).map(|b| nearest_rank(&values[b], pick(b))).collect()
    };
    let low = |b: usize| if b == 2 { 4.0 } else { 2.0 };
    // A class the file has no histograms for (the engine has more) shares class 0's rows.
    let by_class = |calm: Vec<i32>, danger: Vec<i32>| -> Vec<Vec<i32>> {
        (0..DANGER_CLASSES)
            .map(|class| {
                if class == 1 {
                    danger.clone()
                } else {
                    calm.clone()
                }
            })
            .collect()
    };
    assert_eq!(
        table_rows(&updated, "KING_LO"),
        by_class(
            expect(calm, &low),
            expect(&danger.0[2], &|b| if b == 6 { 10.0 } else { low(b) })
        )
    );
    assert_eq!(
        table_rows(&updated, "KING_P50"),
        by_class(expect(calm, &|_| 50.0), expect(&danger.0[2], &|_| 50.0))
    );
    assert_eq!(
        table_rows(&updated, "KING_HI")[1][6],
        nearest_rank(&danger.0[2][6], 90.0)
    );
    let comment = updated
        .lines()
        .find(|l| l.starts_with("// source:"))
        .unwrap();
    assert!(
        comment.contains(
            "; king[0] p2/p98 p2/p98 p4/p96 p2/p98 p2/p98 p2/p98 p2/p98 p2/p98; king[1] p2/p98 \
             p2/p98 p4/p96 p2/p98 p2/p98 p2/p98 p10/p90 p2/p98;"
        ),
        "{comment}"
    );
    assert!(updated.contains("pub const KING_LO: [[i32; SIDE_BUCKETS]; DANGER_CLASSES] ="));
    // The block reads back: `lab tune --tables` takes the rewritten margins.rs.
    let margins = repo.dir.path().join(margins_source::MARGINS_FILE);
    let output = lab(&[
        "tune",
        &cal,
        "--tables",
        &margins.to_string_lossy(),
        "--format",
        "json",
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let king = &report["prediction"]["tables"]["king"];
    assert_eq!(
        king[1]["lo"],
        serde_json::json!(table_rows(&updated, "KING_LO")[1])
    );

    // A file with one class of king histograms gives every class class 0's rows, and refuses
    // a choice that would set class 1 apart.
    let one = with_samples(800);
    let output = lab(&[
        "tables",
        &save(repo.dir.path(), "one.json", &one),
        "--lo",
        "5",
        "--hi",
        "95",
    ]);
    assert!(output.status.success(), "{}", text(&output));
    let printed = String::from_utf8(output.stdout).unwrap();
    let rows = table_rows(&printed, "KING_LO");
    assert_eq!(rows.len(), DANGER_CLASSES, "{printed}");
    assert!(rows.iter().all(|row| row == &rows[0]), "{printed}");
    assert!(
        printed.contains("; king p5/p95; residuals p5/p95;"),
        "{printed}"
    );
    let untouched = MarginsRepo::new();
    untouched.refused(
        &one,
        &["--lo", "5", "--hi", "95", "--bucket", "king1:6=10:90"],
        "has king histograms for 1 danger class(es), so the king table of class 1 is class 0's",
    );
    untouched.refused(
        &one,
        &[
            "--lo",
            "5",
            "--hi",
            "95",
            "--bucket",
            &format!("king{DANGER_CLASSES}:6=10:90"),
        ],
        &format!("the danger class must be 0..={}", DANGER_CLASSES - 1),
    );
}
