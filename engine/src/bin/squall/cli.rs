//! Command-line subcommands of the `squall` binary. Exit codes: 0 success, 2 bad input.

use squall::{movegen, perft, Board};
use std::time::Instant;

const USAGE: &str = "usage: squall [uci | perft DEPTH [--fen FEN] [--divide] | bench [OPTIONS]]";

pub fn run(args: &[String]) -> i32 {
    let result = match args.first().map(String::as_str) {
        None | Some("uci") => Ok(()),
        Some("perft") => perft_command(&args[1..]),
        Some("--help" | "-h" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n{USAGE}")),
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
