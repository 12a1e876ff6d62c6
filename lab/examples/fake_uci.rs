//! A scripted fake UCI engine for the tests of `lab match`: it plays legal chess (shakmaty keeps
//! the rules) or misbehaves on demand, so the referee's handling of every failure can be tested
//! without a real engine. Tests find it at `target/debug/examples/fake_uci`.
//!
//! `setoption name Behaviour value <B>` picks the behaviour:
//!
//! - `first-legal` (default): the first move of shakmaty's legal move list.
//! - `random`: a legal move picked by a hash of (`Seed`, zobrist hash, ply): reproducible.
//! - `resign`: plays like `first-legal` but always reports `score cp -1000`.
//! - `stalemate-seeker`: a stalemating move if there is one, otherwise the move leaving the
//!   opponent the fewest legal replies (checks last).
//! - `repeat`: undoes its own previous move when legal, otherwise plays the first knight move:
//!   from the start position two `repeat` engines reach a threefold repetition after 8 plies.
//! - `ignore-limits`: ignores every limit of `go` (as Toga II ignores `go nodes`): searches
//!   until `stop`, printing `info depth D score cp 0 nodes <D × 50000>` every 10 ms, then
//!   answers like `first-legal`.
//! - Faults, from the `FaultAfter`-th `go` onward (counted from 0 per process; before it they
//!   play `first-legal`):
//!   - `crash`: exits with code 3 without answering;
//!   - `illegal`: answers `bestmove` with a well-formed but illegal move of one of its pieces;
//!   - `hang`: answers nothing and ignores everything but `quit` (stays alive 120 s after EOF);
//!   - `slow`: sleeps for `movetime` (else the mover's `wtime`/`btime`, else 1 s) + 200 ms, then
//!     answers normally: a time forfeit (`quit` still ends it at once);
//!   - `garbage`: prints a line of non-UTF-8 bytes, then `bestmove zzzz`;
//!   - `spawn-sleeper`: like `hang`; in addition, setting this behaviour spawns `sleep 120`,
//!     which inherits stdout, to test that the referee kills the whole process group.
//!
//! `setoption name Gate value <DIR>` makes games wait at a gate, so a test can stop a match after
//! a known number of games without racing the clock: each `ucinewgame` takes the next ticket
//! (creating `DIR/ticket-<k>`), and while `DIR/limit` holds a number N, a game whose ticket is
//! N or more waits before its `readyok` until that file is removed (`quit` still ends it at once).
//! Give it to one side only: a game takes one ticket from each engine that has it.
//!
//! Arguments: `bench [DEPTH]` prints an OpenBench-style bench (`Nodes searched: 4242`,
//! `Nodes/second: 500000`, fixed figures) and exits; `--id-name NAME` answers `id name NAME`;
//! `--id-name-cwd` answers `id name fake-uci in <the last component of its working directory>`;
//! `--option NAME=VALUE` (repeatable) sets an option at start, as `setoption` would, for a
//! wrapper that gives two builds different play without the referee sending options.
//!
//! Every move is announced by `info depth 1 score cp <S> nodes 1 pv <move>` where S is the
//! material balance (P=100, N=B=300, R=500, Q=900) for the side to move, unless
//! `setoption name Info value false` (an engine that reports no search). With no legal move the
//! answer is `bestmove (none)`. Errors in input are reported as `info string error: ...` and
//! leave the previous state unchanged; unknown commands are ignored.

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::io::{self, BufRead, ErrorKind, Write};
use std::path::PathBuf;
use std::process::{self, Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::{Zobrist64, ZobristHash};
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Move, Position, Role, Square};

/// The values of the `Behaviour` option.
const BEHAVIOURS: &str = "first-legal random crash illegal hang slow garbage resign \
                          stalemate-seeker spawn-sleeper repeat ignore-limits";

/// The fixed speed `fake_uci bench` reports.
const BENCH_NPS: u64 = 500_000;

struct Engine {
    id_name: String,
    behaviour: &'static str,
    fault_after: u64,
    seed: u64,
    /// The directory of the `Gate` option.
    gate: Option<PathBuf>,
    /// The `Info` option: whether a move is announced by an `info` line.
    info: bool,
    /// `go` commands received so far by this process.
    gos: u64,
    pos: Chess,
    /// The moves played from the `position` command's root, for `repeat`.
    moves: Vec<Move>,
    hung: bool,
    sleeper: Option<Child>,
    lines: Receiver<String>,
    /// Lines read while `slow` slept, handled after its answer.
    pending: VecDeque<String>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("bench") {
        println!("Nodes searched: 4242");
        println!("Nodes/second: {BENCH_NPS}");
        return;
    }
    let mut id_name = "fake-uci".to_string();
    let mut options = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--id-name" => id_name = args.next().cloned().unwrap_or_default(),
            "--id-name-cwd" => {
                let cwd = std::env::current_dir().unwrap_or_default();
                let last = cwd.file_name().unwrap_or_default().to_string_lossy();
                id_name = format!("fake-uci in {last}");
            }
            "--option" => {
                let spec = args.next().cloned().unwrap_or_default();
                let (name, value) = spec.split_once('=').unwrap_or((&spec, ""));
                options.push(format!("name {name} value {value}"));
            }
            _ => {}
        }
    }
    let (tx, lines) = mpsc::channel();
    thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut buf = Vec::new();
        // Input need not be UTF-8: the fake never panics on what it reads.
        while matches!(stdin.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
            if tx
                .send(String::from_utf8_lossy(&buf).trim().to_owned())
                .is_err()
            {
                break;
            }
            buf.clear();
        }
    });
    let mut engine = Engine {
        id_name,
        behaviour: "first-legal",
        fault_after: 0,
        seed: 0,
        gate: None,
        info: true,
        gos: 0,
        pos: Chess::default(),
        moves: Vec::new(),
        hung: false,
        sleeper: None,
        lines,
        pending: VecDeque::new(),
    };
    for option in &options {
        let words: Vec<&str> = option.split_whitespace().collect();
        if let Err(error) = engine.set_option(&words) {
            eprintln!("fake_uci: --option {option}: {error}");
            process::exit(2);
        }
    }
    while let Some(line) = engine
        .pending
        .pop_front()
        .or_else(|| engine.lines.recv().ok())
    {
        engine.handle(&line);
    }
    if engine.hung {
        // A hung engine does not notice that its input was closed.
        thread::sleep(Duration::from_secs(120));
    }
}

/// Writes one line and flushes it; a closed stdout ends the process.
fn send(line: impl AsRef<[u8]>) {
    let mut out = io::stdout().lock();
    let written = out
        .write_all(line.as_ref())
        .and_then(|()| out.write_all(b"\n"));
    if written.and_then(|()| out.flush()).is_err() {
        process::exit(0);
    }
}

impl Engine {
    fn handle(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, args)) = words.split_first() else {
            return;
        };
        if command == "quit" {
            process::exit(0);
        }
        if self.hung {
            return;
        }
        match command {
            "uci" => {
                send(format!("id name {}", self.id_name));
                send("id author squall lab tests");
                let vars: String = BEHAVIOURS
                    .split_whitespace()
                    .map(|b| format!(" var {b}"))
                    .collect();
                send(format!(
                    "option name Behaviour type combo default first-legal{vars}"
                ));
                send("option name FaultAfter type spin default 0 min 0 max 10000");
                send("option name Seed type spin default 0 min 0 max 1000000");
                send("option name Gate type string default <empty>");
                send("option name Info type check default true");
                send("option name Hash type spin default 16 min 1 max 1024");
                send("option name Threads type spin default 1 min 1 max 1");
                send("uciok");
            }
            "isready" => send("readyok"),
            "ucinewgame" => {
                self.pos = Chess::default();
                self.moves.clear();
                self.wait_at_gate();
            }
            "setoption" => {
                if let Err(error) = self.set_option(args) {
                    send(format!("info string error: {error}"));
                }
            }
            "position" => match parse_position(args) {
                Ok((pos, moves)) => (self.pos, self.moves) = (pos, moves),
                Err(error) => send(format!("info string error: {error}")),
            },
            "go" => self.go(args),
            _ => {} // `stop`, `ponderhit`, `debug` and unknown commands.
        }
    }

    fn set_option(&mut self, args: &[&str]) -> Result<(), String> {
        if args.first() != Some(&"name") {
            return Err("setoption without name".into());
        }
        let value_at = args
            .iter()
            .position(|w| *w == "value")
            .unwrap_or(args.len());
        let name = args[1..value_at].join(" ");
        let value = args.get(value_at + 1..).unwrap_or_default().join(" ");
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("bad {name} value '{value}'"))
        };
        match name.to_ascii_lowercase().as_str() {
            "behaviour" | "behavior" => {
                self.behaviour = BEHAVIOURS
                    .split_whitespace()
                    .find(|b| b.eq_ignore_ascii_case(&value))
                    .ok_or_else(|| format!("unknown behaviour '{value}'"))?;
                if self.behaviour == "spawn-sleeper" && self.sleeper.is_none() {
                    // Inherits stdout, so the pipe stays open until the sleeper dies too.
                    let child = Command::new("sleep")
                        .arg("120")
                        .stdin(Stdio::null())
                        .spawn();
                    let child = child.map_err(|e| format!("cannot spawn sleep: {e}"))?;
                    send(format!("info string spawned sleeper pid {}", child.id()));
                    self.sleeper = Some(child);
                }
            }
            "faultafter" => self.fault_after = number()?,
            "seed" => self.seed = number()?,
            "gate" => self.gate = (!value.is_empty()).then(|| PathBuf::from(&value)),
            "info" => self.info = value != "false",
            "hash" | "threads" => {}
            _ => return Err(format!("unknown option '{name}'")),
        }
        Ok(())
    }

    fn go(&mut self, args: &[&str]) {
        let fault_active = self.gos >= self.fault_after;
        self.gos += 1;
        let behaviour = match self.behaviour {
            "crash" | "illegal" | "hang" | "slow" | "garbage" | "spawn-sleeper"
                if !fault_active =>
            {
                "first-legal"
            }
            behaviour => behaviour,
        };
        match behaviour {
            "crash" => process::exit(3),
            "hang" | "spawn-sleeper" => return self.hung = true,
            "illegal" => return send(format!("bestmove {}", illegal_move(&self.pos))),
            "garbage" => {
                send(b"\xff\xfe garbage \x00");
                return send("bestmove zzzz");
            }
            "slow" => self.sleep_out(args),
            "ignore-limits" => self.search_until_stop(),
            _ => {}
        }
        let legal = self.pos.legal_moves();
        let chosen = match behaviour {
            "random" if !legal.is_empty() => {
                let ply = u64::from(self.pos.fullmoves().get()) * 2
                    + u64::from(self.pos.turn().is_black());
                let zobrist: Zobrist64 = self.pos.zobrist_hash(EnPassantMode::Legal);
                let hash = mix(self.seed ^ mix(zobrist.0 ^ mix(ply)));
                legal.get((hash % legal.len() as u64) as usize).copied()
            }
            "stalemate-seeker" => legal.iter().copied().min_by_key(|&m| {
                let mut after = self.pos.clone();
                after.play_unchecked(m);
                let replies = after.legal_moves().len();
                match (after.is_check(), replies) {
                    (false, 0) => 0,
                    (false, n) => n,
                    (true, n) => 1000 + n,
                }
            }),
            "repeat" => {
                let own_last = self.moves.len().checked_sub(2).map(|i| self.moves[i]);
                let undo = own_last.and_then(|last| {
                    let undoes =
                        |m: &&Move| m.from() == Some(last.to()) && Some(m.to()) == last.from();
                    legal.iter().find(undoes)
                });
                undo.or_else(|| legal.iter().find(|m| m.role() == Role::Knight))
                    .or(legal.first())
                    .copied()
            }
            _ => legal.first().copied(),
        };
        let Some(chosen) = chosen else {
            return send("bestmove (none)");
        };
        let score = if behaviour == "resign" {
            -1000
        } else {
            material(&self.pos)
        };
        let uci = chosen.to_uci(CastlingMode::Standard);
        if self.info {
            send(format!("info depth 1 score cp {score} nodes 1 pv {uci}"));
        }
        send(format!("bestmove {uci}"));
    }

    /// Takes the next ticket at the gate and, while the gate's limit is at or below it, waits.
    fn wait_at_gate(&mut self) {
        let Some(gate) = self.gate.clone() else {
            return;
        };
        let mut ticket = 0u64;
        loop {
            let taken = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(gate.join(format!("ticket-{ticket}")));
            match taken {
                Ok(_) => break,
                Err(error) if error.kind() == ErrorKind::AlreadyExists => ticket += 1,
                Err(error) => return send(format!("info string error: gate: {error}")),
            }
        }
        let limit = gate.join("limit");
        while let Some(n) = std::fs::read_to_string(&limit)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
        {
            if ticket < n {
                return;
            }
            match self.lines.recv_timeout(Duration::from_millis(10)) {
                Ok(line) if line.split_whitespace().next() == Some("quit") => process::exit(0),
                Ok(line) => self.pending.push_back(line),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => process::exit(0),
            }
        }
    }

    /// Reports a deeper iteration every 10 ms until `stop` (or `quit`, which ends it).
    fn search_until_stop(&mut self) {
        const NODES_PER_DEPTH: u64 = 50_000;
        for depth in 1u64.. {
            send(format!(
                "info depth {depth} score cp 0 nodes {}",
                depth * NODES_PER_DEPTH
            ));
            match self.lines.recv_timeout(Duration::from_millis(10)) {
                Ok(line) => match line.split_whitespace().next() {
                    Some("quit") => process::exit(0),
                    Some("stop") => return,
                    _ => self.pending.push_back(line),
                },
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => process::exit(0),
            }
        }
    }

    /// Sleeps past the time this move may take, still honouring `quit`.
    fn sleep_out(&mut self, args: &[&str]) {
        let value = |key: &str| {
            let at = args.iter().position(|w| *w == key)?;
            args.get(at + 1)?
                .parse::<i64>()
                .ok()
                .map(|ms| ms.max(0) as u64)
        };
        let clock = self.pos.turn().fold_wb("wtime", "btime");
        let ms = value("movetime").or_else(|| value(clock)).unwrap_or(1000) + 200;
        let deadline = Instant::now() + Duration::from_millis(ms);
        loop {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) if line.split_whitespace().next() == Some("quit") => process::exit(0),
                Ok(line) => self.pending.push_back(line),
                Err(RecvTimeoutError::Timeout) => return,
                Err(RecvTimeoutError::Disconnected) => {
                    return thread::sleep(deadline.saturating_duration_since(Instant::now()))
                }
            }
        }
    }
}

/// Parses the arguments of `position`: `startpos|fen <FEN> [moves m1 m2 ...]`.
fn parse_position(args: &[&str]) -> Result<(Chess, Vec<Move>), String> {
    let moves_at = args
        .iter()
        .position(|w| *w == "moves")
        .unwrap_or(args.len());
    let mut pos = match args.first() {
        Some(&"startpos") if moves_at == 1 => Chess::default(),
        Some(&"fen") => {
            let fen: Fen = args[1..moves_at]
                .join(" ")
                .parse()
                .map_err(|e| format!("bad FEN: {e}"))?;
            fen.into_position(CastlingMode::Standard)
                .map_err(|e| format!("bad position: {e}"))?
        }
        _ => return Err("expected `position startpos|fen <FEN> [moves ...]`".into()),
    };
    let mut moves = Vec::new();
    for text in args.get(moves_at + 1..).unwrap_or_default() {
        let uci: UciMove = text
            .parse()
            .map_err(|e| format!("bad move '{text}': {e}"))?;
        let m = uci
            .to_move(&pos)
            .map_err(|e| format!("move '{text}': {e}"))?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Ok((pos, moves))
}

/// A well-formed move of one of the mover's pieces that is not legal.
fn illegal_move(pos: &Chess) -> UciMove {
    let mut candidates = pos.us().into_iter().flat_map(|from| {
        let to = Square::ALL.into_iter().filter(move |&to| to != from);
        to.map(move |to| UciMove::Normal {
            from,
            to,
            promotion: None,
        })
    });
    // The king never has 63 legal moves, so the fallback is unreachable.
    candidates
        .find(|uci| uci.to_move(pos).is_err())
        .unwrap_or(UciMove::Null)
}

/// Material balance in centipawns from the side to move's point of view.
fn material(pos: &Chess) -> i32 {
    let side = |color: Color| {
        let m = pos.board().material_side(color);
        let minors = i32::from(m.knight) + i32::from(m.bishop);
        100 * i32::from(m.pawn) + 300 * minors + 500 * i32::from(m.rook) + 900 * i32::from(m.queen)
    };
    side(pos.turn()) - side(pos.turn().other())
}

/// The splitmix64 finaliser: a well-spread deterministic hash.
fn mix(x: u64) -> u64 {
    let x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
