//! Calibration against the real engine: HEAD of this workspace, built with and without the
//! `calibrate` feature into the workspace's lab cache (`target/lab/bin/`, shared with `lab`
//! runs and between these tests, so only a cold cache builds: a few minutes once, then
//! seconds). Needs the engine committed. `LAB_CAL_TEST_REV` picks another revision than HEAD
//! (for example one whose builds are already cached).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use std::collections::BTreeSet;

use serde_json::Value;
use squall_lab::calibration::data::{CalibrationFile, SampleRow};
use squall_lab::engine::build::build_engine;
use squall_lab::engine::revision::{open_repository, resolve};
use squall_lab::paths::LabPaths;
use squall_lab::progress::Progress;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the lab lives in the workspace")
        .to_path_buf()
}

fn test_revision() -> String {
    std::env::var("LAB_CAL_TEST_REV").unwrap_or_else(|_| "HEAD".to_string())
}

fn small_pool() -> PathBuf {
    workspace().join("lab/pools/small.epd")
}

fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--repo")
        .arg(workspace())
        .arg("--quiet")
        .args(args)
        .output()
        .expect("running lab")
}

fn ok(output: Output) -> Output {
    assert!(
        output.status.success(),
        "lab failed ({:?}):\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A `lab compare` that measured: exit 0, or 1 when its speed verdict is a regression.
fn measured(output: Output) -> Output {
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "lab failed ({:?}):\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("calibration file"))
        .expect("calibration JSON")
}

#[test]
fn merged_shards_equal_the_unsharded_run_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let pool = small_pool().to_string_lossy().into_owned();
    let common = [
        "--pool",
        &pool,
        "--depth",
        "3",
        "--modes",
        "residual,marginsafety,qfutility,exitrate",
    ];
    let rev = test_revision();
    let full = path("full.json");
    let mut args = vec!["calibrate", &rev, "--jobs", "2", "--out", &full];
    args.extend(common);
    let results = path("full-results");
    args.extend(["--results", &results]);
    let report = String::from_utf8(ok(lab(&args)).stdout).unwrap();
    assert!(report.contains("Margin safety"), "{report}");
    assert!(report.contains("QSearch futility"), "{report}");

    // Three shards, each in one process: a different split from the two jobs above.
    let mut shard_files = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let out = path(&format!("shard-{}.json", &shard[..1]));
        let results = path(&format!("shard-{}", &shard[..1]));
        let mut args = vec![
            "calibrate",
            &rev,
            "--jobs",
            "1",
            "--shard",
            shard,
            "--out",
            &out,
            "--results",
            &results,
        ];
        args.extend(common);
        ok(lab(&args));
        shard_files.push(out);
    }
    let merged = path("merged.json");
    let mut args = vec!["calibrate", "merge"];
    args.extend(shard_files.iter().map(String::as_str));
    args.extend(["--out", &merged]);
    let merge_report = String::from_utf8(ok(lab(&args)).stdout).unwrap();
    assert!(merge_report.contains("Margin safety"));

    let (mut full, mut merged) = (json(Path::new(&full)), json(Path::new(&merged)));
    // When each run ended differs; the machine is this one for all of them.
    for file in [&mut full, &mut merged] {
        let measured = file["lab"]
            .as_object_mut()
            .and_then(|lab| lab.remove("measured"))
            .expect("the lab records when and where it calibrated");
        assert!(measured["measured_unix"].as_u64() > Some(0), "{measured}");
    }
    // The margins in force are the binary's (its bench reports them), with the percentiles
    // the source block's comment names.
    let margins = &full["lab"]["margins"];
    if test_revision() == "HEAD" {
        assert_eq!(
            margins["lazy_residual"]["hi"],
            serde_json::json!(squall::eval::margins::LAZY_RESID_HI),
            "{margins}"
        );
        for (class, row) in squall::eval::margins::KING_LO.iter().enumerate() {
            assert_eq!(margins["king"][class]["lo"], serde_json::json!(row));
        }
    }
    assert!(
        margins["lazy_residual"]["hi"].is_array(),
        "the margins in force are recorded: {margins}"
    );
    assert!(
        margins["super_lazy_residual"]["percentiles"].is_array(),
        "{margins}"
    );
    assert_eq!(full["positions"], 200);
    assert!(full["histograms"]["lazy_residual"][4]["bins"]
        .as_array()
        .is_some_and(|bins| !bins.is_empty()));
    assert_eq!(full, merged, "merged shards differ from the unsharded run");
    // The king term by danger class, and the exits by the class of the king they bet on.
    assert_eq!(
        full["histograms"]["king"].as_array().map(Vec::len),
        Some(8 * squall::tier::DANGER_CLASSES),
        "one row of king histograms per danger class"
    );
    assert!(
        merge_report.contains("Margin safety by the danger class"),
        "{merge_report}"
    );
    let by_class = &full["margin_safety"]["lazy"]["by_danger_class"];
    assert_eq!(by_class.as_array().map(Vec::len), Some(8), "{by_class}");

    // And any percentile reads back out of the saved bins.
    let hist = ok(lab(&["hist", &path("merged.json"), "50", "--set", "king"]));
    let text = String::from_utf8(hist.stdout).unwrap();
    assert!(
        text.contains("p50") && text.contains("attacker bucket"),
        "{text}"
    );
    assert!(text.contains("defending king's danger class 1"), "{text}");
}

#[test]
fn no_calibration_code_without_the_feature() {
    let workspace = workspace();
    let repo = open_repository(Some(&workspace)).unwrap();
    let paths = LabPaths::new(&workspace);
    paths.create_dirs().unwrap();
    let progress = Progress::new(true);
    let revision = resolve(&repo, &test_revision(), &paths).unwrap();
    let (plain, sampled) = {
        let _lock = paths.lock(|| ()).unwrap();
        (
            build_engine(&repo, &revision, &[], &paths, &progress).unwrap(),
            build_engine(&repo, &revision, &["calibrate"], &paths, &progress).unwrap(),
        )
    };

    // The samplers refuse to run ...
    let output = Command::new(&plain.path)
        .args(["calibrate", "residual", "--depth", "1", "--positions"])
        .arg(small_pool())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("without the `calibrate` feature"),
        "{stderr}"
    );
    // ... while the exit rate, which needs no sampler, works.
    let output = Command::new(&plain.path)
        .args(["calibrate", "exitrate", "--depth", "1", "--positions"])
        .arg(small_pool())
        .output()
        .unwrap();
    assert!(output.status.success());

    // ... and the code is not there: strings that only the sampler code and its JSON output
    // contain, and the sampler's source path in the line tables. The feature build is the
    // control that the probes can see anything at all.
    let probes: [&[u8]; 3] = [
        b"qfutility_excess",
        b"margin_safety",
        b"calibrate/sampler.rs",
    ];
    let contains = |haystack: &[u8], needle: &[u8]| {
        haystack
            .windows(needle.len())
            .any(|window| window == needle)
    };
    let plain_bytes = std::fs::read(&plain.path).unwrap();
    let sampled_bytes = std::fs::read(&sampled.path).unwrap();
    for probe in probes {
        let name = String::from_utf8_lossy(probe);
        assert!(
            !contains(&plain_bytes, probe),
            "plain build contains {name}"
        );
    }
    assert!(contains(&sampled_bytes, b"qfutility_excess"));
    assert!(contains(&sampled_bytes, b"margin_safety"));
}

#[test]
fn qfutility_sampling_does_not_change_the_measured_tree() {
    // Sampling QSearch futility searches the captures the search would prune, which grows the
    // tree; the engine runs it as a second pass so exit rates, residuals and margin safety
    // still describe the real search.
    let dir = tempfile::tempdir().unwrap();
    let run = |modes: &str| json(&calibrate_small(dir.path(), modes, modes, "1", &[]));
    let real = run("residual,marginsafety");
    let with_futility = run("residual,marginsafety,qfutility");
    for key in ["nodes", "exit_rate", "margin_safety"] {
        assert_eq!(real[key], with_futility[key], "{key} differs");
    }
    for set in ["lazy_residual", "super_lazy_residual", "king"] {
        assert_eq!(
            real["histograms"][set], with_futility["histograms"][set],
            "{set} differs"
        );
    }
    assert!(with_futility["histograms"]["qfutility_excess"][0]["bins"]
        .as_array()
        .is_some_and(|bins| !bins.is_empty()));
}

#[test]
fn compare_calibrate_puts_its_section_into_the_one_json_document() {
    let pool = small_pool().to_string_lossy().into_owned();
    let rev = test_revision();
    // Two rounds at depth 2 of one binary decide nothing about speed: on a loaded machine
    // they may read as a regression (exit 1). The document is what this test checks.
    let output = measured(lab(&[
        "compare",
        &rev,
        &rev,
        "--force",
        "--rounds",
        "2",
        "--depth",
        "2",
        "--no-instructions",
        "--calibrate",
        "--pool",
        &pool,
        "--calib-depth",
        "2",
        "--format",
        "json",
    ]));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains('{') && !stderr.contains("Calibration ("),
        "no report on stderr: {stderr}"
    );
    let report: Value =
        serde_json::from_slice(&output.stdout).expect("stdout is one JSON document");
    assert_eq!(report["kind"], "compare");
    let calibration = &report["calibration"];
    assert_eq!(calibration["depth"], 2);
    for side in ["a", "b"] {
        assert!(
            calibration[side]["exit_rate"]["calls"].as_u64().unwrap() > 0,
            "{calibration}"
        );
        assert!(
            calibration[side]["margin_safety"].is_object(),
            "{calibration}"
        );
    }
    assert!(calibration["stale"].is_array(), "{calibration}");
    if rev == "HEAD" {
        // The current futility margins, as the calibrated binary's bench reports them.
        assert_eq!(
            calibration["b"]["futility_current"],
            serde_json::json!(squall::eval::margins::FUTILITY_BASE_MARGIN_BY_SOURCE),
            "{calibration}"
        );
    }
}

/// The tier a replay sample exits in under the margin tables of this workspace, as the
/// engine's `evaluate` decides: super-lazy unless a pawn race is possible, then lazy, else
/// full.
fn predicted_tier(s: &SampleRow) -> usize {
    use squall::eval::margins;
    let pair = margins::Pair {
        my_bucket: usize::from(s.my_bucket),
        opp_bucket: usize::from(s.opp_bucket),
        my_class: usize::from(s.my_class),
        opp_class: usize::from(s.opp_class),
    };
    let exits = |m: margins::Margins, score: i32| m.exit(score, s.alpha, s.beta).is_some();
    if s.race == 0 && exits(margins::super_lazy(pair), s.super_lazy) {
        0
    } else if exits(margins::lazy(pair), s.lazy) {
        1
    } else {
        2
    }
}

/// `lab calibrate` of the small pool at depth 3 into `DIR/NAME.json`, which it returns.
fn calibrate_small(dir: &Path, name: &str, modes: &str, jobs: &str, extra: &[&str]) -> PathBuf {
    let pool = small_pool().to_string_lossy().into_owned();
    let out = dir.join(format!("{name}.json"));
    let results = dir.join(format!("{name}-results"));
    let (out_arg, results_arg) = (
        out.to_string_lossy().into_owned(),
        results.to_string_lossy().into_owned(),
    );
    let rev = test_revision();
    let mut args = vec![
        "calibrate",
        &rev,
        "--pool",
        &pool,
        "--depth",
        "3",
        "--jobs",
        jobs,
        "--modes",
        modes,
        "--out",
        &out_arg,
        "--results",
        &results_arg,
    ];
    args.extend(extra);
    ok(lab(&args));
    out
}

fn calibrate_samples(dir: &Path, name: &str, extra: &[&str]) -> CalibrationFile {
    CalibrationFile::load(&calibrate_small(dir, name, "samples,exitrate", "2", extra)).unwrap()
}

#[test]
fn replay_samples_of_every_call_predict_the_exits_exactly() {
    if test_revision() != "HEAD" {
        return; // the prediction uses this workspace's margin tables
    }
    let dir = tempfile::tempdir().unwrap();
    // Room for every call: the samples are the run's calls, each placed at its pool index.
    let file = calibrate_samples(
        dir.path(),
        "all",
        &["--shard", "2/3", "--samples-per-bucket", "1000000"],
    );
    let samples = file.samples.as_ref().expect("a samples run writes samples");
    for (bucket, kept) in samples.by_material_bucket.iter().enumerate() {
        let mut predicted = [0u64; 3];
        for s in kept {
            predicted[predicted_tier(s)] += 1;
            assert_eq!(
                s.position % 3,
                1,
                "shard 2 of 3 holds pool indices 1, 4, 7, ..."
            );
        }
        assert_eq!(
            predicted, file.exit_rate.by_material_bucket[bucket],
            "bucket {bucket}"
        );
    }
    let positions: BTreeSet<u32> = samples
        .by_material_bucket
        .iter()
        .flatten()
        .map(|s| s.position)
        .collect();
    assert!(
        positions.len() as u64 > file.positions * 9 / 10,
        "{positions:?}"
    );
}

#[test]
fn merged_shards_of_replay_samples_predict_the_exit_shares() {
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<String> = ["1/2", "2/2"]
        .iter()
        .enumerate()
        .map(|(i, shard)| {
            let name = format!("shard-{i}");
            calibrate_samples(
                dir.path(),
                &name,
                &["--shard", shard, "--samples-per-bucket", "500"],
            );
            dir.path()
                .join(format!("{name}.json"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let merged = dir.path().join("merged.json");
    ok(lab(&[
        "calibrate",
        "merge",
        &shards[0],
        &shards[1],
        "--out",
        &merged.to_string_lossy(),
    ]));
    let file = CalibrationFile::load(&merged).unwrap();
    let samples = file.samples.as_ref().unwrap();
    assert_eq!(samples.capacity, 500);
    let mut predicted = [0.0f64; 3];
    let mut parities = BTreeSet::new();
    for (kept, &seen) in samples.by_material_bucket.iter().zip(&samples.seen) {
        assert_eq!(kept.len() as u64, seen.min(500));
        for s in kept {
            predicted[predicted_tier(s)] += seen as f64 / kept.len() as f64;
            parities.insert(s.position % 2);
        }
    }
    assert_eq!(parities.len(), 2, "samples from both shards");
    if test_revision() == "HEAD" {
        let calls = file.exit_rate.calls as f64;
        for (tier, (&exits, estimate)) in file.exit_rate.exits.iter().zip(predicted).enumerate() {
            let measured = exits as f64 / calls;
            let estimate = estimate / calls;
            assert!(
                (measured - estimate).abs() < 0.03,
                "tier {tier}: measured {measured:.3}, predicted {estimate:.3}"
            );
        }
    }
}
