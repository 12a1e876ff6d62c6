//! `lab bisect GOOD BAD` end to end on a fake engine: an injected instruction regression and a
//! changed node count found in few builds, a clean range, and errors.

mod common;

use common::FakeRepo;

fn valgrind_available() -> bool {
    std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Commits `count` engine revisions; the `injected`th (1-based) sets `constant` to `value`,
/// the others change a file in the engine's tree that the bench never reads (each is still a
/// build of its own). Returns the injected commit's id.
fn commits_with_one_change(
    repo: &FakeRepo,
    count: usize,
    injected: usize,
    constant: &str,
    value: &str,
) -> String {
    let mut found = String::new();
    for i in 1..=count {
        if i == injected {
            repo.set_constant(constant, value);
            found = repo.commit(&format!("{constant} = {value}")).to_string();
        } else {
            repo.write("engine/src/revision.txt", &format!("{i}\n"));
            repo.commit(&format!("neutral change {i}"));
        }
    }
    found
}

#[test]
fn a_two_percent_instruction_regression_among_16_commits_takes_at_most_6_builds() {
    if !valgrind_available() {
        eprintln!("valgrind not installed: skipping the instruction bisection");
        return;
    }
    let repo = FakeRepo::new();
    let injected = commits_with_one_change(&repo, 16, 11, "WORK_PER_NODE", "204");
    let run = repo.lab(&[
        "bisect",
        "HEAD~16",
        "HEAD",
        "--metric",
        "instructions",
        "--instr-depth",
        "1",
        "--rounds",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run}");
    let report = run.json();
    assert_eq!(report["kind"], "bisect");
    assert_eq!(report["first_bad"]["id"], injected.as_str(), "{run}");
    assert_eq!(report["path_length"], 16);
    let builds = report["builds"].as_u64().unwrap();
    assert!(builds <= 6, "{builds} builds: {run}");
    assert_eq!(report["measurements"].as_u64().unwrap(), builds, "{run}");
    let bad = &report["probes"][1];
    assert_eq!(bad["role"], "bad");
    let change = bad["change_pct"].as_f64().unwrap();
    assert!((1.0..3.0).contains(&change), "{change}%: {run}");
    // The commit found against its parent, as `lab compare` judges it.
    let comparison = &report["comparison"];
    assert_eq!(comparison["kind"], "compare");
    assert_eq!(comparison["instructions"]["verdict"], "regression", "{run}");
    assert_eq!(
        comparison["b"]["revision"]["commit"],
        injected.as_str(),
        "{run}"
    );
}

#[test]
fn a_changed_node_count_is_found_and_reported_with_its_compare() {
    let repo = FakeRepo::new();
    let injected = commits_with_one_change(&repo, 6, 4, "NODES_PER_POSITION", "1100");
    let run = repo.lab(&[
        "bisect",
        "HEAD~6",
        "HEAD",
        "--metric",
        "signature",
        "--rounds",
        "2",
        "--no-instructions",
    ]);
    assert_eq!(run.code, 1, "{run}");
    let short = &injected[..10];
    assert!(
        run.stdout.contains(&format!(
            "First bad commit: {short} NODES_PER_POSITION = 1100"
        )),
        "{run}"
    );
    assert!(run.stdout.contains("SIGNATURE CHANGED"), "{run}");
    assert!(run.stdout.contains("Search: "), "{run}");
}

#[test]
fn no_change_between_good_and_bad_exits_0() {
    let repo = FakeRepo::new();
    commits_with_one_change(&repo, 3, 0, "", "");
    let run = repo.lab(&[
        "bisect",
        "HEAD~3",
        "HEAD",
        "--metric",
        "signature",
        "--rounds",
        "2",
        "--no-instructions",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert!(report["first_bad"].is_null(), "{run}");
    assert_eq!(
        report["probes"].as_array().unwrap().len(),
        2,
        "GOOD and BAD only"
    );
    let text = repo.lab(&[
        "bisect",
        "HEAD~3",
        "HEAD",
        "--metric",
        "signature",
        "--rounds",
        "2",
        "--quiet",
    ]);
    assert_eq!(text.code, 0, "{text}");
    assert!(
        text.stdout.contains("No regression between GOOD and BAD"),
        "{text}"
    );
}

#[test]
fn a_pair_without_commits_between_or_an_unknown_revision_is_an_error() {
    let repo = FakeRepo::new();
    commits_with_one_change(&repo, 2, 0, "", "");
    for (good, bad, message) in [
        ("HEAD", "HEAD~2", "nothing to bisect"),
        ("HEAD", "HEAD", "nothing to bisect"),
        ("nosuchrev", "HEAD", "unknown revision 'nosuchrev'"),
    ] {
        let run = repo.lab(&["bisect", good, bad, "--metric", "signature"]);
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stderr.contains(message), "{run}");
    }
}

#[test]
fn bisecting_by_instructions_without_them_is_refused_before_any_build() {
    let repo = FakeRepo::new();
    repo.commit_constant("WORK_PER_NODE", "150");
    let run = repo.lab(&[
        "bisect",
        "HEAD~1",
        "HEAD",
        "--metric",
        "instructions",
        "--no-instructions",
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr
            .contains("--metric instructions bisects by callgrind's instruction counts"),
        "{run}"
    );
    assert!(repo.cache_entries("bin").is_empty(), "{run}");
}
