//! One UCI engine process as the referee sees it: started in its own process group, spoken to
//! line by line, and never trusted — every wait has a deadline, and anything it does wrong is
//! a [`Fault`] the game turns into a loss.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::rules::{Ceiling, Score};
use crate::process::{kill_group, spawn_in_group};

/// How long an engine may take to answer `uci` and `isready` (hash allocation included).
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `quit` is given before the process group is killed.
const QUIT_GRACE: Duration = Duration::from_millis(500);
/// How long a closed pipe waits for its process to be reaped: the pipe closes a moment first.
const REAP_GRACE: Duration = Duration::from_millis(200);
/// How often an exit awaited within a grace is polled.
const EXIT_POLL: Duration = Duration::from_millis(5);
/// Lines of an engine's output kept for fault reports.
const RECENT_LINES: usize = 8;
/// Longest line an engine may write, its line end included. A longer line is a garbage fault
/// that loses the game: only its first [`MAX_LINE_BYTES`] are held while the rest is read and
/// dropped, so an engine printing without end costs the lab at most that much.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;
/// Lines read ahead of the referee; beyond them the reader waits, and so does the engine.
const LINES_AHEAD: usize = 16;
/// Characters of a line kept for a fault report or the recent output, and of an `id name`.
const SHOWN_CHARS: usize = 200;
/// Options of a `uci` reply that are recorded; an engine declaring more has the rest ignored.
const MAX_DECLARED_OPTIONS: usize = 1000;

/// How an engine is started and set up; the same for every process of one side.
#[derive(Debug, Clone)]
pub(crate) struct EngineSetup {
    pub(crate) path: PathBuf,
    /// Command-line arguments of the engine process (`--engine-a "... args=..."`).
    pub(crate) args: Vec<String>,
    /// The engine process's working directory (`dir=`); the lab's own when `None`.
    pub(crate) dir: Option<PathBuf>,
    /// `setoption` pairs, sent in order after `uciok`.
    pub(crate) options: Vec<(String, String)>,
}

/// What went wrong with an engine; each loses the game it happened in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub(crate) enum Fault {
    /// The process could not be started or did not finish the UCI handshake.
    Startup { detail: String },
    /// The process exited or closed its output.
    Crash { detail: String },
    /// No answer before the deadline (a time forfeit when a clock was running): the wait since
    /// `command` was sent.
    Timeout {
        waited_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
    },
    /// `bestmove` was missing its move, or the move is not a move at all.
    Garbage { line: String },
    /// A well-formed move that is not legal in the position.
    IllegalMove { uci: String },
    /// The engine searched past its `go nodes` or `go depth` limit: `reported` is the `info`
    /// figure that showed it.
    IgnoredLimit { command: String, reported: String },
}

impl Fault {
    pub(crate) fn describe(&self) -> String {
        match self {
            Fault::Startup { detail } => format!("failed to start: {detail}"),
            Fault::Crash { detail } => format!("crashed: {detail}"),
            Fault::Timeout {
                waited_ms,
                command: None,
            } => format!("no move within {waited_ms} ms"),
            Fault::Timeout {
                waited_ms,
                command: Some(command),
            } => format!("no move within {waited_ms} ms of `{command}`"),
            Fault::Garbage { line } => format!("garbage output: `{line}`"),
            Fault::IllegalMove { uci } => format!("illegal move {uci}"),
            Fault::IgnoredLimit { command, reported } => {
                format!("ignored `{command}`: it reported {reported} before its move")
            }
        }
    }
}

/// The answer to one `go`.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub(crate) bestmove: String,
    pub(crate) score: Option<Score>,
    pub(crate) depth: Option<u32>,
    /// The last node count an `info` line gave.
    pub(crate) nodes: Option<u64>,
    /// From writing `go` to reading `bestmove`: what the clock is charged.
    pub(crate) elapsed: Duration,
    /// When `go` was written: the referee's own work since the last reply ends here.
    pub(crate) sent: Instant,
    /// When `bestmove` was read: the referee's own work is measured from here.
    pub(crate) received: Instant,
}

enum Line {
    Text(String),
    /// A line beyond [`MAX_LINE_BYTES`], and how it starts.
    TooLong {
        start: String,
    },
    Closed,
}

/// An option as the engine declared it in its `uci` reply
/// (`option name NAME type KIND [default X] [min X] [max X] [var X]...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeclaredOption {
    pub(crate) name: String,
    pub(crate) kind: OptionKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OptionKind {
    Check,
    Spin { min: Option<i64>, max: Option<i64> },
    Combo { choices: Vec<String> },
    Button,
    String,
}

pub(crate) struct UciProcess {
    setup: Arc<EngineSetup>,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    recent: Arc<Mutex<VecDeque<String>>>,
    /// `id name`, when the engine gave one (cut to [`SHOWN_CHARS`]).
    pub(crate) id_name: Option<String>,
    /// The options of the `uci` reply, in order; declarations without a name are left out.
    pub(crate) declared_options: Vec<DeclaredOption>,
}

impl UciProcess {
    /// Starts the process and completes the handshake: `uci`, the options, `isready`.
    pub(crate) fn start(setup: Arc<EngineSetup>) -> Result<UciProcess, Fault> {
        let mut command = Command::new(&setup.path);
        command.args(&setup.args);
        if let Some(dir) = &setup.dir {
            command.current_dir(dir);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = spawn_in_group(&mut command).map_err(|error| Fault::Startup {
            detail: format!("cannot run {}: {error}", setup.path.display()),
        })?;
        let recent = Arc::new(Mutex::new(VecDeque::with_capacity(RECENT_LINES)));
        let (sender, lines) = mpsc::sync_channel(LINES_AHEAD);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            kill_group(&mut child);
            return Err(Fault::Startup {
                detail: "no pipes to the engine".to_string(),
            });
        };
        spawn_reader(stdout, Some(sender), Arc::clone(&recent));
        spawn_reader(stderr, None, Arc::clone(&recent));
        let mut engine = UciProcess {
            setup,
            child,
            stdin,
            lines,
            recent,
            id_name: None,
            declared_options: Vec::new(),
        };
        engine.handshake().map_err(|fault| match fault {
            Fault::Timeout { .. } => Fault::Startup {
                detail: format!(
                    "no `uciok` and `readyok` within {} s: is it a UCI engine?",
                    HANDSHAKE_TIMEOUT.as_secs()
                ),
            },
            Fault::Crash { detail } => Fault::Startup { detail },
            other => other,
        })?;
        Ok(engine)
    }

    fn handshake(&mut self) -> Result<(), Fault> {
        self.send("uci")?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        loop {
            let line = self.receive(deadline)?;
            let mut tokens = line.split_whitespace();
            match tokens.next() {
                Some("uciok") => break,
                Some("id") if tokens.next() == Some("name") => {
                    self.id_name = Some(shortened(&tokens.collect::<Vec<_>>().join(" ")));
                }
                Some("option") if self.declared_options.len() < MAX_DECLARED_OPTIONS => {
                    self.declared_options.extend(parse_option(tokens));
                }
                _ => {}
            }
        }
        let setup = Arc::clone(&self.setup);
        for (name, value) in &setup.options {
            // A button has no value: `setoption name NAME` presses it.
            let button = self
                .declared_option(name)
                .is_some_and(|declared| declared.kind == OptionKind::Button);
            if button {
                self.send(&format!("setoption name {name}"))?;
            } else {
                self.send(&format!("setoption name {name} value {value}"))?;
            }
        }
        self.sync(HANDSHAKE_TIMEOUT)
    }

    /// The declared option of that name (UCI names are not case-sensitive).
    pub(crate) fn declared_option(&self, name: &str) -> Option<&DeclaredOption> {
        self.declared_options
            .iter()
            .find(|declared| declared.name.eq_ignore_ascii_case(name))
    }

    pub(crate) fn has_option(&self, name: &str) -> bool {
        self.declared_option(name).is_some()
    }

    /// Checks `value` for the option `name` against the engine's declaration; the error names
    /// the option's type and range, or every declared option when the engine has none of that
    /// name.
    pub(crate) fn check_option(&self, name: &str, value: &str) -> Result<(), String> {
        let Some(declared) = self.declared_option(name) else {
            let names: Vec<&str> = self
                .declared_options
                .iter()
                .map(|option| option.name.as_str())
                .collect();
            return Err(if names.is_empty() {
                format!("has no UCI option `{name}` (it declares none)")
            } else {
                format!(
                    "has no UCI option `{name}` (it declares: {})",
                    names.join(", ")
                )
            });
        };
        declared.kind.check(value).map_err(|expected| {
            format!(
                "option `{}` is {expected}, so `{value}` is not a value of it",
                declared.name
            )
        })
    }

    /// `isready` and wait for `readyok`.
    fn sync(&mut self, timeout: Duration) -> Result<(), Fault> {
        self.send("isready")?;
        let deadline = Instant::now() + timeout;
        while self.receive(deadline)?.trim() != "readyok" {}
        Ok(())
    }

    /// Prepares for a new game: `ucinewgame` (and `Clear Hash` where the engine has that
    /// button, so no game inherits another's table) and a synchronising `isready`.
    pub(crate) fn new_game(&mut self) -> Result<(), Fault> {
        self.send("ucinewgame")?;
        if self.has_option("Clear Hash") {
            self.send("setoption name Clear Hash")?;
        }
        self.sync(HANDSHAKE_TIMEOUT)
    }

    /// Sends the position and `go`, and waits for `bestmove` until `deadline`. The engine's
    /// last `info ... score` before `bestmove` is its score for the move. An `info` line past
    /// `ceiling` ends the wait at once: the engine is not honouring its limit.
    pub(crate) fn search(
        &mut self,
        position: &str,
        go: &str,
        deadline: Instant,
        ceiling: Ceiling,
    ) -> Result<Reply, Fault> {
        self.send(position)?;
        let start = Instant::now();
        self.send(go)?;
        let mut score = None;
        let mut depth = None;
        let mut nodes = None;
        loop {
            let line = match self.receive(deadline) {
                Ok(line) => line,
                Err(Fault::Timeout { .. }) => {
                    return Err(Fault::Timeout {
                        waited_ms: start.elapsed().as_millis() as u64,
                        command: Some(go.to_string()),
                    })
                }
                Err(fault) => return Err(fault),
            };
            let mut tokens = line.split_whitespace();
            match tokens.next() {
                Some("info") => {
                    let mut line_depth = None;
                    let mut line_nodes = None;
                    read_info(tokens, &mut score, &mut line_depth, &mut line_nodes);
                    if let Some(reported) = ceiling.broken_by(line_nodes, line_depth) {
                        let _ = self.send("stop");
                        return Err(Fault::IgnoredLimit {
                            command: go.to_string(),
                            reported,
                        });
                    }
                    depth = line_depth.or(depth);
                    nodes = line_nodes.or(nodes);
                }
                Some("bestmove") => {
                    let received = Instant::now();
                    let Some(bestmove) = tokens.next() else {
                        return Err(Fault::Garbage {
                            line: shortened(&line),
                        });
                    };
                    return Ok(Reply {
                        bestmove: bestmove.to_string(),
                        score,
                        depth,
                        nodes,
                        elapsed: received - start,
                        sent: start,
                        received,
                    });
                }
                _ => {}
            }
        }
    }

    fn send(&mut self, line: &str) -> Result<(), Fault> {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|error| Fault::Crash {
                detail: format!("writing `{line}`: {error}"),
            })
    }

    fn receive(&mut self, deadline: Instant) -> Result<String, Fault> {
        let started = Instant::now();
        match self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(Line::Text(text)) => Ok(text),
            Ok(Line::TooLong { start }) => Err(Fault::Garbage {
                line: format!("{start} (a line over the limit of {MAX_LINE_BYTES} bytes)"),
            }),
            Ok(Line::Closed) | Err(RecvTimeoutError::Disconnected) => Err(Fault::Crash {
                detail: self.exit_description(),
            }),
            Err(RecvTimeoutError::Timeout) => Err(Fault::Timeout {
                waited_ms: started.elapsed().as_millis() as u64,
                command: None,
            }),
        }
    }

    fn exit_description(&mut self) -> String {
        match self.exited_within(REAP_GRACE) {
            Some(status) => format!("exited ({})", crate::process::describe_status(status)),
            None => "closed its output".to_string(),
        }
    }

    /// The process's exit status once it exits within `grace`; `None` while it still runs.
    fn exited_within(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + grace;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(EXIT_POLL);
        }
    }

    /// The engine's last lines of output (stdout and stderr), oldest first.
    pub(crate) fn recent_output(&self) -> Vec<String> {
        self.recent
            .lock()
            .map(|recent| recent.iter().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for UciProcess {
    fn drop(&mut self) {
        let _ = self.send("quit");
        self.exited_within(QUIT_GRACE);
        kill_group(&mut self.child);
    }
}

/// What [`read_bounded_line`] found.
#[derive(Debug, PartialEq, Eq)]
enum Bounded {
    /// A whole line is in the buffer (its line end included, when it had one).
    Line,
    /// The line is longer than the limit: the buffer holds its first bytes, the rest is unread
    /// ([`discard_line`] drops it).
    TooLong,
    End,
}

/// Reads one line into `buffer`, holding at most `limit` bytes of it: a longer line is
/// reported as soon as it passes the limit, so it costs `limit` bytes of memory and no wait for
/// its end.
fn read_bounded_line(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Bounded> {
    buffer.clear();
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(if buffer.is_empty() {
                Bounded::End
            } else {
                Bounded::Line
            });
        }
        let newline = available.iter().position(|&byte| byte == b'\n');
        let taken = newline.map_or(available.len(), |index| index + 1);
        let room = limit.saturating_sub(buffer.len());
        if taken > room {
            buffer.extend_from_slice(&available[..room]);
            reader.consume(room);
            return Ok(Bounded::TooLong);
        }
        buffer.extend_from_slice(&available[..taken]);
        reader.consume(taken);
        if newline.is_some() {
            return Ok(Bounded::Line);
        }
    }
}

/// Reads and drops the rest of a line, its line end included; gives the bytes dropped.
fn discard_line(reader: &mut impl BufRead) -> std::io::Result<u64> {
    let mut dropped = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(dropped);
        }
        let newline = available.iter().position(|&byte| byte == b'\n');
        let taken = newline.map_or(available.len(), |index| index + 1);
        reader.consume(taken);
        dropped += taken as u64;
        if newline.is_some() {
            return Ok(dropped);
        }
    }
}

/// `text` cut to [`SHOWN_CHARS`] characters, marked with an ellipsis when cut.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// Reads lines (lossily: an engine may print any bytes; each bounded by [`MAX_LINE_BYTES`])
/// until the pipe closes; forwards them when `sender` is set and keeps the last few, shortened,
/// for fault reports.
fn spawn_reader(
    pipe: impl Read + Send + 'static,
    sender: Option<mpsc::SyncSender<Line>>,
    recent: Arc<Mutex<VecDeque<String>>>,
) {
    thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut buffer = Vec::new();
        loop {
            let line = match read_bounded_line(&mut reader, &mut buffer, MAX_LINE_BYTES) {
                Ok(Bounded::End) | Err(_) => break,
                Ok(Bounded::Line) => Line::Text(
                    String::from_utf8_lossy(&buffer)
                        .trim_end_matches(['\r', '\n'])
                        .to_string(),
                ),
                Ok(Bounded::TooLong) => Line::TooLong {
                    start: shortened(&String::from_utf8_lossy(
                        &buffer[..buffer.len().min(4 * SHOWN_CHARS)],
                    )),
                },
            };
            let too_long = matches!(line, Line::TooLong { .. });
            if let Ok(mut recent) = recent.lock() {
                if recent.len() == RECENT_LINES {
                    recent.pop_front();
                }
                recent.push_back(match &line {
                    Line::Text(text) => shortened(text),
                    Line::TooLong { start } => format!("{start} (over the line limit)"),
                    Line::Closed => String::new(),
                });
            }
            if let Some(sender) = &sender {
                if sender.send(line).is_err() {
                    return;
                }
            }
            // The fault is reported first; the rest of the line is then read and dropped.
            if too_long && discard_line(&mut reader).is_err() {
                break;
            }
        }
        if let Some(sender) = sender {
            let _ = sender.send(Line::Closed);
        }
    });
}

impl OptionKind {
    /// Ok when `value` is a value of an option of this kind; otherwise what the kind admits.
    fn check(&self, value: &str) -> Result<(), String> {
        match self {
            OptionKind::Check => {
                if value == "true" || value == "false" {
                    Ok(())
                } else {
                    Err("a check (true or false)".to_string())
                }
            }
            OptionKind::Spin { min, max } => {
                let range = format!(
                    "a spin (an integer from {} to {})",
                    min.map_or_else(|| "any".to_string(), |m| m.to_string()),
                    max.map_or_else(|| "any".to_string(), |m| m.to_string())
                );
                match value.parse::<i64>() {
                    Ok(n) if min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m) => Ok(()),
                    _ => Err(range),
                }
            }
            OptionKind::Combo { choices } => {
                if choices
                    .iter()
                    .any(|choice| choice.eq_ignore_ascii_case(value))
                {
                    Ok(())
                } else {
                    Err(format!("a combo of {}", choices.join(", ")))
                }
            }
            OptionKind::Button if value.is_empty() => Ok(()),
            OptionKind::Button => Err("a button (NAME= presses it)".to_string()),
            OptionKind::String => Ok(()),
        }
    }
}

/// The option declared by the tokens after `option`: `name`, the name's words up to the first
/// `type` that follows at least one of them and is followed by a kind, then the kind's fields.
/// `None` for a line that declares no name or no known kind (`option name type string`).
fn parse_option<'a>(tokens: impl Iterator<Item = &'a str>) -> Option<DeclaredOption> {
    let tokens: Vec<&str> = tokens.collect();
    let (&first, rest) = tokens.split_first()?;
    if first != "name" {
        return None;
    }
    let kind_at = (1..rest.len().saturating_sub(1)).find(|&i| {
        rest[i] == "type"
            && matches!(
                rest[i + 1],
                "check" | "spin" | "combo" | "button" | "string"
            )
    })?;
    let name = rest[..kind_at].join(" ");
    if name.len() > SHOWN_CHARS {
        return None;
    }
    let mut fields: Vec<(&str, Vec<&str>)> = Vec::new();
    for &token in &rest[kind_at + 2..] {
        match token {
            "default" | "min" | "max" | "var" => fields.push((token, Vec::new())),
            word => {
                if let Some((_, words)) = fields.last_mut() {
                    words.push(word);
                }
            }
        }
    }
    let field = |key: &str| {
        fields
            .iter()
            .find(|(name, _)| *name == key)
            .and_then(|(_, words)| words.join(" ").parse::<i64>().ok())
    };
    let kind = match rest[kind_at + 1] {
        "check" => OptionKind::Check,
        "spin" => OptionKind::Spin {
            min: field("min"),
            max: field("max"),
        },
        "combo" => OptionKind::Combo {
            choices: fields
                .iter()
                .filter(|(key, _)| *key == "var")
                .map(|(_, words)| words.join(" "))
                .collect(),
        },
        "button" => OptionKind::Button,
        _ => OptionKind::String,
    };
    Some(DeclaredOption { name, kind })
}

fn read_info<'a>(
    mut tokens: impl Iterator<Item = &'a str>,
    score: &mut Option<Score>,
    depth: &mut Option<u32>,
    nodes: &mut Option<u64>,
) {
    while let Some(token) = tokens.next() {
        match token {
            "depth" => {
                if let Some(value) = tokens.next().and_then(|t| t.parse().ok()) {
                    *depth = Some(value);
                }
            }
            "nodes" => {
                if let Some(value) = tokens.next().and_then(|t| t.parse().ok()) {
                    *nodes = Some(value);
                }
            }
            "score" => match (tokens.next(), tokens.next().and_then(|t| t.parse().ok())) {
                (Some("cp"), Some(cp)) => *score = Some(Score::Centipawns(cp)),
                (Some("mate"), Some(moves)) => *score = Some(Score::Mate(moves)),
                _ => {}
            },
            // The rest of the line is the PV or a free-text string.
            "pv" | "string" => break,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn declared(line: &str) -> Option<DeclaredOption> {
        let mut tokens = line.split_whitespace();
        assert_eq!(tokens.next(), Some("option"));
        parse_option(tokens)
    }

    #[test]
    fn option_names_end_at_the_type_that_follows_them() {
        let spin = declared("option name Hash type spin default 16 min 1 max 33554432").unwrap();
        assert_eq!(spin.name, "Hash");
        assert_eq!(
            spin.kind,
            OptionKind::Spin {
                min: Some(1),
                max: Some(33554432)
            }
        );
        assert_eq!(
            declared("option name Move Overhead type spin default 10 min 0 max 5000")
                .unwrap()
                .name,
            "Move Overhead"
        );
        // A name that is the word `type`, and a name with `type` inside it.
        let named_type = declared("option name type type string").unwrap();
        assert_eq!(
            (named_type.name.as_str(), named_type.kind),
            ("type", OptionKind::String)
        );
        assert_eq!(
            declared("option name Piece type value type check default false")
                .unwrap()
                .name,
            "Piece type value"
        );
        let combo =
            declared("option name Style type combo default Normal var Solid var Very Risky")
                .unwrap();
        assert_eq!(
            combo.kind,
            OptionKind::Combo {
                choices: vec!["Solid".to_string(), "Very Risky".to_string()]
            }
        );
        // No name, or no kind: nothing is declared.
        for line in [
            "option name type string",
            "option name",
            "option name Hash",
            "option name Hash type",
            "option name Hash type float",
            "option type spin name Hash",
        ] {
            assert_eq!(declared(line), None, "{line}");
        }
    }

    #[test]
    fn option_values_are_checked_against_their_declaration() {
        let spin = OptionKind::Spin {
            min: Some(1),
            max: Some(1024),
        };
        assert_eq!(spin.check("16"), Ok(()));
        for bad in ["16 value 99", "0", "1025", "lots", ""] {
            assert_eq!(
                spin.check(bad),
                Err("a spin (an integer from 1 to 1024)".to_string()),
                "{bad}"
            );
        }
        assert_eq!(OptionKind::Check.check("true"), Ok(()));
        assert!(OptionKind::Check.check("yes").is_err());
        let combo = OptionKind::Combo {
            choices: vec!["Solid".to_string(), "Very Risky".to_string()],
        };
        assert_eq!(combo.check("very risky"), Ok(()));
        assert!(combo.check("Wild").is_err());
        assert_eq!(OptionKind::Button.check(""), Ok(()));
        assert!(OptionKind::Button.check("1").is_err());
        assert_eq!(OptionKind::String.check("a book.bin value x"), Ok(()));
    }

    #[test]
    fn a_line_over_the_limit_is_reported_at_the_limit_and_not_kept() {
        let mut input = std::io::Cursor::new(b"uciok\r\nabcdefghij\nreadyok".to_vec());
        let mut buffer = Vec::new();
        let mut read = || {
            let result = read_bounded_line(&mut input, &mut buffer, 7).unwrap();
            (result, String::from_utf8_lossy(&buffer).into_owned())
        };
        assert_eq!(read(), (Bounded::Line, "uciok\r\n".to_string()));
        assert_eq!(read(), (Bounded::TooLong, "abcdefg".to_string()));
        assert_eq!(discard_line(&mut input).unwrap(), 4);
        let mut read = || {
            let result = read_bounded_line(&mut input, &mut buffer, 7).unwrap();
            (result, String::from_utf8_lossy(&buffer).into_owned())
        };
        assert_eq!(read(), (Bounded::Line, "readyok".to_string()));
        assert_eq!(read(), (Bounded::End, String::new()));
        assert_eq!(
            shortened(&"é".repeat(300)),
            format!("{}…", "é".repeat(SHOWN_CHARS))
        );
    }

    proptest! {
        /// Whatever bytes an engine writes, the reader holds at most its limit of a line, and
        /// the lines it passes on are the input's lines.
        #[test]
        fn bounded_lines_of_any_bytes(
            bytes in proptest::collection::vec(any::<u8>(), 0..2000),
            limit in 1usize..64,
        ) {
            let mut input = std::io::BufReader::with_capacity(7, bytes.as_slice());
            let mut buffer = Vec::new();
            let mut lines = Vec::new();
            let mut total = 0u64;
            loop {
                match read_bounded_line(&mut input, &mut buffer, limit).unwrap() {
                    Bounded::End => break,
                    Bounded::Line => {
                        prop_assert!(buffer.len() <= limit);
                        total += buffer.len() as u64;
                        lines.push(buffer.clone());
                    }
                    Bounded::TooLong => {
                        prop_assert_eq!(buffer.len(), limit);
                        let rest = discard_line(&mut input).unwrap();
                        prop_assert!(rest > 0);
                        total += limit as u64 + rest;
                    }
                }
                prop_assert!(buffer.capacity() <= 2 * limit + 16);
            }
            prop_assert_eq!(total, bytes.len() as u64);
            if bytes.split_inclusive(|&b| b == b'\n').all(|line| line.len() <= limit) {
                prop_assert_eq!(lines.concat(), bytes);
            }
        }

        /// `id`, `option`, `info` and `bestmove` lines of any text parse without a panic, and
        /// what they declare is bounded by the line.
        #[test]
        fn uci_lines_of_any_text_parse_without_panic(
            words in proptest::collection::vec(
                prop_oneof![
                    Just("name".to_string()), Just("type".to_string()),
                    Just("spin".to_string()), Just("combo".to_string()),
                    Just("var".to_string()), Just("min".to_string()),
                    Just("max".to_string()), Just("default".to_string()),
                    Just("score".to_string()), Just("cp".to_string()),
                    Just("mate".to_string()), Just("depth".to_string()),
                    Just("pv".to_string()), "-?[0-9]{1,25}", "\\PC{0,12}",
                ],
                0..40,
            ),
        ) {
            let line = words.join(" ");
            if let Some(option) = parse_option(line.split_whitespace()) {
                prop_assert!(option.name.len() <= line.len());
                if let OptionKind::Spin { min: Some(min), max: Some(max) } = option.kind {
                    let _ = OptionKind::Spin { min: Some(min), max: Some(max) }.check("0");
                }
            }
            let (mut score, mut depth, mut nodes) = (None, None, None);
            read_info(line.split_whitespace(), &mut score, &mut depth, &mut nodes);
            prop_assert!(shortened(&line).chars().count() <= SHOWN_CHARS + 1);
        }
    }

    #[test]
    fn info_lines_give_the_score_depth_and_nodes() {
        let (mut score, mut depth, mut nodes) = (None, None, None);
        read_info(
            "depth 12 seldepth 18 score cp -35 nodes 1000 pv e2e4 e7e5".split_whitespace(),
            &mut score,
            &mut depth,
            &mut nodes,
        );
        assert_eq!((score, depth), (Some(Score::Centipawns(-35)), Some(12)));
        assert_eq!(nodes, Some(1000));
        read_info(
            "depth 20 score mate -3 upperbound nodes x".split_whitespace(),
            &mut score,
            &mut depth,
            &mut nodes,
        );
        assert_eq!((score, depth), (Some(Score::Mate(-3)), Some(20)));
        assert_eq!(nodes, Some(1000));
        read_info(
            "string score cp 999 nodes 5 is not a score".split_whitespace(),
            &mut score,
            &mut depth,
            &mut nodes,
        );
        assert_eq!((score, nodes), (Some(Score::Mate(-3)), Some(1000)));
    }

    #[test]
    fn a_timeout_without_its_command_reads_as_before() {
        let old: Fault = serde_json::from_str(r#"{"kind":"timeout","waited_ms":395}"#).unwrap();
        assert_eq!(old.describe(), "no move within 395 ms");
        let now = Fault::Timeout {
            waited_ms: 60_004,
            command: Some("go nodes 5000".to_string()),
        };
        assert_eq!(now.describe(), "no move within 60004 ms of `go nodes 5000`");
    }
}
