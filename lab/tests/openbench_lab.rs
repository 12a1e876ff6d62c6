//! The lab on an engine that is not squall: a small C engine with a Makefile and a `lab.toml`
//! of format "openbench", driven through the real `lab` binary. Compare must find its slowdown
//! (same node signature, lower NPS, more instructions per node, the function that grew), the
//! squall-protocol commands must name what is missing, `lab match` must build it through the
//! same definition, and `lab profile` must draw it with perf.

mod common;

use common::{have, FakeRepo};

/// Nodes are deterministic (`depth` × 3000); each node costs `WORK` rounds of an LCG in a
/// function that is never inlined, so per-node instructions scale with `WORK`. The speed is
/// the engine's own clock, as real engines report it. Anything but `bench` runs the fake UCI
/// engine compiled in as `UCI`, so `lab match` can play it: random legal moves from `SEED`,
/// and with `GATE` defined, waiting at that gate (lab/examples/fake_uci.rs).
const ENGINE_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef WORK
#define WORK 300
#endif
#ifndef NODES_PER_DEPTH
#define NODES_PER_DEPTH 1000
#endif
#ifndef SEED
#define SEED "0"
#endif

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long search_node(unsigned long seed) {
    unsigned long x = seed;
    for (int i = 0; i < WORK; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        unsigned long depth = argc > 2 ? strtoul(argv[2], NULL, 10) : 4;
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        unsigned long total = 0;
        for (unsigned long position = 1; position <= 3; position++) {
            unsigned long nodes = NODES_PER_DEPTH * depth;
            for (unsigned long node = 0; node < nodes; node++) sink += search_node(node ^ position);
            total += nodes;
            printf("position %lu depth %lu nodes %lu\n", position, depth, nodes);
        }
        clock_gettime(CLOCK_MONOTONIC, &end);
        double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
        printf("Nodes searched: %lu\nNodes/second: %lu\n", total, (unsigned long)(total / seconds));
        return 0;
    }
#if defined(UCI) && defined(GATE)
    execl(UCI, UCI, "--option", "Behaviour=random", "--option", "Seed=" SEED, "--option",
          "Gate=" GATE, (char *)NULL);
#elif defined(UCI)
    execl(UCI, UCI, "--option", "Behaviour=random", "--option", "Seed=" SEED, (char *)NULL);
#endif
    return 1;
}
"#;

const MAKEFILE: &str = "EXE ?= tiny
all:
\t$(CC) -O1 -g -fno-omit-frame-pointer -DUCI=\'\"$(UCI)\"\' -o $(EXE) engine.c
";

/// The `lab.toml` that builds the C engine in `src/` with its Makefile and benches it.
fn write_c_engine_lab_toml(repo: &FakeRepo) {
    repo.write(
        "lab.toml",
        &format!(
            "[engine]\nname = \"tiny\"\nbuild-dir = \"src\"\n\
             build = \"make EXE={{exe}} UCI={uci}\"\n\
             bench = \"{{exe}} bench {{depth}}\"\n",
            uci = common::fake_uci_path().display()
        ),
    );
}

/// A repository whose `lab.toml` names the C engine; HEAD~1 does `WORK` rounds per node and
/// HEAD twice as many. `None` (with the reason printed) when cc or make is missing.
fn c_engine_repo() -> Option<FakeRepo> {
    let slower = ENGINE_C.replace("#define WORK 300", "#define WORK 600");
    c_engine_then(&slower, "twice the work per node")
}

/// A repository whose `lab.toml` names the C engine (HEAD~1), then `engine_c` (HEAD); `None`
/// (with the reason printed) when cc or make is missing.
fn c_engine_then(engine_c: &str, message: &str) -> Option<FakeRepo> {
    if !have("cc") || !have("make") {
        eprintln!("skipped: cc and make are needed to build the C engine");
        return None;
    }
    let repo = FakeRepo::new();
    repo.write("src/engine.c", ENGINE_C);
    repo.write("src/Makefile", MAKEFILE);
    write_c_engine_lab_toml(&repo);
    repo.commit("a C engine with a lab.toml");
    repo.write("src/engine.c", engine_c);
    repo.commit(message);
    Some(repo)
}

#[test]
fn compare_finds_the_slowdown_of_an_openbench_engine() {
    let Some(repo) = c_engine_repo() else { return };
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "6",
        "--depth",
        "4",
        "--instr-depth",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "a regression exits 1\n{run}");
    let json = run.json();
    assert_eq!(json["signature"]["changed"], false, "{json:#}");
    assert_eq!(
        json["a"]["signature"], 12_000,
        "3 positions × 1000 × depth 4"
    );
    assert_eq!(json["a"]["engine"]["name"], "tiny");
    assert!(json["a"]["eval"].is_null(), "no eval exits: {json:#}");
    let ratio = json["speed"]["nps_ratio"].as_f64().expect("an NPS ratio");
    assert!(ratio < 0.8, "twice the work per node is slower: {ratio}");
    // Depth 2 against the depth-1 reference: the per-node cost of the search alone.
    if json["a"]["instructions"]["measured"] == true {
        let per_node = |side: &str| json[side]["instructions"]["per_node"].as_f64().unwrap();
        assert!(
            per_node("b") > 1.8 * per_node("a"),
            "{} vs {}",
            per_node("a"),
            per_node("b")
        );
        assert_eq!(json["a"]["instructions"]["base_depth"], 1);
    }
    let terminal = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "4",
        "--depth",
        "4",
        "--no-instructions",
    ]);
    assert!(
        terminal
            .stdout
            .contains("t over 4 rounds; 4 whole-bench pairs"),
        "the interval says its sample is the rounds\n{terminal}"
    );
    assert!(
        !terminal.stdout.contains("Eval exits (share"),
        "no eval tables for an engine without them\n{terminal}"
    );
    assert!(
        terminal
            .stdout
            .contains("Eval exits by search (main, quiescence): not reported by either side"),
        "{terminal}"
    );
}

#[test]
fn functions_name_what_grew_in_any_binary_with_symbols() {
    let Some(repo) = c_engine_repo() else { return };
    if !have("valgrind") {
        eprintln!("skipped: valgrind is needed for --functions");
        return;
    }
    let run = repo.lab(&[
        "compare",
        "HEAD~1",
        "HEAD",
        "--rounds",
        "2",
        "--no-instructions",
        "--functions",
        "--instr-depth",
        "2",
        "--format",
        "json",
    ]);
    assert!(run.code == 0 || run.code == 1, "{run}");
    let movers = &run.json()["functions"]["movers"];
    assert!(
        movers[0]["function"]
            .as_str()
            .is_some_and(|name| name.contains("search_node")),
        "the function whose cost doubled leads: {movers:#}"
    );
}

#[test]
fn squall_protocol_commands_name_the_missing_feature() {
    let Some(repo) = c_engine_repo() else { return };
    for (args, feature) in [
        (vec!["tiers", "HEAD"], "`lab tiers`"),
        (vec!["calibrate", "HEAD"], "calibration"),
        (
            vec!["compare", "HEAD", "HEAD", "--positions", "x.epd"],
            "--positions",
        ),
        (
            vec!["bench", "HEAD", "--features", "calibrate"],
            "--features",
        ),
    ] {
        let run = repo.lab(&args);
        assert_eq!(run.code, 2, "{args:?}\n{run}");
        assert!(
            run.stderr.contains(feature) && run.stderr.contains("openbench"),
            "{args:?} names {feature} and the format\n{run}"
        );
        assert_eq!(
            run.stderr.trim().lines().count(),
            1,
            "one readable message\n{run}"
        );
    }
}

#[test]
fn a_failing_build_exits_2_with_its_tail() {
    let Some(repo) = c_engine_repo() else { return };
    repo.write("src/engine.c", "int main( { syntax error\n");
    repo.commit("broken");
    let run = repo.lab(&["bench", "HEAD", "--rounds", "2", "--no-instructions"]);
    assert_eq!(run.code, 2, "{run}");
    assert!(run.stderr.contains("building tiny"), "{run}");
    assert!(
        run.stderr.contains("engine.c"),
        "the compiler's tail\n{run}"
    );
}

#[test]
fn a_config_file_elsewhere_replaces_the_repository_s_own() {
    let Some(repo) = c_engine_repo() else { return };
    let elsewhere = repo.path().join("target").join("other.toml");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::write(
        &elsewhere,
        "[engine]\nname = \"nope\"\nformat = \"bogus\"\n",
    )
    .unwrap();
    let run = repo.lab(&[
        "--config",
        elsewhere.to_str().unwrap(),
        "bench",
        "HEAD",
        "--no-instructions",
    ]);
    assert_eq!(run.code, 2, "{run}");
    assert!(
        run.stderr.contains("other.toml") && run.stderr.contains("format"),
        "{run}"
    );
}

#[test]
fn match_builds_openbench_engines_from_the_same_definition() {
    let Some(repo) = c_engine_repo() else { return };
    let out = repo.path().join("target").join("m.jsonl");
    let run = repo.lab(&[
        "match",
        "HEAD~1",
        "HEAD",
        "--games",
        "2",
        "--tc",
        "1+0.01",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stderr.contains("tiny of"),
        "built through lab.toml\n{run}"
    );
    let games = std::fs::read_to_string(&out).unwrap();
    assert!(
        games.lines().count() >= 3,
        "a header and two games\n{games}"
    );
}

#[test]
fn profile_draws_any_engine_with_perf() {
    let Some(repo) = c_engine_repo() else { return };
    if let Err(reason) = squall_lab::profile::perf::perf_availability() {
        eprintln!("skipped: {reason}");
        return;
    }
    let svg = repo.path().join("target").join("tiny.svg");
    let run = repo.lab(&[
        "profile",
        "HEAD",
        "--depth",
        "40",
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run}");
    let drawn = std::fs::read_to_string(&svg).expect("the flamegraph");
    assert!(drawn.contains("search_node"), "the hot function is drawn");
    assert!(run.stdout.contains("search_node"), "{run}");
    assert!(run.stdout.contains("Hz"), "the effective rate\n{run}");

    // `--vs`: HEAD does twice the work per node, so search_node's share grows.
    let vs = repo.lab(&[
        "profile",
        "HEAD~1",
        "--vs",
        "HEAD",
        "--depth",
        "40",
        "--out",
        svg.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(vs.code, 0, "{vs}");
    let json = vs.json();
    for side in ["a", "b"] {
        assert_eq!(json[side]["sampler"], "perf", "{json:#}");
        assert!(
            json[side]["effective_hz"]
                .as_f64()
                .is_some_and(|hz| hz > 0.0),
            "{side}'s effective rate: {json:#}"
        );
    }
    let diff = repo.path().join("target").join("tiny-vs-HEAD.diff.svg");
    assert_eq!(json["diff_svg"], diff.to_str().unwrap(), "{json:#}");
    let titles = common::svg::svg_titles(&std::fs::read_to_string(&diff).expect("the diff"));
    let b_samples = json["b"]["samples"].as_u64().unwrap();
    assert!(
        titles.contains(&format!("all ({b_samples} samples, 100%)")),
        "widths are B's samples"
    );
    assert!(
        titles.iter().any(|t| t.starts_with("search_node (")),
        "{titles:?}"
    );
}

/// A quick verdict of HEAD against HEAD~1 at 2+0.02 with `max_games` games, then `extra`.
fn verdict_args(max_games: &'static str, extra: &[&'static str]) -> Vec<&'static str> {
    let mut all = vec![
        "verdict",
        "HEAD~1",
        "HEAD",
        "--tc",
        "2+0.02",
        "--rounds",
        "4",
        "--max-rounds",
        "4",
        "--no-instructions",
        "--concurrency",
        "2",
        "--max-games",
        max_games,
    ];
    all.extend_from_slice(extra);
    all
}

/// A repository of the C engine (HEAD~1) and of another search of it (HEAD: another
/// signature, other moves); `None` (said) without cc and make.
fn two_searches() -> Option<FakeRepo> {
    c_engine_then(
        &format!("#define NODES_PER_DEPTH 1100\n#define SEED \"7\"\n{ENGINE_C}"),
        "another search",
    )
}

/// Games whose moves carry no nodes (the engine sends no `info`): by default the paired NPS
/// goes on standing in for the games' speed, with a note; `--speed-from games` given stops.
#[test]
fn games_that_show_no_speed_leave_the_paired_speed_standing() {
    let silent = |engine_c: &str| {
        let with = engine_c.replace(
            r#""Seed=" SEED, (char *)NULL"#,
            r#""Seed=" SEED, "--option", "Info=false", (char *)NULL"#,
        );
        assert_ne!(with, engine_c, "the C engine's exec line moved");
        with
    };
    if !have("cc") || !have("make") {
        eprintln!("skipped: cc and make are needed to build the C engine");
        return;
    }
    let repo = FakeRepo::new();
    repo.write("src/engine.c", &silent(ENGINE_C));
    repo.write("src/Makefile", MAKEFILE);
    write_c_engine_lab_toml(&repo);
    repo.commit("a C engine that reports no search");
    repo.write(
        "src/engine.c",
        &silent(&format!(
            "#define NODES_PER_DEPTH 1100\n#define SEED \"7\"\n{ENGINE_C}"
        )),
    );
    repo.commit("another search");
    common::speed_elo::store_stand_in_model(repo.path());

    let run = repo.lab(&verdict_args(
        "24",
        &["--nodes", "2000", "--format", "json"],
    ));
    assert!(matches!(run.code, 0 | 1 | 3), "{run}");
    let report = run.json();
    assert_eq!(report["games"], 24, "{run}");
    assert_eq!(report["speed_from"], "nps", "{run}");
    assert!(report["speed_games"].is_null(), "{run}");
    assert!(
        report["notes"].as_array().unwrap().iter().any(|note| note
            .as_str()
            .unwrap()
            .starts_with("after 24 games too few moves")),
        "{run}"
    );

    let given = repo.lab(&verdict_args(
        "24",
        &["--nodes", "2000", "--speed-from", "games"],
    ));
    assert_eq!(given.code, 2, "{given}");
    assert!(
        given.stderr.contains("--speed-from games: 24 games")
            && given.stderr.contains("--resume --speed-from nps"),
        "{given}"
    );
}

/// The jsonl files under the lab's match directory of `repo`, with their line counts.
fn match_results(repo: &FakeRepo) -> Vec<(std::path::PathBuf, usize)> {
    let dir = repo.path().join("target").join("lab").join("match");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            (path.extension()? == "jsonl").then(|| {
                let lines = std::fs::read_to_string(&path).map_or(0, |text| text.lines().count());
                (path, lines)
            })
        })
        .collect()
}

#[test]
fn an_interrupted_verdict_gives_the_verdict_of_its_games_so_far_and_resume_continues_them() {
    if !have("cc") || !have("make") {
        eprintln!("skipped: cc and make are needed to build the C engine");
        return;
    }
    // A waits at the gate from its GAMES_BEFORE-th game on, so the interrupt lands after
    // exactly that many games however fast the machine is: enough to show a speed.
    const GAMES_BEFORE: usize = 24;
    let repo = FakeRepo::new();
    let gate = repo.path().join("gate");
    std::fs::create_dir(&gate).unwrap();
    std::fs::write(gate.join("limit"), GAMES_BEFORE.to_string()).unwrap();
    repo.write(
        "src/engine.c",
        &format!("#define GATE \"{}\"\n{ENGINE_C}", gate.display()),
    );
    repo.write("src/Makefile", MAKEFILE);
    write_c_engine_lab_toml(&repo);
    repo.commit("A: the gated engine");
    // B: another signature (more nodes per depth) and other moves (another seed).
    repo.write(
        "src/engine.c",
        &format!("#define NODES_PER_DEPTH 1100\n#define SEED \"7\"\n{ENGINE_C}"),
    );
    repo.commit("B: another search");
    common::speed_elo::store_stand_in_model(repo.path());
    let export = repo.path().join("verdict.json");
    // A given budget: no clock games to time A's moves, which would pass the gate first.
    let args = verdict_args("40", &["--nodes", "2000"]);
    let mut interrupted_args = args.clone();
    interrupted_args.extend(["--export-json", export.to_str().unwrap()]);
    let child = repo
        .lab_command(&interrupted_args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("lab starts");
    let run = common::interrupt_when(
        child,
        || {
            match_results(&repo)
                .iter()
                .any(|(_, lines)| *lines > GAMES_BEFORE)
        },
        std::time::Duration::from_secs(300),
    );
    let (stdout, stderr) = (&run.stdout, &run.stderr);
    assert_eq!(run.code, 130, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("signatures differ: fixed-node SPRT at"),
        "{stderr}"
    );
    assert!(
        stdout.contains("Decision: interrupted before a decision"),
        "the verdict of the games so far: {stdout}\n{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).expect("the export is written"))
            .unwrap();
    assert_eq!(report["kind"], "verdict");
    assert_eq!(report["decision"], "interrupted", "{report:#}");
    assert_eq!(report["games"], GAMES_BEFORE as u64, "{report:#}");
    assert!(report["search"]["nodes_per_move"].as_u64().unwrap() > 0);
    // Judged once more at the speed of every game played (the first step's bounds were the
    // paired NPS's): one reading in the speed, the bounds, the LLR and the results file.
    assert_eq!(report["speed_from"], "games", "{report:#}");
    assert_eq!(report["speed_games"], GAMES_BEFORE as u64, "{report:#}");
    assert_eq!(report["speed_runs"], serde_json::Value::Null, "{report:#}");
    let played = &report["search"]["match"];
    for end in ["value", "ci_low", "ci_high"] {
        assert_eq!(
            report["speed_ratio"][end], played["nps_ratio_in_games"][end],
            "{report:#}"
        );
    }
    assert_eq!(report["llr"], played["sprt"]["llr"], "{report:#}");
    assert_eq!(
        played["sprt"]["elo0"],
        report["search"]["shifted_sprt"]["elo0"]
    );
    // The page's LLR plot ends where the report's LLR is, and the games' own report ends as
    // the verdict does.
    let trajectory = played["trajectory"].as_array().unwrap();
    assert_eq!(
        trajectory.last().unwrap()["llr"],
        report["llr"],
        "{report:#}"
    );
    assert_eq!(played["exit_code"], 130, "{report:#}");
    assert!(
        played["verdict"]
            .as_str()
            .unwrap()
            .starts_with("interrupted after 24 of 40 games"),
        "{report:#}"
    );
    let results = played["results_file"].as_str().unwrap();
    let text = std::fs::read_to_string(repo.path().join(results)).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["settings"]["sprt"], report["search"]["shifted_sprt"]);

    std::fs::remove_file(gate.join("limit")).unwrap();
    // Judged again with a budget at the games recorded: none more is played.
    let again = repo.lab(&verdict_args(
        "2",
        &["--nodes", "2000", "--resume", "--format", "json"],
    ));
    assert!(matches!(again.code, 0 | 1 | 3), "{again}");
    assert_eq!(again.json()["games"], GAMES_BEFORE as u64, "{again}");
    assert!(
        again.stderr.contains(
            "the budget is now 24 games (it was 40, and the recorded pairs need this many)"
        ),
        "{again}"
    );
    assert_eq!(match_results(&repo)[0].1, GAMES_BEFORE + 1);
    let mut resumed_args = args.to_vec();
    resumed_args.extend(["--resume", "--format", "json"]);
    let resumed = repo.lab(&resumed_args);
    assert!(
        resumed.stderr.contains("resuming the fixed-node games of"),
        "{resumed}"
    );
    let games = resumed.json()["games"].as_u64().unwrap();
    assert!(
        matches!(resumed.code, 0 | 1 | 3) && games > GAMES_BEFORE as u64,
        "the games go on from the recorded ones: {resumed}"
    );
    let results = match_results(&repo);
    assert_eq!(results.len(), 1, "one results file: {results:?}");
    assert_eq!(
        results[0].1 as u64,
        games + 1,
        "a header and each game once"
    );
}

/// A fit plays for an hour or more, and a commit made meanwhile must not put another engine
/// into its later odds. The gate holds the first odds' second game while HEAD moves to another
/// engine; the second odds still plays the commit the fit started from.
#[test]
fn a_speed_elo_fit_plays_every_odds_on_the_commit_it_started_from() {
    if !have("cc") || !have("make") {
        eprintln!("skipped: cc and make are needed to build the C engine");
        return;
    }
    let repo = FakeRepo::new();
    let gate = repo.path().join("gate");
    std::fs::create_dir(&gate).unwrap();
    // Both sides take a ticket at each new game: the second game waits at ticket 2.
    std::fs::write(gate.join("limit"), "2").unwrap();
    let gated = |extra: &str| format!("#define GATE \"{}\"\n{extra}{ENGINE_C}", gate.display());
    repo.write("src/engine.c", &gated(""));
    repo.write("src/Makefile", MAKEFILE);
    write_c_engine_lab_toml(&repo);
    let started = repo.commit("the engine the fit starts from").to_string();
    let child = repo
        .lab_command(&[
            "speed-elo",
            "HEAD",
            "--tc",
            "1+0.01",
            "--odds",
            "1.5,2",
            "--games",
            "4",
            "--concurrency",
            "1",
            "--format",
            "json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("lab starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !gate.join("ticket-2").exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first game did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    repo.write("src/engine.c", &gated("#define NODES_PER_DEPTH 1100\n"));
    let moved = repo.commit("HEAD moves to another engine").to_string();
    assert_ne!(started, moved);
    std::fs::remove_file(gate.join("limit")).unwrap();
    let run = common::LabRun::from(child.wait_with_output().unwrap());

    let results = match_results(&repo);
    assert_eq!(
        results.len(),
        2,
        "a results file per odds: {results:?}\n{run}"
    );
    for (path, _) in &results {
        let text = std::fs::read_to_string(path).unwrap();
        let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        for side in 0..2 {
            assert_eq!(
                header["settings"]["engines"][side]["commit"],
                started.as_str(),
                "{}: {header}",
                path.display()
            );
        }
    }
    if run.code == 0 {
        let engine = &run.json()["models"][0]["engine"];
        assert_eq!(engine["spec"], "HEAD", "the model keeps the name given");
        assert_eq!(engine["commit"], started.as_str());
    } else {
        // Four games of random moves may leave an Elo unbounded: no model, and it says so.
        assert_eq!(run.code, 2, "{run}");
        assert!(run.stderr.contains("play more games"), "{run}");
    }

    // The fit's commit by another name (HEAD has moved on): --resume continues both odds' files
    // and plays no game.
    let resumed = repo.lab(&[
        "speed-elo",
        "HEAD~1",
        "--tc",
        "1+0.01",
        "--odds",
        "1.5,2",
        "--games",
        "4",
        "--concurrency",
        "1",
        "--resume",
    ]);
    assert_eq!(resumed.code, run.code, "the same fit: {resumed}");
    assert_eq!(
        resumed.stderr.matches("resuming ").count(),
        2,
        "both odds resumed: {resumed}"
    );
    assert_eq!(match_results(&repo).len(), 2, "no new results file");
}

/// With node odds the games carry the speed: B plays at A's budget times the lower end of its
/// speed ratio, the bounds are not shifted, the games' Elo is the total, and no speed-Elo
/// model is needed. A resumed node-odds verdict keeps both budgets.
#[test]
fn a_verdict_at_node_odds_needs_no_model_and_its_games_are_the_total() {
    // B: another signature and other moves. (Its speed is whatever four rounds of a
    // millisecond bench say on a busy machine: only the budgets' rule is asserted.)
    let Some(repo) = two_searches() else {
        return;
    };
    let args = verdict_args;

    let without = repo.lab(&args("6", &["--format", "json"]));
    assert_eq!(without.code, 2, "equal nodes need the model: {without}");
    assert!(
        without.stderr.contains("no speed-Elo model") && without.stderr.contains("--node-odds"),
        "the error offers node odds: {without}"
    );

    let run = repo.lab(&args("6", &["--node-odds", "--format", "json"]));
    assert!(matches!(run.code, 0 | 1 | 3), "{run}");
    let report = run.json();
    assert_eq!(report["games_at"], "node-odds", "{run}");
    assert!(
        report["model"].is_null() && report["speed_elo"].is_null(),
        "{run}"
    );
    assert!(report["search_elo"].is_null(), "{run}");
    assert_eq!(report["games"], 6, "{run}");
    let search = &report["search"];
    // A's budget: its fastest bench NPS × its mean time per move in games against itself at
    // the clock.
    assert_eq!(search["budget_from"], "clock-games", "{run}");
    let probe = &search["clock_probe"];
    assert_eq!(probe["games"], 8, "{run}");
    let probe_ms = probe["mean_time_ms"].as_f64().unwrap();
    let a_nodes = search["nodes_per_move"].as_u64().unwrap();
    let expected = (search["nps"].as_f64().unwrap() * probe_ms / 1000.0)
        .round()
        .max(1.0);
    assert_eq!(a_nodes, expected as u64, "{run}");
    let b_nodes = search["b_nodes_per_move"].as_u64().unwrap();
    let low = report["speed_ratio"]["ci_low"].as_f64().unwrap();
    assert_eq!(b_nodes, (a_nodes as f64 * low).round() as u64, "{run}");
    let limits = &search["match"]["limits"];
    assert_eq!(limits[0]["nodes"].as_u64(), Some(a_nodes), "{run}");
    assert_eq!(limits[1]["nodes"].as_u64(), Some(b_nodes), "{run}");
    assert_eq!(search["shifted_sprt"]["elo0"], report["sprt"]["elo0"]);
    assert_eq!(search["shifted_sprt"]["elo1"], report["sprt"]["elo1"]);
    // Random movers may win or lose every pair, whose Elo is unbounded (null) in both.
    let games_elo = &search["match"]["elo"];
    if games_elo.is_null() {
        assert!(report["total_elo"]["value"].is_null(), "{run}");
    } else {
        assert_eq!(&report["total_elo"], games_elo, "{run}");
    }

    // A resume at node odds continues games whose budgets differ: at this test's budget of a
    // hundred-odd nodes a speed whose lower end is within half a node of 1 rounds B's budget
    // to A's, and such games read as equal-node ones (a real budget of 10^5 nodes would need
    // a lower end within 0.0005% of 1). Nothing here to resume then.
    if b_nodes == a_nodes {
        eprintln!("B's budget rounded to A's ({a_nodes} nodes): the resume is not checked");
        return;
    }
    let resumed = repo.lab(&args("8", &["--node-odds", "--resume"]));
    assert!(matches!(resumed.code, 0 | 1 | 3), "{resumed}");
    assert!(
        resumed.stderr.contains(&format!(
            "at their budget of {} (A) and {} (B) nodes per move",
            common::grouped(a_nodes),
            common::grouped(b_nodes)
        )),
        "{resumed}"
    );
    assert!(
        resumed.stdout.contains("node budgets (node odds)")
            && resumed.stdout.contains("total Elo (games at node odds)"),
        "{resumed}"
    );
    // B keeps the odds the first run gave it, and the report and the progress say so; this
    // run's paired speed is for reference.
    let odds = format!("× {:.4}", b_nodes as f64 / a_nodes as f64);
    assert!(
        resumed.stdout.contains(&format!(
            "{odds}, the resumed games' odds: the speed ratio's 95% lower end of the run that \
             started them; this run's is "
        )) && resumed
            .stdout
            .contains("Paired rounds (for reference, not charged)")
            && resumed
                .stdout
                .contains("(this run's, for reference: B kept the resumed games' odds)"),
        "{resumed}"
    );
    assert!(
        resumed.stderr.contains(&format!(
            "; B {odds}, the node odds of the run that started them (this run's speed ratio's \
             lower end, "
        )) && resumed
            .stderr
            .contains(&format!("B: {odds}, the resumed games' odds")),
        "{resumed}"
    );
    assert_eq!(
        match_results(&repo).len(),
        2,
        "the clock games that timed A, and the verdict's games, resumed in their file"
    );

    // `--nodes` sets A's budget, B's follows it by the speed's lower end, and only earlier
    // games at that budget are resumed: these start a results file of their own.
    let given = repo.lab(&args(
        "4",
        &[
            "--node-odds",
            "--nodes",
            "3000",
            "--resume",
            "--format",
            "json",
        ],
    ));
    assert!(matches!(given.code, 0 | 1 | 3), "{given}");
    let report = given.json();
    let search = &report["search"];
    assert_eq!(search["budget_from"], "given", "{given}");
    assert_eq!(search["nodes_per_move"], 3000, "{given}");
    let low = report["speed_ratio"]["ci_low"].as_f64().unwrap();
    let b_given = (3000.0 * low).round() as u64;
    assert_eq!(
        search["b_nodes_per_move"].as_u64(),
        Some(b_given),
        "{given}"
    );
    assert_eq!(search["match"]["limits"][0]["nodes"], 3000, "{given}");
    assert_eq!(
        report["games"], 4,
        "a new match, not the 8 games at the other budget: {given}"
    );
    assert_eq!(match_results(&repo).len(), 3, "a results file of its own");
    let again = repo.lab(&args("6", &["--node-odds", "--nodes", "3000", "--resume"]));
    assert!(
        again.stderr.contains("at their budget of 3,000 (A)")
            && again.stdout.contains("resumed games"),
        "{again}"
    );

    // The same verdict again, not resumed: the budget the first run's clock games gave, kept
    // for A's binary at this clock on this machine; no clock games are played, and the new
    // games replay the first run's.
    let files = match_results(&repo).len();
    let stored = repo.lab(&args("2", &["--node-odds", "--format", "json"]));
    assert!(matches!(stored.code, 0 | 1 | 3), "{stored}");
    let report = stored.json();
    let search = &report["search"];
    assert_eq!(search["budget_from"], "stored", "{stored}");
    assert!(
        stored.stderr.contains("--new-budget plays them again")
            && stored.stderr.contains(&format!(
                "holds earlier games of these two binaries with A at {} nodes",
                common::grouped(a_nodes)
            )),
        "{stored}"
    );
    assert_eq!(search["nodes_per_move"].as_u64(), Some(a_nodes), "{stored}");
    assert_eq!(
        search["clock_probe"]["mean_time_ms"].as_f64(),
        Some(probe_ms)
    );
    assert_eq!(
        search["nps"],
        run.json()["search"]["nps"],
        "the budget's own NPS"
    );
    let kept = std::path::PathBuf::from(search["budget_store"]["path"].as_str().unwrap());
    assert!(
        kept.starts_with(repo.path().join("target/lab/budgets")) && kept.is_file(),
        "{kept:?}"
    );
    assert_eq!(
        match_results(&repo).len(),
        files + 1,
        "the verdict's games only, no clock games: {stored}"
    );

    // --new-budget times A's clock games again and keeps what they give.
    let renewed = repo.lab(&args(
        "2",
        &["--node-odds", "--new-budget", "--format", "json"],
    ));
    assert!(matches!(renewed.code, 0 | 1 | 3), "{renewed}");
    let report = renewed.json();
    assert_eq!(report["search"]["budget_from"], "clock-games", "{renewed}");
    assert_eq!(report["search"]["clock_probe"]["games"], 8, "{renewed}");
    let rewritten: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert_eq!(
        rewritten["nodes_per_move"], report["search"]["nodes_per_move"],
        "{renewed}"
    );
    let conflict = repo.lab(&args(
        "2",
        &["--node-odds", "--new-budget", "--nodes", "3000"],
    ));
    assert_eq!(conflict.code, 2, "{conflict}");
}

/// `--speed-from games` charges B's NPS over A's in the equal-node games themselves: the
/// report's speed is the games' own ratio, the bounds were shifted by its Elo, and a run whose
/// games stop (here the budget) is judged again with the speed of every game. It is refused
/// with node odds, and a resumed verdict reads the speed of the recorded games.
#[test]
fn the_speed_can_be_read_from_the_games_themselves() {
    let Some(repo) = two_searches() else {
        return;
    };
    common::speed_elo::store_stand_in_model(repo.path());

    let refused = repo.lab(&verdict_args(
        "24",
        &["--speed-from", "games", "--node-odds", "--nodes", "2000"],
    ));
    assert_eq!(refused.code, 2, "{refused}");
    assert!(refused
        .stderr
        .contains("node odds need it before the games"));

    let run = repo.lab(&verdict_args(
        "24",
        &[
            "--speed-from",
            "games",
            "--nodes",
            "2000",
            "--format",
            "json",
        ],
    ));
    assert!(matches!(run.code, 0 | 1 | 3), "{run}");
    let report = run.json();
    assert_eq!(report["speed_from"], "games", "{run}");
    assert_eq!(report["speed_games"], 24, "{run}");
    assert_eq!(report["games"], 24, "{run}");
    let in_games = &report["search"]["match"]["nps_ratio_in_games"];
    for end in ["value", "ci_low", "ci_high"] {
        assert_eq!(report["speed_ratio"][end], in_games[end], "{end}: {run}");
    }
    // The games' bounds: the bounds as given less the lower end of the games' speed in Elo.
    let shifted = report["search"]["shifted_sprt"]["elo0"].as_f64().unwrap();
    let low = report["speed_elo"]["ci_low"].as_f64().unwrap();
    assert!((shifted - (-5.0 - low)).abs() < 1e-9, "{run}");
    // The results file's header holds the bounds the games were last judged at, so the file
    // read alone (`lab match merge`) gives the verdict's LLR.
    let results = report["search"]["match"]["results_file"].as_str().unwrap();
    let text = std::fs::read_to_string(repo.path().join(results)).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["settings"]["sprt"], report["search"]["shifted_sprt"],
        "{run}"
    );
    assert!(
        run.stderr.contains("B's NPS over A's in 24 games")
            && run.stderr.contains("judging the games again with it"),
        "{run}"
    );
    assert!(
        run.stderr
            .contains("24 games to play in this step of 24 games (0 recorded)"),
        "{run}"
    );
    // The step's line gives the verdict so far, the same total the report decides with.
    let total = &report["total_elo"];
    assert!(
        run.stderr.contains(&format!(
            "; so far: total Elo {:+.1} ± {:.1}",
            total["value"].as_f64().unwrap(),
            (total["ci_high"].as_f64().unwrap() - total["ci_low"].as_f64().unwrap()) / 2.0
        )),
        "{run}"
    );
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|note| !note.as_str().unwrap().contains("contradicts")),
        "{run}"
    );

    // Resumed with no new game and no --speed-from (equal nodes: the games are the default
    // source): the recorded games' speed, read before any step; the text says its source.
    let export = repo.path().join("again.json");
    let mut resumed_args = verdict_args("2", &["--nodes", "2000", "--resume"]);
    resumed_args.extend(["--export-json", export.to_str().unwrap()]);
    let resumed = repo.lab(&resumed_args);
    assert!(matches!(resumed.code, 0 | 1 | 3), "{resumed}");
    assert!(
        resumed
            .stderr
            .contains("B's NPS over A's in 24 resumed games")
            && resumed.stderr.contains("); so far: total Elo ")
            && !resumed
                .stderr
                .contains("until the games' own speed is read"),
        "{resumed}"
    );
    // The paired rounds stand as figures, without the threshold word a verdict does not
    // decide by.
    assert!(
        resumed
            .stdout
            .contains("Paired rounds (for reference, not charged): B/A time per node")
            && !resumed.stdout.contains("(threshold 1%)"),
        "{resumed}"
    );
    assert!(
        resumed.stdout.contains("speed (B vs A, NPS in the games)")
            && resumed.stdout.contains("over 24 games, game by game"),
        "{resumed}"
    );
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(again["games"], 24, "{resumed}");
    assert_eq!(again["speed_ratio"], report["speed_ratio"], "{resumed}");
    assert_eq!(again["decision"], report["decision"], "{resumed}");
}

/// The adjudication of a results file's header and of the report's match: `settings` of the
/// header, `adjudication` of the JSON.
fn recorded_adjudication(repo: &FakeRepo, report: &serde_json::Value) -> [serde_json::Value; 3] {
    let played = &report["search"]["match"];
    let results = played["results_file"].as_str().unwrap();
    let text = std::fs::read_to_string(repo.path().join(results)).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    [
        header["settings"]["draw_adjudication"].clone(),
        header["settings"]["resign_adjudication"].clone(),
        played["adjudication"].clone(),
    ]
}

/// A verdict's fixed-node games are adjudicated as `lab match`'s are unless told otherwise; a
/// resume keeps the rules of the games it continues, and a rule given picks only games played
/// by it.
#[test]
fn a_verdict_adjudicates_as_a_match_does_and_a_resume_keeps_the_recorded_rules() {
    let Some(repo) = two_searches() else {
        return;
    };
    common::speed_elo::store_stand_in_model(repo.path());
    let json = ["--nodes", "2000", "--format", "json"];

    let off = repo.lab(&verdict_args(
        "4",
        &[
            "--draw-adj",
            "none",
            "--resign-adj",
            "none",
            "--nodes",
            "2000",
            "--format",
            "json",
        ],
    ));
    assert!(matches!(off.code, 0 | 1 | 3), "{off}");
    let [draw, resign, adjudication] = recorded_adjudication(&repo, &off.json());
    assert!(draw.is_null() && resign.is_null(), "{off}");
    assert_eq!(
        adjudication,
        serde_json::json!({"draw": null, "resign": null}),
        "{off}"
    );
    assert!(off.stderr.contains("adjudication none)"), "{off}");
    let off_file = off.json()["search"]["match"]["results_file"].clone();

    // Without a rule given, a resume continues those games with none.
    let mut resume = json.to_vec();
    resume.push("--resume");
    let resumed = repo.lab(&verdict_args("6", &resume));
    assert!(matches!(resumed.code, 0 | 1 | 3), "{resumed}");
    assert!(
        resumed.stderr.contains("and their adjudication (none)"),
        "{resumed}"
    );
    assert_eq!(resumed.json()["games"], 6, "{resumed}");
    assert_eq!(resumed.json()["search"]["match"]["results_file"], off_file);

    // A fresh verdict takes `lab match`'s defaults, in its report as in its results file.
    let fresh = repo.lab(&verdict_args("4", &json));
    assert!(matches!(fresh.code, 0 | 1 | 3), "{fresh}");
    let [draw, resign, adjudication] = recorded_adjudication(&repo, &fresh.json());
    let default_draw = serde_json::json!({"move_number": 32, "move_count": 8, "score": 10});
    let default_resign = serde_json::json!({"move_count": 3, "score": 400});
    assert_eq!(draw, default_draw, "{fresh}");
    assert_eq!(resign, default_resign, "{fresh}");
    assert_eq!(
        adjudication,
        serde_json::json!({"draw": default_draw, "resign": default_resign})
    );
    assert_ne!(fresh.json()["search"]["match"]["results_file"], off_file);
    assert!(
        fresh.stderr.contains(
            "adjudication draw movenumber=32,movecount=8,score=10 and resign \
             movecount=3,score=400)"
        ),
        "{fresh}"
    );
    let text = repo.lab(&verdict_args("4", &["--nodes", "2000", "--resume"]));
    assert!(
        text.stdout.lines().any(|line| line.contains("adjudication")
            && line.contains(
                "draw movenumber=32,movecount=8,score=10 and resign movecount=3,score=400"
            )),
        "the report's row: {text}"
    );

    // A rule given resumes only games played by it: the older file, not the newest.
    let mut picked = resume.clone();
    picked.extend(["--draw-adj", "none"]);
    let older = repo.lab(&verdict_args("8", &picked));
    assert!(matches!(older.code, 0 | 1 | 3), "{older}");
    assert_eq!(older.json()["search"]["match"]["results_file"], off_file);
    assert_eq!(older.json()["games"], 8, "{older}");

    // Rules no flag could give (a header edited by hand) are not resumed: the newest file is
    // passed over for the one before it.
    let off_path = repo.path().join(off_file.as_str().unwrap());
    let text = std::fs::read_to_string(&off_path).unwrap();
    let (header, games) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(header).unwrap();
    header["settings"]["draw_adjudication"] =
        serde_json::json!({"move_number": 0, "move_count": 0, "score": -5});
    std::fs::write(&off_path, format!("{header}\n{games}")).unwrap();
    let passed_over = repo.lab(&verdict_args("6", &resume));
    assert!(matches!(passed_over.code, 0 | 1 | 3), "{passed_over}");
    assert_eq!(
        passed_over.json()["search"]["match"]["results_file"],
        fresh.json()["search"]["match"]["results_file"],
        "{passed_over}"
    );

    let bad = repo.lab(&verdict_args("4", &["--draw-adj", "movecount=3"]));
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("--draw-adj movecount=3"), "{bad}");
}

/// A `--resume` with nothing to continue says so; when the base has moved since a verdict was
/// paused (another A against the same B), it names the file and the command that continues it.
#[test]
fn a_resume_after_the_base_moved_names_the_verdict_it_could_continue() {
    let Some(repo) = two_searches() else {
        return;
    };
    common::speed_elo::store_stand_in_model(repo.path());
    let git = git2::Repository::open(repo.path()).unwrap();
    let first_base = git.revparse_single("HEAD~1").unwrap().id().to_string();
    let first_base = &first_base[..10];
    // B, HEAD at first and HEAD~1 once the base moves: the command names its commit.
    let b = git.revparse_single("HEAD").unwrap().id().to_string();
    let b = &b[..10];
    let verdict = |a: &'static str, b: &'static str, games: &'static str, resume: bool| {
        let mut args = verdict_args(games, &["--nodes", "2000", "--format", "json"]);
        args[1] = a;
        args[2] = b;
        if resume {
            args.push("--resume");
        }
        repo.lab(&args)
    };
    let first = verdict("HEAD~1", "HEAD", "4", false);
    assert!(matches!(first.code, 0 | 1 | 3), "{first}");
    let first_file = first.json()["search"]["match"]["results_file"].clone();

    // The base moves to a third engine; B is now HEAD~1.
    repo.write(
        "src/engine.c",
        &format!("#define NODES_PER_DEPTH 1200\n{ENGINE_C}"),
    );
    repo.commit("the base moved");
    let moved = verdict("HEAD", "HEAD~1", "4", true);
    assert!(matches!(moved.code, 0 | 1 | 3), "{moved}");
    assert!(
        moved
            .stderr
            .contains("--resume: no earlier verdict's games between these binaries")
            && moved
                .stderr
                .contains("at equal nodes, with A at 2,000 nodes; the games start afresh"),
        "{moved}"
    );
    assert!(
        moved.stderr.contains(&format!(
            "holds a verdict of this B against another A, {first_base}: `lab verdict \
             {first_base} {b} --tc 2+0.02 --nodes 2000 --resume` continues it"
        )),
        "{moved}"
    );
    assert_ne!(moved.json()["search"]["match"]["results_file"], first_file);

    // The command it names continues the first verdict's games.
    let mut named = verdict_args("6", &["--nodes", "2000", "--resume", "--format", "json"]);
    named[1] = first_base;
    named[2] = "HEAD~1";
    let continued = repo.lab(&named);
    assert!(matches!(continued.code, 0 | 1 | 3), "{continued}");
    assert!(
        continued
            .stderr
            .contains("resuming the fixed-node games of"),
        "{continued}"
    );
    assert_eq!(
        continued.json()["search"]["match"]["results_file"],
        first_file
    );
    assert_eq!(continued.json()["games"], 6, "{continued}");
}

/// A fit's games are adjudicated as `lab match`'s unless told otherwise. A resume keeps the
/// rules its games were played by where it is given none (a fit begun before the games were
/// adjudicated goes on as it began, its odds not begun too), continues only games played by a
/// rule given, and refuses to fit odds played by different rules.
#[test]
fn a_speed_elo_resume_keeps_the_adjudication_its_games_were_played_by() {
    let Some(repo) = c_engine_repo() else { return };
    let fit = |odds: &str, extra: &[&str]| {
        let mut args = vec![
            "speed-elo",
            "HEAD",
            "--tc",
            "1+0.01",
            "--odds",
            odds,
            "--concurrency",
            "2",
        ];
        args.extend_from_slice(extra);
        repo.lab(&args)
    };
    let header = |path: &std::path::Path| -> serde_json::Value {
        let text = std::fs::read_to_string(path).unwrap();
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    };
    let rules_of = |path: &std::path::Path| {
        let settings = &header(path)["settings"];
        [
            settings["draw_adjudication"].clone(),
            settings["resign_adjudication"].clone(),
        ]
    };
    let none = [serde_json::Value::Null, serde_json::Value::Null];
    // Odds 1.5 begun without adjudication; odds 2 not begun.
    let begun = fit(
        "1.5",
        &["--games", "2", "--draw-adj", "none", "--resign-adj", "none"],
    );
    assert!(matches!(begun.code, 0 | 2), "{begun}");
    let files = match_results(&repo);
    assert_eq!(files.len(), 1, "{begun}");
    let first_file = files[0].0.clone();
    assert_eq!(rules_of(&first_file), none, "{begun}");

    let resumed = fit("1.5,2", &["--games", "4", "--resume"]);
    assert!(matches!(resumed.code, 0 | 2), "{resumed}");
    assert!(
        resumed
            .stderr
            .contains("keeping the resumed games' adjudication: none"),
        "{resumed}"
    );
    let files = match_results(&repo);
    assert_eq!(files.len(), 2, "odds 2 begins: {resumed}");
    for (path, lines) in &files {
        assert_eq!(*lines, 5, "a header and four games: {}", path.display());
        assert_eq!(
            rules_of(path),
            none,
            "both odds as the fit began: {}",
            path.display()
        );
    }

    // One rule given (the file's), the other kept: the same games go on.
    let one_given = fit("1.5", &["--games", "6", "--resume", "--draw-adj", "none"]);
    assert!(matches!(one_given.code, 0 | 2), "{one_given}");
    assert_eq!(match_results(&repo).len(), 2, "{one_given}");
    assert!(
        std::fs::read_to_string(&first_file)
            .unwrap()
            .lines()
            .count()
            == 7
    );

    // Rules no flag could give (a header edited by hand) are passed over: odds 1.5 starts a
    // results file of its own, by the defaults.
    let original = std::fs::read_to_string(&first_file).unwrap();
    let (first, games) = original.split_once('\n').unwrap();
    let mut edited: serde_json::Value = serde_json::from_str(first).unwrap();
    edited["settings"]["resign_adjudication"] = serde_json::json!({"move_count": 0, "score": 0});
    std::fs::write(&first_file, format!("{edited}\n{games}")).unwrap();
    let passed_over = fit("1.5", &["--games", "2", "--resume"]);
    assert!(matches!(passed_over.code, 0 | 2), "{passed_over}");
    assert_eq!(
        std::fs::read_to_string(&first_file).unwrap(),
        format!("{edited}\n{games}"),
        "left as it was"
    );
    let files = match_results(&repo);
    assert_eq!(files.len(), 3, "{passed_over}");
    std::fs::write(&first_file, &original).unwrap();

    // Odds played by different rules make no fit: odds 3 begins by the defaults, odds 2 kept
    // its games' none.
    // (20 games: random movers' Elo at odds 3 must be bounded for the fit to reach odds 2.)
    let mixed = fit("3,2", &["--games", "20", "--resume"]);
    assert_eq!(mixed.code, 2, "{mixed}");
    assert!(
        mixed
            .stderr
            .contains("odds 2 was played with other adjudication than the first odds (none against draw movenumber=32"),
        "{mixed}"
    );
}
