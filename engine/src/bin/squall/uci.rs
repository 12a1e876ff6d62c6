//! The UCI front end. The main thread reads stdin; `go` hands the searcher to a search thread, so
//! `stop`, `isready` and `quit` are answered while it searches.
//!
//! Bad input never changes state: every command is parsed completely into new values first and
//! committed only when the whole command is valid; otherwise the engine answers
//! `info string error: ...` and carries on.

use crate::args::MAX_HASH_MB;
use crate::bench_output::run_text_bench;
use crate::output::outln;
use squall::bench;
use squall::movegen::{legal_moves, parse_uci_move};
use squall::search::{Clock, Limits, Listener, Score, SearchInfo, Searcher};
use squall::timeman::DEFAULT_MOVE_OVERHEAD;
use squall::{Board, Color, Move};
use std::io::{self, BufRead};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

const DEFAULT_HASH_MB: usize = 16;

/// `Move Overhead` in milliseconds: up to five seconds covers a slow network to a server.
const MAX_MOVE_OVERHEAD_MS: u64 = 5000;

/// `go depth` beyond this is clamped: the search's ply-indexed tables are finite, and such a
/// depth never completes anyway.
const MAX_GO_DEPTH: i32 = 100;

/// The search recurses once per ply with sizeable frames; the default 2 MB of a spawned thread
/// is too tight for deep quiescence lines.
const SEARCH_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Longest command line read, its line end included: a `position ... moves` line of a game of
/// over 100,000 plies. A longer line is dropped as it is read (the engine holds at most this
/// much of it) and answered with an error.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Characters of an unknown or over-long command that an error message quotes.
const QUOTED_CHARS: usize = 80;

/// Characters of an error message (quoted FENs and moves included).
const MAX_ERROR_CHARS: usize = 400;

/// Runs the UCI loop until `quit` or the end of stdin.
pub fn run() {
    let mut engine = UciEngine::new();
    let mut input = io::stdin().lock();
    let mut raw_line = Vec::new();
    loop {
        match read_bounded_line(&mut input, &mut raw_line, MAX_LINE_BYTES) {
            Ok(LineRead::End) | Err(_) => break,
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong(length)) => {
                send_error(&format!(
                    "a line of {length} bytes is over the limit of {MAX_LINE_BYTES} and was \
                     ignored: `{}`",
                    quoted(&String::from_utf8_lossy(&raw_line))
                ));
                continue;
            }
        }
        // Lossy: a stray invalid byte becomes an unknown-command error, not the end of the session.
        let line = String::from_utf8_lossy(&raw_line);
        // A byte-order mark (some tools write one before the first line) is not a command.
        let line = line.strip_prefix('\u{feff}').unwrap_or(&line);
        if engine.handle(line) == Flow::Quit {
            break;
        }
    }
    engine.finish_search();
}

/// What [`read_bounded_line`] read.
#[derive(PartialEq, Eq, Debug)]
enum LineRead {
    /// A whole line is in the buffer.
    Line,
    /// A line of this many bytes, over the limit; the buffer holds its start.
    TooLong(u64),
    End,
}

/// Reads one line into `buffer`, holding at most `limit` bytes of it: the rest of a longer line
/// is read and dropped, so no line costs more memory than the limit.
fn read_bounded_line(
    input: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    limit: usize,
) -> io::Result<LineRead> {
    buffer.clear();
    let mut length: u64 = 0;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let (taken, complete) = match available.iter().position(|&byte| byte == b'\n') {
            Some(index) => (index + 1, true),
            None => (available.len(), available.is_empty()),
        };
        let kept = taken.min(limit.saturating_sub(buffer.len()));
        buffer.extend_from_slice(&available[..kept]);
        length += taken as u64;
        input.consume(taken);
        if complete {
            return Ok(match length {
                0 => LineRead::End,
                _ if length > limit as u64 => LineRead::TooLong(length),
                _ => LineRead::Line,
            });
        }
    }
}

/// A command as an error message quotes it: at most [`QUOTED_CHARS`] characters, shown as by
/// [`shown`].
fn quoted(command: &str) -> String {
    shown(command.trim(), QUOTED_CHARS)
}

/// `text` cut to `max_chars` characters, its control characters written out (`\x1b`), so a
/// GUI's log shows what arrived without acting on it.
fn shown(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == max_chars {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(PartialEq, Eq, Debug)]
enum Flow {
    Continue,
    Quit,
}

/// Writes a block of lines to stdout in one go and flushes, so the search thread's output never
/// interleaves with the main thread's mid-line. A closed stdout means the GUI is gone: the
/// process ends quietly (`output`), from whichever thread noticed.
fn send(text: &str) {
    outln!("{text}");
}

/// Every error is one bounded line, whatever input it quotes.
fn send_error(message: &str) {
    send(&format!(
        "info string error: {}",
        shown(message, MAX_ERROR_CHARS)
    ));
}

struct RunningSearch {
    handle: JoinHandle<Searcher>,
    stop: Arc<AtomicBool>,
}

struct UciEngine {
    board: Board,
    /// Zobrist keys of the positions before `board` in the game, oldest first.
    history: Vec<u64>,
    hash_mb: usize,
    move_overhead: Duration,
    /// `FullEval`: the cheap eval tiers' exits off, as `squall bench --full-eval`.
    full_eval: bool,
    /// `None` while a search thread owns the searcher (or after that thread panicked).
    searcher: Option<Searcher>,
    running: Option<RunningSearch>,
}

impl UciEngine {
    fn new() -> UciEngine {
        let mut engine = UciEngine {
            board: Board::startpos(),
            history: Vec::new(),
            hash_mb: DEFAULT_HASH_MB,
            move_overhead: DEFAULT_MOVE_OVERHEAD,
            full_eval: false,
            searcher: None,
            running: None,
        };
        // Built as every later searcher is, so UCI plays with the options the bench measures.
        engine.searcher = Some(engine.new_searcher());
        engine
    }

    /// A fresh searcher with the current options.
    fn new_searcher(&self) -> Searcher {
        let mut searcher = Searcher::new(self.hash_mb);
        searcher.set_full_eval(self.full_eval);
        searcher
    }

    fn handle(&mut self, line: &str) -> Flow {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, arguments)) = tokens.split_first() else {
            return Flow::Continue;
        };
        match command {
            "uci" => send(&format!(
                "id name squall {}\n\
                 id author the squall authors\n\
                 option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}\n\
                 option name Threads type spin default 1 min 1 max 1\n\
                 option name Move Overhead type spin default {} min 0 max {MAX_MOVE_OVERHEAD_MS}\n\
                 option name FullEval type check default false\n\
                 uciok",
                env!("CARGO_PKG_VERSION"),
                DEFAULT_MOVE_OVERHEAD.as_millis()
            )),
            "isready" => send("readyok"),
            "ucinewgame" => {
                self.searcher().clear();
                self.board = Board::startpos();
                self.history.clear();
            }
            "position" => match parse_position(arguments) {
                Ok((board, history)) => {
                    self.board = board;
                    self.history = history;
                }
                Err(message) => send_error(&message),
            },
            "go" => match parse_go(arguments, self.board.side_to_move()) {
                Ok(mut go) => {
                    for warning in &go.warnings {
                        send(&format!("info string {warning}"));
                    }
                    go.limits.move_overhead = self.move_overhead;
                    self.start_search(go.limits);
                }
                Err(message) => send_error(&message),
            },
            "stop" => self.finish_search(),
            "setoption" => match parse_setoption(arguments) {
                Ok(EngineOption::HashMb(hash_mb)) => {
                    self.hash_mb = hash_mb;
                    self.searcher().set_hash(hash_mb);
                }
                // One thread is the only value the option admits.
                Ok(EngineOption::Threads) => {}
                Ok(EngineOption::MoveOverhead(overhead)) => self.move_overhead = overhead,
                Ok(EngineOption::FullEval(full_eval)) => {
                    self.full_eval = full_eval;
                    self.searcher().set_full_eval(full_eval);
                }
                Err(message) => send_error(&message),
            },
            "bench" => {
                self.finish_search();
                run_text_bench(
                    &bench::default_positions(),
                    bench::DEFAULT_DEPTH,
                    bench::DEFAULT_HASH_MB,
                    false,
                );
            }
            // Not UCI: prints the current position, for debugging and tests.
            "d" => send(&format!("info string fen {}", self.board.to_fen())),
            // Accepted and ignored: squall has no debug output and does not ponder.
            "debug" | "ponderhit" | "register" => {}
            "quit" => return Flow::Quit,
            _ => send_error(&format!("unknown command `{}`", quoted(line))),
        }
        Flow::Continue
    }

    /// The idle searcher; stops and joins a running search first.
    fn searcher(&mut self) -> &mut Searcher {
        self.finish_search();
        let searcher = match self.searcher.take() {
            Some(searcher) => searcher,
            None => self.new_searcher(),
        };
        self.searcher.insert(searcher)
    }

    /// Stops the running search (if any) and waits for it to print its `bestmove`.
    fn finish_search(&mut self) {
        let Some(running) = self.running.take() else {
            return;
        };
        running.stop.store(true, Ordering::Release);
        // Wakes a finished `go infinite` search that is waiting for `stop`.
        running.handle.thread().unpark();
        match running.handle.join() {
            Ok(searcher) => self.searcher = Some(searcher),
            Err(_) => send_error("the search thread failed; the search state was reset"),
        }
    }

    fn start_search(&mut self, limits: Limits) {
        // A `go` during a search breaks protocol; end the old search (it prints its bestmove).
        self.finish_search();
        let mut searcher = match self.searcher.take() {
            Some(searcher) => searcher,
            None => self.new_searcher(),
        };
        let board = self.board;
        let history = self.history.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let spawned = thread::Builder::new()
            .name("search".to_string())
            .stack_size(SEARCH_STACK_BYTES)
            .spawn(move || {
                let started = Instant::now();
                let mut listener = UciListener::default();
                let result =
                    searcher.search(&board, &history, &limits, &thread_stop, &mut listener);
                // A search stopped inside an iteration (a node limit, the clock, `stop`) searched
                // more than its last `info` says, and GUIs and match runners take the nodes from
                // the last `info`: the total goes out before `bestmove`.
                if result.nodes > listener.reported_nodes {
                    send(&totals_line(result.nodes, started.elapsed()));
                }
                // UCI forbids `bestmove` before `stop` in infinite mode, even if the search ended
                // early (mate found, single legal move).
                if limits.infinite {
                    while !thread_stop.load(Ordering::Acquire) {
                        thread::park_timeout(Duration::from_millis(50));
                    }
                }
                send(&format!(
                    "bestmove {}",
                    playable_move(&board, result.best_move)
                ));
                searcher
            });
        match spawned {
            Ok(handle) => self.running = Some(RunningSearch { handle, stop }),
            Err(error) => {
                send_error(&format!("cannot start the search thread: {error}"));
                send(&format!(
                    "bestmove {}",
                    playable_move(&self.board, Move::NULL)
                ));
            }
        }
    }
}

/// The move to report: the search's choice if it is legal here, otherwise any legal move (a
/// search stopped before its first iteration has no choice), or `0000` with no legal move.
fn playable_move(board: &Board, best_move: Move) -> Move {
    let moves = legal_moves(board);
    if moves.contains(&best_move) {
        best_move
    } else {
        moves.first().copied().unwrap_or(Move::NULL)
    }
}

/// Prints each completed iteration as a UCI `info` line.
#[derive(Default)]
struct UciListener {
    /// The nodes of the last `info` line sent.
    reported_nodes: u64,
}

impl Listener for UciListener {
    fn on_iteration(&mut self, info: &SearchInfo) {
        self.reported_nodes = info.nodes;
        send(&info_line(info));
    }
}

/// `info nodes N nps X time T`: what a whole search cost, when its last iteration's line does
/// not say it.
fn totals_line(nodes: u64, elapsed: Duration) -> String {
    format!(
        "info nodes {nodes} nps {} time {}",
        nps(nodes, elapsed),
        elapsed.as_millis()
    )
}

fn nps(nodes: u64, elapsed: Duration) -> u128 {
    u128::from(nodes) * 1_000_000_000 / elapsed.as_nanos().max(1)
}

fn info_line(info: &SearchInfo) -> String {
    let score = match info.score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(moves) => format!("mate {moves}"),
    };
    let mut line = format!(
        "info depth {} seldepth {} score {score} nodes {} nps {} time {}",
        info.depth,
        info.seldepth,
        info.nodes,
        nps(info.nodes, info.elapsed),
        info.elapsed.as_millis()
    );
    if !info.pv.is_empty() {
        line.push_str(" pv");
        for mv in info.pv {
            line.push(' ');
            line.push_str(&mv.to_string());
        }
    }
    line
}

/// `position startpos|fen <FEN> [moves <move>...]` into the new board and its history keys.
fn parse_position(tokens: &[&str]) -> Result<(Board, Vec<u64>), String> {
    let moves_at = tokens.iter().position(|&t| t == "moves");
    let (setup, moves) = match moves_at {
        Some(at) => (&tokens[..at], &tokens[at + 1..]),
        None => (tokens, &[][..]),
    };
    let mut board = match setup.split_first() {
        Some((&"startpos", [])) => Board::startpos(),
        Some((&"startpos", extra)) => {
            return Err(format!(
                "position: unexpected `{}` after startpos",
                extra.join(" ")
            ))
        }
        Some((&"fen", fen)) if !fen.is_empty() => {
            Board::from_fen(&fen.join(" ")).map_err(|e| format!("position: {e}"))?
        }
        Some((&"fen", _)) => return Err("position: `fen` needs a FEN".to_string()),
        _ => return Err("position: expected `startpos` or `fen <FEN>`".to_string()),
    };
    let mut history = Vec::with_capacity(moves.len());
    for (index, text) in moves.iter().enumerate() {
        let mv = parse_uci_move(&board, text).ok_or_else(|| {
            format!(
                "position: illegal move `{text}` (move {} of the list) in {}",
                index + 1,
                board.to_fen()
            )
        })?;
        history.push(board.key());
        board.play(mv);
    }
    Ok((board, history))
}

struct Go {
    limits: Limits,
    /// Ignored parameters the GUI should hear about.
    warnings: Vec<String>,
}

/// The `go` parameters into search limits for `side` (the side to move).
fn parse_go(tokens: &[&str], side: Color) -> Result<Go, String> {
    let mut limits = Limits::default();
    let mut warnings = Vec::new();
    let mut times = [None, None];
    let mut increments = [None, None];
    let mut moves_to_go = None;
    let mut i = 0;
    while i < tokens.len() {
        let keyword = tokens[i];
        i += 1;
        let mut value = || {
            let text = tokens.get(i).copied();
            i += 1;
            text.ok_or(format!("go: `{keyword}` needs a value"))
        };
        match keyword {
            "infinite" => limits.infinite = true,
            "depth" => {
                let depth: i32 = parse_number(keyword, value()?)?;
                if depth < 1 {
                    return Err(format!("go: depth must be at least 1, got {depth}"));
                }
                limits.depth = Some(depth.min(MAX_GO_DEPTH));
            }
            "nodes" => {
                let nodes: u64 = parse_number(keyword, value()?)?;
                if nodes == 0 {
                    return Err("go: nodes must be at least 1".to_string());
                }
                limits.nodes = Some(nodes);
            }
            "movetime" => {
                limits.movetime = Some(Duration::from_millis(parse_number(keyword, value()?)?))
            }
            // Some GUIs send a negative remaining time once the clock is overdrawn: treat as 0.
            "wtime" | "btime" | "winc" | "binc" => {
                let millis: i64 = parse_number(keyword, value()?)?;
                let duration = Some(Duration::from_millis(millis.max(0).unsigned_abs()));
                match keyword {
                    "wtime" => times[Color::White.index()] = duration,
                    "btime" => times[Color::Black.index()] = duration,
                    "winc" => increments[Color::White.index()] = duration,
                    _ => increments[Color::Black.index()] = duration,
                }
            }
            "movestogo" => {
                let moves: u32 = parse_number(keyword, value()?)?;
                // 0 would mean "the time control ends now"; the clock alone is the safer reading.
                moves_to_go = Some(moves).filter(|&m| m > 0);
            }
            "ponder" => warnings.push("pondering is not supported; searching normally".to_string()),
            "mate" => {
                let _: u32 = parse_number(keyword, value()?)?;
                warnings.push("`go mate` is not supported; searching normally".to_string());
            }
            "searchmoves" => {
                while tokens.get(i).is_some_and(|t| !is_go_keyword(t)) {
                    i += 1;
                }
                warnings.push("`searchmoves` is not supported; searching all moves".to_string());
            }
            other => return Err(format!("go: unknown parameter `{other}`")),
        }
    }
    if times.iter().any(Option::is_some) {
        let time = times[side.index()].ok_or(format!(
            "go: no remaining time for the side to move ({})",
            if side == Color::White {
                "wtime"
            } else {
                "btime"
            }
        ))?;
        limits.clock = Some(Clock {
            time,
            increment: increments[side.index()].unwrap_or_default(),
            moves_to_go,
        });
    }
    Ok(Go { limits, warnings })
}

fn is_go_keyword(token: &str) -> bool {
    matches!(
        token,
        "searchmoves"
            | "ponder"
            | "wtime"
            | "btime"
            | "winc"
            | "binc"
            | "movestogo"
            | "depth"
            | "nodes"
            | "mate"
            | "movetime"
            | "infinite"
    )
}

fn parse_number<T: std::str::FromStr>(keyword: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("go: bad {keyword} value `{text}`"))
}

#[derive(Debug, PartialEq, Eq)]
enum EngineOption {
    HashMb(usize),
    /// Always 1: squall searches on one thread.
    Threads,
    MoveOverhead(Duration),
    FullEval(bool),
}

/// `setoption name <NAME> [value <VALUE>]`. The name is every token between `name` and `value`
/// (`Move Overhead` has a space); option names are case-insensitive.
fn parse_setoption(tokens: &[&str]) -> Result<EngineOption, String> {
    let Some((&"name", rest)) = tokens.split_first() else {
        return Err("setoption: expected `name <option> value <value>`".to_string());
    };
    let value_at = rest.iter().position(|&t| t == "value");
    let (name, value) = match value_at {
        Some(at) => (rest[..at].join(" "), Some(rest[at + 1..].join(" "))),
        None => (rest.join(" "), None),
    };
    let option = ["Hash", "Threads", "Move Overhead", "FullEval"]
        .into_iter()
        .find(|known| known.eq_ignore_ascii_case(&name))
        .ok_or(format!("setoption: unknown option `{name}`"))?;
    let value = value.ok_or(format!("setoption: {option} needs a value"))?;
    let spin = |min: u64, max: u64, unit: &str| {
        value
            .parse::<u64>()
            .ok()
            .filter(|v| (min..=max).contains(v))
            .ok_or(format!(
                "setoption: bad {option} value `{value}`: expected {min}..={max}{unit}"
            ))
    };
    match option {
        "Hash" => spin(1, MAX_HASH_MB as u64, " (MB)").map(|mb| EngineOption::HashMb(mb as usize)),
        "Threads" => spin(1, 1, " (one search thread)").map(|_| EngineOption::Threads),
        "Move Overhead" => spin(0, MAX_MOVE_OVERHEAD_MS, " (ms)")
            .map(|ms| EngineOption::MoveOverhead(Duration::from_millis(ms))),
        // FullEval, a check.
        _ => match value.to_ascii_lowercase().as_str() {
            "true" => Ok(EngineOption::FullEval(true)),
            "false" => Ok(EngineOption::FullEval(false)),
            _ => Err(format!(
                "setoption: bad {option} value `{value}`: expected true or false"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_over_the_limit_is_read_to_its_end_and_not_kept() {
        let mut input = io::Cursor::new(b"uci\nabcdefghij\nisready".to_vec());
        let mut buffer = Vec::new();
        let mut read = || {
            let result = read_bounded_line(&mut input, &mut buffer, 5).unwrap();
            (result, String::from_utf8_lossy(&buffer).into_owned())
        };
        assert_eq!(read(), (LineRead::Line, "uci\n".to_string()));
        assert_eq!(read(), (LineRead::TooLong(11), "abcde".to_string()));
        assert_eq!(read(), (LineRead::TooLong(7), "isrea".to_string()));
        assert_eq!(read(), (LineRead::End, String::new()));
        assert_eq!(shown("a\x1b]0;x\x07b", 80), "a\\x1b]0;x\\x07b");
        assert_eq!(shown("abcdef", 3), "abc...");
    }

    #[test]
    fn position_with_moves_records_history() {
        let (board, history) = parse_position(&["startpos", "moves", "e2e4", "e7e5"]).unwrap();
        assert!(board
            .to_fen()
            .starts_with("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq "));
        assert_eq!(history.len(), 2);
        assert_eq!(history[0], Board::startpos().key());
    }

    #[test]
    fn position_rejects_bad_input() {
        for tokens in [
            &[][..],
            &["startpos", "e2e4"][..],
            &["fen"][..],
            &["fen", "8/8/8", "w", "-", "-"][..],
            &["startpos", "moves", "e2e5"][..],
            &["sideways"][..],
        ] {
            assert!(parse_position(tokens).is_err(), "{tokens:?}");
        }
    }

    #[test]
    fn go_uses_the_clock_of_the_side_to_move() {
        let tokens = [
            "wtime",
            "1000",
            "btime",
            "-20",
            "winc",
            "10",
            "binc",
            "5",
            "movestogo",
            "7",
        ];
        let go = parse_go(&tokens, Color::Black).unwrap();
        let clock = go.limits.clock.unwrap();
        assert_eq!(clock.time, Duration::ZERO);
        assert_eq!(clock.increment, Duration::from_millis(5));
        assert_eq!(clock.moves_to_go, Some(7));
        assert!(parse_go(&["wtime", "1000"], Color::Black).is_err());
    }

    #[test]
    fn go_rejects_bad_numbers_and_unknown_parameters() {
        for tokens in [
            &["depth"][..],
            &["depth", "x"][..],
            &["depth", "0"][..],
            &["nodes", "-1"][..],
            &["movetime", "1.5"][..],
            &["wtime", "soon"][..],
            &["sideways"][..],
        ] {
            assert!(parse_go(tokens, Color::White).is_err(), "{tokens:?}");
        }
        let go = parse_go(
            &["searchmoves", "e2e4", "d2d4", "depth", "3", "infinite"],
            Color::White,
        )
        .unwrap();
        assert_eq!(go.limits.depth, Some(3));
        assert!(go.limits.infinite);
        assert_eq!(go.warnings.len(), 1);
    }

    fn setoption(line: &str) -> Result<EngineOption, String> {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        parse_setoption(&tokens)
    }

    #[test]
    fn setoption_reads_each_option() {
        assert_eq!(
            setoption("name Hash value 64"),
            Ok(EngineOption::HashMb(64))
        );
        assert_eq!(
            setoption("name hash value 4096"),
            Ok(EngineOption::HashMb(4096))
        );
        assert_eq!(setoption("name Threads value 1"), Ok(EngineOption::Threads));
        assert_eq!(
            setoption("name Move Overhead value 50"),
            Ok(EngineOption::MoveOverhead(Duration::from_millis(50)))
        );
        // Names with spaces: every token between `name` and `value`, any case, any spacing.
        assert_eq!(
            setoption("name   move   OVERHEAD value 0"),
            Ok(EngineOption::MoveOverhead(Duration::ZERO))
        );
        assert_eq!(
            setoption("name Move Overhead value 5000"),
            Ok(EngineOption::MoveOverhead(Duration::from_millis(5000)))
        );
        assert_eq!(
            setoption("name FullEval value true"),
            Ok(EngineOption::FullEval(true))
        );
        assert_eq!(
            setoption("name fulleval value FALSE"),
            Ok(EngineOption::FullEval(false))
        );
    }

    #[test]
    fn setoption_rejects_bad_values_and_names() {
        for line in [
            "name Hash value 0",
            "name Hash value 4097",
            "name Hash value big",
            "name Hash",
            "name Threads value 2",
            "name Threads value 0",
            "name Threads",
            "name Move Overhead value -1",
            "name Move Overhead value 5001",
            "name Move Overhead value 1.5",
            "name Move Overhead",
            "name Move value 50",
            "name Overhead value 50",
            "name MoveOverhead value 50",
            "name FullEval value yes",
            "name FullEval value 1",
            "name FullEval",
            "name NoSuchOption value 1",
            "Hash 64",
            "",
        ] {
            assert!(setoption(line).is_err(), "`setoption {line}`");
        }
    }

    #[test]
    fn options_reach_the_engine() {
        let mut engine = UciEngine::new();
        engine.handle("setoption name Move Overhead value 75");
        assert_eq!(engine.move_overhead, Duration::from_millis(75));
        engine.handle("setoption name FullEval value true");
        assert!(engine.full_eval);
        engine.handle("setoption name Threads value 1");
        engine.handle("setoption name FullEval value false");
        assert!(!engine.full_eval);
    }

    mod properties {
        //! The UCI line parsers never panic, whatever tokens a GUI sends.
        use super::*;
        use proptest::prelude::*;

        /// Cases per run: each case parses one token list (microseconds).
        const CASES: u32 = 3_000;

        /// Tokens a GUI might send: every keyword the parsers know, moves, numbers of every
        /// size and sign, FEN fields, and arbitrary text.
        fn token() -> impl Strategy<Value = String> {
            prop_oneof![
                prop::sample::select(vec![
                    "startpos",
                    "fen",
                    "moves",
                    "name",
                    "value",
                    "Hash",
                    "Threads",
                    "Move",
                    "Overhead",
                    "FullEval",
                    "true",
                    "false",
                    "infinite",
                    "depth",
                    "nodes",
                    "movetime",
                    "wtime",
                    "btime",
                    "winc",
                    "binc",
                    "movestogo",
                    "ponder",
                    "mate",
                    "searchmoves",
                    "w",
                    "b",
                    "-",
                    "KQkq",
                    "0",
                    "1",
                ])
                .prop_map(str::to_string),
                "[a-h][1-8][a-h][1-8][qrbnk]?",
                "[+-]?[0-9]{1,25}",
                "[pnbrqkPNBRQK1-8/]{1,20}",
                any::<String>(),
            ]
        }

        fn tokens() -> impl Strategy<Value = Vec<String>> {
            prop::collection::vec(token(), 0..16)
        }

        /// Legal moves from the start position, chosen at random, as UCI text.
        fn legal_line() -> impl Strategy<Value = Vec<String>> {
            prop::collection::vec(any::<prop::sample::Index>(), 0..60).prop_map(|choices| {
                let mut board = Board::startpos();
                let mut line = Vec::new();
                for choice in choices {
                    let moves = legal_moves(&board);
                    if moves.is_empty() {
                        break;
                    }
                    let mv = moves[choice.index(moves.len())];
                    line.push(mv.to_string());
                    board.play(mv);
                }
                line
            })
        }

        fn config() -> ProptestConfig {
            ProptestConfig {
                cases: CASES,
                failure_persistence: None,
                ..ProptestConfig::default()
            }
        }

        proptest! {
            #![proptest_config(config())]

            #[test]
            fn parse_position_never_panics(tokens in tokens()) {
                let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
                let _ = parse_position(&tokens);
            }

            #[test]
            fn parse_position_after_a_real_fen_never_panics(
                line in legal_line(),
                tail in tokens(),
            ) {
                let mut board = Board::startpos();
                for text in &line {
                    board.play(parse_uci_move(&board, text).unwrap());
                }
                let fen = board.to_fen();
                let mut tokens = vec!["fen"];
                tokens.extend(fen.split_whitespace());
                prop_assert_eq!(parse_position(&tokens).map(|(b, _)| b), Ok(board));
                // Then anything: more FEN fields, `moves` and moves, garbage.
                tokens.extend(tail.iter().map(String::as_str));
                let _ = parse_position(&tokens);
            }

            #[test]
            fn parse_go_never_panics(tokens in tokens(), white in any::<bool>()) {
                let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
                let side = if white { Color::White } else { Color::Black };
                if let Ok(go) = parse_go(&tokens, side) {
                    if let Some(depth) = go.limits.depth {
                        prop_assert!((1..=MAX_GO_DEPTH).contains(&depth));
                    }
                    prop_assert!(go.limits.nodes != Some(0));
                }
            }

            #[test]
            fn parse_setoption_never_panics(tokens in tokens()) {
                let tokens: Vec<&str> = tokens.iter().map(String::as_str).collect();
                let _ = parse_setoption(&tokens);
                // With the name in front, the value parsers are reached too.
                let mut named = vec!["name"];
                named.extend(&tokens);
                let _ = parse_setoption(&named);
            }

            #[test]
            fn position_moves_play_legal_lines_and_refuse_a_garbled_tail(
                line in legal_line(),
                tail in tokens(),
            ) {
                let mut tokens = vec!["startpos", "moves"];
                tokens.extend(line.iter().map(String::as_str));
                let (board, history) = parse_position(&tokens)
                    .map_err(|e| TestCaseError::fail(format!("{line:?}: {e}")))?;
                prop_assert_eq!(history.len(), line.len());
                let mut expected = Board::startpos();
                for text in &line {
                    expected.play(parse_uci_move(&expected, text).unwrap());
                }
                prop_assert_eq!(board, expected);
                // Any tail at all: parsed or refused, never a panic.
                tokens.extend(tail.iter().map(String::as_str));
                let _ = parse_position(&tokens);
            }
        }
    }
}
