//! `WORKTREE` measures the uncommitted tree and leaves the user's repository untouched.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Duration;

use common::{lab_within, mkfifo, random_bytes, tree_size, FakeRepo};

/// Every file outside `target/` (including `.git/` and its object store), byte for byte.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    collect(root, root, &mut files);
    files
}

fn collect(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if relative == "target" {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            files.insert(relative, fs::read(&path).unwrap());
        }
    }
}

#[test]
fn worktree_measures_a_dirty_tree_and_touches_nothing() {
    let repo = FakeRepo::new();
    // Dirty: a modified tracked file (slower engine) and an untracked, unignored file.
    repo.set_constant("WORK_PER_NODE", "1200");
    repo.write("notes.txt", "untracked scratch\n");
    let before = snapshot(repo.path());
    let status_before = status_lines(&repo);

    let run = repo.lab(&[
        "compare",
        "HEAD",
        "WORKTREE",
        "--rounds",
        "6",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "the slower worktree is a regression: {run}");
    let report = run.json();
    assert_eq!(report["b"]["revision"]["spec"], "WORKTREE");
    assert!(report["b"]["revision"]["commit"].is_null());

    let after = snapshot(repo.path());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, contents) in &before {
        assert!(after[path] == *contents, "{path} changed");
    }
    assert_eq!(status_before, status_lines(&repo));
    assert!(repo.repo.find_reference("refs/stash").is_err());
}

#[test]
fn worktree_tree_contains_untracked_files_but_not_ignored_ones() {
    let repo = FakeRepo::new();
    repo.write("notes.txt", "untracked\n");
    repo.write("target/ignored.txt", "ignored\n");
    let run = repo.lab(&[
        "bench",
        "WORKTREE",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run}");
    let tree = run.json()["revision"]["revision"]["tree"]
        .as_str()
        .unwrap()
        .to_string();
    let source = repo.cache("src").join(tree);
    assert!(source.join("notes.txt").is_file());
    assert!(source.join("engine/src/main.rs").is_file());
    assert!(!source.join("target").exists());
}

fn status_lines(repo: &FakeRepo) -> Vec<String> {
    // The lab's cache under the ignored target/ directory is expected; everything else is not.
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true).include_ignored(false);
    repo.repo
        .statuses(Some(&mut options))
        .unwrap()
        .iter()
        .map(|entry| format!("{:?} {}", entry.status(), entry.path().unwrap_or_default()))
        .collect()
}

#[test]
fn special_files_in_the_worktree_are_skipped_with_a_warning_naming_each() {
    let repo = FakeRepo::new();
    mkfifo(&repo.path().join("engine/pipe"));
    let _socket = std::os::unix::net::UnixListener::bind(repo.path().join("lab.sock")).unwrap();
    let before = tree_size(&repo.path().join(".git"));
    // Reading the FIFO used to block for ever: the deadline turns that into a failure.
    let run = lab_within(
        &repo,
        &[
            "bench",
            "WORKTREE",
            "--rounds",
            "2",
            "--no-instructions",
            "--format",
            "json",
        ],
        Duration::from_secs(300),
    );
    assert_eq!(run.code, 0, "{run}");
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning:"))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("engine/pipe") && w.contains("a FIFO")),
        "{run}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("lab.sock") && w.contains("a socket")),
        "{run}"
    );
    let tree = run.json()["revision"]["revision"]["tree"]
        .as_str()
        .unwrap()
        .to_string();
    let source = repo.cache("src").join(tree);
    assert!(source.join("engine/src/main.rs").is_file());
    assert!(source.join("engine/pipe").symlink_metadata().is_err());
    assert!(source.join("lab.sock").symlink_metadata().is_err());
    assert_eq!(before, tree_size(&repo.path().join(".git")));
}

#[test]
fn worktree_snapshot_keeps_untracked_files_out_of_the_repository() {
    let repo = FakeRepo::new();
    let big = random_bytes(5 << 20);
    fs::write(repo.path().join("big.bin"), &big).unwrap();
    // Also a modified tracked file: its new blob must not land in .git either.
    repo.set_constant("NODES_PER_POSITION", "1100");
    let before = tree_size(&repo.path().join(".git"));
    let run = repo.lab(&[
        "bench",
        "WORKTREE",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        before,
        tree_size(&repo.path().join(".git")),
        "the repository grew"
    );
    let report = run.json();
    // The build saw the modified engine: 1100 nodes per position and depth unit.
    assert_eq!(report["revision"]["signature"], 8 * 9 / 2 * 1100 * 5);
    let tree = report["revision"]["revision"]["tree"].as_str().unwrap();
    let snapshot = fs::read(repo.cache("src").join(tree).join("big.bin")).unwrap();
    assert!(
        snapshot == big,
        "the snapshot lost the untracked file's content"
    );
}
