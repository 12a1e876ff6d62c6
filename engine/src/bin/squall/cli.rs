//! Command-line subcommands of the `squall` binary. Exit codes: 0 success (also for `--help`
//! and `--version`), 2 bad arguments or input (one `error:` line on stderr), and from
//! `output`: 141 when stdout's reader has gone, 1 when stdout cannot be written otherwise.

use crate::args::{once, parse_count, read_positions, MAX_HASH_MB, MAX_SEARCH_DEPTH};
use crate::bench_output::run_text_bench;
use crate::output::{errln, out, outln};
use crate::{bench_output, calibrate, profile, uci};
use squall::{bench, perft, Board};
use std::time::Instant;

const USAGE: &str = "\
usage: squall [COMMAND]
  (none) | uci      the UCI protocol on stdin/stdout
  perft DEPTH [--fen FEN] [--divide]
                    count the leaves of the legal move tree (DEPTH 0..=64)
  bench [DEPTH] [--depth N] [--positions FILE] [--hash MB] [--json] [--full-eval]
                    fixed-depth search of the bench positions (FILE: plain-text FEN/EPD)
  calibrate MODE... --positions FILE [OPTIONS]
                    eval-margin calibration over a position pool
  profile [--depth N] [--out FILE.svg] [--frequency HZ] [--folded FILE]
                    the bench under a sampling profiler (`profile` feature)
  COMMAND --help    that command's usage
  --help | -h       this text
  --version | -V    the engine's name and version
exit codes: 0 success, 2 bad arguments or input (one `error:` line on stderr),
  1 stdout could not be written, 141 stdout closed by its reader (EPIPE; the output stops quietly)";

/// One line, for errors (which are one `error:` line).
const PERFT_SYNOPSIS: &str = "usage: squall perft DEPTH [--fen FEN] [--divide]  (DEPTH 0..=64)";

const PERFT_USAGE: &str = "\
usage: squall perft DEPTH [--fen FEN] [--divide]
  DEPTH     0..=64 plies (perft::MAX_DEPTH: a deeper run would never finish)
  --fen     the position (default: the start position); FEN fields must be one argument
  --divide  the count below each legal move first";

const BENCH_USAGE: &str =
    "usage: squall bench [DEPTH] [--depth N] [--positions FILE] [--hash MB] [--json] [--full-eval]";

/// `squall bench --help`.
fn bench_help() -> String {
    format!(
        "{BENCH_USAGE}
  DEPTH             search depth, as OpenBench and Stockfish-style scripts give it
                    (`squall bench 13`); the same as --depth, so give one of them
  --depth N         search depth 1..={MAX_SEARCH_DEPTH} (default {})
  --positions FILE  plain-text FEN/EPD, one per line (`#` comments); a gzip file is refused:
                    the lab decompresses its pools itself
  --hash MB         transposition table, 1..={MAX_HASH_MB} (default {})
  --json            the bench protocol's JSON report (docs/bench-protocol.md)
  --full-eval       the cheap evaluation tiers' exits off",
        bench::DEFAULT_DEPTH,
        bench::DEFAULT_HASH_MB
    )
}

/// Whether a subcommand's arguments ask for its usage.
fn wants_help(args: &[String]) -> bool {
    args.iter().any(|arg| arg == "--help" || arg == "-h")
}

pub fn run(args: &[String]) -> i32 {
    let rest = args.get(1..).unwrap_or_default();
    let result = match args.first().map(String::as_str) {
        Some("uci") if wants_help(rest) => {
            outln!("usage: squall [uci]  (the UCI protocol on stdin/stdout)");
            Ok(())
        }
        None | Some("uci") => {
            uci::run();
            Ok(())
        }
        Some("perft") if wants_help(rest) => {
            outln!("{PERFT_USAGE}");
            Ok(())
        }
        Some("bench") if wants_help(rest) => {
            outln!("{}", bench_help());
            Ok(())
        }
        Some("calibrate") if wants_help(rest) => {
            outln!("{}", calibrate::USAGE);
            Ok(())
        }
        Some("profile") if wants_help(rest) => {
            outln!("{}", profile::USAGE);
            Ok(())
        }
        Some("perft") => perft_command(rest),
        Some("bench") => bench_command(rest),
        Some("calibrate") => calibrate::command(rest),
        Some("profile") => profile::command(rest),
        Some("--help" | "-h" | "help") => {
            outln!("{USAGE}");
            Ok(())
        }
        Some("--version" | "-V") => {
            outln!("squall {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`; see `squall --help`")),
    };
    match result {
        Ok(()) => 0,
        Err(message) => {
            errln!("error: {message}");
            2
        }
    }
}

/// A perft depth: digits only, at most `perft::MAX_DEPTH`.
fn parse_perft_depth(text: &str) -> Result<u32, String> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "bad perft depth `{text}`: expected a number 0..={}; {PERFT_SYNOPSIS}",
            perft::MAX_DEPTH
        ));
    }
    text.parse::<u32>()
        .ok()
        .filter(|depth| *depth <= perft::MAX_DEPTH)
        .ok_or(format!(
            "perft depth `{text}` is out of range: at most {} (a deeper run would never finish)",
            perft::MAX_DEPTH
        ))
}

fn perft_command(args: &[String]) -> Result<(), String> {
    let mut depth = None;
    let mut fen = Board::STARTPOS.to_string();
    let mut fen_given = false;
    let mut divide = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--fen" => {
                if fen_given {
                    return Err(format!("--fen is given twice; {PERFT_SYNOPSIS}"));
                }
                fen_given = true;
                i += 1;
                fen = args.get(i).ok_or("--fen needs a FEN")?.clone();
            }
            "--divide" => divide = true,
            option if option.starts_with("--") => {
                return Err(format!("unknown perft option `{option}`; {PERFT_SYNOPSIS}"))
            }
            text => {
                if let Some((first, _)) = depth {
                    return Err(format!(
                        "perft takes one DEPTH, got `{first}` and `{text}` \
                         (a FEN goes in one argument after --fen)"
                    ));
                }
                depth = Some((text, parse_perft_depth(text)?));
            }
        }
        i += 1;
    }
    let (_, depth) = depth.ok_or(format!("perft needs a DEPTH; {PERFT_SYNOPSIS}"))?;
    let board = Board::from_fen(&fen).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let nodes = if divide {
        let mut total = 0;
        for (mv, n) in perft::divide(&board, depth) {
            outln!("{mv}: {n}");
            total += n;
        }
        if depth == 0 {
            1
        } else {
            total
        }
    } else {
        perft::perft(&board, depth)
    };
    let elapsed = start.elapsed();
    outln!("Time: {} ms", elapsed.as_millis());
    outln!(
        "Leaves/second: {}",
        (nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64
    );
    outln!("Nodes searched: {nodes}");
    Ok(())
}

/// The options of `squall bench`; see docs/bench-protocol.md.
struct BenchOptions {
    depth: i32,
    positions_file: Option<String>,
    hash_mb: usize,
    json: bool,
    full_eval: bool,
}

fn parse_bench_options(args: &[String]) -> Result<BenchOptions, String> {
    let mut options = BenchOptions {
        depth: bench::DEFAULT_DEPTH,
        positions_file: None,
        hash_mb: bench::DEFAULT_HASH_MB,
        json: false,
        full_eval: false,
    };
    let mut seen = Vec::new();
    let mut positional_depth = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .map(String::as_str)
                .ok_or(format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--depth" if positional_depth => {
                return Err(format!(
                    "bench takes one depth, as DEPTH or --depth; {BENCH_USAGE}"
                ))
            }
            "--depth" => {
                once(&mut seen, "--depth")?;
                let text = value("--depth")?;
                options.depth = parse_count("--depth", text, 1, MAX_SEARCH_DEPTH)? as i32;
            }
            // A positional depth (`bench 13`): an argument that is not an option.
            depth if !depth.starts_with('-') => {
                once(&mut seen, "--depth").map_err(|_| {
                    format!("bench takes one depth, as DEPTH or --depth; {BENCH_USAGE}")
                })?;
                options.depth = parse_count("depth", depth, 1, MAX_SEARCH_DEPTH)? as i32;
                positional_depth = true;
            }
            "--hash" => {
                once(&mut seen, "--hash")?;
                let text = value("--hash")?;
                options.hash_mb = parse_count("--hash", text, 1, MAX_HASH_MB as u64)? as usize;
            }
            "--positions" => {
                once(&mut seen, "--positions")?;
                options.positions_file = Some(value("--positions")?.to_string());
            }
            "--json" => options.json = true,
            "--full-eval" => options.full_eval = true,
            // One line: the protocol promises a single `error:` line on stderr.
            other => return Err(format!("unknown bench option `{other}`; {BENCH_USAGE}")),
        }
    }
    Ok(options)
}

fn bench_command(args: &[String]) -> Result<(), String> {
    let options = parse_bench_options(args)?;
    let positions = match &options.positions_file {
        None => bench::default_positions(),
        Some(path) => read_positions(path)?,
    };
    if options.json {
        let report = bench::run(
            &positions,
            options.depth,
            options.hash_mb,
            options.full_eval,
            |_, _| {},
        );
        out!("{}", bench_output::json_report(&report));
    } else {
        run_text_bench(
            &positions,
            options.depth,
            options.hash_mb,
            options.full_eval,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usage_texts_state_the_perft_maximum() {
        let range = format!("0..={}", perft::MAX_DEPTH);
        for text in [USAGE, PERFT_USAGE, PERFT_SYNOPSIS] {
            assert!(text.contains(&range), "{text}");
        }
    }

    #[test]
    fn perft_depths_are_digits_up_to_the_maximum() {
        assert_eq!(parse_perft_depth("0"), Ok(0));
        assert_eq!(parse_perft_depth("064"), Ok(64));
        for text in ["65", "4294967296", "+1", "-1", " 1", "1e3", ""] {
            assert!(parse_perft_depth(text).is_err(), "{text:?}");
        }
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| arg.to_string()).collect()
    }

    #[test]
    fn a_positional_bench_depth_is_the_depth_option() {
        let positional = parse_bench_options(&strings(&["13"])).unwrap();
        assert_eq!(positional.depth, 13);
        let with_json = parse_bench_options(&strings(&["--json", "7", "--hash", "16"])).unwrap();
        assert_eq!(
            (with_json.depth, with_json.json, with_json.hash_mb),
            (7, true, 16)
        );
        assert_eq!(
            parse_bench_options(&strings(&["--depth", "9"]))
                .unwrap()
                .depth,
            9
        );
        for twice in [
            &["13", "--depth", "9"][..],
            &["13", "14"],
            &["--depth", "9", "13"],
        ] {
            let error = parse_bench_options(&strings(twice)).err().unwrap();
            assert!(error.contains("one depth"), "{twice:?}: {error}");
        }
        for bad in ["0", "65", "+3", "x"] {
            let error = parse_bench_options(&strings(&[bad])).err().unwrap();
            assert!(error.contains("depth"), "{bad}: {error}");
        }
        assert!(parse_bench_options(&strings(&["-5"]))
            .err()
            .unwrap()
            .contains("unknown bench option"));
    }
}
