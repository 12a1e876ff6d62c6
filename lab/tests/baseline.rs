//! `lab baseline save | check | show` on a fake engine.

mod common;

use common::FakeRepo;

#[test]
fn saved_baseline_catches_a_slower_revision() {
    let repo = FakeRepo::new();
    let save = repo.lab(&["baseline", "save", "main", "--rounds", "6"]);
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

    // Six times the work. A baseline check compares against runs saved earlier, not paired in
    // time, so machine load in between can move time per node either way; instructions per
    // node cannot move, and they alone must catch it.
    repo.commit_constant("WORK_PER_NODE", "1200");
    let slower = repo.lab(&["baseline", "check", "main", "--format", "json"]);
    assert_eq!(slower.code, 1, "{slower}");
    assert_eq!(
        slower.json()["instructions"]["verdict"],
        "regression",
        "{slower}"
    );

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

/// A saved baseline of the fake engine, as JSON, and its path.
fn saved(repo: &FakeRepo) -> (serde_json::Value, std::path::PathBuf) {
    let save = repo.lab(&[
        "baseline",
        "save",
        "main",
        "--rounds",
        "2",
        "--no-instructions",
    ]);
    assert_eq!(save.code, 0, "{save}");
    let file = repo.path().join("baselines/main.json");
    let stored = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (stored, file)
}

#[test]
fn every_field_of_a_baseline_is_checked_on_load() {
    let repo = FakeRepo::new();
    let (stored, file) = saved(&repo);
    let machine = &stored["machine"];
    for key in ["kernel", "transparent_hugepages", "governor"] {
        assert!(
            machine[key].as_str().is_some_and(|v| !v.is_empty()),
            "{key}: {machine}"
        );
    }
    let cases: [(&str, serde_json::Value, &str); 9] = [
        ("/settings/rounds", 0.into(), "settings.rounds"),
        ("/settings/rounds", 3.into(), "measurement.runs_time_ns"),
        ("/settings/instr_depth", 0.into(), "settings.instr_depth"),
        ("/settings/depth", 0.into(), "settings.depth"),
        ("/machine/cores", 0.into(), "machine.cores"),
        (
            "/measurement/runs_time_ns/1/3",
            0.into(),
            "measurement.runs_time_ns[1][3]",
        ),
        (
            "/measurement/runs_time_ns/0/0",
            1.into(),
            "measurement.runs_time_ns[0][0]",
        ),
        (
            "/measurement/positions/2/nodes",
            0.into(),
            "measurement.signature",
        ),
        ("/measurement/depth", 0.into(), "measurement.depth"),
    ];
    for (pointer, value, field) in cases {
        let mut edited = stored.clone();
        *edited.pointer_mut(pointer).unwrap() = value.clone();
        std::fs::write(&file, edited.to_string()).unwrap();
        for command in ["show", "check"] {
            let run = repo.lab(&["baseline", command, "main", "--quiet"]);
            assert_eq!(run.code, 2, "{pointer} = {value}: {run}");
            assert!(
                run.stderr.contains("baselines/main.json is invalid")
                    && run.stderr.contains(&format!("field `{field}`")),
                "{pointer} = {value}: {run}"
            );
            assert!(!run.stderr.contains("panicked"), "{run}");
        }
    }
    // All-zero timings, as an engine with a broken timer would have saved them.
    let mut zero = stored.clone();
    for run in zero["measurement"]["runs_time_ns"].as_array_mut().unwrap() {
        for time in run.as_array_mut().unwrap() {
            *time = 0.into();
        }
    }
    std::fs::write(&file, zero.to_string()).unwrap();
    let run = repo.lab(&["baseline", "check", "main", "--no-instructions"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains("0 ns: a search takes positive time"),
        "{run}"
    );
}

#[test]
fn a_baseline_from_another_setting_shows_nps_as_not_comparable() {
    let repo = FakeRepo::new();
    let (stored, file) = saved(&repo);
    let mut other = stored.clone();
    other["machine"]["governor"] = "imaginary-governor".into();
    std::fs::write(&file, other.to_string()).unwrap();
    let json = repo.lab(&[
        "baseline",
        "check",
        "main",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_ne!(json.code, 2, "{json}");
    let report = json.json();
    assert_eq!(report["speed"]["comparable"], false, "{json}");
    assert_eq!(report["speed"]["verdict"], "no-change", "{json}");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("CPU governor: imaginary-governor (baseline) vs"),
        "{json}"
    );
    let text = repo.lab(&["baseline", "check", "main", "--no-instructions"]);
    let nps_row = text
        .stdout
        .lines()
        .find(|line| line.contains("NPS (median"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        nps_row.contains("not comparable") && !nps_row.contains('%'),
        "{text}"
    );
    assert!(
        text.stdout.contains("Speed: not comparable, not judged"),
        "{text}"
    );

    // A baseline saved before kernel, THP and governor were recorded stays readable.
    let mut old = stored.clone();
    for key in ["kernel", "transparent_hugepages", "governor"] {
        old["machine"].as_object_mut().unwrap().remove(key);
    }
    std::fs::write(&file, old.to_string()).unwrap();
    let run = repo.lab(&[
        "baseline",
        "check",
        "main",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_ne!(run.code, 2, "{run}");
    let report = run.json();
    assert_eq!(report["speed"]["comparable"], true, "{run}");
    assert!(
        report["warnings"]
            .to_string()
            .contains("does not record kernel, transparent huge pages, CPU governor"),
        "{run}"
    );
}
