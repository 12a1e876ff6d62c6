//! Command-line subcommands of the `squall` binary. Exit codes: 0 success, 2 bad input.

use crate::{bench_output, calibrate, profile, uci};
use squall::{bench, movegen, perft, Board};
use std::io::Write;
use std::time::Instant;

const USAGE: &str = "usage: squall [uci | perft DEPTH [--fen FEN] [--divide] | \
bench [--depth N] [--positions FILE] [--hash MB] [--json] [--full-eval] | \
calibrate MODE... --positions FILE [OPTIONS] | \
profile [--depth N] [--out FILE.svg] [--frequency HZ] [--folded FILE]]";
const BENCH_USAGE: &str =
    "usage: squall bench [--depth N] [--positions FILE] [--hash MB] [--json] [--full-eval]";

/// The largest `--hash`, matching the UCI `Hash` option's maximum.
pub const MAX_HASH_MB: usize = 4096;

pub fn run(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        None | Some("uci") => {
            uci::run();
            Ok(())
        }
        Some("perft") => perft_command(&args[1..]),
        Some("bench") => bench_command(&args[1..]),
        Some("calibrate") => calibrate::command(&args[1..]),
        Some("profile") => profile::command(&args[1..]),
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`; {USAGE}")),
    };
    match result {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}

fn perft_command(args: &[String]) -> Result<(), String> {
    let mut depth = None;
    let mut fen = Board::STARTPOS.to_string();
    let mut divide = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--fen" => {
                i += 1;
                fen = args.get(i).ok_or("--fen needs a FEN")?.clone();
            }
            "--divide" => divide = true,
            text => {
                depth = Some(
                    text.parse::<u32>()
                        .map_err(|_| format!("bad perft depth `{text}`"))?,
                )
            }
        }
        i += 1;
    }
    let depth = depth.ok_or("perft needs a DEPTH")?;
    let board = Board::from_fen(&fen).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let nodes = if divide {
        let mut total = 0;
        for (mv, n) in perft::divide(&board, depth) {
            println!("{mv}: {n}");
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
    let _ = movegen::MAX_MOVES;
    println!("Time: {} ms", elapsed.as_millis());
    println!(
        "Leaves/second: {}",
        (nodes as f64 / elapsed.as_secs_f64().max(1e-9)) as u64
    );
    println!("Nodes searched: {nodes}");
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
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .map(String::as_str)
                .ok_or(format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--depth" => {
                let text = value("--depth")?;
                options.depth = text
                    .parse::<i32>()
                    .ok()
                    .filter(|depth| *depth >= 1)
                    .ok_or(format!("bad --depth `{text}`: expected a positive integer"))?;
            }
            "--hash" => {
                let text = value("--hash")?;
                options.hash_mb = text
                    .parse::<usize>()
                    .ok()
                    .filter(|mb| (1..=MAX_HASH_MB).contains(mb))
                    .ok_or(format!(
                        "bad --hash `{text}`: expected 1..={MAX_HASH_MB} (MB)"
                    ))?;
            }
            "--positions" => options.positions_file = Some(value("--positions")?.to_string()),
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
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
            let positions = bench::parse_positions(&text)
                .map_err(|(line, reason)| format!("{path}:{line}: {reason}"))?;
            if positions.is_empty() {
                return Err(format!("{path}: no positions"));
            }
            positions
        }
    };
    if options.json {
        let report = bench::run(
            &positions,
            options.depth,
            options.hash_mb,
            options.full_eval,
            |_, _| {},
        );
        print!("{}", bench_output::json_report(&report));
    } else {
        run_text_bench(
            &positions,
            options.depth,
            options.hash_mb,
            options.full_eval,
            &mut std::io::stdout(),
        );
    }
    Ok(())
}

/// Runs the bench and prints the text report, a line per position as it finishes (also used by
/// `bench` at the UCI prompt). Write errors are ignored: a closed stdout leaves no one to tell.
pub fn run_text_bench(
    positions: &[Board],
    depth: i32,
    hash_mb: usize,
    full_eval: bool,
    out: &mut impl Write,
) {
    let count = positions.len();
    let report = bench::run(positions, depth, hash_mb, full_eval, |index, result| {
        let _ = writeln!(out, "{}", bench_output::position_line(index, count, result));
        let _ = out.flush();
    });
    let _ = write!(out, "{}", bench_output::text_summary(&report));
    let _ = out.flush();
}
