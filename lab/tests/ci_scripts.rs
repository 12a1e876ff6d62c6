//! The CI's judgement of `lab baseline check` (`.github/scripts/baseline-verdict.sh`) run on the
//! JSON the lab writes, so the script and the schema cannot drift apart: a runner without a
//! trustworthy NPS baseline says so and judges instructions only, and a run that could judge
//! neither fails instead of passing silently. Skipped where bash or jq is missing.

mod common;

use std::path::Path;
use std::process::Command;

use common::FakeRepo;

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.github/scripts/baseline-verdict.sh")
}

/// Runs the script on a report; returns its exit code and stdout.
fn judge(report: &serde_json::Value, dir: &Path, lab_code: i32) -> (i32, String) {
    let json = dir.join("report.json");
    let markdown = dir.join("report.md");
    std::fs::write(&json, report.to_string()).unwrap();
    std::fs::write(&markdown, "(the markdown report)\n").unwrap();
    let output = Command::new("bash")
        .arg(script())
        .arg(&json)
        .arg(&markdown)
        .arg(lab_code.to_string())
        .output()
        .expect("bash runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn the_baseline_judgement_never_passes_having_judged_nothing() {
    if Command::new("jq").arg("--version").output().is_err() {
        eprintln!("skipped: jq is not installed");
        return;
    }
    let repo = FakeRepo::new();
    let save = repo.lab(&["baseline", "save", "main", "--rounds", "2"]);
    assert_eq!(save.code, 0, "{save}");
    let check = repo.lab(&[
        "baseline", "check", "main", "--rounds", "2", "--format", "json",
    ]);
    assert!(check.code < 2, "{check}");
    let report = check.json();
    let dir = tempfile::tempdir().unwrap();

    let (code, out) = judge(&report, dir.path(), check.code);
    assert_eq!(code, check.code, "{out}");
    assert!(out.starts_with("(the markdown report)"), "{out}");
    assert!(
        out.contains("Judged: NPS, node signature (unchanged), instructions per node."),
        "{out}"
    );

    // Another machine: speed not judged, said so, instructions still judged.
    let mut elsewhere = report.clone();
    elsewhere["speed"]["comparable"] = false.into();
    elsewhere["warnings"] = serde_json::json!([
        "NPS is not comparable: the baseline was measured in another setting (CPU: X vs Y)."
    ]);
    let (code, out) = judge(&elsewhere, dir.path(), 0);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("No trustworthy NPS baseline for this runner:** NPS is not comparable"),
        "{out}"
    );
    assert!(
        out.contains("Judged: node signature (unchanged), instructions per node."),
        "{out}"
    );

    // A changed search on another machine: instructions are shown, not judged (the lab does
    // not judge them either), so nothing was judged and the job fails saying why.
    let mut searched_anew = elsewhere.clone();
    searched_anew["signature"]["changed"] = true.into();
    searched_anew["signature"]["b"] = 12_345.into();
    let (code, out) = judge(&searched_anew, dir.path(), 0);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the search changed (bench signature"), "{out}");
    assert!(out.contains("→ 12345 nodes"), "{out}");
    assert!(out.contains("neither speed nor instructions"), "{out}");
    assert!(!out.contains("Judged:"), "{out}");

    // And a toolchain that differs too: nothing judged, so the job fails.
    let mut nothing = elsewhere.clone();
    nothing["instructions"]["comparable"] = false.into();
    let (code, out) = judge(&nothing, dir.path(), 0);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("neither speed nor instructions"), "{out}");

    // A regression fails; a lab error fails with its own code.
    assert_eq!(judge(&report, dir.path(), 1).0, 1);
    let (code, out) = judge(&serde_json::Value::Null, dir.path(), 2);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("lab baseline check failed (exit 2)"), "{out}");
}
