//! The build cache shares one cargo target directory between trees. A tree whose sources were
//! written before another tree's build (compare A B, then `--calibrate` builds A and B again
//! with a feature) must still get its own binary, not the other tree's.

mod common;

use common::FakeRepo;
use squall_lab::build::build_engine;
use squall_lab::paths::LabPaths;
use squall_lab::progress::Progress;
use squall_lab::revision::{materialize, open_repository, resolve};

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
    materialize(&repo, b.tree, &paths).unwrap();
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
