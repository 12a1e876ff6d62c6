//! Instruction counts under callgrind, and their graceful absence.

mod common;

use common::FakeRepo;

#[test]
fn a_two_percent_instruction_increase_is_flagged_as_a_regression() {
    if !common::have("valgrind") {
        eprintln!("valgrind not installed: skipping");
        return;
    }
    let repo = FakeRepo::new();
    repo.commit_constant("WORK_PER_NODE", "204");
    // A loose NPS threshold isolates the instruction verdict from timing noise.
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--instr-depth",
        "1",
        "--threshold",
        "50",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run}");
    let report = run.json();
    let change = report["instructions"]["per_node_change_pct"]
        .as_f64()
        .unwrap();
    assert!(
        (1.0..3.0).contains(&change),
        "per-node change {change}%: {run}"
    );
    assert_eq!(report["instructions"]["flagged"], true);
    assert_eq!(report["instructions"]["verdict"], "regression");
    assert_eq!(report["a"]["instructions"]["depth"], 1);
}

#[test]
fn identical_binaries_have_the_same_instruction_counts() {
    if !common::have("valgrind") {
        return;
    }
    let repo = FakeRepo::new();
    let run = repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--rounds",
        "2",
        "--instr-depth",
        "1",
        "--threshold",
        "50",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    // Not bit-identical: printing run-dependent timings takes a varying handful of instructions.
    let change = report["instructions"]["per_node_change_pct"]
        .as_f64()
        .unwrap();
    assert!(change.abs() < 0.01, "{change}%: {run}");
    assert_eq!(report["instructions"]["flagged"], false);
}

#[test]
fn missing_valgrind_is_reported_not_fatal() {
    let repo = FakeRepo::new();
    let run = repo.lab_with_env(
        &[
            "compare",
            "HEAD",
            "HEAD",
            "--force",
            "--rounds",
            "2",
            "--threshold",
            "50",
        ],
        &[("LAB_VALGRIND", "/nonexistent/valgrind")],
    );
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr
            .contains("instructions: skipped (valgrind not found)"),
        "{run}"
    );
    assert!(
        run.stdout
            .contains("Instructions: skipped (valgrind not found)"),
        "{run}"
    );
}
