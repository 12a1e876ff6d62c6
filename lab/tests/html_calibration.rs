//! The calibration page against the real engine: `lab calibrate ... --export-html` (HEAD of
//! this workspace built with `--features calibrate` into the workspace's lab cache, as
//! calibration_engine.rs does; a cold cache builds once), the same bytes from `lab report` of
//! the calibration file, of the `--format json` report and of `lab calibrate merge`; the
//! markdown summary CI posts; and the one-line refusals of files the page cannot draw.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::LabRun;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the lab lives in the workspace")
        .to_path_buf()
}

fn lab(args: &[&str]) -> LabRun {
    let output = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--repo")
        .arg(workspace())
        .arg("--quiet")
        .args(args)
        .output()
        .expect("running lab");
    LabRun {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A markdown summary for a CI job: tables with a header rule, no terminal box drawing.
fn assert_markdown(text: &str) {
    let boxes: Vec<char> = text
        .chars()
        .filter(|c| ('\u{2500}'..='\u{257F}').contains(c))
        .collect();
    assert!(
        boxes.is_empty(),
        "box-drawing characters {boxes:?} in:\n{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("| --- |")), "{text}");
    assert!(text.contains("\n#### Margin safety"), "{text}");
}

/// The page stands alone (no script, nothing fetched) and has `svgs` plots.
fn assert_page(html: &str, svgs: usize) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(!html.to_lowercase().contains("<script"));
    let references = html
        .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
        .matches("://")
        .count();
    assert_eq!(references, 0, "no network reference");
    assert_eq!(html.matches("<svg").count(), svgs);
}

#[test]
fn calibrate_draws_its_page_and_lab_report_redraws_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let pool = workspace().join("lab/pools/small.epd");
    let (file, page, report) = (path("cal.json"), path("cal.html"), path("report.json"));
    let results = path("results");
    let run = lab(&[
        "calibrate",
        "HEAD",
        "--pool",
        &pool.to_string_lossy(),
        "--depth",
        "2",
        "--jobs",
        "2",
        "--modes",
        "residual,marginsafety,exitrate",
        "--out",
        &file,
        "--results",
        &results,
        "--format",
        "markdown",
        "--export-json",
        &report,
        "--export-html",
        &page,
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert_markdown(&run.stdout);

    let html = std::fs::read_to_string(&page).unwrap();
    // Residual histograms, margin safety, exit-rate heatmap.
    assert_page(&html, 3);
    assert!(html.contains("<title>lab calibrate: HEAD (tree "), "{html}");
    assert!(html.contains("measured 2"), "the date of the run");
    assert!(html.contains("margins.rs of the calibrated tree"));
    let residuals = html.split("<svg").nth(1).unwrap();
    // The red LO and HI lines of the margins in force: two per panel of 3 × 8, and the legend.
    assert!(
        residuals.matches("stroke=\"#D62728\"").count() > 2 * 24,
        "{residuals}"
    );
    assert!(
        residuals.contains("stroke=\"#2CA02C\""),
        "the chosen percentiles"
    );
    assert!(residuals.contains("King term"));

    // The same bytes from the calibration file, from the JSON report, and from a merge of the
    // one whole-pool file.
    for source in [&file, &report] {
        let redrawn = path("redrawn.html");
        let drawn = lab(&["report", source, "--out", &redrawn]);
        assert_eq!(drawn.code, 0, "{drawn}");
        assert_eq!(
            std::fs::read_to_string(&redrawn).unwrap(),
            html,
            "lab report {source}"
        );
    }
    let merged_page = path("merged.html");
    let merged = lab(&[
        "calibrate",
        "merge",
        &file,
        "--format",
        "markdown",
        "--export-html",
        &merged_page,
    ]);
    assert_eq!(merged.code, 0, "{merged}");
    assert_markdown(&merged.stdout);
    assert_eq!(std::fs::read_to_string(&merged_page).unwrap(), html);

    common::browser::render_headless(Path::new(&page), 3, 20);
    common::browser::assert_readable_layout(Path::new(&page));
}

#[test]
fn files_the_page_cannot_draw_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |name: &str, contents: &str, expected: &str| {
        let input = dir.path().join(name);
        std::fs::write(&input, contents).unwrap();
        let out = dir.path().join("page.html");
        let run = lab(&[
            "report",
            &input.to_string_lossy(),
            "--out",
            &out.to_string_lossy(),
        ]);
        assert_eq!(run.code, 2, "{run}");
        assert_eq!(run.stderr.trim().lines().count(), 1, "{run}");
        assert!(run.stderr.contains(expected), "{expected}: {run}");
        assert!(!out.exists(), "nothing is written");
    };
    refused(
        "bench.json",
        r#"{"schema_version": 2, "kind": "bench"}"#,
        "not for kind \"bench\"",
    );
    refused(
        "cut.json",
        r#"{"schema_version": 1, "kind": "squall-calibration", "depth": 3}"#,
        "malformed calibration file: missing field",
    );
    refused(
        "report.json",
        r#"{"schema_version": 2, "kind": "calibration"}"#,
        "without its \"calibration\" file",
    );
}

/// Writes docs/img/html-residuals.png, html-margin-safety.png and html-exit-heatmap.png: each
/// section of a calibration page of the shipped small pool, alone on a page, screenshotted by
/// headless chromium. `cargo test -p squall-lab --test html_calibration -- --ignored`.
#[test]
#[ignore = "writes the docs' screenshots"]
fn screenshots_for_the_docs() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("cal.html");
    let run = lab(&[
        "calibrate",
        "HEAD",
        "--pool",
        &workspace().join("lab/pools/small.epd").to_string_lossy(),
        "--depth",
        "4",
        "--modes",
        "residual,marginsafety,exitrate",
        "--results",
        &dir.path().join("results").to_string_lossy(),
        "--export-html",
        &page.to_string_lossy(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let html = std::fs::read_to_string(&page).unwrap();
    let head = &html[..html.find("<body>").unwrap() + "<body>\n".len()];
    let sections: Vec<&str> = html.split("<section>").skip(1).collect();
    for ((name, height), section) in [
        ("residuals", 930),
        ("margin-safety", 610),
        ("exit-heatmap", 490),
    ]
    .into_iter()
    .zip(sections)
    {
        let section = &section[..section.find("</section>").unwrap()];
        let alone = dir.path().join(format!("{name}.html"));
        std::fs::write(
            &alone,
            format!("{head}<section>{section}</section>\n</body>\n</html>\n"),
        )
        .unwrap();
        let png = workspace().join(format!("docs/img/html-{name}.png"));
        assert!(
            common::browser::screenshot(&alone, &png, 1300, height),
            "chromium wrote {}",
            png.display()
        );
    }
}
