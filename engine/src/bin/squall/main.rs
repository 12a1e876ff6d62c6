//! The `squall` binary: UCI by default, plus `perft` and `bench` subcommands.

mod cli;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(cli::run(&args));
}
