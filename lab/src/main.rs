use std::process::ExitCode;

use squall_lab::commands;

/// Exit codes, also listed in `lab --help`; the others come from [`squall_lab::exit::Exit`].
const NO_REGRESSION: u8 = 0;
const ERROR: u8 = 2;
/// Standard output closed before the report was written (its reader, as `head`, ended): the
/// shell's code for a death by SIGPIPE, which is what Rust's runtime turns into an error.
const OUTPUT_CLOSED: u8 = 141;

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
        Ok(outcome) => match write_stdout(&outcome.stdout) {
            Ok(()) => ExitCode::from(outcome.exit.code()),
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                ExitCode::from(OUTPUT_CLOSED)
            }
            Err(error) => {
                squall_lab::progress::warning(&format!(
                    "error: writing the report to standard output: {error}"
                ));
                ExitCode::from(ERROR)
            }
        },
        Err(error) => {
            // An error may quote an engine's output or a build's tail: shown, never sent.
            let message = format!("error: {error:#}");
            squall_lab::progress::warning(&message);
            ExitCode::from(ERROR)
        }
    }
}

/// `print!` panics when the write fails (a full disk, a closed pipe); this says so instead.
fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}
