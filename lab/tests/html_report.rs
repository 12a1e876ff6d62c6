//! `--export-html FILE` and `lab report FILE.json --out FILE.html` end to end on the fake
//! engine: a self-contained page (no script, no network reference) with one SVG per plot,
//! the same bytes whether exported while measuring or drawn later from the stored JSON; and,
//! where chromium is installed, the page loaded headless with every SVG in its DOM.

mod common;

use common::browser::self_contained_svgs;
use common::{quick_compare, FakeRepo};

#[test]
fn compare_exports_a_page_that_lab_report_redraws_from_the_json() {
    let repo = FakeRepo::new();
    repo.commit_constant("WORK_PER_NODE", "101");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("compare.json");
    let html = out.path().join("pages/compare.html");
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "4",
        "--no-instructions",
        "--threshold",
        "50",
        "--export-json",
        &json.display().to_string(),
        "--export-html",
        &html.display().to_string(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let exported = std::fs::read_to_string(&html).unwrap();
    // NPS per round, the bootstrap, exits by bucket, the side-bucket heatmap; no --functions.
    assert_eq!(self_contained_svgs(&exported), 4, "{exported}");
    assert!(exported.contains("A = HEAD~1 ("), "the revisions are named");
    assert!(
        exported.contains("measured 2"),
        "the date comes from the JSON"
    );
    assert!(exported.contains("run compare with --functions"));
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        stored["speed"]["round_ratios"].as_array().map(Vec::len),
        Some(4),
        "{stored}"
    );
    assert!(stored["measured"]["measured_unix"].as_u64() > Some(0));

    let redrawn = out.path().join("redrawn.html");
    let report = repo.lab(&[
        "report",
        &json.display().to_string(),
        "--out",
        &redrawn.display().to_string(),
    ]);
    assert_eq!(report.code, 0, "{report}");
    assert_eq!(
        std::fs::read(&redrawn).unwrap(),
        exported.as_bytes(),
        "lab report draws the page --export-html wrote"
    );
    // The figures table and both verdicts at the top, before the first plot.
    let top = &exported[..exported.find("<svg").unwrap()];
    assert!(top.contains("<table class=\"figures\">"), "{top}");
    assert!(top.contains("<th>speed</th>") && top.contains("<th>instructions</th>"));
    assert!(
        top.contains("<th>B vs A (paired, 95% CI, n rounds)</th>")
            && top.contains("<th>medians B vs A (unpaired)</th>"),
        "{top}"
    );
    if let Some(dom) = common::browser::render_headless(&redrawn, 4, 3) {
        let table = dom
            .split("<table class=\"figures\">")
            .nth(1)
            .and_then(|rest| rest.split("</table>").next())
            .unwrap_or_else(|| panic!("no figures table in the DOM:\n{dom}"));
        for row in [
            "signature (nodes)",
            "NPS (median of 4 / 4)",
            "time per node",
        ] {
            assert!(table.contains(row), "{row}: {table}");
        }
        assert!(
            table.contains("n=4)"),
            "the paired change with its n: {table}"
        );
    }
    common::browser::assert_readable_layout(&redrawn);
}

#[test]
fn tiers_export_a_page() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("tiers.html");
    let run = repo.lab(&[
        "tiers",
        "HEAD",
        "--rounds",
        "3",
        "--no-instructions",
        "--export-html",
        &html.display().to_string(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(self_contained_svgs(&page), 4, "{page}");
    assert!(
        page.contains("<title>lab tiers: A = HEAD --full-eval"),
        "{page}"
    );
    let top = &page[..page.find("<svg").unwrap()];
    assert!(top.contains("<table class=\"figures\">"), "{top}");
    assert!(top.contains("<th>instructions</th>"), "{top}");
}

#[test]
fn an_engine_without_eval_exits_gets_a_sentence_instead_of_the_exit_plots() {
    let repo = FakeRepo::new();
    repo.commit_constant("WORK_PER_NODE", "101");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("compare.json");
    let json_path = json.display().to_string();
    let run = repo.lab(&quick_compare(
        "HEAD~1",
        "HEAD",
        &["--export-json", &json_path],
    ));
    assert_eq!(run.code, 0, "{run}");
    // As an openbench engine's report reads, and as a lab from before `measured` and
    // `round_ratios` wrote it.
    let mut stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    stored["a"]["eval"] = serde_json::Value::Null;
    stored["b"]["eval"] = serde_json::Value::Null;
    stored.as_object_mut().unwrap().remove("measured");
    stored["speed"]
        .as_object_mut()
        .unwrap()
        .remove("round_ratios");
    std::fs::write(&json, stored.to_string()).unwrap();
    let html = out.path().join("page.html");
    let report = repo.lab(&[
        "report",
        &json.display().to_string(),
        "--out",
        &html.display().to_string(),
    ]);
    assert_eq!(report.code, 0, "{report}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(self_contained_svgs(&page), 2, "{page}");
    assert!(page.contains("Eval exits: not reported"), "{page}");
    assert!(
        page.contains("the machine this page was drawn on"),
        "{page}"
    );
    assert!(
        page.contains("this JSON does not record round_ratios"),
        "{page}"
    );
}

#[test]
fn lab_report_of_a_missing_or_garbage_file_exits_2_with_one_line() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let garbage = out.path().join("garbage.json");
    std::fs::write(&garbage, "not json {").unwrap();
    let bench = out.path().join("bench.json");
    std::fs::write(&bench, r#"{"kind": "bench", "schema_version": 2}"#).unwrap();
    let html = out.path().join("x.html");
    for (input, says) in [
        (
            out.path().join("missing.json"),
            "cannot read the JSON report",
        ),
        (garbage, "is not JSON"),
        (bench, "not for kind \"bench\""),
    ] {
        let run = repo.lab(&[
            "report",
            &input.display().to_string(),
            "--out",
            &html.display().to_string(),
        ]);
        assert_eq!(run.code, 2, "{run}");
        assert_eq!(run.stderr.lines().count(), 1, "{run}");
        assert!(run.stderr.starts_with("error: "), "{run}");
        assert!(run.stderr.contains(says), "{run}");
        assert!(!html.exists(), "nothing written: {run}");
    }
}

#[test]
fn export_html_is_refused_before_measuring_where_there_is_no_page() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let run = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--export-html",
        &out.path().join("bench.html").display().to_string(),
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .contains("--export-html: an HTML report is drawn for compare, tiers, baseline check"),
        "{run}"
    );
    assert!(repo.cache_entries("bin").is_empty(), "nothing was built");
}
