use std::process::ExitCode;

use squall_lab::commands;

/// Exit codes, also listed in `lab --help`; the others come from [`squall_lab::outcome::Exit`].
const NO_REGRESSION: u8 = 0;
const ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = match squall_lab::cli::parse() {
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
    squall_lab::process::end_children_on_signal();
    match commands::run(cli) {
        Ok(outcome) => {
            print!("{}", outcome.stdout);
            ExitCode::from(outcome.exit.code())
        }
        Err(error) => {
            // An error may quote an engine's output or a build's tail: shown, never sent.
            let message = format!("error: {error:#}");
            squall_lab::progress::warning(&message);
            ExitCode::from(ERROR)
        }
    }
}
