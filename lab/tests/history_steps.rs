//! `lab history` as asv draws a history: commits of one engine binary share one measurement,
//! each point carries the spread of its runs, and steps beyond the noise are listed with the
//! command that would confirm each. The fake engine's clock reads its work (no load can move
//! it), with a jitter of at most 0.6% between runs.

mod common;

use common::{FakeRepo, LabRun};

const FAST: [&str; 4] = ["--rounds", "2", "--no-instructions", "--quiet"];

fn history(repo: &FakeRepo, range: &str, extra: &[&str]) -> LabRun {
    let mut args = vec!["history", range];
    args.extend(FAST);
    args.extend(extra);
    repo.lab(&args)
}

/// A commit that touches only the lab: the engine binary stays the same.
fn lab_only_commit(repo: &FakeRepo, i: usize) -> String {
    repo.write("lab/README.md", &format!("the lab lives here, {i}\n"));
    repo.commit(&format!("lab-only change {i}")).to_string()
}

/// Engine revisions that change nothing the bench measures: each is a binary of its own.
fn neutral_commits(repo: &FakeRepo, count: usize) -> Vec<String> {
    (1..=count)
        .map(|i| {
            repo.write("engine/src/revision.txt", &format!("{i}\n"));
            repo.commit(&format!("neutral change {i}")).to_string()
        })
        .collect()
}

fn short(id: &str) -> &str {
    &id[..10]
}

#[test]
fn commits_of_one_binary_share_one_measurement() {
    let repo = FakeRepo::new();
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "500");
    let engine = repo.repo.head().unwrap().target().unwrap().to_string();
    let shared = [lab_only_commit(&repo, 1), lab_only_commit(&repo, 2)];

    let first = history(&repo, "HEAD~3..HEAD", &["--format", "json"]);
    assert_eq!(first.code, 0, "{first}");
    let report = first.json();
    assert_eq!(
        report["measured"], 1,
        "one binary, one measurement: {first}"
    );
    assert_eq!(report["shared_now"], 2, "{first}");
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows[0]["same_binary_as"].is_null(), "{first}");
    for row in &rows[1..] {
        assert_eq!(row["same_binary_as"], short(&engine), "{first}");
        assert_eq!(row["nps"], rows[0]["nps"], "the same figures: {first}");
        assert_eq!(row["measured_now"], false);
    }
    assert_eq!(
        report["steps"],
        serde_json::json!([]),
        "no false step: {first}"
    );

    // A later run reads all three from the store, still as one measurement.
    let again = history(&repo, "HEAD~3..HEAD", &[]);
    assert_eq!(again.code, 0, "{again}");
    assert!(
        again.stdout.contains("0 measured now, 3 from the store"),
        "{again}"
    );
    for id in &shared {
        assert!(
            again.stdout.contains(&format!("{} =", short(id))),
            "the shared rows are marked: {again}"
        );
    }
    assert!(
        again.stdout.contains("steps: none beyond the noise"),
        "{again}"
    );
}

#[test]
fn a_drop_is_a_step_listed_with_the_bisect_that_would_confirm_it() {
    let repo = FakeRepo::new();
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "500");
    let before = neutral_commits(&repo, 2);
    // 30% more time per unit of work: NPS falls by about 23%.
    repo.commit_constant("SIMULATED_NS_PER_KILOWORK", "650");
    let slower = repo.repo.head().unwrap().target().unwrap().to_string();
    neutral_commits(&repo, 2);

    let run = history(&repo, "HEAD~6..HEAD", &["--format", "json"]);
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    for row in report["rows"].as_array().unwrap() {
        let nps = &row["nps"];
        let (min, median, max) = (
            nps["min"].as_f64().unwrap(),
            nps["median"].as_f64().unwrap(),
            nps["max"].as_f64().unwrap(),
        );
        assert!(min <= median && median <= max && min > 0.0, "{nps}");
    }
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{run}");
    let step = &steps[0];
    assert_eq!(step["metric"], "nps");
    assert_eq!(step["before"]["id"], before[1].as_str());
    assert_eq!(step["after"]["id"], slower.as_str());
    assert_eq!(step["regression"], true);
    let change = step["change_pct"].as_f64().unwrap();
    assert!((change + 23.1).abs() < 1.5, "{change}");
    assert_eq!(
        step["confirm"],
        format!(
            "lab bisect {} {} --metric nps --rounds 2",
            short(&before[1]),
            short(&slower)
        )
    );

    let terminal = history(&repo, "HEAD~6..HEAD", &[]);
    assert_eq!(terminal.code, 0, "{terminal}");
    assert!(terminal.stdout.contains("NPS min–max"), "{terminal}");
    assert!(
        terminal.stdout.contains(&format!(
            "confirm: lab bisect {} {} --metric nps",
            short(&before[1]),
            short(&slower)
        )),
        "{terminal}"
    );
    let markdown = history(&repo, "HEAD~6..HEAD", &["--format", "markdown"]);
    assert!(markdown.stdout.contains("`lab bisect "), "{markdown}");

    let page = std::fs::read_to_string(repo.cache("history.html")).unwrap();
    assert!(page.contains("<h2>Steps</h2>"), "the page lists the step");
    assert!(page.contains("<code>lab bisect "), "with its command");
    // Each of the six points has an error bar: three thin strokes in this machine's colour.
    assert!(
        page.matches("stroke=\"#1F77B4\" stroke-width=\"1\"")
            .count()
            >= 6 * 3,
        "error bars on the NPS plot"
    );
}
