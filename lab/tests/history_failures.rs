//! `lab history` and `lab bisect` over commits that do not build, the series key of a
//! `lab.toml` engine, and two lab runs on one store.

#[path = "common/c_engine.rs"]
mod c_engine;
mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;

use common::{FakeRepo, LabRun};

const FAST: [&str; 4] = ["--rounds", "2", "--no-instructions", "--quiet"];

fn history(repo: &FakeRepo, range: &str, extra: &[&str]) -> LabRun {
    let mut args = vec!["history", range];
    args.extend(FAST);
    args.extend(extra);
    repo.lab(&args)
}

fn engine_source(repo: &FakeRepo) -> String {
    std::fs::read_to_string(repo.path().join("engine/src/main.rs")).unwrap()
}

/// Commits an engine that does not compile, then the working one again with another file
/// changed (so the next commit is a build of its own); returns the broken commit's id.
fn commit_broken_then_fixed(repo: &FakeRepo, fixed_marker: &str) -> String {
    let source = engine_source(repo);
    repo.write(
        "engine/src/main.rs",
        &format!("{source}\nfn does_not_compile( {{\n"),
    );
    let broken = repo.commit("an engine that does not compile").to_string();
    repo.write("engine/src/main.rs", &source);
    repo.write("engine/src/revision.txt", fixed_marker);
    repo.commit("the engine compiles again");
    broken
}

fn neutral(repo: &FakeRepo, marker: &str) -> String {
    repo.write("engine/src/revision.txt", marker);
    repo.commit(&format!("neutral change {marker}")).to_string()
}

#[test]
fn a_commit_that_does_not_build_is_a_failed_point_and_the_history_goes_on() {
    let repo = FakeRepo::new();
    neutral(&repo, "1");
    let broken = commit_broken_then_fixed(&repo, "2");

    let first = history(&repo, "HEAD~3..HEAD", &["--format", "json"]);
    assert_eq!(first.code, 0, "{first}");
    let report = first.json();
    assert_eq!(report["measured"], 2, "{first}");
    assert_eq!(report["rows"].as_array().unwrap().len(), 2);
    let failed = report["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{first}");
    assert_eq!(failed[0]["commit"]["id"], broken.as_str());
    assert_eq!(failed[0]["position"], 1);
    assert_eq!(failed[0]["stage"], "build");
    assert_eq!(failed[0]["failed_now"], true);
    let error = failed[0]["error"].as_str().unwrap();
    assert!(error.contains("does_not_compile"), "{error}");
    assert!(error.len() <= 4096, "{}", error.len());
    let series = report["series"].as_str().unwrap();
    let stored = repo
        .cache("history")
        .join(series)
        .join(format!("{broken}.failed.json"));
    assert!(stored.is_file(), "{}", stored.display());
    let page = std::fs::read_to_string(repo.cache("history.html")).unwrap();
    assert!(
        page.contains("<h2>Failed points</h2>"),
        "no failed points on the page"
    );
    assert!(page.contains("an engine that does not compile"));

    // The next run neither builds nor measures anything, and shows the failed point in place.
    let second = history(&repo, "HEAD~3..HEAD", &[]);
    assert_eq!(second.code, 0, "{second}");
    let table: Vec<&str> = second
        .stdout
        .lines()
        .filter(|line| line.starts_with('│'))
        .collect();
    assert_eq!(table.len(), 1 + 3, "{second}");
    assert!(table[2].contains("✗ build failed"), "{second}");
    assert!(
        second
            .stdout
            .contains("0 measured now, 2 from the store, 1 failed (0 now)"),
        "{second}"
    );
    assert!(
        second.stdout.contains("--retry-failed tries again"),
        "{second}"
    );

    // --retry-failed builds it again (and it fails again, now).
    let retried = history(
        &repo,
        "HEAD~3..HEAD",
        &["--retry-failed", "--format", "json"],
    );
    assert_eq!(retried.code, 0, "{retried}");
    assert_eq!(retried.json()["measured"], 0);
    assert_eq!(retried.json()["failed"][0]["failed_now"], true, "{retried}");
}

fn bisect(repo: &FakeRepo, good: &str) -> LabRun {
    repo.lab(&[
        "bisect",
        good,
        "HEAD",
        "--metric",
        "signature",
        "--rounds",
        "2",
        "--no-instructions",
        "--quiet",
        "--format",
        "json",
    ])
}

#[test]
fn bisect_skips_commits_that_do_not_build() {
    let repo = FakeRepo::new();
    let good = neutral(&repo, "0");
    neutral(&repo, "1");
    let broken = commit_broken_then_fixed(&repo, "3");
    repo.commit_constant("NODES_PER_POSITION", "1100");
    let bad = repo.repo.head().unwrap().target().unwrap().to_string();

    // Path: n1, broken, fixed, bad. The middle is broken: the search takes its neighbour.
    let run = bisect(&repo, &good);
    assert_eq!(run.code, 1, "{run}");
    let report = run.json();
    assert_eq!(report["first_bad"]["id"], bad.as_str(), "{run}");
    let skipped = report["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{run}");
    assert_eq!(skipped[0]["commit"]["id"], broken.as_str());
    assert!(skipped[0]["error"]
        .as_str()
        .unwrap()
        .contains("does_not_compile"));
    assert_eq!(report["first_bad_among"], serde_json::json!([]));
}

#[test]
fn bisect_names_the_range_it_cannot_split() {
    let repo = FakeRepo::new();
    let good = neutral(&repo, "0");
    neutral(&repo, "1");
    let source = engine_source(&repo);
    repo.write(
        "engine/src/main.rs",
        &format!("{source}\nfn does_not_compile( {{\n"),
    );
    let broken = repo.commit("an engine that does not compile").to_string();
    repo.write("engine/src/main.rs", &source);
    repo.commit_constant("NODES_PER_POSITION", "1100");
    let bad = repo.repo.head().unwrap().target().unwrap().to_string();
    neutral(&repo, "4");

    // Path: n1, broken, bad, n4: the answer is the broken commit or the one after it.
    let run = bisect(&repo, &good);
    assert_eq!(run.code, 1, "{run}");
    let report = run.json();
    assert!(report["first_bad"].is_null(), "{run}");
    let among: Vec<&str> = report["first_bad_among"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(among, [broken.as_str(), bad.as_str()], "{run}");
    let terminal = repo.lab(&[
        "bisect",
        &good,
        "HEAD",
        "--metric",
        "signature",
        "--rounds",
        "2",
        "--no-instructions",
        "--quiet",
    ]);
    assert_eq!(terminal.code, 1, "{terminal}");
    assert!(
        terminal
            .stdout
            .contains("The first bad commit is one of 2 commits"),
        "{terminal}"
    );
}

#[test]
fn a_changed_engine_definition_is_another_series() {
    let Some(repo) = c_engine_repo_for_history() else {
        return;
    };
    let first = history(&repo, "HEAD~1..HEAD", &["--format", "json"]);
    assert_eq!(first.code, 0, "{first}");
    assert_eq!(first.json()["measured"], 1, "{first}");
    let again = history(&repo, "HEAD~1..HEAD", &["--format", "json"]);
    assert_eq!(
        again.json()["measured"],
        0,
        "the same definition reads the store: {again}"
    );

    // Another build command builds another binary: measured afresh, not read from the store.
    repo.write(
        "lab.toml",
        &c_engine::lab_toml("make EXE={exe} CFLAGS=-DWORK=600", "{exe} bench {depth}"),
    );
    let rebuilt = history(&repo, "HEAD~1..HEAD", &["--format", "json"]);
    assert_eq!(rebuilt.code, 0, "{rebuilt}");
    assert_eq!(rebuilt.json()["measured"], 1, "{rebuilt}");
    assert_ne!(rebuilt.json()["series"], first.json()["series"]);
    let definition = rebuilt.json()["settings"]["engine_definition"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        definition.contains("build make EXE={exe} CFLAGS=-DWORK=600"),
        "{definition}"
    );
    assert!(definition.contains("env CFLAGS unset"), "{definition}");

    // So does a compiler flag in the environment, which the build cache keys on too.
    let flagged = repo.lab_with_env(
        &[
            "history",
            "HEAD~1..HEAD",
            "--rounds",
            "2",
            "--no-instructions",
            "--quiet",
            "--format",
            "json",
        ],
        &[("CFLAGS", "-DWORK=700")],
    );
    assert_eq!(flagged.code, 0, "{flagged}");
    assert_eq!(flagged.json()["measured"], 1, "{flagged}");

    // And the bench command.
    repo.write(
        "lab.toml",
        &c_engine::lab_toml("make EXE={exe} CFLAGS=-DWORK=600", "{exe} bench 3 {depth}"),
    );
    let benched = history(&repo, "HEAD~1..HEAD", &["--format", "json"]);
    assert_eq!(benched.json()["measured"], 1, "{benched}");
}

fn c_engine_repo_for_history() -> Option<FakeRepo> {
    let repo = c_engine::c_engine_repo("make EXE={exe}", "{exe} bench {depth}")?;
    repo.write("src/revision.txt", "1\n");
    repo.commit("a neutral change");
    Some(repo)
}

/// Reads a child's stderr line by line until a line contains `needle`, then drains the rest in
/// a thread; returns that thread, which yields everything read.
fn wait_for_line(
    stderr: impl Read + Send + 'static,
    needle: &'static str,
) -> std::thread::JoinHandle<String> {
    let mut reader = BufReader::new(stderr);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line).unwrap();
        assert!(read > 0, "the run ended without saying {needle:?}:\n{seen}");
        seen.push_str(&line);
        if line.contains(needle) {
            break;
        }
    }
    std::thread::spawn(move || {
        reader.read_to_string(&mut seen).unwrap();
        seen
    })
}

#[test]
fn two_history_runs_on_one_store_measure_each_commit_once() {
    let repo = FakeRepo::new();
    for marker in ["1", "2", "3"] {
        neutral(&repo, marker);
    }
    let store = tempfile::tempdir().unwrap();
    let store_arg = store.path().to_str().unwrap().to_string();
    let _serial = common::serial();
    // Hold the cache lock, so both runs are started and waiting before either measures.
    std::fs::create_dir_all(repo.cache("")).unwrap();
    let lock = std::fs::File::create(repo.cache("lock")).unwrap();
    lock.lock().unwrap();
    let start = || {
        let mut child = repo
            .lab_command(&[
                "history",
                "HEAD~3..HEAD",
                "--rounds",
                "2",
                "--no-instructions",
                "--store",
                &store_arg,
                "--format",
                "json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let drained = wait_for_line(stderr, "waiting for another lab run to finish");
        (child, drained)
    };
    let runs = [start(), start()];
    lock.unlock().unwrap();
    let mut measured = 0;
    let mut from_store = 0;
    for (child, drained) in runs {
        let output = child.wait_with_output().unwrap();
        let stderr = drained.join().unwrap();
        assert!(output.status.success(), "{stderr}");
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        measured += report["measured"].as_u64().unwrap();
        from_store += report["from_store"].as_u64().unwrap();
    }
    // The lock serialises them: one measured the three commits, the other read them.
    assert_eq!((measured, from_store), (3, 3));
    let series: Vec<_> = std::fs::read_dir(store.path()).unwrap().flatten().collect();
    assert_eq!(series.len(), 1);
    let mut files: Vec<String> = std::fs::read_dir(series[0].path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        3,
        "one file per commit, no temporaries: {files:?}"
    );
    for file in files {
        let text = std::fs::read_to_string(series[0].path().join(&file)).unwrap();
        let entry: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(format!("{}.json", entry["commit"].as_str().unwrap()), file);
    }
}
