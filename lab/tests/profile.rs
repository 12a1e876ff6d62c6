//! `lab profile` on the real engine: the flamegraph names each eval tier as its own frame.
//!
//! It builds this workspace's engine (the uncommitted WORKTREE) with `--features profile` in
//! release mode, which takes a few minutes cold; the binary is cached under target/lab/ after.
//! Sampling is statistical and the kernel's timer tick caps the rate (often 250 Hz): the lazy
//! tier holds well under 1% of samples, so the run is long enough for a few of them (depth 11,
//! about 1000 samples) and the test retries deeper when a tier is still missing.

use std::path::Path;
use std::process::Command;

const TIERS: [&str; 3] = ["super_lazy_score", "lazy_terms", "full_tier"];

#[test]
fn the_flamegraph_holds_a_frame_for_each_eval_tier() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("profile.svg");
    let mut missing = Vec::new();
    for depth in ["11", "12", "12"] {
        let output = Command::new(env!("CARGO_BIN_EXE_lab"))
            .arg("--repo")
            .arg(workspace)
            .args(["profile", "WORKTREE", "--depth", depth, "--out"])
            .arg(&svg)
            .output()
            .expect("running lab");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            output.status.code(),
            Some(0),
            "stdout:\n{stdout}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(stdout.contains("profile run time"), "{stdout}");
        assert!(stdout.contains("full_tier"), "{stdout}");
        let contents = std::fs::read_to_string(&svg).expect("the SVG was written");
        assert!(contents.starts_with("<?xml"), "not an SVG");
        assert!(svg.with_extension("folded").is_file());
        missing = TIERS
            .iter()
            .filter(|tier| !contents.contains(*tier))
            .collect();
        if missing.is_empty() {
            return;
        }
        eprintln!("depth {depth}: no samples yet in {missing:?}; retrying deeper");
    }
    panic!("the flamegraph has no frame for {missing:?}");
}
