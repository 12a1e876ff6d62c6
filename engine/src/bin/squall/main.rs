//! The `squall` binary: UCI by default, plus `perft` and `bench` subcommands.

mod args;
mod bench_output;
mod calibrate;
mod cli;
mod json;
mod output;
mod profile;
mod uci;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(cli::run(&args));
}
