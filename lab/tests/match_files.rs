//! The files of `lab match`: a results file has one writer (an advisory lock held while a match
//! writes it, a new file created exclusively), no output is the same file as an input or as
//! another output, and the results reader refuses games outside the schedule, skips blank
//! lines and never panics.
//!
//! Concurrency is tested without racing the clock: the test process holds the lock itself and
//! the lab must refuse; where two lab runs start together, every interleaving has one right
//! answer, which is asserted.

mod common;

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use common::{FakeRepo, LabRun};
use proptest::prelude::*;
use serde_json::Value;

fn fake_uci() -> String {
    format!("exe:{}", common::fake_uci_path().display())
}

fn text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 temp path").to_string()
}

/// `lab match fake fake --movetime 10 --games GAMES`, then `extra`.
fn match_args(games: u32, extra: &[&str]) -> Vec<String> {
    let fake = fake_uci();
    let mut args: Vec<String> = ["match", &fake, &fake, "--movetime", "10", "--games"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(games.to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn run(repo: &FakeRepo, args: &[String]) -> LabRun {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    repo.lab(&args)
}

/// Two lab runs started together; their results once both have ended.
fn run_two_at_once(repo: &FakeRepo, first: &[String], second: &[String]) -> [LabRun; 2] {
    let _serial = common::serial();
    let start = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        repo.lab_command(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("lab starts")
    };
    let (a, b) = (start(first), start(second));
    let done = |child: std::process::Child| -> LabRun {
        let output: Output = child.wait_with_output().expect("lab ends");
        LabRun::from(output)
    };
    [done(a), done(b)]
}

/// The game ids of a results file, and its number of game lines.
fn game_ids(path: &Path) -> (BTreeSet<(u64, u64)>, usize) {
    let text = fs::read_to_string(path).expect("results file");
    let games: Vec<Value> = text
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let ids = games
        .iter()
        .map(|game| {
            (
                game["id"]["pair"].as_u64().unwrap(),
                game["id"]["game"].as_u64().unwrap(),
            )
        })
        .collect();
    (ids, games.len())
}

fn pgn_games(path: &Path) -> usize {
    fs::read_to_string(path)
        .expect("PGN")
        .lines()
        .filter(|line| line.starts_with("[Event "))
        .count()
}

/// Keeps the header and the first `games` game lines of a results file: an interrupted match.
fn keep_games(path: &Path, games: usize) {
    let text = fs::read_to_string(path).unwrap();
    let kept: String = text
        .lines()
        .take(1 + games)
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(path, kept).unwrap();
}

#[test]
fn a_results_file_held_by_another_process_is_refused_by_resume_and_by_a_new_match() {
    let repo = FakeRepo::new();
    let out = repo.path().join("held.jsonl");
    let args = match_args(4, &["--out", &text(&out)]);
    let first = run(&repo, &args);
    assert_eq!(first.code, 0, "{first}");
    keep_games(&out, 1);
    let before = fs::read(&out).unwrap();

    // This test process plays the match that is still writing the file.
    let holder = File::open(&out).unwrap();
    holder.lock().unwrap();
    let holder_pid = format!("pid {}", std::process::id());

    let mut resume = args.clone();
    resume.push("--resume".into());
    let refused = run(&repo, &resume);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("held.jsonl is in use by") && refused.stderr.contains(&holder_pid),
        "{refused}"
    );
    let again = run(&repo, &args);
    assert_eq!(again.code, 2, "{again}");
    assert!(
        again.stderr.contains("already exists and is in use by")
            && again.stderr.contains(&holder_pid),
        "{again}"
    );
    assert_eq!(
        fs::read(&out).unwrap(),
        before,
        "a refused run writes nothing"
    );

    drop(holder);
    let resumed = run(&repo, &resume);
    assert_eq!(resumed.code, 0, "{resumed}");
    let (ids, lines) = game_ids(&out);
    assert_eq!((ids.len(), lines), (4, 4), "every game once");
    assert_eq!(pgn_games(&out.with_extension("pgn")), 4);
}

#[test]
fn two_resumes_at_once_play_each_remaining_game_once() {
    let repo = FakeRepo::new();
    let out = repo.path().join("twice.jsonl");
    let mut args = match_args(40, &["--out", &text(&out)]);
    let first = run(&repo, &args);
    assert_eq!(first.code, 0, "{first}");
    keep_games(&out, 2);
    args.push("--resume".into());
    // With 38 games left, runs started together overlap on most machines; what is asserted
    // holds for every interleaving.

    let runs = run_two_at_once(&repo, &args, &args);
    // Either both ran in turn (the later one found nothing left to play), or one found the
    // file in use and stopped at once.
    for run in &runs {
        assert!(
            run.code == 0 || (run.code == 2 && run.stderr.contains("is in use by")),
            "{run}"
        );
    }
    assert!(
        runs.iter().any(|run| run.code == 0),
        "{}\n{}",
        runs[0],
        runs[1]
    );
    let (ids, lines) = game_ids(&out);
    assert_eq!((ids.len(), lines), (40, 40), "{}\n{}", runs[0], runs[1]);
    assert_eq!(pgn_games(&out.with_extension("pgn")), 40);
    let merged = repo.lab(&["match", "merge", &text(&out), "--format", "json"]);
    assert_eq!(merged.code, 0, "{merged}");
    assert_eq!(merged.json()["games"], 40, "{merged}");
}

#[test]
fn two_matches_with_one_explicit_out_leave_one_writer() {
    let repo = FakeRepo::new();
    let out = repo.path().join("shared.jsonl");
    let args = match_args(6, &["--out", &text(&out), "--format", "json"]);
    let runs = run_two_at_once(&repo, &args, &args);
    let (won, lost): (Vec<&LabRun>, Vec<&LabRun>) = runs.iter().partition(|run| run.code == 0);
    assert_eq!((won.len(), lost.len()), (1, 1), "{}\n{}", runs[0], runs[1]);
    assert_eq!(lost[0].code, 2, "{}", lost[0]);
    assert!(lost[0].stderr.contains("already exists"), "{}", lost[0]);
    assert_eq!(won[0].json()["games"], 6);
    let (ids, lines) = game_ids(&out);
    assert_eq!((ids.len(), lines), (6, 6));
    assert_eq!(pgn_games(&out.with_extension("pgn")), 6);
}

#[test]
fn two_matches_with_the_default_name_write_two_files() {
    let repo = FakeRepo::new();
    let args = match_args(6, &["--format", "json"]);
    let runs = run_two_at_once(&repo, &args, &args);
    let files: Vec<PathBuf> = runs
        .iter()
        .map(|run| {
            assert_eq!(run.code, 0, "{run}");
            assert_eq!(run.json()["games"], 6, "{run}");
            PathBuf::from(run.json()["results_file"].as_str().unwrap())
        })
        .collect();
    assert_ne!(files[0], files[1], "{}\n{}", runs[0], runs[1]);
    for file in &files {
        let (ids, lines) = game_ids(file);
        assert_eq!((ids.len(), lines), (6, 6), "{}", file.display());
        assert_eq!(
            pgn_games(&file.with_extension("pgn")),
            6,
            "{}",
            file.display()
        );
    }
}

#[test]
fn a_taken_default_name_is_passed_over_even_when_only_its_pgn_exists() {
    let repo = FakeRepo::new();
    let dir = repo.path().join("target/lab/match");
    fs::create_dir_all(&dir).unwrap();
    let stale_pgn = dir.join("fake_uci-vs-fake_uci.pgn");
    fs::write(&stale_pgn, "someone's games\n").unwrap();
    let run = run(&repo, &match_args(2, &["--format", "json"]));
    assert_eq!(run.code, 0, "{run}");
    assert!(run.json()["results_file"]
        .as_str()
        .unwrap()
        .ends_with("fake_uci-vs-fake_uci-2.jsonl"));
    assert_eq!(fs::read_to_string(&stale_pgn).unwrap(), "someone's games\n");
}

/// Every way an output can be an input or another output, refused with exit 2 before anything
/// is written.
#[test]
fn outputs_that_alias_an_input_or_each_other_are_refused() {
    let repo = FakeRepo::new();
    let out = repo.path().join("m.jsonl");
    let report = repo.path().join("m.json");
    let first = run(
        &repo,
        &match_args(2, &["--out", &text(&out), "--export-json", &text(&report)]),
    );
    assert_eq!(first.code, 0, "{first}");
    let link = repo.path().join("link.jsonl");
    std::os::unix::fs::symlink(&out, &link).unwrap();
    let hard = repo.path().join("hard.json");
    fs::hard_link(&report, &hard).unwrap();
    let pgn = out.with_extension("pgn");
    let snapshot = || {
        [&out, &report, &pgn]
            .map(|path| fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    };
    let before = snapshot();
    let fresh = repo.path().join("fresh.jsonl");

    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            match_args(
                2,
                &[
                    "--out",
                    &text(&out),
                    "--resume",
                    "--export-json",
                    &text(&out),
                ],
            ),
            "--export-json",
        ),
        (
            match_args(
                2,
                &[
                    "--out",
                    &text(&out),
                    "--resume",
                    "--export-json",
                    &text(&link),
                ],
            ),
            "--export-json",
        ),
        (
            match_args(2, &["--out", &text(&out), "--resume", "--pgn", &text(&out)]),
            "--pgn",
        ),
        (
            match_args(2, &["--out", &text(&fresh), "--export-json", &text(&fresh)]),
            "--export-json",
        ),
        (
            match_args(
                2,
                &[
                    "--out",
                    &text(&fresh),
                    "--export-markdown",
                    &text(&fresh.with_extension("pgn")),
                ],
            ),
            "--export-markdown",
        ),
        (
            match_args(
                2,
                &[
                    "--out",
                    &text(&fresh),
                    "--book",
                    &text(&report),
                    "--export-json",
                    &text(&hard),
                ],
            ),
            "--export-json",
        ),
        (
            vec![
                "match".into(),
                "merge".into(),
                text(&out),
                "--pgn".into(),
                text(&link),
            ],
            "--pgn",
        ),
        (
            vec![
                "match".into(),
                "merge".into(),
                text(&out),
                "--export-json".into(),
                text(&out),
            ],
            "--export-json",
        ),
        (
            vec![
                "match".into(),
                "merge".into(),
                text(&out),
                "--export-json".into(),
                text(&report),
                "--export-html".into(),
                text(&report),
            ],
            "--export-html",
        ),
        (
            vec![
                "report".into(),
                text(&report),
                "--out".into(),
                text(&report),
            ],
            "--out",
        ),
        (
            vec!["report".into(), text(&report), "--out".into(), text(&hard)],
            "--out",
        ),
    ];
    for (args, flag) in cases {
        let refused = run(&repo, &args);
        assert_eq!(refused.code, 2, "{args:?}\n{refused}");
        assert!(
            refused.stderr.contains(flag) && refused.stderr.contains("is the same file as"),
            "{args:?}\n{refused}"
        );
        assert_eq!(snapshot(), before, "{args:?} changed a file");
        assert!(!fresh.exists(), "{args:?} created {}", fresh.display());
    }

    // The results file `--resume` finds by itself is an input too.
    let default = run(&repo, &match_args(2, &["--format", "json"]));
    assert_eq!(default.code, 0, "{default}");
    let found = PathBuf::from(default.json()["results_file"].as_str().unwrap());
    let found_before = fs::read(&found).unwrap();
    let refused = run(
        &repo,
        &match_args(2, &["--resume", "--export-json", &text(&found)]),
    );
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("--export-json") && refused.stderr.contains("is the same file as"),
        "{refused}"
    );
    assert_eq!(fs::read(&found).unwrap(), found_before);
    assert_eq!(snapshot(), before);
}

#[test]
fn the_reader_skips_blank_lines_and_refuses_games_outside_the_schedule() {
    let repo = FakeRepo::new();
    let out = repo.path().join("r.jsonl");
    let first = run(&repo, &match_args(4, &["--out", &text(&out)]));
    assert_eq!(first.code, 0, "{first}");
    let original = fs::read_to_string(&out).unwrap();
    let merge = |path: &Path| repo.lab(&["match", "merge", &text(path), "--format", "json"]);

    let blank = repo.path().join("blank.jsonl");
    let lines: Vec<&str> = original.lines().collect();
    fs::write(
        &blank,
        format!(
            "{}\n\n{}\n  \n{}\n\n",
            lines[0],
            lines[1],
            lines[2..].join("\n")
        ),
    )
    .unwrap();
    let merged = merge(&blank);
    assert_eq!(merged.code, 0, "{merged}");
    assert_eq!(merged.json()["games"], 4, "{merged}");

    let mut game: Value = serde_json::from_str(lines[1]).unwrap();
    for (pair, index, why) in [
        (2, 0, "pair 2 is outside the schedule"),
        (u64::MAX, 1, "outside the schedule"),
        (0, 2, "a pair has games 0 and 1 only"),
    ] {
        game["id"]["pair"] = pair.into();
        game["id"]["game"] = index.into();
        let bad = repo.path().join("bad.jsonl");
        fs::write(&bad, format!("{original}{game}\n")).unwrap();
        let refused = merge(&bad);
        assert_eq!(refused.code, 2, "{refused}");
        assert!(
            refused.stderr.contains("bad.jsonl:6:") && refused.stderr.contains(why),
            "{refused}"
        );
    }
}

/// A merge of files short of the match's budget exits 3, so a CI job with a missing shard or
/// an unfinished run fails; a last line with no newline (a game being written) is left out
/// and said.
#[test]
fn a_merge_short_of_its_budget_is_not_a_finished_match() {
    let repo = FakeRepo::new();
    let merge = |path: &Path| repo.lab(&["match", "merge", &text(path), "--format", "json"]);
    let whole = repo.path().join("whole.jsonl");
    fs::write(&whole, sample_results()).unwrap();
    let finished = merge(&whole);
    assert_eq!(finished.code, 0, "{finished}");
    assert!(!finished.stderr.contains("no newline"), "{finished}");

    let torn = repo.path().join("torn.jsonl");
    fs::write(&torn, sample_results().trim_end_matches('\n')).unwrap();
    let merged = merge(&torn);
    assert_eq!(merged.code, 3, "{merged}");
    assert_eq!(merged.json()["games"], 3, "{merged}");
    assert!(
        merged
            .stderr
            .contains("torn.jsonl: its last line has no newline"),
        "{merged}"
    );
    assert!(
        merged.json()["verdict"]
            .as_str()
            .unwrap()
            .contains("3 of 4 games played"),
        "{merged}"
    );

    let header_only = repo.path().join("header.jsonl");
    let header = sample_results().lines().next().unwrap();
    fs::write(&header_only, format!("{header}\n")).unwrap();
    let empty = merge(&header_only);
    assert_eq!(empty.code, 3, "{empty}");
    assert_eq!(empty.json()["games"], 0, "{empty}");

    let no_newline = repo.path().join("no-newline.jsonl");
    fs::write(&no_newline, header).unwrap();
    let refused = merge(&no_newline);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused
            .stderr
            .contains("has no complete line (no newline in"),
        "{refused}"
    );
}

/// A results file of a real 4-game match, made once for the property tests.
fn sample_results() -> &'static str {
    static SAMPLE: OnceLock<String> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        let repo = FakeRepo::new();
        let out = repo.path().join("sample.jsonl");
        let run = run(&repo, &match_args(4, &["--out", &text(&out)]));
        assert_eq!(run.code, 0, "{run}");
        fs::read_to_string(&out).unwrap()
    })
}

fn parse(bytes: &[u8]) -> anyhow::Result<usize> {
    squall_lab::games::results::parse(bytes, Path::new("sample.jsonl"))
        .map(|(_, games, _)| games.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn arbitrary_lines_after_a_header_never_panic(
        lines in prop::collection::vec("[ -~]{0,80}", 0..6),
        keep in 0usize..5,
    ) {
        let sample: Vec<&str> = sample_results().lines().collect();
        let mut text: String = sample[..=keep.min(sample.len() - 1)]
            .iter()
            .map(|line| format!("{line}\n"))
            .collect();
        for line in &lines {
            text.push_str(line);
            text.push('\n');
        }
        let _ = parse(text.as_bytes());
    }

    #[test]
    fn blank_lines_anywhere_change_nothing(blanks in prop::collection::vec((0usize..6, "[ \t]{0,3}"), 0..6)) {
        let mut lines: Vec<String> = sample_results().lines().map(str::to_string).collect();
        for (at, blank) in blanks {
            lines.insert(at.min(lines.len()), blank);
        }
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        prop_assert_eq!(parse(text.as_bytes()).map_err(|e| e.to_string()), Ok(4));
    }

    #[test]
    fn games_outside_the_schedule_are_refused_with_their_line(
        which in 1usize..5,
        pair in any::<u64>(),
        game in any::<u8>(),
    ) {
        let mut lines: Vec<String> = sample_results().lines().map(str::to_string).collect();
        let mut record: Value = serde_json::from_str(&lines[which]).unwrap();
        record["id"]["pair"] = pair.into();
        record["id"]["game"] = game.into();
        lines[which] = record.to_string();
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let parsed = parse(text.as_bytes());
        // A budget of 4 games: pairs 0 and 1, games 0 and 1 of each.
        if pair >= 2 || game > 1 {
            let error = parsed.expect_err("outside the schedule").to_string();
            prop_assert!(error.contains(&format!("sample.jsonl:{}:", which + 1)), "{}", error);
        } else if let Ok(count) = parsed {
            // Inside the schedule it is either accepted or a duplicate of another line.
            prop_assert_eq!(count, 4);
        }
    }
}

/// The header's budget of a results file.
fn budget(path: &Path) -> u64 {
    let text = fs::read_to_string(path).expect("results file");
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    header["settings"]["games"].as_u64().unwrap()
}

/// `--resume --games N` gives a match a new budget (openings follow the pair, not the budget),
/// never below the pairs it recorded; `--resume` alone keeps the file's; the games already
/// played stay byte for byte.
#[test]
fn a_resume_with_games_changes_the_budget_and_keeps_every_game() {
    let repo = FakeRepo::new();
    let out = repo.path().join("grow.jsonl");
    let first = run(&repo, &match_args(6, &["--out", &text(&out)]));
    assert_eq!(first.code, 0, "{first}");
    let played = fs::read_to_string(&out).unwrap();
    let played_games: Vec<&str> = played.lines().skip(1).collect();

    let more = run(
        &repo,
        &match_args(10, &["--out", &text(&out), "--resume", "--format", "json"]),
    );
    assert_eq!(more.code, 0, "{more}");
    assert!(
        more.stderr
            .contains("the budget is now 10 games (it was 6)"),
        "{more}"
    );
    assert_eq!(more.json()["games"], 10, "{more}");
    assert_eq!(more.json()["games_budget"], 10, "{more}");
    assert_eq!(budget(&out), 10);
    let grown = fs::read_to_string(&out).unwrap();
    let grown_games: Vec<&str> = grown.lines().skip(1).collect();
    assert_eq!(
        grown_games[..6],
        played_games[..],
        "the first games changed"
    );
    assert_eq!(
        game_ids(&out),
        ((0..5).flat_map(|p| [(p, 0), (p, 1)]).collect(), 10)
    );
    assert_eq!(pgn_games(&out.with_extension("pgn")), 10);

    // Without --games the file's budget holds, not the default of 100.
    let mut args = match_args(2, &["--out", &text(&out), "--resume"]);
    args.retain(|arg| arg != "--games" && arg != "2");
    let kept = run(&repo, &args);
    assert_eq!(kept.code, 0, "{kept}");
    assert_eq!(budget(&out), 10);
    assert_eq!(game_ids(&out).1, 10);

    // An interrupted pair and a budget below the recorded pairs: the pair is finished and the
    // budget is the recorded pairs', so nothing else is played.
    keep_games(&out, 3);
    let finish = run(
        &repo,
        &match_args(2, &["--out", &text(&out), "--resume", "--format", "json"]),
    );
    assert_eq!(finish.code, 0, "{finish}");
    assert!(
        finish.stderr.contains(
            "the budget is now 4 games (it was 10, and the recorded pairs need this many)"
        ),
        "{finish}"
    );
    assert_eq!(budget(&out), 4);
    assert_eq!(game_ids(&out), ([(0, 0), (0, 1), (1, 0), (1, 1)].into(), 4));
    let merged = repo.lab(&["match", "merge", &text(&out), "--format", "json"]);
    assert_eq!(merged.code, 0, "{merged}");
    assert_eq!(merged.json()["games"], 4, "{merged}");
}
