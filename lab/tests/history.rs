//! `lab history A..B` end to end on a fake engine: the store, re-runs, thinning, errors.

mod common;

use common::{FakeRepo, LabRun};

/// Commits `count` engine revisions that change nothing the bench measures (a file in the
/// engine's tree, so each is a build of its own), returning their ids oldest first.
fn neutral_commits(repo: &FakeRepo, count: usize) -> Vec<String> {
    (1..=count)
        .map(|i| {
            repo.write("engine/src/revision.txt", &format!("{i}\n"));
            repo.commit(&format!("neutral change {i}")).to_string()
        })
        .collect()
}

fn ids(run: &LabRun) -> Vec<String> {
    run.json()["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows: {run}"))
        .iter()
        .map(|row| row["commit"]["id"].as_str().unwrap().to_string())
        .collect()
}

/// The table of a terminal report: its lines drawn with box characters.
fn table_lines(run: &LabRun) -> Vec<String> {
    run.stdout
        .lines()
        .filter(|line| line.starts_with(['┌', '│', '╞', '├', '└']))
        .map(str::to_string)
        .collect()
}

const FAST: [&str; 4] = ["--rounds", "2", "--no-instructions", "--quiet"];

fn history(repo: &FakeRepo, range: &str, extra: &[&str]) -> LabRun {
    let mut args = vec!["history", range];
    args.extend(FAST);
    args.extend(extra);
    repo.lab(&args)
}

#[test]
fn a_second_run_measures_nothing_and_prints_the_same_table() {
    let repo = FakeRepo::new();
    let mut commits = neutral_commits(&repo, 2);
    repo.commit_constant("NODES_PER_POSITION", "1100");
    commits.push(repo.repo.head().unwrap().target().unwrap().to_string());
    commits.extend(neutral_commits(&repo, 2));

    let first = history(&repo, "HEAD~5..HEAD", &[]);
    assert_eq!(first.code, 0, "{first}");
    // The last commit's engine tree is the node-count commit's (revision.txt "2" again): one
    // binary, measured once.
    assert!(
        first.stdout.contains(
            "5 of 5 commits in the range: 4 measured now, 0 from the store, 1 sharing another \
             commit's binary"
        ),
        "{first}"
    );
    let second = history(&repo, "HEAD~5..HEAD", &[]);
    assert_eq!(second.code, 0, "{second}");
    assert!(
        second.stdout.contains("0 measured now, 5 from the store"),
        "{second}"
    );
    let table = table_lines(&first);
    assert_eq!(table.len(), 4 + 5, "{first}");
    assert_eq!(table, table_lines(&second));

    let json = history(&repo, "HEAD~5..HEAD", &["--format", "json"]);
    assert_eq!(json.code, 0, "{json}");
    let report = json.json();
    assert_eq!(report["kind"], "history");
    assert_eq!(report["measured"], 0);
    assert_eq!(report["from_store"], 5);
    assert_eq!(ids(&json), commits);
    let changed: Vec<bool> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["signature_changed"].as_bool().unwrap())
        .collect();
    assert_eq!(changed, [false, false, true, false, false], "{json}");
    assert!(first.stdout.contains("◆"), "{first}");

    // Another depth is another series: measured afresh, not mixed with the stored one.
    let deeper = history(&repo, "HEAD~2..HEAD", &["--depth", "3", "--format", "json"]);
    assert_eq!(deeper.code, 0, "{deeper}");
    assert_eq!(deeper.json()["measured"], 2, "{deeper}");
}

#[test]
fn every_and_max_select_from_the_tip() {
    let repo = FakeRepo::new();
    let commits = neutral_commits(&repo, 5);
    let every = history(&repo, "HEAD~5..HEAD", &["--every", "2", "--format", "json"]);
    assert_eq!(every.code, 0, "{every}");
    assert_eq!(
        ids(&every),
        [&commits[0], &commits[2], &commits[4]].map(String::clone)
    );
    let max = history(&repo, "HEAD~5..", &["--max", "2", "--format", "json"]);
    assert_eq!(max.code, 0, "{max}");
    assert_eq!(ids(&max), commits[3..].to_vec());
    // commits[4] was measured by the first run.
    assert_eq!(max.json()["measured"], 1, "{max}");
    let both = history(
        &repo,
        "HEAD~5..HEAD",
        &["--every", "2", "--max", "2", "--format", "json"],
    );
    assert_eq!(ids(&both), [&commits[2], &commits[4]].map(String::clone));
    assert_eq!(both.json()["measured"], 0, "{both}");
}

#[test]
fn a_store_directory_holds_one_file_per_commit_of_the_series() {
    let repo = FakeRepo::new();
    let commits = neutral_commits(&repo, 2);
    let store = tempfile::tempdir().unwrap();
    let store_arg = store.path().to_str().unwrap();
    let run = history(
        &repo,
        "HEAD~2..HEAD",
        &["--store", store_arg, "--format", "json"],
    );
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    let series = report["series"].as_str().unwrap();
    assert_eq!(series.len(), 3 * 12 + 2, "{series}");
    for commit in &commits {
        let file = store.path().join(series).join(format!("{commit}.json"));
        let stored: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(stored["commit"], commit.as_str());
        assert_eq!(stored["settings"]["rounds"], 2);
        assert_eq!(stored["settings"]["instructions"], false);
    }
    assert!(
        repo.cache_entries("history").is_empty(),
        "the default store is unused"
    );

    // A corrupt file is measured again, with a warning.
    let file = store
        .path()
        .join(series)
        .join(format!("{}.json", commits[1]));
    std::fs::write(&file, "{ not json").unwrap();
    let again = repo.lab(&[
        "history",
        "HEAD~2..HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--store",
        store_arg,
        "--format",
        "json",
    ]);
    assert_eq!(again.code, 0, "{again}");
    assert_eq!(again.json()["measured"], 1, "{again}");
    assert!(again.stderr.contains("is corrupt"), "{again}");
}

#[test]
fn a_bad_range_is_an_error_and_git_state_is_untouched() {
    let repo = FakeRepo::new();
    neutral_commits(&repo, 2);
    let head = repo.repo.head().unwrap().target().unwrap();
    let index = std::fs::read(repo.path().join(".git/index")).unwrap();
    let status = || -> Vec<(String, git2::Status)> {
        // The lab's cache lives in the ignored target/: everything else must stay as it was.
        let mut options = git2::StatusOptions::new();
        options.include_ignored(false).include_untracked(true);
        let statuses = repo.repo.statuses(Some(&mut options)).unwrap();
        statuses
            .iter()
            .map(|entry| (entry.path().unwrap_or_default().to_string(), entry.status()))
            .collect()
    };
    let before = status();
    for (range, message) in [
        ("nosuchrev..HEAD", "unknown revision 'nosuchrev'"),
        ("HEAD", "is not a range"),
        ("HEAD..HEAD~1", "is empty"),
        ("HEAD~1...HEAD", "symmetric difference"),
        ("WORKTREE..HEAD", "has no history"),
    ] {
        let run = history(&repo, range, &[]);
        assert_eq!(run.code, 2, "{range}: {run}");
        assert!(run.stderr.contains(message), "{range}: {run}");
        assert_eq!(run.stderr.trim().lines().count(), 1, "one line: {run}");
    }
    let run = history(&repo, "HEAD~1..HEAD", &[]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(repo.repo.head().unwrap().target().unwrap(), head);
    assert_eq!(
        std::fs::read(repo.path().join(".git/index")).unwrap(),
        index
    );
    assert_eq!(status(), before);
}
