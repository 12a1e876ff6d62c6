//! The `squall` command line's conventions: exit codes, `--help` and `--version`, refusals of
//! bad input with one `error:` line, and a quiet end when stdout's reader goes away.

use squall::{perft, Board};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn squall(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_squall"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run squall")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs squall and checks it failed with exit 2 and one `error:` line containing `reason`.
fn assert_refused(args: &[&str], reason: &str) {
    let output = squall(args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
    assert!(message.starts_with("error: "), "{args:?}: {message}");
    assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
    assert!(
        message.contains(reason),
        "{args:?}: `{message}` lacks `{reason}`"
    );
    assert!(output.stdout.is_empty(), "{args:?}: {}", stdout(&output));
}

/// A file unique to the calling test (tests run in parallel).
fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("squall-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

/// 28 white pieces, 276 legal moves: more than the move list holds.
const TOO_MANY_MOVES: &str = "QQQQQQQQ/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/BR5Q/kBQQQKQQ w - - 0 1";

#[test]
fn unreachable_positions_are_refused_not_aborted() {
    assert_refused(
        &["perft", "1", "--fen", TOO_MANY_MOVES, "--divide"],
        "invalid FEN: piece placement: white has 28 pieces, more than 16",
    );
    assert_refused(&["perft", "1", "--fen", TOO_MANY_MOVES], "28 pieces");
    let file = temp_file(
        "too-many-moves.epd",
        format!("{TOO_MANY_MOVES}\n").as_bytes(),
    );
    assert_refused(
        &[
            "bench",
            "--depth",
            "1",
            "--positions",
            file.to_str().unwrap(),
        ],
        ":1: invalid FEN: piece placement: white has 28 pieces",
    );
    std::fs::remove_file(file).unwrap();
}

#[test]
fn the_most_moves_divide_without_loss() {
    // Petrović (1964): 218 moves, the most a reachable position has.
    let fen = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1";
    let output = squall(&["perft", "2", "--fen", fen, "--divide"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let totals = ["Time: ", "Leaves/second: ", "Nodes searched: "];
    let moves = text
        .lines()
        .filter(|l| !totals.iter().any(|t| l.starts_with(t)));
    assert_eq!(moves.count(), 218, "{text}");
    let nodes = perft::perft(&Board::from_fen(fen).unwrap(), 2);
    assert!(
        text.ends_with(&format!("Nodes searched: {nodes}\n")),
        "{text}"
    );
}

#[test]
fn a_long_rank_is_an_error_naming_rank_and_count() {
    let fen = format!("{}4k3/8/8/8/8/8/8/4K3 w - - 0 1", "8".repeat(32));
    assert_refused(
        &["perft", "1", "--fen", &fen],
        "invalid FEN: piece placement: rank 8 has 264 squares, more than 8",
    );
}

#[test]
fn perft_depth_has_a_documented_maximum() {
    // A stalemate: every depth finishes at once, so only the limit can fail these.
    let stalemate = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1";
    let output = squall(&["perft", "64", "--fen", stalemate]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("Nodes searched: 0"));
    for depth in ["65", "100000", "99999999999999999999"] {
        assert_refused(
            &["perft", depth, "--fen", stalemate],
            &format!("perft depth `{depth}` is out of range: at most 64"),
        );
    }
    // Bare kings: depth-first, a deep perft used to overflow the stack before any leaf.
    assert_refused(
        &["perft", "100000", "--fen", "4k3/8/8/8/8/8/8/4K3 w - - 0 1"],
        "perft depth `100000` is out of range: at most 64",
    );
    for depth in ["-1", "+3", "x", ""] {
        assert_refused(
            &["perft", depth, "--fen", stalemate],
            &format!("bad perft depth `{depth}`"),
        );
    }
    let help = squall(&["perft", "--help"]);
    assert!(stdout(&help).contains("0..=64"), "{}", stdout(&help));
    assert!(stdout(&squall(&["--help"])).contains("DEPTH 0..=64"));
}

#[test]
fn perft_takes_exactly_one_depth() {
    assert_refused(
        &["perft", "2", "3"],
        "perft takes one DEPTH, got `2` and `3`",
    );
    // A FEN not quoted into one argument.
    assert_refused(
        &[
            "perft",
            "1",
            "--fen",
            "8/8/8/8/8/8/8/K6k",
            "w",
            "-",
            "-",
            "0",
            "1",
        ],
        "perft takes one DEPTH, got `1` and `w`",
    );
    assert_refused(&["perft", "--fen", Board::STARTPOS], "perft needs a DEPTH");
    assert_refused(&["perft", "1", "--fast"], "unknown perft option `--fast`");
}

#[test]
fn counters_say_what_is_wrong() {
    let fen = |counters: &str| format!("4k3/8/8/8/8/8/8/4K3 w - - {counters}");
    assert_refused(
        &["perft", "1", "--fen", &fen("0 65536")],
        "fullmove number: `65536` is out of range (1..=65535)",
    );
    assert_refused(
        &["perft", "1", "--fen", &fen("65536 1")],
        "halfmove clock: `65536` is out of range (0..=65535)",
    );
    assert_refused(
        &["perft", "1", "--fen", &fen("+5 1")],
        "halfmove clock: `+5` is not a plain number (digits only, no sign)",
    );
}

#[test]
fn option_counters_are_plain_digits_given_once() {
    let pool = temp_file("options.epd", b"4k3/8/8/8/8/8/8/4K2R w K - 0 1\n");
    let pool = pool.to_str().unwrap();
    for (args, reason) in [
        (
            &["bench", "--depth", "+2"][..],
            "bad --depth `+2`: expected a number 1..=64 (digits only, no sign)",
        ),
        (
            &["bench", "--depth", "65"][..],
            "--depth `65` is out of range",
        ),
        (
            &["bench", "--hash", "+16"][..],
            "bad --hash `+16`: expected a number 1..=4096",
        ),
        (
            &["bench", "--depth", "1", "--depth", "2"][..],
            "--depth is given twice",
        ),
        (
            &[
                "calibrate",
                "exitrate",
                "--positions",
                pool,
                "--depth",
                "+1",
            ][..],
            "bad --depth `+1`",
        ),
        (
            &["calibrate", "exitrate", "--positions", pool, "--hash", "+1"][..],
            "bad --hash `+1`",
        ),
        (
            &[
                "calibrate",
                "exitrate",
                "--positions",
                pool,
                "--percentile",
                "+50",
            ][..],
            "bad --percentile `+50`",
        ),
        (
            &[
                "calibrate",
                "exitrate",
                "--positions",
                pool,
                "--positions",
                pool,
            ][..],
            "--positions is given twice",
        ),
        (
            &["calibrate", "samples", "--positions", pool, "--seed", "-3"][..],
            "bad --seed `-3`",
        ),
        (
            &[
                "calibrate",
                "samples",
                "--positions",
                pool,
                "--samples-per-bucket",
                "0",
            ][..],
            "--samples-per-bucket `0` is out of range",
        ),
        (
            &["calibrate", "exitrate", "--positions", pool, "--seed", "3"][..],
            "--samples-per-bucket and --seed are settings of the samples mode",
        ),
        (&["profile", "--depth", "+1"][..], "bad --depth `+1`"),
        (
            &[
                "perft",
                "1",
                "--fen",
                Board::STARTPOS,
                "--fen",
                Board::STARTPOS,
            ][..],
            "--fen is given twice",
        ),
    ] {
        assert_refused(args, reason);
    }
    std::fs::remove_file(pool).unwrap();
}

#[test]
fn version_and_help_print_and_exit_0() {
    let version = squall(&["--version"]);
    assert!(version.status.success(), "{}", stderr(&version));
    assert_eq!(
        stdout(&version),
        format!("squall {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(stdout(&squall(&["-V"])), stdout(&version));
    for args in [
        &["--help"][..],
        &["-h"][..],
        &["help"][..],
        &["uci", "--help"][..],
        &["perft", "--help"][..],
        &["perft", "3", "-h"][..],
        &["bench", "--help"][..],
        &["bench", "--depth", "3", "--help"][..],
        &["calibrate", "--help"][..],
        &["profile", "--help"][..],
    ] {
        let output = squall(args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert!(stdout(&output).starts_with("usage: squall"), "{args:?}");
        assert!(output.stderr.is_empty(), "{args:?}: {}", stderr(&output));
    }
    let usage = stdout(&squall(&["--help"]));
    assert!(
        usage.contains("141"),
        "the usage documents the EPIPE exit: {usage}"
    );
    assert_refused(&["--frobnicate"], "unknown command `--frobnicate`");
}

#[test]
fn positions_files_are_plain_text() {
    let gzip = temp_file(
        "pool.epd.gz",
        &[0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0xff],
    );
    assert_refused(
        &["bench", "--positions", gzip.to_str().unwrap()],
        "gzip-compressed; squall reads plain-text FEN/EPD (the lab decompresses .gz pools",
    );
    assert_refused(
        &[
            "calibrate",
            "exitrate",
            "--positions",
            gzip.to_str().unwrap(),
        ],
        "gzip-compressed",
    );
    let latin1 = temp_file("latin1.epd", b"# caf\xe9\n4k3/8/8/8/8/8/8/4K2R w K -\n");
    assert_refused(
        &["bench", "--positions", latin1.to_str().unwrap()],
        "not UTF-8 text (bad byte at offset 5); squall reads plain-text FEN/EPD",
    );
    let bom = temp_file("bom.epd", b"\xef\xbb\xbf4k3/8/8/8/8/8/8/4K2R w K - 0 1\n");
    let output = squall(&[
        "bench",
        "--depth",
        "1",
        "--positions",
        bom.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1"));
    let five = temp_file(
        "five.epd",
        b"4k3/8/8/8/8/8/8/4K2R w K - 0 1\n4k3/8/8/8/8/8/8/4K2R w K - 0\n",
    );
    assert_refused(
        &["bench", "--positions", five.to_str().unwrap()],
        ":2: 5 fields: `0` after the en-passant field, but no fullmove number",
    );
    let plus = temp_file("plus.epd", b"4k3/8/8/8/8/8/8/4K2R w K - +5 1\n");
    assert_refused(
        &["bench", "--positions", plus.to_str().unwrap()],
        ":1: invalid FEN: halfmove clock: `+5` is not a plain number",
    );
    for file in [gzip, latin1, bom, five, plus] {
        std::fs::remove_file(file).unwrap();
    }
}

/// Runs squall with stdout a pipe whose reader has already gone, writes `input` to its stdin
/// (kept open: the engine must end because of stdout, not the end of input), and returns the
/// exit code and stderr.
#[cfg(target_os = "linux")]
fn with_closed_stdout(args: &[&str], input: &str) -> (Option<i32>, String) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `pipe` fills the two-element array it is given with two new descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created, and nothing else owns them.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_squall"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .expect("start squall");
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input.as_bytes());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{args:?} still running with its stdout closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    (status.code(), stderr(&output))
}

#[cfg(target_os = "linux")]
#[test]
fn a_closed_stdout_ends_every_command_quietly_with_141() {
    for (args, input) in [
        (&["--help"][..], ""),
        (&["--version"][..], ""),
        (&["bench", "--help"][..], ""),
        (&["perft", "2", "--divide"][..], ""),
        (&["perft", "2"][..], ""),
        (&["bench", "--depth", "1"][..], ""),
        (&["bench", "--depth", "1", "--json"][..], ""),
        (&[][..], "uci\n"),
        (&["uci"][..], "isready\n"),
        (&[][..], "go depth 2\n"),
    ] {
        let (code, errors) = with_closed_stdout(args, input);
        assert_eq!(code, Some(141), "{args:?} {input:?}: {errors}");
        assert!(errors.is_empty(), "{args:?} {input:?}: {errors}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_stdout_is_an_error() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        return;
    };
    let output = Command::new(env!("CARGO_BIN_EXE_squall"))
        .arg("--help")
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).starts_with("error: cannot write to stdout: "),
        "{}",
        stderr(&output)
    );
}

/// OpenBench's client and Stockfish-style scripts call `bench 13`: a positional depth is the
/// depth option, and the bench's node count says it was searched to that depth.
#[test]
fn a_positional_bench_depth_searches_to_that_depth() {
    let nodes = |args: &[&str]| {
        let output = squall(args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        let text = stdout(&output);
        text.lines()
            .find_map(|line| line.strip_prefix("Nodes searched: "))
            .unwrap_or_else(|| panic!("{args:?}: no `Nodes searched:` line in {text}"))
            .trim()
            .to_string()
    };
    let positional = nodes(&["bench", "2"]);
    assert_eq!(positional, nodes(&["bench", "--depth", "2"]));
    assert_ne!(positional, nodes(&["bench", "--depth", "1"]));
    assert_refused(&["bench", "2", "--depth", "2"], "one depth");
    assert_refused(&["bench", "65"], "out of range");
}
