//! The HTML page of a match, end to end with the scripted fake UCI engine
//! (lab/examples/fake_uci.rs): `lab match --export-html`, `lab match merge --export-html` and
//! `lab report` of the match's JSON give the same page; with an SPRT the LLR is drawn between
//! its bounds, without one a sentence says so; the trajectory ends on the summary's figures.

mod common;

use std::path::{Path, PathBuf};

use common::browser::self_contained_svgs;
use common::{FakeRepo, LabRun};

fn fake_uci() -> String {
    format!("exe:{}", common::fake_uci_path().display())
}

/// Two random movers (seeds 1 and 2), one game at a time, so the order is reproducible.
fn play(repo: &FakeRepo, extra: &[&str]) -> LabRun {
    let fake = fake_uci();
    let mut args = vec![
        "match",
        &fake,
        &fake,
        "--nodes",
        "1",
        "--concurrency",
        "1",
        "--option-a",
        "Behaviour=random",
        "--option-a",
        "Seed=1",
        "--option-b",
        "Behaviour=random",
        "--option-b",
        "Seed=2",
    ];
    args.extend_from_slice(extra);
    repo.lab(&args)
}

/// Plays a match (with `extra` flags) whose results, JSON and page go into `dir`.
fn play_exporting(repo: &FakeRepo, dir: &Path, extra: &[&str]) -> (LabRun, PathBuf, PathBuf) {
    let (json, html) = (dir.join("m.json"), dir.join("m.html"));
    let paths = [dir.join("m.jsonl"), json.clone(), html.clone()].map(|p| p.display().to_string());
    let mut args = extra.to_vec();
    args.extend([
        "--out",
        &paths[0],
        "--export-json",
        &paths[1],
        "--export-html",
        &paths[2],
    ]);
    (play(repo, &args), json, html)
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `lab report JSON --out HTML`; the page's bytes.
fn redraw(repo: &FakeRepo, json: &Path, html: &Path) -> Vec<u8> {
    let run = repo.lab(&[
        "report",
        &json.display().to_string(),
        "--out",
        &html.display().to_string(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    std::fs::read(html).unwrap()
}

#[test]
fn a_match_with_an_sprt_draws_its_llr_elo_and_pentanomial() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let (run, json, html) = play_exporting(
        &repo,
        out.path(),
        &["--games", "40", "--sprt", "elo0=0,elo1=10"],
    );
    let report = read_json(&json);
    assert_eq!(
        i64::from(run.code),
        report["exit_code"].as_i64().unwrap(),
        "{run}"
    );
    // The trajectory: one point per complete pair (fewer than the thinning limit), in order,
    // ending on the summary's figures.
    let points = report["trajectory"].as_array().unwrap();
    assert_eq!(points.len() as u64, report["pairs"].as_u64().unwrap());
    assert_eq!(points.len(), 20, "{run}");
    let last = points.last().unwrap();
    assert_eq!(last["pairs"], report["pairs"]);
    assert_eq!(last["games"], 40);
    assert_eq!(last["llr"], report["sprt"]["llr"]);
    assert_eq!(last["elo"], report["elo"]["value"]);
    assert_eq!(last["elo_low"], report["elo"]["ci_low"]);
    assert_eq!(last["elo_high"], report["elo"]["ci_high"]);
    assert!(report["measured"]["measured_unix"].as_u64() > Some(0));

    // An undecided SPRT says how many games a decision is expected to take, in the JSON, the
    // terminal report and the page alike (the estimate itself is checked by simulation in
    // games::sprt).
    let sprt = &report["sprt"];
    let pace = match sprt["games_to_decision"].as_u64() {
        Some(games) => {
            assert_eq!(sprt["result"], "continue", "{sprt}");
            assert!(games > 0, "{sprt}");
            let text = format!(
                "~{} more games expected to a decision",
                common::grouped(games)
            );
            // With the time those games take at this run's rate, the same in the page below.
            let rate = report["games_per_minute"].as_f64().unwrap();
            let text = format!("{text} (about ");
            assert!(run.stdout.contains(&text), "{run}");
            assert!(
                run.stdout.contains(&format!("at {rate:.1} games/min)")),
                "{run}"
            );
            Some(text)
        }
        None => {
            assert_ne!(
                sprt["result"], "continue",
                "an undecided SPRT with a pace: {sprt}"
            );
            None
        }
    };

    let page = std::fs::read_to_string(&html).unwrap();
    // The adjudication the games were played by: `lab match`'s defaults, in the JSON, the
    // terminal's title and the page alike.
    let rules = "draw movenumber=32,movecount=8,score=10 and resign movecount=3,score=400";
    assert_eq!(
        report["adjudication"],
        serde_json::json!({
            "draw": {"move_number": 32, "move_count": 8, "score": 10},
            "resign": {"move_count": 3, "score": 400}
        })
    );
    assert!(
        run.stdout.contains(&format!("; adjudication {rules}")),
        "{run}"
    );
    assert!(
        page.contains(&format!("<th>adjudication</th><td>{rules}</td>")),
        "{page}"
    );
    // How each side searched in the games: the JSON's means, the terminal's rows and the
    // page's facts say the same.
    assert_eq!(report["nps_ratio_in_games"]["games"], 40, "{report:#}");
    // 40 games make too few runs of consecutive games for the second interval.
    assert_eq!(report["nps_ratio_in_games"]["runs"], 0, "{report:#}");
    assert_eq!(
        report["nps_ratio_in_games"]["interval_from"], "games",
        "{report:#}"
    );
    assert_eq!(
        report["nps_ratio_by_run"],
        serde_json::json!([]),
        "{report:#}"
    );
    assert!(
        page.contains("too few for runs of consecutive games to draw"),
        "{page}"
    );
    // The terminal row that starts with `name`, found on the page with the same cells.
    let row = |name: &str| -> String {
        let line = run.stdout.lines().find(|line| line.contains(name));
        let line = line.unwrap_or_else(|| panic!("no row {name}: {run}"));
        let cells: Vec<&str> = line.trim_matches('│').split('┆').map(str::trim).collect();
        assert!(
            page.contains(&format!("<th>{}</th><td>{}</td>", cells[0], cells[1])),
            "{line}: {page}"
        );
        cells[1].to_string()
    };
    for (index, label) in ["A", "B"].iter().enumerate() {
        let side = &report["search_in_games"][index];
        assert!(side["moves"].as_u64() > Some(0), "{report:#}");
        assert_eq!(side["mean_depth"], 1.0, "{report:#}");
        assert_eq!(side["nodes_per_move"], 1.0, "{report:#}");
        let value = row(&format!("{label} in the games, per move ("));
        assert!(value.starts_with("depth 1.00, "), "{value}");
    }
    let ratio = row("B's NPS over A's in the games (geometric mean of 40 games)");
    assert!(ratio.contains("(95% CI "), "{ratio}");
    if let Some(text) = &pace {
        assert!(page.contains(text.as_str()), "{page}");
    } else {
        assert!(!page.contains("expected to a decision"), "{page}");
    }
    assert_eq!(self_contained_svgs(&page), 3, "{page}");
    for text in [
        "<title>lab match: A = fake-uci A, B = fake-uci B</title>",
        "SPRT log-likelihood ratio over games, H0: elo0 = 0, H1: elo1 = 10 (logistic)",
        "upper bound 2.94",
        "after 40 games (LLR",
        "Elo of B over games, with its 95% interval",
        "Pentanomial counts: B",
        "games finished 2",
    ] {
        assert!(page.contains(text), "{text}");
    }
    assert_eq!(
        redraw(&repo, &json, &out.path().join("redrawn.html")),
        page.as_bytes(),
        "lab report draws the page --export-html wrote"
    );
    common::browser::render_headless(&html, 3, 5);
    common::browser::assert_readable_layout(&html);
}

#[test]
fn without_an_sprt_a_sentence_stands_in_for_the_llr_plot_and_a_merge_has_its_page() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let (run, json, html) = play_exporting(&repo, out.path(), &["--games", "20"]);
    assert_eq!(run.code, 0, "{run}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(self_contained_svgs(&page), 2, "{page}");
    assert!(page.contains("No SPRT was set"), "{page}");
    assert!(!page.contains("log-likelihood ratio over games, H0"));
    let report = read_json(&json);
    assert!(report["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .all(|point| point["llr"].is_null()));
    assert_eq!(
        redraw(&repo, &json, &out.path().join("redrawn.html")),
        page.as_bytes()
    );
    common::browser::render_headless(&html, 2, 5);

    // Two shards merged: the games pooled by pair, each shard's machine and start recorded.
    let mut shards = Vec::new();
    for index in 1..=2 {
        let file = out.path().join(format!("shard-{index}.jsonl"));
        let shard = format!("{index}/2");
        let run = play(
            &repo,
            &[
                "--games",
                "20",
                "--sprt",
                "elo0=0,elo1=10",
                "--shard",
                &shard,
                "--out",
                &file.display().to_string(),
            ],
        );
        assert_eq!(run.code, 0, "{run}");
        shards.push(file.display().to_string());
    }
    let (merged_json, merged_html) = (
        out.path().join("merged.json"),
        out.path().join("merged.html"),
    );
    let merged = repo.lab(&[
        "match",
        "merge",
        &shards[0],
        &shards[1],
        "--export-json",
        &merged_json.display().to_string(),
        "--export-html",
        &merged_html.display().to_string(),
    ]);
    assert!(
        merged.code == 0 || merged.code == 1 || merged.code == 3,
        "{merged}"
    );
    let report = read_json(&merged_json);
    assert!(report["measured"].is_null(), "{report}");
    assert_eq!(
        report["shards_started"].as_array().map(Vec::len),
        Some(2),
        "{report}"
    );
    let pairs: Vec<u64> = report["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| point["pairs"].as_u64().unwrap())
        .collect();
    assert_eq!(pairs, (1..=10).collect::<Vec<u64>>());
    let page = std::fs::read_to_string(&merged_html).unwrap();
    assert_eq!(self_contained_svgs(&page), 3, "{page}");
    assert!(page.contains("shards 1/2 2/2"), "{page}");
    assert!(page.contains("pooled in pair order"), "{page}");
    assert!(!page.contains("not recorded"), "{page}");
    assert!(page.contains("cores)"), "{page}");
    assert!(page.contains("shards started "), "{page}");
    assert_eq!(
        redraw(&repo, &merged_json, &out.path().join("merged-redrawn.html")),
        page.as_bytes()
    );
}

/// From 100 games the page draws B's NPS over A's in runs of consecutive games: the JSON's
/// runs, which end on the games of the ratio over them all.
#[test]
fn a_long_enough_match_draws_its_speed_in_runs_of_consecutive_games() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let (run, json, html) = play_exporting(&repo, out.path(), &["--games", "120"]);
    assert_eq!(run.code, 0, "{run}");
    let report = read_json(&json);
    let games = report["nps_ratio_in_games"]["games"].as_u64().unwrap();
    assert!(
        games >= 110,
        "most games report both sides' speed: {report:#}"
    );
    let runs = report["nps_ratio_by_run"].as_array().unwrap();
    assert_eq!(runs.len() as u64, games / 10, "{report:#}");
    assert_eq!(
        report["nps_ratio_in_games"]["runs"],
        runs.len(),
        "{report:#}"
    );
    assert_eq!(runs.last().unwrap()["through_game"], games, "{report:#}");
    for run in runs {
        let (low, value, high) = (
            run["ci_low"].as_f64().unwrap(),
            run["value"].as_f64().unwrap(),
            run["ci_high"].as_f64().unwrap(),
        );
        assert!(low <= value && value <= high && low > 0.0, "{run}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(self_contained_svgs(&page), 3, "{page}");
    assert!(
        page.contains("B&apos;s NPS over A&apos;s in runs of consecutive games"),
        "{page}"
    );
    assert!(!page.contains("too few for runs"), "{page}");
    assert_eq!(
        redraw(&repo, &json, &out.path().join("redrawn.html")),
        page.as_bytes()
    );
}

#[test]
fn an_older_or_broken_match_json_is_drawn_honestly_or_refused_in_one_line() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let (run, json, _) = play_exporting(&repo, out.path(), &["--games", "4"]);
    assert_eq!(run.code, 0, "{run}");
    let mut stored = read_json(&json);
    // As a lab from before the trajectory and `measured` wrote it.
    let fields = stored.as_object_mut().unwrap();
    fields.remove("trajectory");
    fields.remove("measured");
    fields.remove("adjudication");
    std::fs::write(&json, stored.to_string()).unwrap();
    let page = redraw(&repo, &json, &out.path().join("old.html"));
    let page = String::from_utf8(page).unwrap();
    assert!(
        !page.contains("<th>adjudication</th>"),
        "not recorded, not shown"
    );
    assert_eq!(
        self_contained_svgs(&page),
        1,
        "the pentanomial only: {page}"
    );
    assert!(page.contains("did not record the trajectory"), "{page}");
    assert!(page.contains("not recorded"), "{page}");

    // Absurd figures (a JSON may come from anywhere) still give a finite axis and a page: an
    // infinite one once made plotters tick it forever.
    let mut absurd = read_json(&json);
    absurd["trajectory"] = serde_json::json!([
        {"pairs": 10, "games": 20, "elo": 1e308, "elo_low": -1e308, "elo_high": 1e308, "llr": 1e308},
        {"pairs": 11, "games": 22, "elo": -1e308, "elo_low": -1e308, "elo_high": 1e308, "llr": -1e308}
    ]);
    absurd["sprt"] = serde_json::json!({
        "elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05, "model": "logistic",
        "llr": 1e308, "lower": -1e308, "upper": 1e308, "result": "continue"
    });
    // Fewer pairs than any report gives an interval for: no band either.
    let mut early = read_json(&json);
    early["trajectory"] = serde_json::json!([
        {"pairs": 9, "games": 18, "elo": 5.0, "elo_low": -50.0, "elo_high": 60.0, "llr": null}
    ]);
    let early_json = out.path().join("early.json");
    std::fs::write(&early_json, early.to_string()).unwrap();
    let page =
        String::from_utf8(redraw(&repo, &early_json, &out.path().join("early.html"))).unwrap();
    assert!(
        page.contains("had no interval yet (fewer than ten"),
        "{page}"
    );
    let absurd_json = out.path().join("absurd.json");
    std::fs::write(&absurd_json, absurd.to_string()).unwrap();
    let page = redraw(&repo, &absurd_json, &out.path().join("absurd.html"));
    assert_eq!(
        self_contained_svgs(&String::from_utf8(page).unwrap()),
        3,
        "LLR, Elo and pentanomial drawn"
    );

    stored.as_object_mut().unwrap().remove("pentanomial");
    std::fs::write(&json, stored.to_string()).unwrap();
    let html = out.path().join("broken.html");
    let run = repo.lab(&[
        "report",
        &json.display().to_string(),
        "--out",
        &html.display().to_string(),
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "{run}");
    assert!(run.stderr.contains("pentanomial"), "{run}");
    assert!(!html.exists());
}

/// Writes docs/img/html-match-{llr,elo,pentanomial}.png: each section of a match's page alone,
/// screenshotted by headless chromium. Run by hand:
/// `cargo test -p squall-lab --test html_match -- --ignored screenshots`.
#[test]
#[ignore]
fn screenshots_for_the_docs() {
    let repo = FakeRepo::new();
    let out = tempfile::tempdir().unwrap();
    let (run, _, html) = play_exporting(
        &repo,
        out.path(),
        &["--games", "4000", "--sprt", "elo0=0,elo1=20"],
    );
    assert!(run.code == 0 || run.code == 1, "{run}");
    let page = std::fs::read_to_string(&html).unwrap();
    let (head, rest) = page.split_once("<table class=\"facts\">").unwrap();
    let sections: Vec<&str> = rest.split("<section>").skip(1).collect();
    // The fourth, the speed in runs, is screenshotted from a real verdict's games instead
    // (docs/html-report.md): the fake engine's speed says nothing.
    assert_eq!(sections.len(), 4);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/img");
    for (section, name) in sections.iter().zip(["llr", "elo", "pentanomial"]) {
        let body = section.split("</section>").next().unwrap();
        let alone = out.path().join(format!("{name}.html"));
        std::fs::write(
            &alone,
            format!("{head}<section>{body}</section>\n</body>\n</html>\n"),
        )
        .unwrap();
        let png = docs.join(format!("html-match-{name}.png"));
        assert!(
            common::browser::screenshot(&alone, &png, 1000, 640),
            "chromium"
        );
    }
}
