//! `lab verdict` and the speed-Elo line of `lab compare`, end to end on the fake bench engine,
//! whose clock reads its work (`SIMULATED_NS_PER_KILOWORK`): the same decisions on any machine
//! under any load. The model is written into the repository's cache as `lab speed-elo` would.

mod common;

use common::speed_elo::store_stand_in_model;
use common::FakeRepo;

fn verdict(repo: &FakeRepo, a: &str, b: &str) -> common::LabRun {
    repo.lab(&[
        "verdict",
        a,
        b,
        "--tc",
        "2+0.02",
        "--sprt",
        "elo0=-5,elo1=0",
        "--no-instructions",
        "--format",
        "json",
    ])
}

#[test]
fn a_same_signature_slowdown_is_judged_by_its_speed_alone_with_no_games() {
    let repo = FakeRepo::new();
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "500");
    repo.commit_constant("WORK_PER_NODE", "300");
    let missing = verdict(&repo, "HEAD~1", "HEAD");
    assert_eq!(missing.code, 2, "{missing}");
    assert!(
        missing.stderr.contains("lab speed-elo HEAD~1 --tc 2+0.02"),
        "the error names the command that makes a model: {missing}"
    );

    store_stand_in_model(repo.path());
    let run = verdict(&repo, "HEAD~1", "HEAD");
    assert_eq!(run.code, 1, "1.5 times the work per node is H0: {run}");
    let report = run.json();
    assert_eq!(report["kind"], "verdict");
    assert_eq!(report["decision"], "h0");
    assert_eq!(report["games"], 0);
    assert!(report["search"].is_null(), "{run}");
    assert_eq!(report["search_elo"]["value"], 0.0);
    // 80 Elo per doubling × log2(1/1.5) = -46.8; the interval spans 70 to 90 per doubling.
    let speed = &report["speed_elo"];
    let value = speed["value"].as_f64().unwrap();
    assert!((-50.0..-43.0).contains(&value), "{speed}");
    assert!(speed["ci_low"].as_f64().unwrap() < value);
    assert!(speed["ci_high"].as_f64().unwrap() > value);
    assert_eq!(report["total_elo"], report["speed_elo"]);
    assert!(report["llr"].as_f64().unwrap() <= report["llr_lower"].as_f64().unwrap());
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .contains("another engine tree"),
        "{run}"
    );

    // The same binary on both sides: no speed change, so H1 at [-5, 0], still without games.
    let same = verdict(&repo, "HEAD", "HEAD");
    assert_eq!(same.code, 0, "{same}");
    assert_eq!(same.json()["decision"], "h1");
    assert_eq!(same.json()["games"], 0);

    // With a model stored, compare says what its speed change is worth.
    let compare = repo.lab(&["compare", "HEAD~1", "HEAD", "--no-instructions"]);
    assert_eq!(compare.code, 1, "{compare}");
    assert!(
        compare.stdout.contains("Speed in Elo: ") && compare.stdout.contains("at 2+0.02"),
        "{compare}"
    );
    let terminal = repo.lab(&[
        "verdict",
        "HEAD~1",
        "HEAD",
        "--tc",
        "2+0.02",
        "--no-instructions",
    ]);
    assert_eq!(terminal.code, 1, "{terminal}");
    assert!(
        terminal.stdout.contains("Decision: H0 accepted"),
        "{terminal}"
    );
    assert!(
        terminal.stdout.contains("same signature: no games needed"),
        "{terminal}"
    );
}

/// The fake's clock reads its work times a constant: raising the constant by half slows its
/// NPS by a third without one more instruction per node. Paired NPS calls that H0; the
/// instruction count sees the same work, exactly, and accepts with no games and no more rounds.
#[test]
fn the_speed_term_can_be_an_exact_instruction_ratio() {
    if !common::have("valgrind") {
        eprintln!("valgrind not installed: skipping");
        return;
    }
    let repo = FakeRepo::new();
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "500");
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "750");
    store_stand_in_model(repo.path());
    let verdict_from = |speed_from: &str, json: bool| {
        let mut args = vec![
            "verdict",
            "HEAD~1",
            "HEAD",
            "--tc",
            "2+0.02",
            "--speed-from",
            speed_from,
            "--rounds",
            "2",
            "--instr-depth",
            "1",
        ];
        if json {
            args.extend(["--format", "json"]);
        }
        repo.lab(&args)
    };
    let nps = verdict_from("nps", true);
    assert_eq!(nps.code, 1, "a third fewer nodes per second is H0: {nps}");
    assert_eq!(nps.json()["speed_from"], "nps");

    let run = verdict_from("instructions", true);
    assert_eq!(run.code, 0, "the same instructions per node is H1: {run}");
    let report = run.json();
    assert_eq!(report["speed_from"], "instructions");
    assert_eq!(report["decision"], "h1");
    assert_eq!(report["games"], 0);
    assert_eq!(
        report["rounds"], 2,
        "an exact count asks for no more rounds: {run}"
    );
    let ratio = &report["speed_ratio"];
    assert_eq!(ratio["ci_low"], ratio["value"], "{ratio}");
    assert_eq!(ratio["ci_high"], ratio["value"], "{ratio}");
    let value = ratio["value"].as_f64().unwrap();
    let per_node = report["comparison"]["instructions"]["per_node_ratio"]
        .as_f64()
        .unwrap();
    assert!((value * per_node - 1.0).abs() < 1e-12, "{run}");
    assert!((value - 1.0).abs() < 1e-3, "the same work per node: {run}");

    let terminal = verdict_from("instructions", false);
    assert_eq!(terminal.code, 0, "{terminal}");
    assert!(
        terminal.stdout.contains("speed (B vs A, instructions)")
            && terminal
                .stdout
                .contains("A's instructions per node over B's (callgrind, depth 1; exact)"),
        "{terminal}"
    );
}

#[test]
fn bad_verdict_options_are_clear_errors() {
    let repo = FakeRepo::new();
    for (args, expected) in [
        (
            vec!["--sprt", "elo0=1,elo1=0"],
            "elo0 must be less than elo1",
        ),
        (
            vec!["--max-rounds", "4", "--rounds", "6"],
            "--max-rounds 4 is below --rounds 6",
        ),
        (vec!["--max-games", "7"], "must be even"),
        (
            vec!["--speed-from", "instructions", "--no-instructions"],
            "cannot go with --no-instructions",
        ),
    ] {
        let mut all = vec!["verdict", "HEAD", "HEAD", "--tc", "2+0.02"];
        all.extend(args);
        let run = repo.lab(&all);
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stderr.contains(expected), "{expected}: {run}");
    }
    let show = repo.lab(&["speed-elo", "--show"]);
    assert_eq!(show.code, 0, "{show}");
    assert!(
        show.stdout.contains("No speed-Elo model is stored"),
        "{show}"
    );
    let odds = repo.lab(&["speed-elo", "HEAD", "--tc", "1+0.01", "--odds", "1"]);
    assert_eq!(odds.code, 2, "{odds}");
    assert!(odds.stderr.contains("equal clocks"), "{odds}");
}
