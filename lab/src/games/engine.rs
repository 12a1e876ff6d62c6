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
/// Lines of an engine's output kept for fault reports.
const RECENT_LINES: usize = 8;

/// How an engine is started and set up; the same for every process of one side.
#[derive(Debug, Clone)]
pub struct EngineSetup {
    /// "A" or "B".
    pub label: &'static str,
    pub path: PathBuf,
    /// `setoption` pairs, sent in order after `uciok`.
    pub options: Vec<(String, String)>,
}

/// What went wrong with an engine; each loses the game it happened in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Fault {
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
    pub fn describe(&self) -> String {
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
pub struct Reply {
    pub bestmove: String,
    pub score: Option<Score>,
    pub depth: Option<u32>,
    /// The last `info ... nodes N` of the search.
    pub nodes: Option<u64>,
    /// From writing `go` to reading `bestmove`: what the clock is charged.
    pub elapsed: Duration,
    /// When `go` was written: the referee's own work since the last reply ends here.
    pub sent: Instant,
    /// When `bestmove` was read: the referee's own work is measured from here.
    pub received: Instant,
}

enum Line {
    Text(String),
    Closed,
}

pub struct Engine {
    setup: Arc<EngineSetup>,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Line>,
    recent: Arc<Mutex<VecDeque<String>>>,
    /// `id name`, when the engine gave one.
    pub id_name: Option<String>,
    /// Option names from the `uci` reply.
    pub declared_options: Vec<String>,
}

impl Engine {
    /// Starts the process and completes the handshake: `uci`, the options, `isready`.
    pub fn start(setup: Arc<EngineSetup>) -> Result<Engine, Fault> {
        let mut command = Command::new(&setup.path);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = spawn_in_group(&mut command).map_err(|error| Fault::Startup {
            detail: format!("cannot run {}: {error}", setup.path.display()),
        })?;
        let recent = Arc::new(Mutex::new(VecDeque::with_capacity(RECENT_LINES)));
        let (sender, lines) = mpsc::channel();
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
        let mut engine = Engine {
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
                    self.id_name = Some(tokens.collect::<Vec<_>>().join(" "));
                }
                Some("option") if tokens.next() == Some("name") => {
                    let name: Vec<&str> = tokens.take_while(|&t| t != "type").collect();
                    self.declared_options.push(name.join(" "));
                }
                _ => {}
            }
        }
        let setup = Arc::clone(&self.setup);
        for (name, value) in &setup.options {
            self.send(&format!("setoption name {name} value {value}"))?;
        }
        self.sync(HANDSHAKE_TIMEOUT)
    }

    pub fn label(&self) -> &'static str {
        self.setup.label
    }

    pub fn has_option(&self, name: &str) -> bool {
        self.declared_options
            .iter()
            .any(|declared| declared.eq_ignore_ascii_case(name))
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
    pub fn new_game(&mut self) -> Result<(), Fault> {
        self.send("ucinewgame")?;
        if self.has_option("Clear Hash") {
            self.send("setoption name Clear Hash")?;
        }
        self.sync(HANDSHAKE_TIMEOUT)
    }

    /// Sends the position and `go`, and waits for `bestmove` until `deadline`. The engine's
    /// last `info ... score` before `bestmove` is its score for the move. An `info` line past
    /// `ceiling` ends the wait at once: the engine is not honouring its limit.
    pub fn search(
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
                        return Err(Fault::Garbage { line });
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
        // The pipe closes a moment before the process is reaped.
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("exited ({})", crate::process::describe_status(status));
            }
            thread::sleep(Duration::from_millis(5));
        }
        "closed its output".to_string()
    }

    /// The engine's last lines of output (stdout and stderr), oldest first.
    pub fn recent_output(&self) -> Vec<String> {
        self.recent
            .lock()
            .map(|recent| recent.iter().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.send("quit");
        let deadline = Instant::now() + QUIT_GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        kill_group(&mut self.child);
    }
}

/// Reads lines (lossily: an engine may print any bytes) until the pipe closes; forwards them
/// when `sender` is set and keeps the last few for fault reports.
fn spawn_reader(
    pipe: impl Read + Send + 'static,
    sender: Option<mpsc::Sender<Line>>,
    recent: Arc<Mutex<VecDeque<String>>>,
) {
    thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match reader.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&buffer)
                .trim_end_matches(['\r', '\n'])
                .to_string();
            if let Ok(mut recent) = recent.lock() {
                if recent.len() == RECENT_LINES {
                    recent.pop_front();
                }
                recent.push_back(text.clone());
            }
            if let Some(sender) = &sender {
                if sender.send(Line::Text(text)).is_err() {
                    return;
                }
            }
        }
        if let Some(sender) = sender {
            let _ = sender.send(Line::Closed);
        }
    });
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
