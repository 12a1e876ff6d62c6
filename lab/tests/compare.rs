//! `lab compare` end to end on a fake engine in a temporary repository.

mod common;

use common::{quick_compare, table_row, FakeRepo};

/// Enough paired runs for a stable verdict on a noisy, shared machine; still well under a second
/// of fake-engine time per run.
const ROUNDS: &str = "6";

#[test]
fn slowed_commit_is_a_regression() {
    let repo = FakeRepo::new();
    // The fake's clock reads its work, so the verdict is the same on any machine and load.
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "500");
    repo.commit_constant("WORK_PER_NODE", "300");
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        ROUNDS,
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run}");
    let report = run.json();
    assert_eq!(report["verdict"], "regression");
    assert_eq!(report["regression"], true);
    assert_eq!(report["signature"]["changed"], false);
    assert_eq!(report["speed"]["verdict"], "regression");
    assert!(
        report["speed"]["cost_ratio"]["ci_low"].as_f64().unwrap() > 1.0,
        "{run}"
    );
}

#[test]
fn one_engine_binary_on_both_sides_is_said_in_one_line_and_not_measured() {
    let repo = FakeRepo::new();
    // A commit outside the engine: HEAD~1 and HEAD share one engine binary.
    repo.write("lab/README.md", "the lab changed, the engine did not\n");
    repo.commit("lab only");
    for (a, b) in [("HEAD", "HEAD"), ("HEAD~1", "HEAD")] {
        let run = repo.lab(&["compare", a, b, "--rounds", ROUNDS, "--no-instructions"]);
        assert_eq!(run.code, 0, "{run}");
        assert_eq!(run.stdout.lines().count(), 1, "one line: {run}");
        assert!(
            run.stdout.contains("resolve to the same engine binary")
                && run.stdout.contains("--force"),
            "{run}"
        );
        assert!(!run.stderr.contains("measuring"), "nothing measured: {run}");
        let json = repo.lab(&[
            "compare",
            a,
            b,
            "--rounds",
            ROUNDS,
            "--no-instructions",
            "--format",
            "json",
        ]);
        assert_eq!(json.code, 0, "{json}");
        let json = json.json();
        assert_eq!(json["kind"], "same-binary");
        assert_eq!(json["measured"], false);
        assert_eq!(json["verdict"], "no-change");
        assert_eq!(json["a"]["binary_key"], json["b"]["binary_key"]);
    }
    // --force: an explicit A/A run, measured and said to be one. A loose threshold keeps the
    // machine's noise (a loaded CI runner) out of the exit this checks.
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--force",
        "--rounds",
        ROUNDS,
        "--no-instructions",
        "--threshold",
        "1000",
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.contains("signature (nodes)"), "{run}");
    assert!(run.stdout.contains("note: A/A run (--force)"), "{run}");
    assert!(!run.stdout.contains("SIGNATURE CHANGED"), "{run}");
}

#[test]
fn changed_signature_is_flagged_prominently() {
    let repo = FakeRepo::new();
    repo.commit_constant("NODES_PER_POSITION", "1100");
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
    ]);
    assert_ne!(run.code, 2, "{run}");
    let warning = run
        .stdout
        .find("SIGNATURE CHANGED")
        .unwrap_or_else(|| panic!("no warning:\n{run}"));
    assert!(
        warning < run.stdout.find("figure").unwrap(),
        "the warning leads the report:\n{run}"
    );
    // Per-node cost leads the table when the searches differ.
    let table = &run.stdout[run.stdout.find("figure").unwrap()..];
    assert!(
        table.find("time per node").unwrap() < table.find("NPS").unwrap(),
        "{run}"
    );

    let json = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ]);
    let report = json.json();
    assert_eq!(report["signature"]["changed"], true);
    assert_eq!(
        report["signature"]["b"].as_u64().unwrap() * 10,
        report["signature"]["a"].as_u64().unwrap() * 11
    );
}

#[test]
fn unknown_revision_exits_2_with_gits_message() {
    let repo = FakeRepo::new();
    let run = repo.lab(&["compare", "no-such-branch", "HEAD"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains("unknown revision 'no-such-branch'"),
        "{run}"
    );
    assert!(
        run.stderr.contains("revspec 'no-such-branch' not found"),
        "git's own message: {run}"
    );
}

#[test]
fn failing_build_exits_2_and_leaves_no_cache_entry() {
    let repo = FakeRepo::new();
    repo.write("engine/src/main.rs", "fn main() { this is not rust }\n");
    repo.commit("broken engine");
    // Leftovers of an interrupted run are cleared too.
    std::fs::create_dir_all(repo.cache("src").join(".tmp-interrupted-1")).unwrap();
    std::fs::create_dir_all(repo.cache("bin").join(".tmp-interrupted-1")).unwrap();
    let broken_tree = repo
        .repo
        .head()
        .unwrap()
        .peel_to_tree()
        .unwrap()
        .id()
        .to_string();
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .contains("cargo build --release -p squall failed"),
        "{run}"
    );
    assert!(
        run.stderr.contains("last ") && run.stderr.contains("error"),
        "cargo's output tail: {run}"
    );
    // A's build succeeded and is cached; nothing of B's remains.
    assert_eq!(
        repo.cache_entries("bin").len(),
        1,
        "{:?}",
        repo.cache_entries("bin")
    );
    let sources = repo.cache_entries("src");
    assert!(!sources.contains(&broken_tree), "{sources:?}");
    assert!(
        sources.iter().all(|name| !name.starts_with(".tmp")),
        "{sources:?}"
    );
    assert!(repo
        .cache_entries("bin")
        .iter()
        .all(|name| !name.starts_with(".tmp")));
}

#[test]
fn same_revisions_again_rebuild_nothing_and_lab_only_commits_reuse_the_engine() {
    let repo = FakeRepo::new();
    let first = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(first.code, 0, "{first}");
    assert_eq!(first.json()["revision"]["revision"]["cached_build"], false);
    repo.write("lab/README.md", "the lab changed, the engine did not\n");
    repo.commit("lab only");
    let second = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(second.code, 0, "{second}");
    let revision = &second.json()["revision"]["revision"];
    assert_eq!(revision["cached_build"], true, "{second}");
    assert_eq!(
        revision["binary_key"],
        first.json()["revision"]["revision"]["binary_key"]
    );
    assert_eq!(repo.cache_entries("bin").len(), 1);
}

#[test]
fn non_deterministic_engine_exits_2() {
    let repo = FakeRepo::new();
    repo.commit_constant("NONDETERMINISTIC", "true");
    let run = repo.lab(&["bench", "HEAD", "--rounds", "2", "--no-instructions"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("non-deterministic engine"), "{run}");
}

#[test]
fn crashing_engine_exits_2_with_its_stderr() {
    let repo = FakeRepo::new();
    repo.commit_constant("CRASH", "true");
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("exit code 101"), "{run}");
    assert!(run.stderr.contains("simulated crash in search"), "{run}");
}

#[test]
fn hanging_engine_is_killed_after_the_timeout() {
    let repo = FakeRepo::new();
    repo.commit_constant("HANG", "true");
    let run = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--timeout",
        "1",
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("did not finish within 1 s"), "{run}");
}

#[test]
fn markdown_report_has_tables_and_a_verdict() {
    let repo = FakeRepo::new();
    // Only the layout is under test here; A/A timing has its own test.
    let run = repo.lab(&quick_compare(
        "HEAD",
        "HEAD",
        &["--force", "--format", "markdown"],
    ));
    assert_eq!(run.code, 0, "{run}");
    assert!(run.stdout.starts_with("## lab compare"), "{run}");
    assert!(
        run.stdout.contains(
            "| figure | A | B | B vs A (paired, 95% CI, n rounds) | medians B vs A (unpaired) |"
        ),
        "{run}"
    );
    assert!(run.stdout.contains("**Verdict:"), "{run}");
}

#[test]
fn help_documents_the_exit_codes() {
    let repo = FakeRepo::new();
    let run = repo.lab(&["--help"]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains("Exit codes") && run.stdout.contains("1  regression"),
        "{run}"
    );
}

#[test]
fn concurrent_runs_share_the_cache_safely() {
    let repo = FakeRepo::new();
    let _serial = common::serial();
    let path = repo.path().to_path_buf();
    let spawn = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .arg("--repo")
            .arg(&path)
            .args([
                "bench",
                "HEAD",
                "--rounds",
                "2",
                "--no-instructions",
                "--quiet",
            ])
            .output()
            .expect("running lab")
    };
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(spawn);
        let second = scope.spawn(spawn);
        (first.join().unwrap(), second.join().unwrap())
    });
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(
        repo.cache_entries("bin").len(),
        1,
        "{:?}",
        repo.cache_entries("bin")
    );
    assert!(repo
        .cache_entries("src")
        .iter()
        .all(|name| !name.starts_with(".tmp")));
}

#[test]
fn an_engine_whose_timer_reads_zero_is_an_invalid_measurement() {
    let repo = FakeRepo::new();
    repo.commit_constant("ZERO_TIME", "true");
    // Against itself (every pair dropped) and against a sound engine (infinite NPS).
    for (a, invalid_side) in [("HEAD", "A"), ("HEAD~1", "B")] {
        let run = repo.lab(&[
            "compare",
            a,
            "HEAD",
            "--force",
            "--rounds",
            "2",
            "--no-instructions",
        ]);
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stdout.is_empty(), "no verdict is printed: {run}");
        assert!(
            run.stderr
                .contains(&format!("invalid measurement of {invalid_side} HEAD ("))
                && run.stderr.contains("position 1 (fake position 0)")
                && run.stderr.contains("0 ns"),
            "names the revision, the position and the figure: {run}"
        );
    }
    let bench = repo.lab(&["bench", "HEAD", "--rounds", "2", "--no-instructions"]);
    assert_eq!(bench.code, 2, "{bench}");
    assert!(
        bench.stderr.contains("invalid measurement of A HEAD"),
        "{bench}"
    );
}

#[test]
fn each_side_runs_one_discarded_warm_up_before_its_rounds() {
    let repo = FakeRepo::new();
    repo.commit_constant("WORK_PER_NODE", "250");
    let log = tempfile::tempdir().unwrap();
    let runs = log.path().join("runs");
    let env = [("FAKE_ENGINE_RUNS", runs.to_str().unwrap())];
    let bench_runs = || std::fs::read_to_string(&runs).unwrap().lines().count();

    let bench = repo.lab_with_env(
        &["bench", "HEAD", "--rounds", "2", "--no-instructions"],
        &env,
    );
    assert_eq!(bench.code, 0, "{bench}");
    assert_eq!(bench_runs(), 3, "a warm-up run and 2 rounds: {bench}");

    std::fs::remove_file(&runs).unwrap();
    let args = [
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "3",
        "--no-instructions",
    ];
    let compare = repo.lab_with_env(&[&args[..], &["--format", "json"]].concat(), &env);
    assert_ne!(compare.code, 2, "{compare}");
    assert_eq!(
        bench_runs(),
        2 + 2 * 3,
        "a warm-up run per side, then 3 pairs: {compare}"
    );
    let ratio = &compare.json()["speed"]["cost_ratio"];
    assert_eq!(ratio["rounds"], 3, "the warm-up is not a round: {compare}");
}

#[test]
fn thresholds_must_be_finite_and_not_negative() {
    let repo = FakeRepo::new();
    for flag in ["--threshold", "--instr-threshold"] {
        for value in ["NaN", "inf", "-inf", "-1", "ten"] {
            let run = repo.lab(&["compare", "HEAD", "HEAD", &format!("{flag}={value}")]);
            assert_eq!(run.code, 2, "{flag} {value}: {run}");
            assert!(
                run.stderr.contains(flag) && run.stderr.contains(value),
                "names the flag and value: {run}"
            );
        }
    }
    let check = repo.lab(&["baseline", "check", "main", "--threshold", "nan"]);
    assert_eq!(check.code, 2, "{check}");
    assert!(check.stderr.contains("not a finite percentage"), "{check}");
}

#[test]
fn zero_depths_are_refused_before_anything_runs() {
    let repo = FakeRepo::new();
    for flag in ["--instr-depth", "--depth"] {
        let run = repo.lab(&["compare", "HEAD", "HEAD", flag, "0"]);
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stderr.contains(flag), "{run}");
    }
}

#[test]
fn the_speed_line_gives_rounds_as_the_sample_and_warns_below_four() {
    let repo = FakeRepo::new();
    let run = repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--rounds",
        "3",
        "--no-instructions",
        "--threshold",
        "50",
        "--format",
        "json",
    ]);
    assert_ne!(run.code, 2, "{run}");
    let report = run.json();
    let ratio = &report["speed"]["cost_ratio"];
    assert_eq!(ratio["rounds"], 3, "{run}");
    assert_eq!(ratio["df"], 2, "{run}");
    assert_eq!(ratio["pairs"], 24, "{run}");
    let (low, high) = (
        ratio["ci_low"].as_f64().unwrap(),
        ratio["ci_high"].as_f64().unwrap(),
    );
    let estimate = ratio["estimate"].as_f64().unwrap();
    assert!(low <= estimate && estimate <= high, "{run}");
    assert!(
        report["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("Only 3 rounds")),
        "{run}"
    );
    let text = repo.lab(&[
        "compare",
        "HEAD",
        "HEAD",
        "--force",
        "--rounds",
        "3",
        "--no-instructions",
        "--threshold",
        "50",
    ]);
    assert!(
        text.stdout
            .contains("t over 3 rounds; 24 per-position pairs"),
        "{text}"
    );
}

#[test]
fn exits_by_search_reach_every_format_and_an_old_bench_still_compares() {
    let repo = FakeRepo::new();
    // HEAD~1 speaks bench schema_version 1, as a revision from before the split does.
    repo.commit_constant("SCHEMA_VERSION", "1");
    repo.set_constant("SCHEMA_VERSION", "2");
    repo.commit_constant("QUIESCENCE_PERCENT", "75");
    let compare = |a: &str, format: &str| {
        let run = repo.lab(&quick_compare(a, "HEAD", &["--format", format]));
        assert_eq!(run.code, 0, "{run}");
        run
    };

    // Both split: quiescence asked for 60% of every tier's exits in A, 75% in B.
    let json = compare("HEAD~2", "json").json();
    let share = |side: &str, search: &str, tier: &str| {
        json[side]["eval"]["by_search"][search]["share_of_tier"][tier]
            .as_f64()
            .unwrap_or_else(|| panic!("{side} {search} {tier}: {json:#}"))
    };
    for tier in ["super_lazy", "lazy", "full"] {
        assert!(
            (share("a", "quiescence", tier) - 0.60).abs() < 1e-9,
            "{json:#}"
        );
        assert!((share("a", "main", tier) - 0.40).abs() < 1e-9, "{json:#}");
        assert!(
            (share("b", "quiescence", tier) - 0.75).abs() < 1e-9,
            "{json:#}"
        );
        let delta = json["eval_deltas"]["by_search"]["quiescence_share_of_tier_pp"][tier]
            .as_f64()
            .unwrap();
        assert!((delta - 15.0).abs() < 1e-6, "{json:#}");
    }
    let main_exits = &json["b"]["eval"]["by_search"]["main"]["exits"];
    let quiescence_exits = &json["b"]["eval"]["by_search"]["quiescence"]["exits"];
    let all_exits = &json["b"]["eval"]["exits"];
    for tier in ["super_lazy", "lazy", "full"] {
        assert_eq!(
            main_exits[tier].as_u64().unwrap() + quiescence_exits[tier].as_u64().unwrap(),
            all_exits[tier].as_u64().unwrap(),
            "{json:#}"
        );
    }

    let terminal = compare("HEAD~2", "terminal");
    let full_row = table_row(&terminal.stdout, "Eval exits by search", "full");
    for cell in ["40.0%", "60.0%", "25.0%", "75.0%", "+15.00 pp"] {
        assert!(full_row.contains(cell), "{cell} in {full_row}\n{terminal}");
    }
    assert!(!terminal.stdout.contains("not reported"), "{terminal}");
    let markdown = compare("HEAD~2", "markdown");
    assert!(
        markdown
            .stdout
            .contains("### Eval exits by search (share of each tier's exits)"),
        "{markdown}"
    );

    // A lacks the split: the eval tables as before, and one line saying so.
    let terminal = compare("HEAD~1", "terminal");
    assert!(
        terminal.stdout.contains("Eval exits (share of eval calls)"),
        "{terminal}"
    );
    let expected = "Eval exits by search (main, quiescence): not reported by A (squall's bench \
                    reports them from schema_version 2).";
    assert!(
        terminal.stdout.lines().any(|line| line == expected),
        "one line of its own:\n{terminal}"
    );
    assert!(!terminal.stdout.contains("A quiescence"), "{terminal}");
    let json = compare("HEAD~1", "json").json();
    assert!(
        json["a"]["eval"]["exits"]["lazy"].as_u64() > Some(0),
        "{json:#}"
    );
    assert!(json["a"]["eval"]["by_search"].is_null(), "{json:#}");
    assert!(json["b"]["eval"]["by_search"].is_object(), "{json:#}");
    assert!(json["eval_deltas"]["by_search"].is_null(), "{json:#}");
}
