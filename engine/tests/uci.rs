//! Drives the `squall` binary over stdin/stdout as a UCI GUI would. Every wait has a timeout, so
//! a hung engine fails the test instead of hanging it.

use squall::movegen::parse_uci_move;
use squall::Board;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// Generous: a debug-free test build searches these depths in milliseconds, but CI machines stall.
const TIMEOUT: Duration = Duration::from_secs(20);

struct Engine {
    child: Child,
    /// `None` once closed.
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn start() -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_squall"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start squall");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Engine {
            child,
            stdin: Some(stdin),
            lines,
        }
    }

    fn send(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{command}").expect("write to squall");
        stdin.flush().unwrap();
    }

    fn next_line(&self, timeout: Duration) -> Result<String, RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Reads lines until one satisfies `done`; returns all of them, the matching one last.
    fn read_until(&self, what: &str, done: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + TIMEOUT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_line(left) {
                Ok(line) => {
                    let finished = done(&line);
                    seen.push(line);
                    if finished {
                        return seen;
                    }
                }
                Err(error) => panic!("no {what} ({error:?}); got {seen:#?}"),
            }
        }
    }

    /// Sends `isready` and returns everything printed before `readyok`.
    fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        let mut lines = self.read_until("readyok", |l| l == "readyok");
        lines.pop();
        lines
    }

    fn bestmove(&self) -> String {
        let lines = self.read_until("bestmove", |l| l.starts_with("bestmove"));
        let last = lines.last().unwrap();
        last.split_whitespace().nth(1).expect("a move").to_string()
    }

    /// The current position, through the non-UCI `d` command.
    fn fen(&mut self) -> String {
        self.send("d");
        let lines = self.read_until("fen", |l| l.starts_with("info string fen "));
        lines.last().unwrap()["info string fen ".len()..].to_string()
    }

    fn quit(mut self) {
        self.send("quit");
        self.wait_for_exit("quit");
    }

    fn wait_for_exit(&mut self, after: &str) {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "squall exited with {status} after {after}"
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "squall still running after {after}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // A failed test must not leave the engine running.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_legal(fen: &str, mv: &str) {
    let board = Board::from_fen(fen).unwrap();
    assert!(
        parse_uci_move(&board, mv).is_some(),
        "bestmove {mv} is not legal in {fen}"
    );
}

const AFTER_E4_E5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";

#[test]
fn full_session_plays_a_legal_move() {
    let mut engine = Engine::start();
    engine.send("uci");
    let handshake = engine.read_until("uciok", |l| l == "uciok");
    assert!(handshake.iter().any(|l| l.starts_with("id name squall ")));
    assert!(handshake.iter().any(|l| l.starts_with("id author ")));
    for option in [
        "option name Hash type spin default 16 min 1 max 4096",
        "option name Threads type spin default 1 min 1 max 1",
        "option name Move Overhead type spin default 20 min 0 max 5000",
        "option name FullEval type check default false",
    ] {
        assert!(handshake.iter().any(|l| l == option), "no `{option}`");
    }
    // What OpenBench sends before every game, and the lab's options.
    engine.send("setoption name Threads value 1");
    engine.send("setoption name Hash value 8");
    engine.send("setoption name Move Overhead value 30");
    engine.send("setoption name FullEval value false");
    engine.send("ucinewgame");
    assert!(engine.sync().is_empty(), "no output before readyok");
    engine.send("position startpos moves e2e4 e7e5");
    assert_eq!(engine.fen(), AFTER_E4_E5);
    engine.send("go depth 3");
    let lines = engine.read_until("bestmove", |l| l.starts_with("bestmove"));
    for info in lines.iter().filter(|l| l.starts_with("info depth")) {
        for field in [" seldepth ", " score ", " nodes ", " nps ", " time "] {
            assert!(info.contains(field), "`{field}` missing from `{info}`");
        }
        assert!(info.contains(" score cp ") || info.contains(" score mate "));
    }
    let bestmove = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    assert_legal(AFTER_E4_E5, bestmove);

    // A clock-based search also ends by itself.
    engine.send("position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1");
    engine.send("go wtime 500 btime 500 winc 10 binc 10 movestogo 5");
    assert_legal("4k3/8/8/8/8/8/8/4K2R w K - 0 1", &engine.bestmove());
    engine.send("go movetime 50");
    engine.bestmove();
    engine.send("go nodes 1000");
    engine.bestmove();
    engine.quit();
}

#[test]
fn a_search_cut_inside_an_iteration_reports_its_whole_node_count() {
    const LIMIT: u64 = 20_000;
    let mut engine = Engine::start();
    engine.send("position startpos");
    engine.send(&format!("go nodes {LIMIT}"));
    let lines = engine.read_until("bestmove", |l| l.starts_with("bestmove"));
    let nodes_of = |line: &str| -> u64 {
        let mut fields = line.split_whitespace();
        fields.find(|&f| f == "nodes").expect("a nodes field");
        fields.next().unwrap().parse().expect("a node count")
    };
    let [.., last_iteration, totals, _] = lines.as_slice() else {
        panic!("too few lines: {lines:#?}");
    };
    assert!(totals.starts_with("info nodes "), "{lines:#?}");
    assert!(last_iteration.starts_with("info depth "), "{lines:#?}");
    let total = nodes_of(totals);
    assert!(
        (LIMIT..LIMIT + 1_000).contains(&total),
        "the whole search is the limit, give or take the last node's children: {total}"
    );
    assert!(nodes_of(last_iteration) < total, "{lines:#?}");

    // A search that ends with its iteration says it all in that iteration's line.
    engine.send("go depth 3");
    let lines = engine.read_until("bestmove", |l| l.starts_with("bestmove"));
    assert!(
        !lines.iter().any(|l| l.starts_with("info nodes ")),
        "{lines:#?}"
    );
    engine.quit();
}

#[test]
fn stop_ends_go_infinite() {
    let mut engine = Engine::start();
    engine.send("position startpos");
    engine.send("go infinite");
    // `isready` is answered mid-search, and no bestmove may come before `stop`.
    let before_stop = engine.sync();
    thread::sleep(Duration::from_millis(300));
    let mut early = before_stop;
    while let Ok(line) = engine.next_line(Duration::ZERO) {
        early.push(line);
    }
    assert!(
        !early.iter().any(|l| l.starts_with("bestmove")),
        "bestmove before stop: {early:#?}"
    );
    let stopped_at = Instant::now();
    engine.send("stop");
    let bestmove = engine.bestmove();
    assert!(
        stopped_at.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        stopped_at.elapsed()
    );
    assert_legal(Board::STARTPOS, &bestmove);
    // The engine searches again after a stop.
    engine.send("go depth 1");
    assert_legal(Board::STARTPOS, &engine.bestmove());
    engine.quit();
}

#[test]
fn quit_ends_go_infinite() {
    let mut engine = Engine::start();
    engine.send("go infinite");
    engine.sync();
    engine.quit();
}

#[test]
fn bad_input_leaves_the_position_unchanged() {
    let mut engine = Engine::start();
    engine.send("position startpos moves e2e4 e7e5");
    assert_eq!(engine.fen(), AFTER_E4_E5);
    for bad in [
        "frobnicate",
        "position",
        "position sideways",
        "position startpos e2e4",
        "position startpos moves e2e5",
        "position startpos moves e2e4 e7e5 e1e2 e8e7 a1a5",
        "position fen",
        "position fen 8/8/8 w - - 0 1",
        "position fen 4k3/8/8/8/8/8/8/4K3 w - - 0 1 moves e8d8",
        "setoption name Hash value 0",
        "setoption name Hash value lots",
        "setoption name Hash",
        "setoption name NoSuchOption value 1",
        "setoption Hash 8",
        "setoption name Threads value 2",
        "setoption name Move Overhead value 5001",
        "setoption name Move Overhead value -5",
        "setoption name Move Overhead",
        "setoption name Overhead value 50",
        "setoption name FullEval value on",
        "go depth x",
        "go depth -3",
        "go nodes -1",
        "go movetime soon",
        "go wtime 1000 btime",
        "go sideways",
    ] {
        engine.send(bad);
        let output = engine.sync();
        assert!(
            output.iter().any(|l| l.starts_with("info string error: ")),
            "no error for `{bad}`: {output:#?}"
        );
        assert!(
            !output.iter().any(|l| l.starts_with("bestmove")),
            "`{bad}` started a search: {output:#?}"
        );
        assert_eq!(engine.fen(), AFTER_E4_E5, "after `{bad}`");
    }
    engine.send("go depth 1");
    assert_legal(AFTER_E4_E5, &engine.bestmove());
    engine.quit();
}

#[test]
fn no_legal_move_is_bestmove_0000() {
    let mut engine = Engine::start();
    // Stalemate, then checkmate (fool's mate).
    for fen in [
        "7k/7P/6K1/8/3B4/8/8/8 b - - 0 1",
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
    ] {
        engine.send(&format!("position fen {fen}"));
        engine.send("go depth 3");
        assert_eq!(engine.bestmove(), "0000", "{fen}");
    }
    engine.quit();
}

#[test]
fn end_of_input_ends_the_engine() {
    let mut engine = Engine::start();
    engine.send("go infinite");
    engine.sync();
    // Closing stdin is how a crashed GUI looks; the engine must not linger.
    engine.stdin = None;
    engine.wait_for_exit("the end of input");
}

/// The nodes of the deepest `info` line of a `go depth N` search from a cleared state.
fn nodes_to_depth(engine: &mut Engine, depth: u32) -> u64 {
    engine.send("ucinewgame");
    engine.send(&format!("go depth {depth}"));
    let lines = engine.read_until("bestmove", |l| l.starts_with("bestmove"));
    let prefix = format!("info depth {depth} ");
    let info = lines
        .iter()
        .rfind(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line: {lines:#?}"));
    let mut fields = info.split_whitespace();
    fields.find(|&f| f == "nodes").expect("a nodes field");
    fields.next().unwrap().parse().expect("a node count")
}

#[test]
fn full_eval_changes_the_search() {
    let mut engine = Engine::start();
    // A middlegame, where the cheap tiers exit often.
    engine
        .send("position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    let tiers = nodes_to_depth(&mut engine, 8);
    engine.send("setoption name FullEval value true");
    let full = nodes_to_depth(&mut engine, 8);
    assert_ne!(tiers, full, "FullEval did not change the search");
    // Back to the tiers: the same search as the first (ucinewgame clears the searcher's state).
    engine.send("setoption name fulleval value false");
    assert_eq!(nodes_to_depth(&mut engine, 8), tiers);
    engine.quit();
}

#[test]
fn move_overhead_shortens_the_search() {
    let mut engine = Engine::start();
    // 2 s less 1.99 s of overhead: a 10 ms search. Without the option the engine would think for
    // 1.98 s.
    engine.send("setoption name Move Overhead value 1990");
    engine.send("position startpos");
    let started = Instant::now();
    engine.send("go movetime 2000");
    assert_legal(Board::STARTPOS, &engine.bestmove());
    assert!(
        started.elapsed() < Duration::from_millis(1000),
        "took {:?}",
        started.elapsed()
    );
    engine.quit();
}

#[test]
fn an_unreachable_position_is_refused_and_the_engine_carries_on() {
    let mut engine = Engine::start();
    engine.send("position startpos moves e2e4 e7e5");
    // 276 legal moves: the search used to abort on it.
    engine.send("position fen QQQQQQQQ/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/BR5Q/kBQQQKQQ w - - 0 1");
    let output = engine.sync();
    assert!(
        output
            .iter()
            .any(|l| l.contains("error: position: invalid FEN: piece placement: white has 28")),
        "{output:#?}"
    );
    engine.send("go depth 1");
    assert_legal(AFTER_E4_E5, &engine.bestmove());
    // The record position, 218 moves, is searched.
    let record = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1";
    engine.send(&format!("position fen {record}"));
    engine.send("go depth 2");
    assert_legal(record, &engine.bestmove());
    engine.quit();
}

#[test]
fn move_counters_saturate_in_long_games() {
    let mut engine = Engine::start();
    engine.send("position fen 4k3/8/8/8/8/8/8/4K3 b - - 0 65535 moves e8d8 e1d1");
    let fen = engine.fen();
    assert_eq!(fen, "3k4/8/8/8/8/8/8/3K4 b - - 2 65535");
    // What the engine prints, it reads back.
    engine.send(&format!("position fen {fen}"));
    assert!(engine.sync().is_empty(), "its own FEN was refused");
    assert_eq!(engine.fen(), fen);

    // 65,536 reversible moves: the fifty-move clock stays at its largest instead of wrapping.
    let dance = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let mut line = "position startpos moves".to_string();
    for mv in dance.iter().cycle().take(65_536) {
        line.push(' ');
        line.push_str(mv);
    }
    engine.send(&line);
    assert_eq!(
        engine.fen(),
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 65535 32769"
    );
    engine.send("go depth 2");
    assert_legal(Board::STARTPOS, &engine.bestmove());
    engine.quit();
}

/// The engine's peak resident memory so far, in kB (`VmHWM` of /proc/PID/status).
fn peak_resident_kb(engine: &Engine) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", engine.child.id()))
        .expect("/proc/PID/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next())
        .and_then(|kb| kb.parse().ok())
        .expect("a VmHWM line")
}

#[test]
fn an_over_long_line_is_dropped_and_answered_in_one_short_escaped_line() {
    let mut engine = Engine::start();
    engine.send("position startpos moves e2e4 e7e5");
    engine.sync();
    let before = peak_resident_kb(&engine);
    // 64 MiB of one unknown command that starts with terminal escape sequences.
    let mut line = b"\x1b]0;owned\x07\x1b[2J".to_vec();
    line.resize(64 << 20, b'x');
    line.push(b'\n');
    let stdin = engine.stdin.as_mut().expect("stdin is open");
    stdin.write_all(&line).expect("write to squall");
    drop(line);
    let output = engine.sync();
    assert_eq!(
        output.len(),
        1,
        "{:?}",
        output.iter().map(|l| l.len()).collect::<Vec<_>>()
    );
    let error = &output[0];
    assert!(error.starts_with("info string error: "), "{error:.200}");
    assert!(error.len() < 1000, "an error of {} bytes", error.len());
    assert!(error.contains("\\x1b]0;owned\\x07"), "{error}");
    assert!(
        !error.contains('\x1b') && !error.contains('\x07'),
        "{error}"
    );
    // The engine held at most its line limit of the 64 MiB, never the line itself.
    let grown = peak_resident_kb(&engine).saturating_sub(before);
    assert!(grown < 24 * 1024, "peak memory grew by {grown} kB");

    // A command under the limit is quoted cut short and escaped as well.
    engine.send(&format!("\x1b[31mfrobnicate {}", "y".repeat(100_000)));
    let output = engine.sync();
    assert_eq!(output.len(), 1, "{output:?}");
    assert!(
        output[0].starts_with("info string error: unknown command `\\x1b[31mfrobnicate yyy"),
        "{}",
        output[0]
    );
    assert!(output[0].len() < 1000, "{} bytes", output[0].len());
    // Nothing of either line reached the position.
    assert_eq!(engine.fen(), AFTER_E4_E5);
    engine.send("go depth 1");
    assert_legal(AFTER_E4_E5, &engine.bestmove());
    engine.quit();
}
