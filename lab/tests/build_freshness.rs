//! The build cache shares one cargo target directory between trees. A tree whose sources were
//! written before another tree's build (compare A B, then `--calibrate` builds A and B again
//! with a feature) must still get its own binary, not the other tree's.

mod common;

use common::FakeRepo;
use squall_lab::engine::build::build_engine;
use squall_lab::engine::revision::{open_repository, resolve};
use squall_lab::engine::snapshot::materialize;
use squall_lab::paths::LabPaths;
use squall_lab::progress::Progress;

#[test]
fn a_tree_materialised_before_another_build_still_gets_its_own_binary() {
    let fake = FakeRepo::new();
    fake.commit_constant("NODES_PER_POSITION", "1100");
    let _slot = common::serial();
    let repo = open_repository(Some(fake.path())).unwrap();
    let paths = LabPaths::new(fake.path());
    paths.create_dirs().unwrap();
    let progress = Progress::new(true);
    let a = resolve(&repo, "HEAD~1", &paths).unwrap();
    let b = resolve(&repo, "HEAD", &paths).unwrap();
    // B's sources are written first, then A is built, then B.
    materialize(
        &repo,
        &b,
        &paths,
        &squall_lab::progress::Progress::new(true),
    )
    .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let built_a = build_engine(&repo, &a, &[], &paths, &progress).unwrap();
    let built_b = build_engine(&repo, &b, &[], &paths, &progress).unwrap();
    assert_ne!(built_a.key, built_b.key);
    let same = std::fs::read(&built_a.path).unwrap() == std::fs::read(&built_b.path).unwrap();
    assert!(
        !same,
        "B got A's binary: cargo took B's older sources for fresh"
    );
}

fn bench_json(fake: &FakeRepo) -> common::LabRun {
    fake.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ])
}

fn only_entry(dir: &std::path::Path) -> std::path::PathBuf {
    let entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries[0].clone()
}

#[test]
fn an_edited_source_snapshot_is_written_again_before_it_is_built() {
    let fake = FakeRepo::new();
    let first = bench_json(&fake);
    assert_eq!(first.code, 0, "{first}");
    let signature = first.json()["revision"]["signature"].clone();
    assert!(
        !first.stderr.contains("note:"),
        "a fresh cache needs no note: {first}"
    );
    // Edit the snapshot (1000 nodes per position becomes 10), add a file to it and drop the
    // binary, so the next run builds from the snapshot.
    let snapshot = only_entry(&fake.cache("src"));
    let main = snapshot.join("engine/src/main.rs");
    let source = std::fs::read_to_string(&main).unwrap();
    let edited = source.replace(
        "const NODES_PER_POSITION: u64 = 1000;",
        "const NODES_PER_POSITION: u64 = 10;",
    );
    assert_ne!(source, edited);
    std::fs::write(&main, edited).unwrap();
    std::fs::remove_dir_all(fake.cache("bin")).unwrap();
    let second = bench_json(&fake);
    assert_eq!(second.code, 0, "{second}");
    assert_eq!(
        second.json()["revision"]["signature"],
        signature,
        "HEAD was built from the edited snapshot: {second}"
    );
    assert!(
        second.stderr.contains("engine/src/main.rs: edited"),
        "{second}"
    );

    // A file the tree does not have is found as well.
    std::fs::write(snapshot.join("engine/build.rs"), "fn main() {}\n").unwrap();
    std::fs::remove_dir_all(fake.cache("bin")).unwrap();
    let third = bench_json(&fake);
    assert_eq!(third.code, 0, "{third}");
    assert!(
        third.stderr.contains("engine/build.rs: not in the tree"),
        "{third}"
    );
    assert!(!snapshot.join("engine/build.rs").exists());
}

#[test]
fn a_damaged_cached_binary_is_built_again() {
    let fake = FakeRepo::new();
    let first = bench_json(&fake);
    assert_eq!(first.code, 0, "{first}");
    let entry = only_entry(&fake.cache("bin"));
    let binary = entry.join("squall");
    let whole = std::fs::read(&binary).unwrap();
    std::fs::write(&binary, &whole[..whole.len() / 2]).unwrap();
    let second = bench_json(&fake);
    assert_eq!(
        second.code, 0,
        "the damage was blamed on the engine: {second}"
    );
    assert!(
        second.stderr.contains("does not match the digest"),
        "{second}"
    );
    assert!(second.stderr.contains("building it again"), "{second}");
    assert_eq!(
        std::fs::read(&binary).unwrap().len(),
        whole.len(),
        "the binary was not rebuilt"
    );
    // With --quiet the rebuild is silent: a note, not a warning.
    std::fs::write(&binary, &whole[..whole.len() / 2]).unwrap();
    let quiet = fake.lab(&["bench", "HEAD", "--rounds", "2", "--no-instructions", "-q"]);
    assert_eq!(quiet.code, 0, "{quiet}");
    assert_eq!(quiet.stderr, "", "{quiet}");
    assert_eq!(std::fs::read(&binary).unwrap().len(), whole.len());
    // A sound entry is reused without a note.
    let third = bench_json(&fake);
    assert_eq!(third.code, 0, "{third}");
    assert!(!third.stderr.contains("note:"), "{third}");
    assert!(third.stderr.contains("cached build"), "{third}");
}

#[test]
fn a_revision_from_before_the_lab_layout_builds_its_engine_alone() {
    let fake = FakeRepo::new();
    // As in the real history: the workspace already names `lab` (and keeps it as a default
    // member), but the revision has no lab package.
    fake.write(
        "Cargo.toml",
        "[workspace]\nresolver = \"2\"\nmembers = [\"engine\", \"lab\"]\n\
         default-members = [\"engine\", \"lab\"]\n\n[profile.release]\nopt-level = 3\n",
    );
    fake.commit("a workspace that names a lab it does not have");
    let run = bench_json(&fake);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stderr.contains("predates the lab layout"), "{run}");
    assert!(run.stderr.contains("names lab,"), "{run}");
    let year = run
        .stderr
        .split(" from ")
        .nth(1)
        .map(|rest| rest[..4].to_string());
    assert!(
        year.is_some_and(|y| y.parse::<u32>().is_ok_and(|y| y >= 2024)),
        "the revision's date is given: {run}"
    );
    assert_eq!(run.json()["revision"]["signature"], 180_000);
    // The narrowed manifest and the lock cargo rewrote are the lab's own: no note next time.
    std::fs::remove_dir_all(fake.cache("bin")).unwrap();
    let again = bench_json(&fake);
    assert_eq!(again.code, 0, "{again}");
    assert!(!again.stderr.contains("note:"), "{again}");
}
