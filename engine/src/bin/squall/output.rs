//! Everything the binary prints goes through here. `println!` panics when a write fails, and
//! with `panic = "abort"` that ends the process with SIGABRT (exit 134) whenever the reader of
//! stdout goes away first (`squall --help | true`, a GUI that quit, `| head`).
//!
//! Instead: a reader that closed stdout (EPIPE) ends the process quietly with
//! `EXIT_BROKEN_PIPE` (141 = 128 + SIGPIPE, what a shell reports for a program that SIGPIPE
//! ended, so a `set -o pipefail` script still sees the output was cut short); any other write
//! error (a full disk) is reported in one `error:` line on stderr and ends it with
//! `EXIT_WRITE_ERROR`. Errors writing to stderr are ignored: there is no one left to tell.

use std::fmt;
use std::io::{self, Write};

/// Exit code when stdout's reader has gone (EPIPE): nothing more is printed.
pub const EXIT_BROKEN_PIPE: i32 = 141;

/// Exit code when stdout cannot be written for another reason.
pub const EXIT_WRITE_ERROR: i32 = 1;

/// Writes to stdout and flushes, so a line is out before a long computation starts; a failed
/// write ends the process (see the module documentation).
pub fn print_fmt(args: fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    if let Err(error) = out.write_fmt(args).and_then(|()| out.flush()) {
        drop(out);
        stdout_failed(&error);
    }
}

/// Writes to stderr, ignoring errors.
pub fn eprint_fmt(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// Ends the process after a failed write to stdout.
fn stdout_failed(error: &io::Error) -> ! {
    if error.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_BROKEN_PIPE);
    }
    eprint_fmt(format_args!("error: cannot write to stdout: {error}\n"));
    std::process::exit(EXIT_WRITE_ERROR);
}

/// `print!` that ends the process quietly on EPIPE instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::print_fmt(format_args!($($arg)*))
    };
}

/// `println!` that ends the process quietly on EPIPE instead of panicking.
macro_rules! outln {
    () => {
        $crate::output::print_fmt(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::print_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that ignores a closed stderr instead of panicking.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::eprint_fmt(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};
