//! `--export-json FILE` and `--export-markdown FILE`: the report written beside stdout, so one
//! measurement serves the terminal and CI.

mod common;

use common::FakeRepo;

#[test]
fn compare_exports_the_json_it_prints_and_a_markdown_report() {
    let repo = FakeRepo::new();
    repo.commit_constant("WORK_PER_NODE", "101");
    let out = tempfile::tempdir().unwrap();
    let json_file = out.path().join("reports/compare.json");
    let markdown_file = out.path().join("compare.md");
    let args = |format: &str| {
        vec![
            "compare".to_string(),
            "HEAD~1".to_string(),
            "HEAD".to_string(),
            "--rounds".to_string(),
            "2".to_string(),
            "--no-instructions".to_string(),
            "--threshold".to_string(),
            "50".to_string(),
            "--format".to_string(),
            format.to_string(),
            "--export-json".to_string(),
            json_file.display().to_string(),
            "--export-markdown".to_string(),
            markdown_file.display().to_string(),
        ]
    };
    let run_with = |format: &str| {
        let args = args(format);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        repo.lab(&args)
    };

    let run = run_with("json");
    assert_eq!(run.code, 0, "{run}");
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap())
            .expect("the exported JSON parses");
    assert_eq!(
        exported,
        run.json(),
        "the export is the --format json report"
    );
    assert_eq!(exported["kind"], "compare");
    let markdown = std::fs::read_to_string(&markdown_file).unwrap();
    assert!(
        markdown.starts_with("## lab compare: A `HEAD~1`"),
        "{markdown}"
    );
    assert!(
        markdown.contains(
            "| figure | A | B | B vs A (paired, 95% CI, n rounds) | medians B vs A (unpaired) |"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("**Verdict:"), "{markdown}");

    // Beside the terminal report, the same documents: stdout stays the human one.
    std::fs::remove_file(&json_file).unwrap();
    let run = run_with("terminal");
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.starts_with("lab compare: A = HEAD~1"), "{run}");
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    assert_eq!(exported["kind"], "compare");
    assert_eq!(exported["a"]["revision"]["spec"], "HEAD~1");
    assert!(!run.stderr.contains("\"schema_version\""), "{run}");
}

#[test]
fn an_unwritable_export_is_refused_before_anything_is_built() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let not_a_dir = out.path().join("file");
    std::fs::write(&not_a_dir, "").unwrap();
    let target = not_a_dir.join("report.json");
    let run = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--export-json",
        &target.display().to_string(),
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("cannot write"), "{run}");
    assert!(run.stdout.is_empty(), "{run}");
    assert!(
        repo.cache_entries("bin").is_empty(),
        "nothing was built: {run}"
    );
}

#[test]
fn bench_and_baseline_show_export_their_reports() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let bench_json = out.path().join("bench.json");
    let run = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--export-json",
        &bench_json.display().to_string(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bench_json).unwrap()).unwrap();
    assert_eq!(bench["kind"], "bench");
    assert_eq!(bench["revision"]["label"], "HEAD");

    let saved = repo.lab(&[
        "baseline",
        "save",
        "fake",
        "--rounds",
        "2",
        "--no-instructions",
    ]);
    assert_eq!(saved.code, 0, "{saved}");
    let shown_md = out.path().join("baseline.md");
    let shown = repo.lab(&[
        "baseline",
        "show",
        "fake",
        "--format",
        "json",
        "--export-markdown",
        &shown_md.display().to_string(),
    ]);
    assert_eq!(shown.code, 0, "{shown}");
    assert_eq!(shown.json()["kind"], "baseline");
    let markdown = std::fs::read_to_string(&shown_md).unwrap();
    assert!(markdown.starts_with("## baseline `fake`"), "{markdown}");
}

#[test]
fn an_export_onto_a_command_s_input_is_refused_before_anything_runs() {
    let repo = FakeRepo::new();
    let positions = repo.path().join("positions.epd");
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n";
    std::fs::write(&positions, fen).unwrap();
    let positions = positions.to_str().unwrap();
    let run = repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--positions",
        positions,
        "--export-json",
        positions,
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains("is the same file as --positions"),
        "{run}"
    );
    assert_eq!(
        std::fs::read_to_string(positions).unwrap(),
        fen,
        "untouched"
    );
    let tune = repo.lab(&["tune", positions, "--export-markdown", positions]);
    assert_eq!(tune.code, 2, "{tune}");
    assert!(tune.stderr.contains("the calibration file"), "{tune}");
    assert_eq!(
        std::fs::read_to_string(positions).unwrap(),
        fen,
        "untouched"
    );
}
