//! `lab compare --functions`: a commit that adds work to one named function ranks it first.

mod common;

use common::{FakeRepo, FAKE_ENGINE};

/// The fake engine with two named, never-inlined functions called at every node.
fn engine_with_named_functions() -> String {
    let node_loop = "for n in 0..nodes {";
    assert!(FAKE_ENGINE.contains(node_loop), "the fake engine changed");
    FAKE_ENGINE.replace(
        node_loop,
        "for n in 0..nodes {\n            sink ^= drawish_check(n) ^ eval_terms(n);",
    ) + r#"
const DRAWISH_WORK: u64 = 2;
const EVAL_WORK: u64 = 30;

#[inline(never)]
fn drawish_check(n: u64) -> u64 {
    let mut s = n;
    for i in 0..DRAWISH_WORK {
        s = black_box(s.wrapping_mul(31).wrapping_add(i));
    }
    s
}

#[inline(never)]
fn eval_terms(n: u64) -> u64 {
    let mut s = n;
    for i in 0..EVAL_WORK {
        s = black_box(s.wrapping_mul(17).wrapping_add(i));
    }
    s
}
"#
}

#[test]
fn functions_rank_the_slowed_function_first() {
    if !common::have("valgrind") {
        eprintln!("valgrind not installed: skipping");
        return;
    }
    let repo = FakeRepo::new();
    repo.write("engine/src/main.rs", &engine_with_named_functions());
    repo.commit("named functions");
    repo.commit_constant("DRAWISH_WORK", "12");
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--instr-depth",
        "1",
        "--threshold",
        "1000",
        "--functions",
        "--functions-top",
        "5",
        "--format",
        "json",
    ]);
    // Exit 1 is fine: the extra instructions are a real regression.
    assert!(run.code == 0 || run.code == 1, "{run}");
    let report = run.json();
    let movers = report["functions"]["movers"].as_array().expect("movers");
    assert!(!movers.is_empty() && movers.len() <= 5, "{run}");
    let first = &movers[0];
    assert_eq!(first["function"], "squall::drawish_check", "{run}");
    assert!(first["self_delta"].as_i64().unwrap() > 0, "{run}");
    assert!(first["self_delta_pct_of_total"].as_f64().unwrap() > 0.0);
    // eval_terms did not change.
    assert!(movers
        .iter()
        .filter(|m| m["function"] == "squall::eval_terms")
        .all(|m| m["self_delta"].as_i64().unwrap().abs() < 1000));

    // The terminal report names it with its delta.
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--instr-depth",
        "1",
        "--threshold",
        "1000",
        "--functions",
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("function movers"), "{run}");
    let line = run
        .stdout
        .lines()
        .find(|line| line.contains("squall::drawish_check"))
        .unwrap_or_else(|| panic!("no drawish_check row: {run}"));
    assert!(line.contains("of total"), "{line}");
}

#[test]
fn a_fixed_cost_within_the_threshold_is_attributed_by_default() {
    if !common::have("valgrind") {
        eprintln!("valgrind not installed: skipping");
        return;
    }
    let repo = FakeRepo::new();
    repo.write("engine/src/main.rs", &engine_with_named_functions());
    repo.commit("named functions");
    repo.commit_constant("DRAWISH_WORK", "3");
    // No --functions, and an instruction threshold the change stays within: the verdict is
    // unchanged, and the function is still named, from the instruction count's own runs.
    let args = [
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--instr-depth",
        "1",
        "--threshold",
        "1000",
        "--instr-threshold",
        "1000",
    ];
    let run = repo.lab(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert_eq!(report["signature"]["changed"], false, "{run}");
    let change = report["instructions"]["per_node_change_pct"]
        .as_f64()
        .unwrap();
    assert!(change >= 0.1, "{change}");
    assert_eq!(report["instructions"]["verdict"], "no-change", "{run}");
    let functions = &report["functions"];
    assert_eq!(functions["why"], "instructions-moved", "{run}");
    let movers = functions["movers"].as_array().expect("movers");
    assert!(!movers.is_empty() && movers.len() <= 5, "{run}");
    assert_eq!(movers[0]["function"], "squall::drawish_check", "{run}");
    assert!(movers[0]["self_delta_pct_of_total"].as_f64().unwrap() > 0.0);

    let terminal = repo.lab(&args);
    assert_eq!(terminal.code, 0, "{terminal}");
    let line = terminal
        .stdout
        .lines()
        .find(|line| line.starts_with("Instructions: per node"))
        .unwrap_or_else(|| panic!("no instructions line: {terminal}"));
    assert!(
        line.contains("top mover squall::drawish_check (+") && line.contains("of total"),
        "{line}"
    );

    // The same engine again (--force): nothing moved, nothing attributed.
    let same = repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--rounds",
        "2",
        "--instr-depth",
        "1",
        "--threshold",
        "1000",
        "--format",
        "json",
    ]);
    assert_eq!(same.code, 0, "{same}");
    assert!(same.json()["functions"].is_null(), "{same}");
}
