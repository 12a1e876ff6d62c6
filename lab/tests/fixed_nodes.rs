//! Per-engine limits and fixed-node matches. With the real engine (HEAD of this workspace,
//! built into the workspace's lab cache by `lab match HEAD HEAD`, so only a cold cache builds):
//! a `--nodes` match replays the same games whatever the concurrency, the shard split or the
//! machine's load. With the fake UCI engine (lab/examples/fake_uci.rs): each side's own limit
//! reaches the PGN and the results file, a resume or merge with other per-side limits is refused
//! by name, and an engine that ignores `go nodes` stops the match at once with a clear error.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{FakeRepo, LabRun};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the lab lives in the workspace")
        .to_path_buf()
}

/// `lab --quiet --repo <this workspace> ARGS`.
fn lab_here(args: &[&str]) -> LabRun {
    LabRun::from(
        Command::new(env!("CARGO_BIN_EXE_lab"))
            .arg("--quiet")
            .arg("--repo")
            .arg(workspace())
            .args(args)
            .output()
            .expect("running lab"),
    )
}

/// One game as the results file records it, with the SAN moves read back from its PGN (the
/// move comments carry times, which differ between runs, so they are left out).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Played {
    pair: u64,
    game: u64,
    opening: u64,
    result: String,
    termination: String,
    moves: Vec<String>,
}

fn san_moves(pgn: &str) -> Vec<String> {
    let movetext: String = pgn
        .lines()
        .filter(|line| !line.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let mut without_comments = String::new();
    let mut depth = 0;
    for c in movetext.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if depth == 0 => without_comments.push(c),
            _ => {}
        }
    }
    without_comments
        .split_whitespace()
        .filter(|token| !token.ends_with('.') && !["1-0", "0-1", "1/2-1/2", "*"].contains(token))
        .map(str::to_string)
        .collect()
}

/// The games of a results file, by id.
fn games_of(path: &Path) -> BTreeMap<(u64, u64), Played> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .map(|line| {
            let game: serde_json::Value = serde_json::from_str(line).expect("a game line");
            let played = Played {
                pair: game["id"]["pair"].as_u64().unwrap(),
                game: game["id"]["game"].as_u64().unwrap(),
                opening: game["opening"].as_u64().unwrap(),
                result: game["result"].as_str().unwrap().to_string(),
                termination: game["termination"].as_str().unwrap().to_string(),
                moves: san_moves(game["pgn"].as_str().unwrap()),
            };
            ((played.pair, played.game), played)
        })
        .collect()
}

const NODES: &str = "3000";
const GAMES: &str = "8";

/// A fixed-node match of HEAD against itself into `out`, with `extra` flags.
fn fixed_node_match(out: &Path, extra: &[&str]) -> LabRun {
    let out_text = out.to_string_lossy().into_owned();
    let pgn = out.with_extension("pgn").to_string_lossy().into_owned();
    let mut args = vec![
        "match", "HEAD", "HEAD", "--nodes", NODES, "--games", GAMES, "--out", &out_text, "--pgn",
        &pgn, "--format", "json",
    ];
    args.extend_from_slice(extra);
    let run = lab_here(&args);
    assert_eq!(run.code, 0, "{run}");
    run
}

fn assert_same_games(
    expected: &BTreeMap<(u64, u64), Played>,
    actual: &BTreeMap<(u64, u64), Played>,
) {
    assert_eq!(expected.len(), actual.len());
    for (id, game) in expected {
        assert!(!game.moves.is_empty(), "game {id:?} has moves: {game:?}");
        assert_eq!(Some(game), actual.get(id), "game {id:?}");
    }
}

#[test]
fn a_fixed_node_match_replays_the_same_games_at_any_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.jsonl");
    let second = dir.path().join("second.jsonl");
    let report = fixed_node_match(&first, &["--concurrency", "1"]).json();
    fixed_node_match(&second, &["--concurrency", "2"]);
    let games = games_of(&first);
    assert_eq!(games.len(), 8, "{report}");
    assert_same_games(&games, &games_of(&second));
    // The engine declares Threads, so one search thread was asked for.
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&first)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    for side in 0..2 {
        let options = header["settings"]["engines"][side]["options"].to_string();
        assert!(options.contains(r#"["Threads","1"]"#), "{options}");
    }
}

#[test]
fn four_merged_shards_of_a_fixed_node_match_are_the_unsharded_games() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.jsonl");
    fixed_node_match(&whole, &["--concurrency", "2"]);
    let mut shard_files = Vec::new();
    let mut pooled = BTreeMap::new();
    for index in 1..=4 {
        let path = dir.path().join(format!("shard-{index}.jsonl"));
        fixed_node_match(
            &path,
            &["--shard", &format!("{index}/4"), "--concurrency", "1"],
        );
        pooled.extend(games_of(&path));
        shard_files.push(path.to_string_lossy().into_owned());
    }
    assert_same_games(&games_of(&whole), &pooled);
    let mut merge = vec!["match", "merge"];
    merge.extend(shard_files.iter().map(String::as_str));
    merge.extend(["--format", "json"]);
    let merged = lab_here(&merge);
    assert_eq!(merged.code, 0, "{merged}");
    assert_eq!(merged.json()["games"], 8, "{merged}");
}

/// Busy threads on every core until dropped.
struct CpuHog {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<u64>>,
}

impl CpuHog {
    fn start() -> CpuHog {
        let stop = Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let threads = (0..2 * cores)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut spins = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        spins = std::hint::black_box(spins.wrapping_add(1));
                    }
                    spins
                })
            })
            .collect();
        CpuHog { stop, threads }
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[test]
fn a_fixed_node_match_under_a_cpu_hog_plays_the_same_games() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = dir.path().join("quiet.jsonl");
    let loaded = dir.path().join("loaded.jsonl");
    fixed_node_match(&quiet, &["--concurrency", "2"]);
    let hog = CpuHog::start();
    fixed_node_match(&loaded, &["--concurrency", "2"]);
    drop(hog);
    assert_same_games(&games_of(&quiet), &games_of(&loaded));
}

// ---- Per-engine limits and limits the engine ignores, with the fake UCI engine ----

fn fake_uci() -> String {
    format!("exe:{}", common::fake_uci_path().display())
}

fn fake_match(repo: &FakeRepo, extra: &[&str]) -> LabRun {
    let fake = fake_uci();
    let mut args = vec!["match", &fake, &fake];
    args.extend_from_slice(extra);
    repo.lab(&args)
}

fn header_of(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[test]
fn each_side_plays_under_its_own_limit_and_the_pgn_names_both() {
    let repo = FakeRepo::new();
    let out = repo.path().join("odds.jsonl");
    let out_text = out.to_string_lossy().into_owned();
    let run = fake_match(
        &repo,
        &[
            "--nodes", "5", "--tc-b", "30+0.5", "--games", "2", "--out", &out_text, "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    let report = run.json();
    assert_eq!(report["limits"][0]["kind"], "nodes", "{run}");
    assert_eq!(report["limits"][1]["kind"], "clock", "{run}");
    assert_eq!(report["tc"], "A nodes 5, B tc 30+0.5", "{run}");
    let header = header_of(&out);
    assert_eq!(header["settings"]["limits"][0]["nodes"], 5);
    assert_eq!(header["settings"]["limits"][1]["base_ms"], 30_000);
    let pgn = std::fs::read_to_string(out.with_extension("pgn")).unwrap();
    // Game 0 gives A white, game 1 gives B white; the tags follow the colours.
    assert!(
        pgn.contains("[WhiteTimeControl \"-\"]\n[BlackTimeControl \"30+0.5\"]"),
        "{pgn}"
    );
    assert!(
        pgn.contains("[WhiteTimeControl \"30+0.5\"]\n[BlackTimeControl \"-\"]"),
        "{pgn}"
    );
    assert!(!pgn.contains("[TimeControl "), "{pgn}");

    // The same match with B on the shared limit is another match: resume names the side (and
    // B's options, which now ask for one thread).
    let resumed = fake_match(
        &repo,
        &[
            "--nodes", "5", "--games", "2", "--out", &out_text, "--resume",
        ],
    );
    assert_eq!(resumed.code, 2, "{resumed}");
    assert!(
        resumed.stderr.contains("other settings (") && resumed.stderr.contains("limits[B])"),
        "{resumed}"
    );
    // A side's flag that repeats the shared limit changes nothing.
    let same = fake_match(
        &repo,
        &[
            "--nodes",
            "5",
            "--tc-b",
            "30+0.5",
            "--nodes-a",
            "5",
            "--games",
            "2",
            "--out",
            &out_text,
            "--resume",
            "--format",
            "json",
        ],
    );
    assert_eq!(same.code, 0, "{same}");

    // Merging it with a shard played under one limit is refused by the same name.
    let other = repo.path().join("even.jsonl");
    let other_text = other.to_string_lossy().into_owned();
    let run = fake_match(
        &repo,
        &["--nodes", "5", "--games", "2", "--out", &other_text],
    );
    assert_eq!(run.code, 0, "{run}");
    let merged = repo.lab(&["match", "merge", &out_text, &other_text]);
    assert_eq!(merged.code, 2, "{merged}");
    assert!(
        merged.stderr.contains("differ in") && merged.stderr.contains("limits[B]"),
        "{merged}"
    );
}

#[test]
fn equal_limits_keep_the_one_time_control_tag() {
    let repo = FakeRepo::new();
    let out = repo.path().join("even.jsonl");
    let run = fake_match(
        &repo,
        &[
            "--tc-a",
            "30+0.5",
            "--tc-b",
            "30+0.5",
            "--games",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.json()["tc"], "tc 30+0.5", "{run}");
    let pgn = std::fs::read_to_string(out.with_extension("pgn")).unwrap();
    assert!(pgn.contains("[TimeControl \"30+0.5\"]"), "{pgn}");
    assert!(!pgn.contains("WhiteTimeControl"), "{pgn}");
}

#[test]
fn a_side_limit_that_contradicts_itself_is_refused() {
    let repo = FakeRepo::new();
    let run = fake_match(&repo, &["--nodes-a", "5", "--tc-a", "10+0.1"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains("--nodes-a") && run.stderr.contains("--tc-a"),
        "{run}"
    );
}

#[test]
fn an_engine_that_ignores_go_nodes_stops_the_match_at_its_first_move() {
    let repo = FakeRepo::new();
    let out = repo.path().join("ignored.jsonl");
    let started = Instant::now();
    let run = common::lab_within(
        &repo,
        &[
            "match",
            &fake_uci(),
            &fake_uci(),
            "--nodes",
            "1000",
            "--games",
            "40",
            "--concurrency",
            "1",
            "--option-b",
            "Behaviour=ignore-limits",
            "--out",
            out.to_str().unwrap(),
        ],
        // Far below the minute a move without a clock may take: the lab must not wait it out.
        Duration::from_secs(50),
    );
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("engine B ignores its limit"), "{run}");
    assert!(
        run.stderr.contains("`go nodes 1000`") && run.stderr.contains("reported nodes"),
        "{run}"
    );
    assert!(started.elapsed() < Duration::from_secs(50));
    // The one game it lost that way is recorded, not dropped.
    let games = games_of(&out);
    assert_eq!(games.len(), 1, "{run}");
    assert!(games
        .values()
        .all(|game| game.termination == "rules_infraction"));
}

#[test]
fn a_move_that_never_comes_reports_the_real_wait_and_the_command() {
    let repo = FakeRepo::new();
    let out = repo.path().join("endless.jsonl");
    let run = fake_match(
        &repo,
        &[
            "--movetime",
            "300",
            "--games",
            "2",
            "--concurrency",
            "1",
            "--option-b",
            "Behaviour=ignore-limits",
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{run}");
    let text = std::fs::read_to_string(&out).unwrap();
    let reason = text
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find_map(|game| {
            let reason = game["reason"].as_str()?.to_string();
            reason.contains("no move within").then_some(reason)
        })
        .unwrap_or_else(|| panic!("no time forfeit:\n{text}"));
    // The engine prints an `info` line every few milliseconds and never a move: the wait stated
    // is the whole wait since `go`, not the time since its last line.
    let waited: u64 = reason
        .split("no move within ")
        .nth(1)
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("{reason}"));
    // Before, the wait stated was the time since the last `info` line (a few ms); the whole
    // wait is the movetime, give or take the millisecond the two clocks' readings differ by.
    assert!(waited >= 250, "{reason}");
    assert!(reason.contains("`go movetime 300`"), "{reason}");
}
