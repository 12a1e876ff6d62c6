//! `lab baseline save | check | show` on a fake engine.

mod common;

use common::FakeRepo;

#[test]
fn saved_baseline_catches_a_slower_revision() {
    let repo = FakeRepo::new();
    let save = repo.lab(&[
        "baseline",
        "save",
        "main",
        "--rounds",
        "6",
        "--no-instructions",
    ]);
    assert_eq!(save.code, 0, "{save}");
    let file = repo.path().join("baselines/main.json");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(stored["schema_version"], 1);
    assert!(stored["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(stored["toolchain"]["rustc"]
        .as_str()
        .unwrap()
        .contains("rustc"));

    let same = repo.lab(&[
        "baseline",
        "check",
        "main",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(same.json()["signature"]["changed"], false, "{same}");
    assert_ne!(same.code, 2, "{same}");

    repo.commit_constant("WORK_PER_NODE", "300");
    let slower = repo.lab(&["baseline", "check", "main", "--no-instructions"]);
    assert_eq!(slower.code, 1, "{slower}");

    let show = repo.lab(&["baseline", "show", "main", "--format", "markdown"]);
    assert_eq!(show.code, 0, "{show}");
    assert!(show.stdout.contains("## baseline `main`"), "{show}");

    // Well-formed JSON with an inconsistent measurement is still refused.
    let mut edited = stored.clone();
    edited["measurement"]["runs_time_ns"][0] = serde_json::json!([1]);
    std::fs::write(&file, edited.to_string()).unwrap();
    let inconsistent = repo.lab(&["baseline", "show", "main"]);
    assert_eq!(inconsistent.code, 2, "{inconsistent}");
    assert!(
        inconsistent.stderr.contains("a run has 1 timings"),
        "{inconsistent}"
    );
}

#[test]
fn corrupt_or_missing_baselines_exit_2() {
    let repo = FakeRepo::new();
    repo.write(
        "baselines/broken.json",
        "{\"schema_version\": 1, \"name\": ",
    );
    let broken = repo.lab(&["baseline", "show", "broken"]);
    assert_eq!(broken.code, 2, "{broken}");
    assert!(broken.stderr.contains("is corrupt"), "{broken}");
    repo.write("baselines/old.json", "{\"schema_version\": 0}");
    let old = repo.lab(&["baseline", "check", "old"]);
    assert_eq!(old.code, 2, "{old}");
    assert!(old.stderr.contains("schema_version 0"), "{old}");
    let missing = repo.lab(&["baseline", "show", "missing"]);
    assert_eq!(missing.code, 2, "{missing}");
}
