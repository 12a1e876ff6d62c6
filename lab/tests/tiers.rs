//! `lab tiers` end to end on a fake engine whose `--full-eval` does more (or less) work per node.

mod common;

use common::FakeRepo;

const ROUNDS: &str = "6";

#[test]
fn tiers_report_what_the_cheap_tiers_buy() {
    let repo = FakeRepo::new();
    let run = repo.lab(&[
        "tiers",
        "HEAD",
        "--rounds",
        ROUNDS,
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert_eq!(report["kind"], "tiers", "{run}");
    assert_eq!(report["a"]["revision"]["spec"], "HEAD --full-eval", "{run}");
    assert_eq!(report["b"]["revision"]["spec"], "HEAD", "{run}");
    // A ran with --full-eval: the fake engine then exits in the full tier only.
    assert_eq!(report["a"]["eval"]["exits"]["super_lazy"], 0, "{run}");
    assert!(
        report["b"]["eval"]["exits"]["super_lazy"].as_u64() > Some(0),
        "{run}"
    );
    // The fake's full evaluation does twice the work per node.
    assert_eq!(report["speed"]["verdict"], "improvement", "{run}");
    assert!(
        report["speed"]["nps_change_pct"].as_f64() > Some(50.0),
        "{run}"
    );
    assert!(
        report["warnings"].as_array().unwrap().is_empty(),
        "a different tree is expected, not a warning: {run}"
    );
    assert!(
        report["notes"][0].as_str().unwrap().contains("node ratio"),
        "{run}"
    );
}

#[test]
fn tiers_that_cost_more_than_they_save_are_a_regression() {
    let repo = FakeRepo::new();
    repo.commit_constant("FULL_EVAL_WORK_PERCENT", "50");
    let run = repo.lab(&["tiers", "HEAD", "--rounds", ROUNDS, "--no-instructions"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("lab tiers: A = HEAD --full-eval"),
        "{run}"
    );
    assert!(run.stdout.contains("Verdict: REGRESSION (exit 1)"), "{run}");
}
