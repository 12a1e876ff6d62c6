//! `lab match` end to end with scripted fake UCI engines (lab/examples/fake_uci.rs): faults are
//! losses written into the PGN, the PGN replays under the rules crate, shards pool into the
//! unsharded counts, the SPRT stops the match, and `--resume` neither loses nor repeats a game.

mod common;

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{FakeRepo, LabRun};
use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Position};

fn fake_uci() -> String {
    format!("exe:{}", common::fake_uci_path().display())
}

fn play(repo: &FakeRepo, extra: &[&str]) -> LabRun {
    let fake = fake_uci();
    let mut args = vec!["match", &fake, &fake];
    args.extend_from_slice(extra);
    repo.lab(&args)
}

fn results_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// Replays every game of a PGN with shakmaty: tags, legality of each SAN, and the result.
struct Replay {
    games: Vec<ReplayedGame>,
}

#[derive(Default, Debug)]
struct ReplayedGame {
    tags: Vec<(String, String)>,
    plies: usize,
    error: Option<String>,
}

impl Visitor for Replay {
    type Tags = Vec<(String, String)>;
    type Movetext = (ReplayedGame, Option<Chess>);
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let fen = tags
            .iter()
            .find(|(name, _)| name == "FEN")
            .map(|(_, value)| value.clone());
        let position = fen.and_then(|fen| {
            fen.parse::<Fen>()
                .ok()?
                .into_position(CastlingMode::Standard)
                .ok()
        });
        let mut game = ReplayedGame {
            tags,
            ..ReplayedGame::default()
        };
        if position.is_none() {
            game.error = Some("no FEN tag with a legal position".to_string());
        }
        ControlFlow::Continue((game, position))
    }

    fn san(
        &mut self,
        movetext: &mut Self::Movetext,
        san_plus: SanPlus,
    ) -> ControlFlow<Self::Output> {
        let (game, position) = movetext;
        if let Some(pos) = position {
            match san_plus.san.to_move(pos) {
                Ok(chess_move) => {
                    pos.play_unchecked(chess_move);
                    game.plies += 1;
                }
                Err(error) => {
                    game.error = Some(format!("{san_plus}: {error}"));
                    *position = None;
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, movetext: Self::Movetext) -> Self::Output {
        self.games.push(movetext.0);
    }
}

fn replay(path: &Path) -> Vec<ReplayedGame> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut replay = Replay { games: Vec::new() };
    let mut reader = Reader::new(std::io::Cursor::new(bytes));
    while reader.read_game(&mut replay).expect("PGN reads").is_some() {}
    replay.games
}

fn tag<'a>(game: &'a ReplayedGame, name: &str) -> &'a str {
    game.tags
        .iter()
        .find(|(tag, _)| tag == name)
        .map_or("", |(_, value)| value.as_str())
}

#[test]
fn a_match_of_fake_engines_writes_a_pgn_the_rules_crate_replays() {
    let repo = FakeRepo::new();
    let out = repo.path().join("m.jsonl");
    let run = play(
        &repo,
        &[
            "--nodes",
            "1",
            "--games",
            "8",
            "--concurrency",
            "2",
            "--option-a",
            "Behaviour=random",
            "--option-a",
            "Seed=1",
            "--option-b",
            "Behaviour=random",
            "--option-b",
            "Seed=2",
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert_eq!(report["games"], 8, "{run}");
    assert_eq!(report["pairs"], 4, "{run}");
    let penta: u64 = report["pentanomial"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(penta, 4);
    let wdl = &report["wdl"];
    assert_eq!(
        wdl["wins"].as_u64().unwrap()
            + wdl["draws"].as_u64().unwrap()
            + wdl["losses"].as_u64().unwrap(),
        8
    );
    for key in ["elo", "nelo", "engines", "tc", "book", "schema_version"] {
        assert!(
            !report[key].is_null() || key == "nelo",
            "{key} missing:\n{run}"
        );
    }
    let games = replay(&out.with_extension("pgn"));
    assert_eq!(games.len(), 8);
    let mut rounds = std::collections::BTreeMap::new();
    for game in &games {
        assert_eq!(game.error, None, "{game:?}");
        for name in [
            "Event",
            "Site",
            "Date",
            "Round",
            "White",
            "Black",
            "Result",
            "FEN",
            "SetUp",
            "TimeControl",
            "Termination",
        ] {
            assert!(!tag(game, name).is_empty(), "tag {name} missing: {game:?}");
        }
        assert_eq!(tag(game, "PlyCount"), game.plies.to_string());
        *rounds.entry(tag(game, "Round").to_string()).or_insert(0) += 1;
    }
    assert!(
        rounds.values().all(|&n| n == 2),
        "both games of a pair share a Round: {rounds:?}"
    );
    // The results file: a header and one line per game.
    let lines = results_lines(&out);
    assert_eq!(lines.len(), 9);
    assert_eq!(lines[0]["kind"], "lab-match-results");
}

#[test]
fn every_kind_of_engine_fault_is_a_loss_recorded_in_the_pgn() {
    let repo = FakeRepo::new();
    let cases = [
        ("crash", "abandoned", "crashed"),
        ("illegal", "rules infraction", "illegal move"),
        ("garbage", "rules infraction", "garbage output"),
        ("hang", "time forfeit", "no move within"),
        ("slow", "time forfeit", "no move within"),
    ];
    for (behaviour, termination, words) in cases {
        let out = repo.path().join(format!("{behaviour}.jsonl"));
        let started = Instant::now();
        let run = play(
            &repo,
            &[
                "--tc",
                "0.4+0.01",
                "--games",
                "2",
                // One engine process per game: FaultAfter counts per process.
                "--concurrency",
                "2",
                "--option-b",
                &format!("Behaviour={behaviour}"),
                "--option-b",
                "FaultAfter=2",
                "--out",
                out.to_str().unwrap(),
                "--format",
                "json",
            ],
        );
        assert_eq!(
            run.code, 0,
            "a fault is a lost game, not a dead match: {run}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{behaviour} took {:?}",
            started.elapsed()
        );
        let report = run.json();
        assert_eq!(report["wdl"]["losses"], 2, "{behaviour}: {run}");
        assert_eq!(report["faults"][1], 2, "{behaviour}: {run}");
        assert_eq!(report["terminations"][termination], 2, "{behaviour}: {run}");
        let games = replay(&out.with_extension("pgn"));
        assert_eq!(games.len(), 2);
        let pgn = std::fs::read_to_string(out.with_extension("pgn")).unwrap();
        assert!(
            pgn.contains(&format!("[Termination \"{termination}\"]")),
            "{pgn}"
        );
        assert!(
            pgn.contains(words) && pgn.contains("last output:"),
            "{behaviour}: {pgn}"
        );
        for game in &games {
            assert_eq!(game.error, None);
        }
        // FaultAfter counts per process: the first game of a process faults at B's third move.
        // A worker that finishes its game before the other worker has started may play the
        // second game with the same process, which then faults sooner.
        assert!(
            games.iter().any(|game| game.plies >= 2),
            "B faulted at its third move: {games:?}"
        );
    }
}

#[test]
fn an_engine_that_keeps_faulting_stops_the_match_with_exit_2() {
    let repo = FakeRepo::new();
    let out = repo.path().join("crashy.jsonl");
    let run = play(
        &repo,
        &[
            "--nodes",
            "1",
            "--games",
            "20",
            "--concurrency",
            "1",
            "--option-a",
            "Behaviour=crash",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains("engine A faulted in 3 games in a row"),
        "{run}"
    );
    assert!(run.stderr.contains("crashed"), "{run}");
    // The games played are kept.
    assert_eq!(results_lines(&out).len(), 1 + 3, "{run}");
}

#[test]
fn a_hung_engine_that_leaves_a_child_holding_its_pipes_is_killed_with_its_group() {
    let repo = FakeRepo::new();
    let started = Instant::now();
    let run = play(
        &repo,
        &[
            "--tc",
            "0.3+0",
            "--games",
            "2",
            "--option-b",
            "Behaviour=spawn-sleeper",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.json()["time_forfeits"][1], 2, "{run}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the sleeper holding the pipe kept the lab waiting: {:?}",
        started.elapsed()
    );
}

#[test]
fn shards_pool_into_exactly_the_unsharded_counts() {
    let repo = FakeRepo::new();
    let common = [
        "--nodes",
        "1",
        "--games",
        "16",
        "--concurrency",
        "2",
        "--option-a",
        "Behaviour=random",
        "--option-a",
        "Seed=3",
        "--option-b",
        "Behaviour=random",
        "--option-b",
        "Seed=4",
    ];
    let whole = repo.path().join("whole.jsonl");
    let mut args = common.to_vec();
    args.extend(["--out", whole.to_str().unwrap(), "--format", "json"]);
    let unsharded = play(&repo, &args);
    assert_eq!(unsharded.code, 0, "{unsharded}");
    let mut shard_files = Vec::new();
    for index in 1..=4 {
        let file = repo.path().join(format!("shard-{index}.jsonl"));
        let shard = format!("{index}/4");
        let mut args = common.to_vec();
        args.extend(["--shard", &shard, "--out", file.to_str().unwrap()]);
        let run = play(&repo, &args);
        assert_eq!(run.code, 0, "{run}");
        shard_files.push(file);
    }
    let mut merge_args = vec!["match", "merge"];
    let names: Vec<String> = shard_files
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    merge_args.extend(names.iter().map(String::as_str));
    merge_args.extend(["--format", "json"]);
    let merged = repo.lab(&merge_args);
    assert_eq!(merged.code, 0, "{merged}");
    let (whole, merged_json) = (unsharded.json(), merged.json());
    for key in ["games", "pairs", "wdl", "pentanomial", "elo", "nelo", "los"] {
        assert_eq!(whole[key], merged_json[key], "{key}: {unsharded}\n{merged}");
    }

    // A merge of some shards says how far the match got, not that it finished, and exits 3
    // (no decision) so that a CI job missing a shard does not pass.
    let exported = repo.path().join("partial.json");
    let exported_markdown = repo.path().join("partial.md");
    let partial = repo.lab(&[
        "match",
        "merge",
        &names[0],
        &names[1],
        "--format",
        "json",
        "--export-json",
        exported.to_str().unwrap(),
        "--export-markdown",
        exported_markdown.to_str().unwrap(),
    ]);
    assert_eq!(partial.code, 3, "{partial}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(file, partial.json(), "the export is the printed report");
    let markdown = std::fs::read_to_string(&exported_markdown).unwrap();
    assert!(markdown.starts_with("## lab match: "), "{markdown}");
    let played = partial.json()["games"].as_u64().unwrap();
    assert!(played < 16, "{partial}");
    let verdict = partial.json()["verdict"].as_str().unwrap().to_string();
    assert!(
        verdict.starts_with(&format!("{played} of 16 games played")),
        "{partial}"
    );

    // Merging a shard twice, or shards of different matches, is refused by name.
    let twice = repo.lab(&["match", "merge", &names[0], &names[0]]);
    assert_eq!(twice.code, 2, "{twice}");
    assert!(twice.stderr.contains("given twice"), "{twice}");
    let other = repo.path().join("other-seed.jsonl");
    let mut args = common.to_vec();
    args.extend([
        "--seed",
        "9",
        "--shard",
        "2/4",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert_eq!(play(&repo, &args).code, 0);
    let mixed = repo.lab(&["match", "merge", &names[0], other.to_str().unwrap()]);
    assert_eq!(mixed.code, 2, "{mixed}");
    assert!(mixed.stderr.contains("differ in seed"), "{mixed}");

    // The merged PGN is written new: an existing file is refused and kept as it was.
    let pgn = repo.path().join("merged.pgn");
    std::fs::write(&pgn, "kept").unwrap();
    let over = repo.lab(&["match", "merge", &names[0], "--pgn", pgn.to_str().unwrap()]);
    assert_eq!(over.code, 2, "{over}");
    assert!(over.stderr.contains("already exists"), "{over}");
    assert_eq!(std::fs::read_to_string(&pgn).unwrap(), "kept");
    std::fs::remove_file(&pgn).unwrap();
    let written = repo.lab(&["match", "merge", &names[0], "--pgn", pgn.to_str().unwrap()]);
    assert_eq!(written.code, 3, "{written}");
    assert!(std::fs::read_to_string(&pgn).unwrap().contains("[Result "));
}

#[test]
fn the_sprt_stops_the_match_and_sets_the_exit_code() {
    let repo = FakeRepo::new();
    // A resigns every game: B is far stronger, H1 is accepted long before the budget.
    let stronger = play(
        &repo,
        &[
            "--nodes",
            "1",
            "--games",
            "400",
            "--sprt",
            "elo0=0,elo1=10",
            "--option-a",
            "Behaviour=resign",
            "--format",
            "json",
        ],
    );
    assert_eq!(stronger.code, 0, "{stronger}");
    let report = stronger.json();
    assert_eq!(report["sprt"]["result"], "accept-h1", "{stronger}");
    assert_eq!(report["stopped_by"], "sprt", "{stronger}");
    assert!(report["games"].as_u64().unwrap() < 400, "{stronger}");
    // B resigns: H0.
    let weaker = play(
        &repo,
        &[
            "--nodes",
            "1",
            "--games",
            "400",
            "--sprt",
            "elo0=0,elo1=10",
            "--option-b",
            "Behaviour=resign",
            "--format",
            "json",
        ],
    );
    assert_eq!(weaker.code, 1, "{weaker}");
    assert_eq!(weaker.json()["sprt"]["result"], "accept-h0", "{weaker}");
    // Too small a budget to decide: exit 3.
    let undecided = play(
        &repo,
        &[
            "--nodes",
            "1",
            "--games",
            "2",
            "--sprt",
            "elo0=0,elo1=5",
            "--format",
            "json",
        ],
    );
    assert_eq!(undecided.code, 3, "{undecided}");
    assert_eq!(
        undecided.json()["sprt"]["result"],
        "continue",
        "{undecided}"
    );
}

#[test]
fn resume_after_an_interrupt_loses_no_game_and_plays_none_twice() {
    let repo = FakeRepo::new();
    let serial = common::serial();
    let out = repo.path().join("resumed.jsonl");
    // The first GAMES_BEFORE games pass the fake engine's gate; every later one waits at it, so
    // the interrupt lands after exactly that many games however fast the machine is.
    const GAMES_BEFORE: usize = 5;
    let gate = repo.path().join("gate");
    std::fs::create_dir(&gate).unwrap();
    std::fs::write(gate.join("limit"), GAMES_BEFORE.to_string()).unwrap();
    let gate_option = format!("Gate={}", gate.display());
    let fake = fake_uci();
    let base = [
        "--repo",
        repo.path().to_str().unwrap(),
        "match",
        &fake,
        &fake,
        "--movetime",
        "20",
        "--games",
        "24",
        "--concurrency",
        "2",
        "--option-a",
        "Behaviour=random",
        "--option-a",
        &gate_option,
        "--option-b",
        "Behaviour=random",
        "--out",
        out.to_str().unwrap(),
    ];
    let child = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(base)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lab starts");
    // Generous: the games are short, and the gated ones wait for the interrupt (up to the
    // lab's 10 s handshake deadline, far beyond this loop's 20 ms polling).
    let run = common::interrupt_when(
        child,
        || results_lines(&out).len() > GAMES_BEFORE,
        Duration::from_secs(120),
    );
    let (stdout, stderr) = (&run.stdout, &run.stderr);
    assert_eq!(run.code, 130, "an interrupted lab exits 130: {stderr}");
    let before = results_lines(&out).len() - 1;
    assert_eq!(before, GAMES_BEFORE, "games recorded before the interrupt");
    assert!(
        stderr.contains("24 games to play (0 recorded), concurrency 2, expected duration about"),
        "the plan before the games: {stderr}"
    );
    assert!(
        stdout.contains(&format!("interrupted after {GAMES_BEFORE} of 24 games")),
        "the report of the games so far: {stdout}\n{stderr}"
    );
    drop(serial);
    std::fs::remove_file(gate.join("limit")).unwrap();

    let mut resumed = base[2..].to_vec();
    resumed.extend(["--resume", "--format", "json"]);
    let run = repo.lab(&resumed);
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.json()["games"], 24, "{run}");
    assert!(
        run.stderr.contains(&format!(
            "{} games to play ({GAMES_BEFORE} recorded), concurrency 2, expected duration about ",
            24 - GAMES_BEFORE
        )) && run
            .stderr
            .contains(&format!("at the pace of the last {GAMES_BEFORE} games;")),
        "a resume plans by the games it has: {run}"
    );
    let ids: BTreeSet<(u64, u64)> = results_lines(&out)[1..]
        .iter()
        .map(|game| {
            (
                game["id"]["pair"].as_u64().unwrap(),
                game["id"]["game"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ids.len(), 24, "every game once");
    assert_eq!(results_lines(&out).len(), 25);
    // Each game records the run of the lab that played it: the first run's, then the resume's.
    let sittings: Vec<u64> = results_lines(&out)[1..]
        .iter()
        .map(|game| {
            game["sitting"]
                .as_u64()
                .expect("every game records its sitting")
        })
        .collect();
    assert!(
        sittings[..GAMES_BEFORE]
            .iter()
            .all(|&sitting| sitting == sittings[0])
            && sittings[GAMES_BEFORE..]
                .iter()
                .all(|&sitting| sitting == sittings[GAMES_BEFORE])
            && sittings[0] < sittings[GAMES_BEFORE],
        "{sittings:?}"
    );
    // The report lists B's NPS over A's by sitting, in the order played, over all the games.
    let report = run.json();
    let listed = report["nps_ratio_by_sitting"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{run}");
    assert_eq!(listed[0]["sitting"], sittings[0], "{run}");
    assert_eq!(listed[1]["sitting"], sittings[GAMES_BEFORE], "{run}");
    assert_eq!(
        listed[0]["games"].as_u64().unwrap() + listed[1]["games"].as_u64().unwrap(),
        report["nps_ratio_in_games"]["games"].as_u64().unwrap(),
        "{run}"
    );
    assert_eq!(
        replay(&out.with_extension("pgn")).len(),
        24,
        "the PGN is rebuilt from the results"
    );

    // A resume with other settings is refused by name.
    let mut changed = base[2..].to_vec();
    changed.extend(["--resume", "--seed", "5"]);
    let refused = repo.lab(&changed);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(refused.stderr.contains("seed"), "{refused}");
    // Another adjudication: refused with the flag that gives the recorded rule.
    let mut rules = base[2..].to_vec();
    rules.extend(["--resume", "--draw-adj", "none"]);
    let refused = repo.lab(&rules);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains(
            "draw_adjudication: recorded `--draw-adj movenumber=32,movecount=8,score=10`"
        ),
        "{refused}"
    );
}

#[test]
fn bad_engines_and_options_are_clear_errors() {
    let repo = FakeRepo::new();
    let fake = fake_uci();
    let not_uci = repo.lab(&["match", "exe:/bin/true", &fake, "--games", "2"]);
    assert_eq!(not_uci.code, 2, "{not_uci}");
    assert!(
        not_uci
            .stderr
            .contains("engine A (exe:/bin/true) failed to start"),
        "{not_uci}"
    );
    let missing = repo.lab(&["match", "exe:/no/such/engine", &fake]);
    assert_eq!(missing.code, 2, "{missing}");
    assert!(missing.stderr.contains("no executable file"), "{missing}");
    let option = repo.lab(&["match", &fake, &fake, "--option-b", "Contempt=5"]);
    assert_eq!(option.code, 2, "{option}");
    assert!(
        option.stderr.contains("has no UCI option `Contempt`"),
        "{option}"
    );
    let odd = repo.lab(&["match", &fake, &fake, "--games", "3"]);
    assert_eq!(odd.code, 2, "{odd}");
    assert!(odd.stderr.contains("must be even"), "{odd}");
    let tc = repo.lab(&["match", &fake, &fake, "--tc", "fast"]);
    assert_eq!(tc.code, 2, "{tc}");
    assert!(tc.stderr.contains("--tc fast"), "{tc}");
    let book = repo.path().join("bad.epd");
    std::fs::write(
        &book,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nnot a position at all\n",
    )
    .unwrap();
    let bad_book = repo.lab(&["match", &fake, &fake, "--book", book.to_str().unwrap()]);
    assert_eq!(bad_book.code, 2, "{bad_book}");
    assert!(bad_book.stderr.contains("bad.epd:2"), "{bad_book}");
}

/// Two engines that choose alike at every move play each pair's two games move for move: the
/// report says those games cannot tell them apart; engines that differ get no such warning.
#[test]
fn engines_that_choose_alike_are_named_by_a_warning() {
    let repo = FakeRepo::new();
    let run_with_seeds = |seed_b: &str| {
        let seed_b = format!("Seed={seed_b}");
        play(
            &repo,
            &[
                "--nodes",
                "1",
                "--games",
                "20",
                "--option-a",
                "Behaviour=random",
                "--option-a",
                "Seed=1",
                "--option-b",
                "Behaviour=random",
                "--option-b",
                &seed_b,
                "--out",
                repo.path()
                    .join(format!("{seed_b}.jsonl"))
                    .to_str()
                    .unwrap(),
            ],
        )
    };
    let alike = run_with_seeds("1");
    assert_eq!(alike.code, 0, "{alike}");
    assert!(
        alike
            .stdout
            .contains("Warning: A and B played the same moves in all 10 pairs checked"),
        "{alike}"
    );
    let different = run_with_seeds("2");
    assert_eq!(different.code, 0, "{different}");
    assert!(!different.stdout.contains("same moves"), "{different}");
}
