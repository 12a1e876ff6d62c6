use std::process::ExitCode;

use clap::Parser;
use squall_lab::app;
use squall_lab::cli::Cli;

/// Exit codes, also listed in `lab --help`.
const NO_REGRESSION: u8 = 0;
const REGRESSION: u8 = 1;
const ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() {
                ERROR
            } else {
                NO_REGRESSION
            });
        }
    };
    match app::run(cli) {
        Ok(outcome) => {
            print!("{}", outcome.report);
            ExitCode::from(if outcome.regression {
                REGRESSION
            } else {
                NO_REGRESSION
            })
        }
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(ERROR)
        }
    }
}
