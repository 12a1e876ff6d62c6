//! An OpenBench-style engine: a tiny C program with a Makefile that takes `EXE`, compiles in
//! `git rev-parse HEAD` and runs `./$(EXE) bench` after linking, as PGO makefiles do. Built by
//! `engine::command_build` into the cache, benched by `engine::openbench`, and the user's
//! `.git` checked unchanged.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use git2::{IndexAddOption, Repository, Signature};
use squall_lab::engine::adapter::{run_bench, BenchRequest, OpenBenchAdapter};
use squall_lab::engine::command_build::{build_openbench_engine, write_git_snapshot, EXE_NAME};
use squall_lab::engine::config::{self, Engine, OpenBenchEngine};
use squall_lab::engine::revision::{open_repository, resolve, Revision};
use squall_lab::paths::LabPaths;
use squall_lab::progress::Progress;

const ENGINE_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GIT_HASH
#define GIT_HASH "unknown"
#endif

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        unsigned long depth = argc > 2 ? strtoul(argv[2], NULL, 10) : 5;
        unsigned long total = 0;
        for (unsigned long i = 1; i <= 3; i++) {
            unsigned long nodes = 1000 * i * depth;
            total += nodes;
            printf("position %lu: info depth %lu nodes %lu nps %lu\n", i, depth, nodes, nodes * 7);
        }
        printf("commit %s\n", GIT_HASH);
        printf("Bench: %lu nodes %lu nps\n", total, total * 100);
        return 0;
    }
    printf("tiny %s\n", GIT_HASH);
    return 0;
}
"#;

/// `$(EXE)` from the command line; the commit compiled in; the working copy checked clean
/// (without refreshing the index, so the snapshot's stat data must be right); the binary run
/// after linking, as a PGO build does.
const MAKEFILE: &str = "EXE ?= tiny
HASH := $(shell git rev-parse HEAD)

all:
\tgit diff-index --quiet HEAD --
\ttest -z \"$$(git status --porcelain --untracked-files=no)\"
\t$(CC) -O1 -DGIT_HASH='\"$(HASH)\"' -o $(EXE) engine.c
\t./$(EXE) bench > pgo-profile.txt
";

const LAB_TOML: &str = "[engine]
name = \"tiny\"
build-dir = \"src\"
bench = \"{exe} bench {depth}\"
";

struct EngineRepo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl EngineRepo {
    fn new() -> EngineRepo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("engine-repo");
        fs::create_dir(&root).unwrap();
        Repository::init(&root).unwrap();
        let repo = EngineRepo { _dir: dir, root };
        repo.write(".gitignore", "/target\n");
        repo.write("lab.toml", LAB_TOML);
        repo.write("src/engine.c", ENGINE_C);
        repo.write("src/Makefile", MAKEFILE);
        repo.commit("tiny engine");
        repo
    }

    fn write(&self, relative: &str, contents: &str) {
        let path = self.root.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    fn commit(&self, message: &str) -> git2::Oid {
        let repo = Repository::open(&self.root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = Signature::now("Lab Test", "lab@example.com").unwrap();
        let parent = repo.head().ok().and_then(|head| head.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            message,
            &tree,
            &parents,
        )
        .unwrap()
    }

    fn paths(&self) -> LabPaths {
        let paths = LabPaths::new(&self.root);
        paths.create_dirs().unwrap();
        paths
    }

    fn resolve(&self, spec: &str) -> (Repository, Revision) {
        let repo = open_repository(Some(&self.root)).unwrap();
        let revision = resolve(&repo, spec, &self.paths()).unwrap();
        (repo, revision)
    }

    fn engine(&self) -> OpenBenchEngine {
        match config::load(&self.root, None).unwrap().engine {
            Engine::OpenBench(engine) => engine,
            Engine::Squall => panic!("lab.toml was not read"),
        }
    }

    /// Every file and directory under `.git` with its size: what the lab must not change.
    fn git_listing(&self) -> BTreeMap<String, u64> {
        let mut listing = BTreeMap::new();
        let git = self.root.join(".git");
        let mut pending = vec![git.clone()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                let metadata = entry.metadata().unwrap();
                let relative = entry
                    .path()
                    .strip_prefix(&git)
                    .unwrap()
                    .display()
                    .to_string();
                if metadata.is_dir() {
                    pending.push(entry.path());
                    listing.insert(relative + "/", 0);
                } else {
                    listing.insert(relative, metadata.len());
                }
            }
        }
        listing
    }

    /// Entries of the lab's scratch directory: builds must leave none behind.
    fn scratch_entries(&self) -> Vec<String> {
        fs::read_dir(self.paths().scratch)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

fn tool_present(tool: &str, flag: &str) -> bool {
    Command::new(tool)
        .arg(flag)
        .output()
        .is_ok_and(|output| output.status.success())
}

/// False (with the reason printed) when the C toolchain or git is missing.
fn can_build_c() -> bool {
    for (tool, flag) in [
        ("cc", "--version"),
        ("make", "--version"),
        ("git", "--version"),
    ] {
        if !tool_present(tool, flag) {
            eprintln!("skipped: `{tool}` is not installed, so no C engine can be built here");
            return false;
        }
    }
    true
}

fn git_in(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

const BUILD_TIMEOUT: Duration = Duration::from_secs(300);

/// Progress that prints nothing: these builds are checked by what they return.
fn quiet() -> Progress {
    Progress::new(true)
}
const BENCH_TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn a_makefile_engine_is_built_cached_and_benched() {
    if !can_build_c() {
        return;
    }
    let engine_repo = EngineRepo::new();
    let before = engine_repo.git_listing();
    let (repo, revision) = engine_repo.resolve("HEAD");
    let commit = revision.commit.unwrap();
    let engine = engine_repo.engine();
    let paths = engine_repo.paths();

    let built = build_openbench_engine(&repo, &revision, &engine, &paths, BUILD_TIMEOUT, &quiet())
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(!built.cached);
    assert_eq!(built.path, paths.binaries.join(&built.key).join("tiny"));
    assert!(built.path.is_file());
    assert_eq!(
        fs::read_to_string(paths.binaries.join(&built.key).join("digest"))
            .unwrap()
            .trim(),
        git2::Oid::hash_file(git2::ObjectType::Blob, &built.path)
            .unwrap()
            .to_string()
    );
    let modified = fs::metadata(&built.path).unwrap().modified().unwrap();

    let again =
        build_openbench_engine(&repo, &revision, &engine, &paths, BUILD_TIMEOUT, &quiet()).unwrap();
    assert!(again.cached, "the second build came from the cache");
    assert_eq!(again.path, built.path);
    assert_eq!(
        fs::metadata(&again.path).unwrap().modified().unwrap(),
        modified,
        "not rebuilt"
    );
    // The bench command does not change the binary, so it is not in the key.
    let mut other_bench = engine.clone();
    other_bench.bench = "{exe} bench".to_string();
    let same = build_openbench_engine(
        &repo,
        &revision,
        &other_bench,
        &paths,
        BUILD_TIMEOUT,
        &quiet(),
    )
    .unwrap();
    assert!(same.cached && same.key == built.key);

    let scratch = paths.scratch.join("bench");
    let adapter = OpenBenchAdapter {
        engine: engine.clone(),
    };
    let bench = |depth| {
        let request = BenchRequest {
            depth,
            ..BenchRequest::default()
        };
        run_bench(&adapter, &built.path, &request, &scratch, BENCH_TIMEOUT).unwrap()
    };
    let run = bench(None);
    assert_eq!(run.total_nodes, 30_000);
    // 30,000 nodes at the engine's 3,000,000 nps.
    assert_eq!(run.total_time_ns, 10_000_000);
    let output = Command::new(&built.path).arg("bench").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("commit {commit}")),
        "the build compiled in `git rev-parse HEAD` of the snapshot: {stdout}"
    );
    assert_eq!(bench(Some(2)).total_nodes, 12_000);

    drop(repo);
    assert_eq!(engine_repo.git_listing(), before, "the user's .git changed");
    assert_eq!(
        engine_repo.scratch_entries(),
        ["bench"],
        "no build directory is left behind"
    );
}

#[test]
fn the_snapshot_is_a_clean_git_checkout_of_the_revision() {
    if !can_build_c() {
        return;
    }
    let engine_repo = EngineRepo::new();
    engine_repo.write("src/engine.c", &ENGINE_C.replace("tiny %s", "tiny2 %s"));
    let second = engine_repo.commit("second");
    let before = engine_repo.git_listing();
    let (repo, first) = engine_repo.resolve("HEAD~1");
    let snapshots = tempfile::tempdir().unwrap();

    let dir = snapshots.path().join("first");
    let head = write_git_snapshot(&repo, &first, &dir).unwrap();
    assert_eq!(head, first.commit);
    assert_eq!(
        git_in(&dir, &["rev-parse", "HEAD"]).trim(),
        first.commit.unwrap().to_string()
    );
    assert_eq!(git_in(&dir, &["status", "--porcelain"]), "");
    assert_eq!(
        fs::read_to_string(dir.join("src/engine.c")).unwrap(),
        ENGINE_C
    );
    // Objects come from the user's store through the alternates; none are copied.
    let objects: Vec<_> = fs::read_dir(dir.join(".git/objects"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "info" && name != "pack")
        .collect();
    assert!(objects.is_empty(), "{objects:?}");
    assert!(fs::read_dir(dir.join(".git/objects/pack"))
        .unwrap()
        .next()
        .is_none());

    // WORKTREE: HEAD is the user's HEAD commit, the changes show as in the user's checkout.
    engine_repo.write("src/engine.c", "int main(void) { return 0; }\n");
    engine_repo.write("src/notes.txt", "untracked\n");
    let (repo, worktree) = engine_repo.resolve("WORKTREE");
    let dir = snapshots.path().join("worktree");
    assert_eq!(
        write_git_snapshot(&repo, &worktree, &dir).unwrap(),
        Some(second)
    );
    assert_eq!(
        git_in(&dir, &["rev-parse", "HEAD"]).trim(),
        second.to_string()
    );
    assert_eq!(
        git_in(&dir, &["status", "--porcelain"]),
        " M src/engine.c\n?? src/notes.txt\n"
    );

    drop(repo);
    assert_eq!(engine_repo.git_listing(), before, "the user's .git changed");
}

#[test]
fn a_failing_build_shows_the_compiler_s_tail() {
    if !can_build_c() {
        return;
    }
    let engine_repo = EngineRepo::new();
    engine_repo.write(
        "src/engine.c",
        &ENGINE_C.replace("return 0;\n}", "return 0 this_is_a_syntax_error\n}"),
    );
    engine_repo.commit("broken");
    let (repo, revision) = engine_repo.resolve("HEAD");
    let paths = engine_repo.paths();
    let error = build_openbench_engine(
        &repo,
        &revision,
        &engine_repo.engine(),
        &paths,
        BUILD_TIMEOUT,
        &quiet(),
    )
    .expect_err("a syntax error");
    let message = format!("{error:#}");
    assert!(
        message.contains("building tiny at HEAD (") && message.contains("failed (exit status 2)"),
        "{message}"
    );
    assert!(message.contains("this_is_a_syntax_error"), "{message}");
    assert!(message.contains("--- last "), "{message}");
    assert_eq!(
        fs::read_dir(&paths.binaries).unwrap().count(),
        0,
        "nothing cached"
    );
    assert!(engine_repo.scratch_entries().is_empty());

    // Exit 0 without the file: the expected path is named.
    let mut silent = engine_repo.engine();
    silent.build = "true {exe}".to_string();
    let message = format!(
        "{:#}",
        build_openbench_engine(&repo, &revision, &silent, &paths, BUILD_TIMEOUT, &quiet())
            .unwrap_err()
    );
    assert!(
        message.contains(&format!("did not produce src/{EXE_NAME}")),
        "{message}"
    );

    // A build directory the revision lacks names the revision.
    let mut elsewhere = engine_repo.engine();
    elsewhere.build_dir = PathBuf::from("engine");
    let message = format!(
        "{:#}",
        build_openbench_engine(
            &repo,
            &revision,
            &elsewhere,
            &paths,
            BUILD_TIMEOUT,
            &quiet()
        )
        .unwrap_err()
    );
    assert!(
        message.contains("revision HEAD (") && message.contains("has no directory 'engine'"),
        "{message}"
    );
}

#[test]
fn a_hanging_build_is_killed_with_its_process_group() {
    if !can_build_c() {
        return;
    }
    let engine_repo = EngineRepo::new();
    // A duration no other process uses, to find the sleep by its command line.
    let marker = format!("1000.{}{}", std::process::id(), 7);
    engine_repo.write(
        "src/Makefile",
        &format!("all:\n\techo compiling\n\tsleep {marker}; echo slept\n"),
    );
    engine_repo.commit("hangs");
    let (repo, revision) = engine_repo.resolve("HEAD");
    let paths = engine_repo.paths();
    let start = Instant::now();
    let error = build_openbench_engine(
        &repo,
        &revision,
        &engine_repo.engine(),
        &paths,
        Duration::from_secs(2),
        &quiet(),
    )
    .expect_err("a timeout");
    assert!(start.elapsed() < Duration::from_secs(60));
    let message = format!("{error:#}");
    assert!(message.contains("building tiny at HEAD ("), "{message}");
    assert!(message.contains("did not finish within 2 s"), "{message}");

    let pattern = format!("sleep {marker}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = Command::new("pgrep")
            .arg("-f")
            .arg(&pattern)
            .output()
            .expect("pgrep");
        if !found.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "`{pattern}` outlived the build's timeout: {}",
            String::from_utf8_lossy(&found.stdout)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(engine_repo.scratch_entries().is_empty());
}
