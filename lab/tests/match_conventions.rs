//! The conventions of the match runners and OpenBench, end to end: full engine specs per side
//! (command, name, arguments, working directory, options), `--maxmoves`, cutechess-cli's result
//! lines read as OpenBench's client read them, fastchess's results block, clocks scaled by the bench's NPS
//! (`--scale-nps`), and `lab bench --check-commit`.

mod common;

use std::path::Path;

use common::{FakeRepo, LabRun};

fn fake_uci() -> String {
    format!("exe:{}", common::fake_uci_path().display())
}

/// Quick games: a small node limit, no adjudication but `extra`'s, one game at a time.
fn quick_match(repo: &FakeRepo, engines: &[&str], extra: &[&str]) -> LabRun {
    let mut args = vec!["match"];
    args.extend_from_slice(engines);
    args.extend_from_slice(&[
        "--nodes",
        "100",
        "--concurrency",
        "1",
        "--draw-adj",
        "none",
        "--resign-adj",
        "none",
    ]);
    args.extend_from_slice(extra);
    repo.lab(&args)
}

fn header(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// OpenBench's client before it read fastchess's `Finished game` lines: the `Score of` line
/// split at its colon, the 1st, 3rd and 5th words as wins, losses and draws.
fn openbench_score(line: &str) -> Option<[u64; 3]> {
    let chunks: Vec<&str> = line.split(':').nth(1)?.split_whitespace().collect();
    let number = |index: usize| chunks.get(index)?.parse().ok();
    Some([number(0)?, number(2)?, number(4)?])
}

#[test]
fn cutechess_lines_are_read_as_openbench_read_them_and_maxmoves_draws() {
    let repo = FakeRepo::new();
    let fake = fake_uci();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.jsonl");
    let json = dir.path().join("m.json");
    let run = quick_match(
        &repo,
        &[&fake, &fake],
        &[
            "--games",
            "4",
            "--maxmoves",
            "3",
            "--sprt",
            "elo0=0,elo1=5",
            "--format",
            "cutechess",
            "--out",
            out.to_str().unwrap(),
            "--export-json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 3, "{run}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let wdl = &report["wdl"];
    let lines: Vec<&str> = run.stdout.lines().collect();
    let score = lines
        .iter()
        .find(|line| line.starts_with("Score of"))
        .unwrap_or_else(|| panic!("no Score line: {run}"));
    assert_eq!(
        openbench_score(score),
        Some([
            wdl["wins"].as_u64().unwrap(),
            wdl["losses"].as_u64().unwrap(),
            wdl["draws"].as_u64().unwrap()
        ]),
        "{score}"
    );
    assert!(
        score.ends_with("  [0.500] 4"),
        "every game a draw at move 3: {score}"
    );
    let elo = lines
        .iter()
        .find(|line| line.starts_with("Elo difference: "))
        .unwrap_or_else(|| panic!("no Elo line: {run}"));
    let number = r"(-?\d+\.\d|nan)";
    let elo_shape =
        format!("Elo difference: {number} +/- {number}, LOS: {number} %, DrawRatio: {number} %");
    let elo_pattern = regex_lite(&elo_shape);
    assert!(elo_pattern(elo), "{elo}");
    assert!(elo.ends_with("DrawRatio: 100.0 %"), "{elo}");
    let sprt = lines
        .iter()
        .find(|line| line.starts_with("SPRT: llr "))
        .unwrap_or_else(|| panic!("no SPRT line: {run}"));
    assert!(sprt.contains(", lbound -2.94, ubound 2.94"), "{sprt}");
    assert_eq!(lines.last(), Some(&"Finished match"), "{run}");

    // --maxmoves: every game drawn once each side had played 3 moves (too few for a
    // repetition), said in the PGN and the results file, whose header records the setting.
    assert_eq!(header(&out)["settings"]["max_moves"], 3);
    assert_eq!(report["max_moves"], 3);
    let pgn = std::fs::read_to_string(out.with_extension("pgn")).unwrap();
    assert_eq!(pgn.matches("maximal game length").count(), 4, "{pgn}");
    assert_eq!(pgn.matches("[PlyCount \"6\"]").count(), 4, "{pgn}");

    // Resumed or merged, another --maxmoves is another match.
    let resumed = quick_match(
        &repo,
        &[&fake, &fake],
        &[
            "--games",
            "4",
            "--maxmoves",
            "4",
            "--sprt",
            "elo0=0,elo1=5",
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(resumed.code, 2, "{resumed}");
    assert!(resumed.stderr.contains("max_moves"), "{resumed}");

    // The format belongs to matches.
    let bench = repo.lab(&["bench", "--format", "cutechess"]);
    assert_eq!(bench.code, 2, "{bench}");
    assert!(bench.stderr.contains("--format cutechess"), "{bench}");
}

/// fastchess's results block, here of a merge: the counts are the JSON's, the lines in
/// fastchess's order and shape.
#[test]
fn fastchess_s_block_says_what_the_json_says() {
    let repo = FakeRepo::new();
    let fake = fake_uci();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.jsonl");
    let played = quick_match(
        &repo,
        &[&fake, &fake],
        &[
            "--games",
            "4",
            "--sprt",
            "elo0=0,elo1=5",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(matches!(played.code, 0 | 1 | 3), "{played}");
    let json = dir.path().join("merged.json");
    let merged = repo.lab(&[
        "match",
        "merge",
        out.to_str().unwrap(),
        "--format",
        "fastchess",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(matches!(merged.code, 0 | 1 | 3), "{merged}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (wdl, p) = (&report["wdl"], &report["pentanomial"]);
    let lines: Vec<&str> = merged.stdout.lines().collect();
    let rule = "-".repeat(50);
    assert_eq!(lines[0], rule, "{merged}");
    assert!(
        lines[1].starts_with("Results of ") && lines[1].contains(" (100 nodes, "),
        "{merged}"
    );
    assert!(lines[2].starts_with("Elo: "), "{merged}");
    assert!(lines[3].starts_with("LOS: "), "{merged}");
    assert_eq!(
        lines[4],
        format!(
            "Games: 4, Wins: {}, Losses: {}, Draws: {}, Points: {:.1} ({:.2} %)",
            wdl["wins"],
            wdl["losses"],
            wdl["draws"],
            wdl["wins"].as_f64().unwrap() + wdl["draws"].as_f64().unwrap() / 2.0,
            (wdl["wins"].as_f64().unwrap() + wdl["draws"].as_f64().unwrap() / 2.0) * 25.0
        ),
        "{merged}"
    );
    assert!(
        lines[5].starts_with(&format!(
            "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: ",
            p[0], p[1], p[2], p[3], p[4]
        )),
        "{merged}"
    );
    assert!(
        lines[6].starts_with("LLR: ") && lines[6].ends_with(" (-2.94, 2.94) [0.00, 5.00]"),
        "{merged}"
    );
    assert_eq!(lines[7], rule, "{merged}");
    assert_eq!(lines.last(), Some(&"Finished match"), "{merged}");

    let bench = repo.lab(&["bench", "--format", "fastchess"]);
    assert_eq!(bench.code, 2, "{bench}");
    assert!(bench.stderr.contains("--format fastchess"), "{bench}");
}

/// `pattern` with `{number}` groups already written out, matched whole: a tiny matcher for
/// the one shape the test needs (literal text and the `(-?\d+\.\d|nan)` group).
fn regex_lite(pattern: &str) -> impl Fn(&str) -> bool + '_ {
    const GROUP: &str = r"(-?\d+\.\d|nan)";
    move |text: &str| {
        let mut rest = text;
        for (index, literal) in pattern.split(GROUP).enumerate() {
            if index > 0 {
                let number_len = if let Some(after) = rest.strip_prefix("nan") {
                    rest.len() - after.len()
                } else {
                    let body = rest.strip_prefix('-').unwrap_or(rest);
                    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
                    let ok = digits > 0
                        && body[digits..].starts_with('.')
                        && body[digits + 1..]
                            .bytes()
                            .next()
                            .is_some_and(|b| b.is_ascii_digit());
                    if !ok {
                        return false;
                    }
                    rest.len() - body.len() + digits + 2
                };
                rest = &rest[number_len..];
            }
            match rest.strip_prefix(literal) {
                Some(after) => rest = after,
                None => return false,
            }
        }
        rest.is_empty()
    }
}

#[test]
fn full_engine_specs_give_each_side_its_name_arguments_directory_and_options() {
    let repo = FakeRepo::new();
    let fake = common::fake_uci_path();
    let examples = fake.parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("specs.jsonl");
    // A: a relative command found in its working directory, named by the engine itself from
    // that directory (`--id-name-cwd`); B: its own name and arguments, and a UCI option.
    let engine_a = format!(
        "cmd=./fake_uci dir={} args=--id-name-cwd proto=uci",
        examples.display()
    );
    let engine_b = format!(
        r#"cmd={} name=dev args="--id-name ignored" option.Behaviour=random"#,
        fake.display()
    );
    let run = quick_match(
        &repo,
        &[],
        &[
            "--engine-a",
            &engine_a,
            "--engine-b",
            &engine_b,
            "--games",
            "2",
            "--maxmoves",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert_eq!(
        report["engines"][0]["name"], "fake-uci in examples",
        "{run}"
    );
    assert_eq!(report["engines"][1]["name"], "dev", "{run}");
    let settings = &header(&out)["settings"];
    assert_eq!(settings["engines"][0]["args"][0], "--id-name-cwd");
    assert_eq!(
        settings["engines"][0]["dir"].as_str(),
        Some(examples.to_str().unwrap())
    );
    assert_eq!(settings["engines"][1]["args"][1], "ignored");
    let options = settings["engines"][1]["options"].to_string();
    assert!(options.contains(r#"["Behaviour","random"]"#), "{options}");
    let pgn = std::fs::read_to_string(out.with_extension("pgn")).unwrap();
    assert!(
        pgn.contains("[White \"dev\"]") && pgn.contains("[Black \"dev\"]"),
        "{pgn}"
    );

    // A spec the lab cannot use is refused before anything runs, naming the key.
    let bad = quick_match(
        &repo,
        &[&fake_uci()],
        &["--engine-b", "cmd=./fake_uci colour=red"],
    );
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("unknown key `colour`"), "{bad}");
    let missing = quick_match(
        &repo,
        &[&fake_uci()],
        &[
            "--engine-b",
            &format!("cmd=./nothing dir={}", examples.display()),
        ],
    );
    assert_eq!(missing.code, 2, "{missing}");
    assert!(
        missing.stderr.contains("no executable file in dir="),
        "{missing}"
    );
}

#[test]
fn scale_nps_scales_both_clocks_by_the_reference_over_the_bench_speed() {
    let repo = FakeRepo::new();
    let fake = fake_uci();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("scaled.jsonl");
    let play = |reference: &str, resume: bool| {
        let mut args = vec![
            "match",
            &fake,
            &fake,
            "--tc",
            "5+0.05",
            "--concurrency",
            "2",
            "--games",
            "2",
            "--maxmoves",
            "3",
            "--scale-nps",
            reference,
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ];
        if resume {
            args.push("--resume");
        }
        repo.lab(&args)
    };
    // The fake's bench reports 500000 NPS: a reference of 1000000 doubles the clocks.
    let run = play("1000000", false);
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert_eq!(report["nps_scale"]["measured_nps"], 500_000, "{run}");
    assert_eq!(report["nps_scale"]["factor"], 2.0, "{run}");
    assert!(run.stderr.contains("tc 5+0.05 becomes tc 10+0.1"), "{run}");
    let recorded = header(&out);
    assert_eq!(recorded["nps_scale"]["factor"], 2.0);
    assert_eq!(recorded["settings"]["scale_nps"], 1_000_000);
    // The PGN's clocks are the scaled ones.
    let pgn = std::fs::read_to_string(out.with_extension("pgn")).unwrap();
    assert!(pgn.contains("[TimeControl \"10+0.1\"]"), "{pgn}");
    // A resume with another reference is another match; with the same it keeps its factor.
    let other = play("2000000", true);
    assert_eq!(other.code, 2, "{other}");
    assert!(other.stderr.contains("scale_nps"), "{other}");
    let same = play("1000000", true);
    assert_eq!(same.code, 0, "{same}");
    assert_eq!(same.json()["nps_scale"]["factor"], 2.0, "{same}");
}

#[test]
fn check_commit_compares_the_signature_with_the_messages_bench() {
    let repo = FakeRepo::new();
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "HEAD",
            "--rounds",
            "2",
            "--no-instructions",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        repo.lab(&args)
    };
    let plain = bench(&[]);
    assert_eq!(plain.code, 0, "{plain}");
    let signature = plain.json()["revision"]["signature"].as_u64().unwrap();

    repo.write("lab/README.md", "a commit that states its bench\n");
    repo.commit(&format!("Tidy\n\nBench: 1\n\nBench: {signature}\n"));
    let matching = bench(&["--check-commit"]);
    assert_eq!(matching.code, 0, "{matching}");
    assert_eq!(matching.json()["commit_bench"]["stated"], signature);
    assert_eq!(matching.json()["commit_bench"]["matches"], true);

    repo.write("lab/README.md", "a commit with a wrong bench\n");
    repo.commit(&format!("Tidy\n\nBench: {}\n", signature + 1));
    let wrong = repo.lab(&[
        "bench",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--check-commit",
    ]);
    assert_eq!(wrong.code, 1, "{wrong}");
    assert!(
        wrong.stdout.contains(&format!(
            "states Bench: {}, but the signature measured is {signature}",
            signature + 1
        )),
        "{wrong}"
    );

    repo.write("lab/README.md", "a commit without a bench\n");
    repo.commit("Tidy, no bench stated");
    let none = bench(&["--check-commit"]);
    assert_eq!(none.code, 2, "{none}");
    assert!(none.stderr.contains("no `Bench: N` line"), "{none}");
    assert!(!none.stderr.contains("panicked"), "{none}");
}
