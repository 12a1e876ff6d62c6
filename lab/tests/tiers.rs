//! `lab tiers` end to end on a fake engine whose `--full-eval` does more (or less) work per node.

mod common;

use common::{table_row, FakeRepo};

const ROUNDS: &str = "6";

#[test]
fn tiers_report_what_the_cheap_tiers_buy() {
    let repo = FakeRepo::new();
    // The fake's clock reads its work, so the verdict is the same on any machine and load.
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "500");
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
    // Both sides split their exits by search: the fake's quiescence asks for 60% of each tier.
    let quiescence = |side: &str, tier: &str| {
        report[side]["eval"]["by_search"]["quiescence"]["share_of_tier"][tier].as_f64()
    };
    assert_eq!(quiescence("a", "full"), Some(0.6), "{run}");
    assert_eq!(quiescence("b", "super_lazy"), Some(0.6), "{run}");
    assert_eq!(
        report["eval_deltas"]["by_search"]["quiescence_share_of_all_pp"].as_f64(),
        Some(0.0),
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
    repo.set_constant("SIMULATED_NS_PER_KILOWORK", "500");
    repo.commit_constant("FULL_EVAL_WORK_PERCENT", "50");
    let run = repo.lab(&["tiers", "HEAD", "--rounds", ROUNDS, "--no-instructions"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stdout.contains("lab tiers: A = HEAD --full-eval"),
        "{run}"
    );
    assert!(run.stdout.contains("Verdict: REGRESSION (exit 1)"), "{run}");
    // A's cheap tiers never exit under --full-eval: no split, no delta for them.
    let super_lazy = table_row(
        &run.stdout,
        "Eval exits by search (share of each tier's exits)",
        "super-lazy",
    );
    assert_eq!(super_lazy.matches('—').count(), 3, "{super_lazy}");
    assert!(super_lazy.contains("60.0%"), "{super_lazy}");
}

const FOUR_POSITIONS: &str = "\
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 ; id kiwipete
8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1
4k3/8/8/8/8/8/8/4K2R w K - 0 1
";

#[test]
fn a_positions_file_replaces_the_built_in_bench() {
    let repo = FakeRepo::new();
    let pool = repo.path().join("pool.epd");
    std::fs::write(&pool, FOUR_POSITIONS).unwrap();
    let pool = pool.to_str().unwrap();
    let run = repo.lab(&[
        "tiers",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--positions",
        pool,
        "--every",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    let positions = &report["settings"]["positions"];
    assert_eq!(positions["count"], 2, "{run}");
    assert_eq!(positions["every"], 2, "{run}");
    assert_eq!(positions["file"], pool, "{run}");
    // Both sides benched the first and third positions, not the fake's built-in eight.
    assert_eq!(report["a"]["positions"], 2, "{run}");
    assert_eq!(report["b"]["positions"], 2, "{run}");

    let terminal = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--positions",
        pool,
    ]);
    assert_eq!(terminal.code, 0, "{terminal}");
    assert!(terminal.stdout.contains("positions: "), "{terminal}");
    assert!(terminal.stdout.contains("(4)"), "{terminal}");
}

#[test]
fn a_bad_positions_line_is_an_error_with_its_line_number() {
    let repo = FakeRepo::new();
    let file = repo.path().join("bad.epd");
    std::fs::write(&file, format!("{FOUR_POSITIONS}not a fen\n")).unwrap();
    let pool = file.to_str().unwrap();
    let run = repo.lab(&["bench", "HEAD", "--no-instructions", "--positions", pool]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("bad.epd:5: bad position"), "{run}");

    let baseline = repo.lab(&["baseline", "save", "main", "--positions", pool]);
    assert_eq!(baseline.code, 2, "{baseline}");
    assert!(
        baseline.stderr.contains("takes no --positions"),
        "{baseline}"
    );
}
