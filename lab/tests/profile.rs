//! `lab profile` on the real engine: the flamegraph names each eval tier as its own frame.
//!
//! It builds this workspace's engine (the uncommitted WORKTREE) with `--features profile` in
//! release mode, which takes a few minutes cold; the binary is cached under target/lab/ after.
//! Sampling is statistical and the kernel's timer tick caps the rate (often 250 Hz): the lazy
//! tier holds well under 1% of samples, so the run is long enough for a few of them (depth 11,
//! about 1000 samples) and the test retries deeper when a tier is still missing.

mod common;

use std::path::Path;
use std::process::Command;

use common::svg::svg_titles;

const TIERS: [&str; 3] = ["super_lazy_score", "lazy_terms", "full_tier"];

/// `lab profile ARGS... --out SVG` on this workspace; its stdout, once it exited 0.
fn lab_profile(args: &[&str], svg: &Path) -> String {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_lab"))
        .arg("--repo")
        .arg(workspace)
        .arg("profile")
        .args(args)
        .arg("--out")
        .arg(svg)
        .output()
        .expect("running lab");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_flamegraph_holds_a_frame_for_each_eval_tier() {
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("profile.svg");
    let mut missing = Vec::new();
    for depth in ["11", "12", "12"] {
        let stdout = lab_profile(&["WORKTREE", "--depth", depth], &svg);
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

/// `--vs`: A's and B's flamegraphs and the differential one, whose frame widths are B's samples
/// and whose tooltips carry the change from A. Both sides are WORKTREE here (one cached build):
/// the sampling noise still gives frames that moved.
#[test]
fn vs_writes_a_differential_flamegraph() {
    let out = tempfile::tempdir().unwrap();
    let svg = out.path().join("a.svg");
    let stdout = lab_profile(
        &[
            "WORKTREE", "--vs", "WORKTREE", "--depth", "10", "--format", "json",
        ],
        &svg,
    );
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    let diff = out.path().join("a-vs-WORKTREE-vs.diff.svg");
    assert_eq!(json["diff_svg"], diff.to_str().unwrap(), "{json:#}");
    for side in ["a", "b"] {
        assert_eq!(json[side]["sampler"], "pprof");
        let hz = json[side]["effective_hz"]
            .as_f64()
            .expect("an effective rate");
        // The kernel tick caps pprof's timer (often 250 Hz); never above the requested 997.
        assert!(hz > 10.0 && hz <= 997.0 * 1.1, "{side}: {hz} Hz");
    }
    let titles = svg_titles(&std::fs::read_to_string(&diff).expect("the differential SVG"));
    let b_samples = json["b"]["samples"].as_u64().unwrap();
    assert!(
        titles.contains(&format!("all ({b_samples} samples, 100%)")),
        "widths are B's samples: {:?}",
        &titles[..titles.len().min(5)]
    );
    let frame = |name: &str| {
        titles
            .iter()
            .find(|t| t.starts_with(&format!("{name} (")))
            .unwrap_or_else(|| panic!("no {name} frame in {titles:?}"))
    };
    // Every frame's tooltip ends with its change: `; +0.43%)`, `; -1.07%)` or `; 0.00%)`.
    for name in ["negamax", "evaluate", "full_tier"] {
        let title = frame(name);
        assert!(title.ends_with("%)") && title.contains("%; "), "{title}");
    }
    assert!(
        titles
            .iter()
            .any(|t| t.contains("%; +") || t.contains("%; -")),
        "some frame moved between the runs"
    );
    let leftovers: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}
