//! Crafted git trees: entries git's checkout refuses (`..`, names with `/`, `.git` in any
//! case, duplicates) are refused before the lab writes anything, on both paths that write a
//! revision out: squall's source snapshot and the `lab.toml` build's git working copy.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{ObjectType, Oid, Repository, Signature};
use tempfile::TempDir;

use squall_lab::engine::revision::{check_tree_entries, unsafe_entry_name, Revision};

/// A tree entry as written into a tree object: mode, name, id.
type Entry<'a> = (&'a str, &'a [u8], Oid);

const BLOB: &str = "100644";
const LINK: &str = "120000";
const DIR: &str = "40000";

/// A repository at `<temp>/repo`, so an entry climbing five levels out of the lab's cache
/// (`repo/target/lab/src/.tmp-…/` or `repo/target/lab/tmp/build-…/`) lands in `<temp>`, which
/// the test owns.
struct Crafted {
    temp: TempDir,
    repo: Repository,
}

impl Crafted {
    fn new(lab_toml: Option<&str>) -> Crafted {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("repo");
        let repo = Repository::init(&path).unwrap();
        fs::write(path.join(".gitignore"), "/target\n").unwrap();
        if let Some(config) = lab_toml {
            fs::write(path.join("lab.toml"), config).unwrap();
        }
        let crafted = Crafted { temp, repo };
        let engine = crafted.tree(&[(BLOB, b"Cargo.toml", crafted.blob(b"[package]\n"))]);
        let mut entries = vec![(DIR, &b"engine"[..], engine)];
        let toml_blob;
        if let Some(config) = lab_toml {
            toml_blob = crafted.blob(config.as_bytes());
            entries.push((BLOB, b"lab.toml", toml_blob));
        }
        let root = crafted.tree(&entries);
        crafted.commit(root, "a clean tree");
        crafted
    }

    fn repo_path(&self) -> PathBuf {
        self.temp.path().join("repo")
    }

    fn blob(&self, contents: &[u8]) -> Oid {
        self.repo.blob(contents).unwrap()
    }

    /// A tree object written byte by byte, as `git hash-object -t tree --literally` does: no
    /// check of the names.
    fn tree(&self, entries: &[(&str, &[u8], Oid)]) -> Oid {
        // In git's order (a directory sorts as its name and '/'), which lookups by name need.
        let mut sorted = entries.to_vec();
        sorted.sort_by_key(|(mode, name, _)| {
            let mut key = name.to_vec();
            if *mode == DIR {
                key.push(b'/');
            }
            key
        });
        let mut raw = Vec::new();
        for (mode, name, id) in sorted {
            raw.extend_from_slice(mode.as_bytes());
            raw.push(b' ');
            raw.extend_from_slice(name);
            raw.push(0);
            raw.extend_from_slice(id.as_bytes());
        }
        self.repo
            .odb()
            .unwrap()
            .write(ObjectType::Tree, &raw)
            .unwrap()
    }

    /// A commit of `tree` on HEAD, moving HEAD.
    fn commit(&self, tree: Oid, message: &str) -> Oid {
        let tree = self.repo.find_tree(tree).unwrap();
        let signature = Signature::now("Lab Test", "lab@example.com").unwrap();
        let parent = self.repo.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        self.repo
            .commit(
                Some("HEAD"),
                &signature,
                &signature,
                message,
                &tree,
                &parents,
            )
            .unwrap()
    }

    /// HEAD's tree with `extra` entries added at the root.
    fn commit_with(&self, extra: &[(&str, &[u8], Oid)], message: &str) -> Oid {
        let head = self.repo.head().unwrap().peel_to_tree().unwrap();
        let mut entries: Vec<(&str, Vec<u8>, Oid)> = head
            .iter()
            .map(|e| {
                let mode = if e.kind() == Some(ObjectType::Tree) {
                    DIR
                } else {
                    BLOB
                };
                (mode, e.name_bytes().to_vec(), e.id())
            })
            .collect();
        entries.extend(extra.iter().map(|(m, n, i)| (*m, n.to_vec(), *i)));
        let borrowed: Vec<(&str, &[u8], Oid)> =
            entries.iter().map(|(m, n, i)| (*m, &n[..], *i)).collect();
        let tree = self.tree(&borrowed);
        self.commit(tree, message)
    }

    fn lab(&self, args: &[&str]) -> (i32, String) {
        let output = Command::new(env!("CARGO_BIN_EXE_lab"))
            .arg("--repo")
            .arg(self.repo_path())
            .args(args)
            .output()
            .unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Every file under the temporary directory but outside `repo/target/lab`, the repository's
    /// own files and `.git` excluded: what a crafted tree must never create.
    fn written_outside_the_cache(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        walk(self.temp.path(), &mut found);
        let repo = self.repo_path();
        found
            .into_iter()
            .filter(|path| {
                !path.starts_with(repo.join("target").join("lab"))
                    && !path.starts_with(repo.join(".git"))
                    && ![repo.join(".gitignore"), repo.join("lab.toml")].contains(path)
            })
            .collect()
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let metadata = path.symlink_metadata().unwrap();
        if metadata.is_dir() {
            walk(&path, found);
        } else {
            found.push(path);
        }
    }
}

const CLIMB: &[u8] = b"../../../../../escaped";

#[test]
fn the_names_git_refuses_are_refused() {
    for name in [
        &b""[..],
        b".",
        b"..",
        b".git",
        b".GIT",
        b".Git",
        b"a/b",
        b"../x",
        b"a\0b",
    ] {
        assert!(unsafe_entry_name(name).is_some(), "{name:?} accepted");
    }
    for name in [&b"a"[..], b"...", b".gitignore", b".git2", b"..a", b"\xff"] {
        assert_eq!(unsafe_entry_name(name), None, "{name:?} refused");
    }
}

#[test]
fn a_squall_snapshot_refuses_a_climbing_entry_before_writing() {
    let crafted = Crafted::new(None);
    let payload = crafted.blob(b"pwned\n");
    let evil = crafted.commit_with(&[(BLOB, CLIMB, payload)], "evil");
    let (code, stderr) = crafted.lab(&["bench", "HEAD"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&evil.to_string()), "{stderr}");
    assert!(
        stderr.contains("\"../../../../../escaped\""),
        "no entry named: {stderr}"
    );
    assert!(stderr.contains("a name with '/'"), "{stderr}");
    assert_eq!(crafted.written_outside_the_cache(), Vec::<PathBuf>::new());
    // Nothing of the tree was written inside the cache either.
    let sources = crafted.repo_path().join("target/lab/src");
    let left: Vec<_> = fs::read_dir(&sources)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_lab_toml_build_refuses_a_climbing_entry_before_writing() {
    let crafted = Crafted::new(Some(
        "[engine]\nname = \"tiny\"\nbuild = \"touch {exe}\"\nbench = \"{exe} bench\"\n",
    ));
    let payload = crafted.blob(b"pwned\n");
    let inner = crafted.tree(&[(BLOB, CLIMB, payload)]);
    let evil = crafted.commit_with(&[(DIR, b"src", inner)], "evil");
    let (code, stderr) = crafted.lab(&["bench", "HEAD"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&evil.to_string()), "{stderr}");
    assert!(
        stderr.contains("\"src/../../../../../escaped\""),
        "no entry named: {stderr}"
    );
    assert_eq!(crafted.written_outside_the_cache(), Vec::<PathBuf>::new());
}

#[test]
fn git_directories_duplicates_and_links_written_through_are_refused() {
    let crafted = Crafted::new(None);
    let hook = crafted.blob(b"#!/bin/sh\necho pwned\n");
    let hooks = crafted.tree(&[(BLOB, b"post-checkout", hook)]);
    let git_dir = crafted.tree(&[(DIR, b"hooks", hooks)]);
    let outside = crafted.temp.path().join("escaped");
    let link = crafted.blob(outside.as_os_str().as_encoded_bytes());
    let payload = crafted.blob(b"pwned\n");
    let engine = crafted
        .repo
        .head()
        .unwrap()
        .peel_to_tree()
        .unwrap()
        .get_name("engine")
        .unwrap()
        .id();
    let cases: Vec<(Vec<Entry>, &str, &str)> = vec![
        (
            vec![(DIR, b"engine", engine), (DIR, b".GIT", git_dir)],
            "\".GIT\"",
            "the name of git's own directory",
        ),
        (
            // A link, then a file of the same name that would be written through it.
            vec![
                (DIR, b"engine", engine),
                (LINK, b"twice", link),
                (BLOB, b"twice", payload),
            ],
            "\"twice\"",
            "appears twice",
        ),
    ];
    for (entries, entry, why) in cases {
        let tree = crafted.tree(&entries);
        let commit = crafted.commit(tree, "crafted");
        let revision = Revision {
            spec: "crafted".to_string(),
            commit: Some(commit),
            tree,
        };
        let error = check_tree_entries(&crafted.repo, &revision)
            .unwrap_err()
            .to_string();
        assert!(error.contains(entry), "{error}");
        assert!(error.contains(why), "{error}");
        assert!(error.contains(&commit.to_string()), "{error}");
    }
    let (code, stderr) = crafted.lab(&["bench", "HEAD"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!outside.exists());
}

#[test]
fn deep_and_repeated_trees_are_refused_without_walking_every_path() {
    let crafted = Crafted::new(None);
    let leaf = crafted.blob(b"x");
    // Each level names the one below twice: 2^40 paths, 40 distinct trees.
    let mut tree = crafted.tree(&[(BLOB, b"f", leaf)]);
    for _ in 0..40 {
        tree = crafted.tree(&[(DIR, b"a", tree), (DIR, b"b", tree)]);
    }
    let revision = Revision {
        spec: "bomb".to_string(),
        commit: None,
        tree,
    };
    let error = check_tree_entries(&crafted.repo, &revision)
        .unwrap_err()
        .to_string();
    assert!(error.contains("1000000 entries"), "{error}");
    assert!(error.contains(&tree.to_string()), "{error}");

    let mut deep = crafted.tree(&[(BLOB, b"f", leaf)]);
    for _ in 0..squall_lab::engine::revision::MAX_TREE_DEPTH {
        deep = crafted.tree(&[(DIR, b"d", deep)]);
    }
    let revision = Revision {
        spec: "deep".to_string(),
        commit: None,
        tree: deep,
    };
    let error = check_tree_entries(&crafted.repo, &revision)
        .unwrap_err()
        .to_string();
    assert!(error.contains("nested deeper than 2048"), "{error}");
}
